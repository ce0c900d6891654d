// coopmat-f16 split plan, pass 2 (scalar arm): out[M, N] = xt @ wh^T, the f16 operands the pre-passes
// wrote, accumulated in f32. Tile wm=2 wn=2 rm=1 rn=1: BM=32 BN=32, 4 plane(s) of 32 = 128 invocations.

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
const KB = K / 32u; // 32-wide K blocks (the scalar arm's sums; the trip count of 32-wide stages)
const KT = K / 16u; // 16-wide fragment tiles of xt per 16 rows

@group(0) @binding(0) var<storage, read> xt: array<u32>; // f16 pairs, 16x16 fragment tiles
const NSB = K / 256u; // Q4_K super-blocks per weight row
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
fn round_f16x2(x: vec2f) -> vec2f { return unpack2x16float(pack2x16float(x) | nofuse_zero); }
// f16 pair (k, k+1), k even, of weight row c (rows n..NP-1 read row n - 1: never stored).
fn wh_pair(c: u32, k: u32) -> vec2f {
  let blk = min(c, N - 1u) * NSB + k / 256u;
  let j = (k % 256u) / 32u; // sub-block 2g + s: nibble s of qs bytes 32g .. 32g + 31
  let ds = wd[blk] * f32(q4k_sc(blk * 3u, j));
  let ms = no_fuse(wdm[blk] * f32(q4k_m(blk * 3u, j)));
  let byte0 = 32u * (j / 2u) + k % 32u; // even, so the pair's two bytes share a word
  let sh = 8u * (byte0 % 4u) + 4u * (j % 2u);
  let word = wqs[blk * 32u + byte0 / 4u];
  let q = vec2f(f32((word >> sh) & 15u), f32((word >> (sh + 8u)) & 15u));
  return round_f16x2(no_fuse2(ds * q) - ms);
}
// f16 pair (k, k+1), k even, of activation row r.
fn xt_pair(r: u32, k: u32) -> vec2f { return unpack2x16float(xt[(((r / 16u) * KT + k / 16u) * 256u + (r % 16u) * 16u + k % 16u) / 2u]); }

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
    for (var im = 0u; im < RM; im++) {
      for (var jn = 0u; jn < RN; jn++) {
        for (var e = 0u; e < PER; e++) {
          let p = lane * PER + e;
          let r = mrow0 + (warp_m * RM + im) * 16u + p / 16u;
          let c = ncol0 + (warp_n * RN + jn) * 16u + p % 16u;
          // One 32-block in f32, K in order, then into the accumulator: the seed's default arm.
          var s = 0.0;
          for (var l = 0u; l < 16u; l++) {
            let av = xt_pair(r, kb * 32u + 2u * l);
            let bv = wh_pair(c, kb * 32u + 2u * l);
            s += av.x * bv.x;
            s += av.y * bv.y;
          }
          acc[(im * RN + jn) * PER + e] += s;
        }
      }
    }
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
