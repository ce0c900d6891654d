// coopmat-f16 (scalar arm, f16 emulated with pack2x16float), twin of the seed's mmq_q4k_coopmat_tile:
//   out[M, N] = x[M, K] @ W[N, K]^T, W = d*sc*q - dmin*m decoded from Q4_K; both operands rounded to f16,
//   accumulated in f32. Tile wm=2 wn=2 rm=1 rn=1: BM=32 BN=32, 4 plane(s) of 32 = 128 invocations.
//   2 K-blocks of 32 (64 K-values) staged per barrier pair.

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
const KS = 2u; // 32-wide K-blocks staged per barrier pair

@group(0) @binding(0) var<storage, read> x: array<f32>; // activation [M, K] row-major
@group(0) @binding(1) var<storage, read> wqs: array<u32>; // Q4_K qs: 32 u32 (128 B) per super-block
@group(0) @binding(2) var<storage, read> wsc: array<u32>; // packed 6-bit scales: 3 words per super-block
@group(0) @binding(3) var<storage, read> wd: array<f32>; // d per super-block
@group(0) @binding(4) var<storage, read> wdm: array<f32>; // dmin per super-block
@group(0) @binding(5) var<storage, read_write> out: array<f32>; // [M, N] row-major

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

// Rows padded to 72 f16 (8 past the 64 K-values) so consecutive rows fall on other banks.
fn slot(i: u32) -> u32 { return i + (i / 32u) * 4u; }
// f16 operand tiles in core WGSL: pack2x16float rounds each of two K-consecutive values to f16
// (what f16(v) does), unpack2x16float widens them back exactly.
var<workgroup> sa: array<u32, BM * 36u>; // A [BM, 64] as f16 pairs
var<workgroup> sb: array<u32, BN * 36u>; // B [BN, 64] as f16 pairs
fn put_a(i: u32, v: vec2f) { sa[slot(i)] = pack2x16float(v); }
fn put_b(i: u32, v: vec2f) { sb[slot(i)] = pack2x16float(v); }
fn get_a(i: u32) -> vec2f { return unpack2x16float(sa[slot(i)]); }
fn get_b(i: u32) -> vec2f { return unpack2x16float(sb[slot(i)]); }

@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let warp = tid / PLANE;
  let lane = tid % PLANE;
  let warp_m = warp / WN;
  let warp_n = warp % WN;
  let mrow0 = wg.y * BM;
  let ncol0 = wg.x * BN;
  set_owner(wg.y * nwg.x + wg.x, warp, lane);
  // f32 accumulators held in registers across K: RM*RN subtiles x PER elements (zero-initialised).
  var acc: array<f32, RM * RN * PER>;
  for (var kb = 0u; kb < KB; kb += KS) {
    let k0 = kb * 32u;
    // A [BM, 64]: the activation, two K-consecutive values per slot; rows past M stage 0.
    for (var i = tid; i < BM * 32u; i += NT) {
      let arow = mrow0 + i / 32u;
      var v = vec2f(0.0);
      if (arow < M) {
        let o = arow * K + k0 + (i % 32u) * 2u;
        v = vec2f(x[o], x[o + 1u]);
      }
      put_a(i, v);
    }
    // B [BN, 32*KS]: one invocation per (row, qs group g, quad j of 4 words): it decodes d*sc and
    // dmin*m of sub-blocks 2g and 2g+1 once and expands the 16 bytes g*32 + 16j .. +15 into 16 weights
    // of each (low nibble -> sub-block 2g, high -> 2g+1; w = d*sc*q - dmin*m as in the per-pair stage).
    // Rows past N stage 0.
    for (var i = tid; i < BN * KS; i += NT) {
      let r = i / KS;
      let c = i % KS;
      let nrow = ncol0 + r;
      let kbi = kb + (c / 2u) * 2u; // the stage's even block 2g of this item
      let is = kbi % 8u;
      let dst = r * (KS * 16u) + (c / 2u) * 32u + (c % 2u) * 8u; // first pair slot of sub-block 2g
      var ds0 = 0.0;
      var ms0 = 0.0;
      var ds1 = 0.0;
      var ms1 = 0.0;
      var wbase = 0u;
      if (nrow < N) {
        let blk = nrow * NSB + kbi / 8u;
        let d = wd[blk];
        let dm = wdm[blk];
        ds0 = d * f32(q4k_sc(blk * 3u, is));
        ms0 = dm * f32(q4k_m(blk * 3u, is));
        ds1 = d * f32(q4k_sc(blk * 3u, is + 1u));
        ms1 = dm * f32(q4k_m(blk * 3u, is + 1u));
        wbase = blk * 32u + (is / 2u) * 8u + (c % 2u) * 4u;
      }
      for (var w = 0u; w < 4u; w++) {
        var lo = vec4f(0.0);
        var hi = vec4f(0.0);
        if (nrow < N) {
          let q = vec4u(wqs[wbase + w]) >> vec4u(0u, 8u, 16u, 24u);
          lo = ds0 * vec4f(q & vec4u(15u)) - ms0;
          hi = ds1 * vec4f((q >> vec4u(4u)) & vec4u(15u)) - ms1;
        }
        put_b(dst + 2u * w, lo.xy);
        put_b(dst + 2u * w + 1u, lo.zw);
        put_b(dst + 16u + 2u * w, hi.xy);
        put_b(dst + 16u + 2u * w + 1u, hi.zw);
      }
    }
    workgroupBarrier();
    for (var im = 0u; im < RM; im++) {
      for (var jn = 0u; jn < RN; jn++) {
        let sm = warp_m * RM + im;
        let sn = warp_n * RN + jn;
        for (var e = 0u; e < PER; e++) {
          let p = lane * PER + e;
          let ra = (sm * 16u + p / 16u) * 32u; // first f16 pair of this element's A row
          let rb = (sn * 16u + p % 16u) * 32u; // ... and of its B row (= output column)
          for (var bi = 0u; bi < KS; bi++) {
            // One 32-block in f32, K in order, then into the accumulator: the seed's default arm.
            var s = 0.0;
            for (var l = 0u; l < 16u; l++) {
              let av = get_a(ra + bi * 16u + l);
              let bv = get_b(rb + bi * 16u + l);
              s += av.x * bv.x;
              s += av.y * bv.y;
            }
            acc[(im * RN + jn) * PER + e] += s;
          }
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
