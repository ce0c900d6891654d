// coopmat-f16 (scalar arm, f16 emulated with pack2x16float), twin of the seed's mmq_q4k_coopmat_tile:
//   out[M, N] = x[M, K] @ W[N, K]^T, W = d*sc*q - dmin*m decoded from Q4_K; both operands rounded to f16,
//   accumulated in f32. Tile wm=2 wn=2 rm=1 rn=1: BM=32 BN=32, 4 plane(s) of 32 = 128 invocations.

const M = 64u;
const N = 64u;
const K = 256u;
const WM = 2u; // plane grid rows
const WN = 2u; // plane grid cols
const RM = 1u; // 16x16 subtiles per plane, down
const RN = 1u; // 16x16 subtiles per plane, across
const PLANE = 32u;
const NT = 128u; // WM*WN planes
const BM = 32u; // WM*RM*16
const BN = 32u; // WN*RN*16
const PER = 8u; // elements of a 16x16 subtile each lane owns: 256 / PLANE
const KB = K / 32u; // 32-wide K-blocks (one Q4_K sub-block each)
const NSB = K / 256u; // Q4_K super-blocks per weight row

@group(0) @binding(0) var<storage, read> x: array<f32>; // activation [M, K] row-major
@group(0) @binding(1) var<storage, read> wqs: array<u32>; // Q4_K qs: 32 u32 (128 B) per super-block
@group(0) @binding(2) var<storage, read> wsc: array<u32>; // packed 6-bit scales: 3 words per super-block
@group(0) @binding(3) var<storage, read> wd: array<f32>; // d per super-block
@group(0) @binding(4) var<storage, read> wdm: array<f32>; // dmin per super-block
@group(0) @binding(5) var<storage, read_write> out: array<f32>; // [M, N] row-major
struct GridSlice { base: vec3u, grid: vec3u } // a slice's first workgroup, and the whole grid
@group(0) @binding(6) var<uniform> grid_slice: GridSlice; // set by the host, which may run the grid in slices
// Q4_K scale and min of sub-block j (get_scale_min_k4), branch-free.
fn q4kw_bytes(w: vec3u, j: u32) -> vec3u { return (w >> vec3u(8u * (j % 4u))) & vec3u(255u); }
fn q4kw_sc(w: vec3u, j: u32) -> u32 {
  let b = q4kw_bytes(w, j);
  return select((b.z & 15u) | ((b.x >> 6u) << 4u), b.x & 63u, j < 4u);
}
fn q4kw_m(w: vec3u, j: u32) -> u32 {
  let b = q4kw_bytes(w, j);
  return select((b.z >> 4u) | ((b.y >> 6u) << 4u), b.y & 63u, j < 4u);
}
fn q4k_words(base: u32) -> vec3u { return vec3u(wsc[base], wsc[base + 1u], wsc[base + 2u]); }
fn q4k_sc(base: u32, j: u32) -> u32 { return q4kw_sc(q4k_words(base), j); }
fn q4k_m(base: u32, j: u32) -> u32 { return q4kw_m(q4k_words(base), j); }
var<private> nofuse_zero: u32; // 0 at run time (set from num_workgroups), opaque to the compiler
fn no_fuse(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | nofuse_zero); }
fn no_fuse2(x: vec2f) -> vec2f { return bitcast<vec2f>(bitcast<vec2u>(x) | vec2u(nofuse_zero)); }

// f16 operand tiles in core WGSL: pack2x16float rounds each of two K-consecutive values to f16
// (what f16(v) does), unpack2x16float widens them back exactly.
var<workgroup> sa: array<u32, BM * 16u>; // A [BM, 32] as f16 pairs
var<workgroup> sb: array<u32, BN * 16u>; // B [BN, 32] as f16 pairs
fn put_a(i: u32, v: vec2f) { sa[i] = pack2x16float(v); }
fn put_b(i: u32, v: vec2f) { sb[i] = pack2x16float(v); }
fn get_a(i: u32) -> vec2f { return unpack2x16float(sa[i]); }
fn get_b(i: u32) -> vec2f { return unpack2x16float(sb[i]); }

@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) slice_wg: vec3u) {
  let wg = slice_wg + grid_slice.base; // this workgroup in the whole grid
  let nwg = grid_slice.grid; // the whole grid (a slice's own is smaller)
  let warp = tid / PLANE;
  let lane = tid % PLANE;
  let warp_m = warp / WN;
  let warp_n = warp % WN;
  let mrow0 = wg.y * BM;
  let ncol0 = wg.x * BN;
  set_owner(wg.y * nwg.x + wg.x, warp, lane);
  // f32 accumulators held in registers across K: RM*RN subtiles x PER elements (zero-initialised).
  var acc: array<f32, RM * RN * PER>;
  nofuse_zero = nwg.z >> 31u; // a grid never has 2^31 workgroups in z
  for (var kb = 0u; kb < KB; kb++) {
    let k0 = kb * 32u;
    // A [BM, 32]: the activation, two K-consecutive values per slot; rows past M stage 0.
    for (var i = tid; i < BM * 16u; i += NT) {
      let arow = mrow0 + i / 16u;
      var v = vec2f(0.0);
      if (arow < M) {
        let o = arow * K + k0 + (i % 16u) * 2u;
        v = vec2f(x[o], x[o + 1u]);
      }
      put_a(i, v);
    }
    // B [BN, 32]: Q4_K sub-block is = kb % 8 decoded with its scale folded in, w = d*sc*q - dmin*m.
    // Sub-block 2g / 2g+1 is the low / high nibble of qs byte g*32 + qi (matvec_q4k's map); qi is even,
    // so bytes qi and qi+1 share a word. Rows past N stage 0.
    let is = kb % 8u;
    let g = is / 2u;
    let sbk = kb / 8u;
    let shift = 4u * (is % 2u);
    for (var i = tid; i < BN * 16u; i += NT) {
      let nrow = ncol0 + i / 16u;
      let qi = (i % 16u) * 2u;
      var v = vec2f(0.0);
      if (nrow < N) {
        let blk = nrow * NSB + sbk;
        let ds = wd[blk] * f32(q4k_sc(blk * 3u, is));
        let ms = no_fuse(wdm[blk] * f32(q4k_m(blk * 3u, is)));
        let pair = wqs[blk * 32u + (g * 32u + qi) / 4u] >> (8u * (qi % 4u));
        v = no_fuse2(ds * vec2f(f32((pair >> shift) & 15u), f32((pair >> (shift + 8u)) & 15u))) - ms;
      }
      put_b(i, v);
    }
    workgroupBarrier();
    for (var im = 0u; im < RM; im++) {
      for (var jn = 0u; jn < RN; jn++) {
        let sm = warp_m * RM + im;
        let sn = warp_n * RN + jn;
        for (var e = 0u; e < PER; e++) {
          let p = lane * PER + e;
          let ra = (sm * 16u + p / 16u) * 16u; // first f16 pair of this element's A row
          let rb = (sn * 16u + p % 16u) * 16u; // ... and of its B row (= output column)
          // One 32-block in f32, K in order, then into the accumulator: the seed's default arm.
          var s = 0.0;
          for (var l = 0u; l < 16u; l++) {
            let av = get_a(ra + l);
            let bv = get_b(rb + l);
            s += av.x * bv.x;
            s += av.y * bv.y;
          }
          acc[(im * RN + jn) * PER + e] += s;
        }
      }
    }
    workgroupBarrier();
  }
  for (var im = 0u; im < RM; im++) {
    for (var jn = 0u; jn < RN; jn++) {
      let sm = warp_m * RM + im;
      let sn = warp_n * RN + jn;
      for (var e = 0u; e < PER; e++) {
        let p = lane * PER + e;
        let orow = mrow0 + sm * 16u + p / 16u;
        let ocol = ncol0 + sn * 16u + p % 16u;
        if (orow < M && ocol < N) {
          store_out(orow * N + ocol, acc[(im * RN + jn) * PER + e]);
        }
      }
    }
  }
}
