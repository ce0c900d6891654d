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
const RS = 32u; // f16 elements per staged row (32 K-values + padding)
const BV = BN * 2u; // qs quad loads of a stage

@group(0) @binding(0) var<storage, read> xh: array<u32, 8192>; // f16 activation [MP, K] row-major as f16 pairs, from the pre-pass
@group(0) @binding(1) var<storage, read> wqs: array<vec4u, 512>; // Q4_K qs: 8 vec4u (128 B) per super-block
@group(0) @binding(2) var<storage, read> wsc: array<u32, 192>; // packed 6-bit scales: 3 words per super-block
@group(0) @binding(3) var<storage, read> wd: array<f32, 64>; // d per super-block
@group(0) @binding(4) var<storage, read> wdm: array<f32, 64>; // dmin per super-block
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
// The 4 nibbles at bit sh of the bytes of word q as f32, exactly f32(q): OR-ing a 4-bit value into the
// mantissa of 2^23 and subtracting 2^23 is exact and avoids int-to-float conversions (a quarter-rate unit).
fn nib_f32(q: u32, sh: vec4u) -> vec4f {
  let nib = ((vec4u(q) >> vec4u(0u, 8u, 16u, 24u)) >> sh) & vec4u(15u);
  return bitcast<vec4f>(nib | vec4u(0x4b000000u)) - vec4f(8388608.0);
}

// Double-buffered f16 operand tiles [2][rows][32] (0 f16 of padding a row): stage kb is
// read from buffer kb % 2 while stage kb + 1 is decoded into the other. Only B is staged: A is read from xh. Core WGSL: pack2x16float pairs, as in the unpipelined tiles.
fn get_a2(e: u32) -> vec2f { return unpack2x16float(xh[e / 2u]); } // A from global memory
var<workgroup> sb: array<u32, 1024u>; // B [BN, 32]: row n is column n of B^T, two buffers of f16 pairs
fn put_b4(e: u32, v: vec4f) { sb[e / 2u] = pack2x16float(v.xy); sb[e / 2u + 1u] = pack2x16float(v.zw); }
fn get_b2(e: u32) -> vec2f { return unpack2x16float(sb[e / 2u]); }

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
  // Prefetch registers of the next stage (raw global words; decoded only after the contraction).
  var pq0 = vec4u(0u);
  var pd0 = vec2f(0.0);
  var pw0 = vec3u(0u);
    {
      // Prefetch stage 0u: B [BN, 32] as 2 qs quads a row.
      // Sub-block is = kb % 8 is the low / high nibble of qs bytes 32*(is/2) .. +31; item i takes quad i % 2.
      {
        let i = tid + 0u * NT;
        let nrow = ncol0 + i / 2u;
        pq0 = vec4u(0u);
        pd0 = vec2f(0.0);
        pw0 = vec3u(0u);
        if (i < BV && nrow < N) {
          let blk = nrow * NSB + (0u) / 8u;
          pq0 = wqs[blk * 8u + (((0u) % 8u) / 2u) * 2u + i % 2u];
          pd0 = vec2f(wd[blk], wdm[blk]);
          pw0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
        }
      }
    }
    {
      // Commit stage 0u into buffer 0u: w = d*sc*q - dmin*m in f32, then f16 (as the unpipelined stage).
      {
        let i = tid + 0u * NT;
        let is = (0u) % 8u;
        let ds = pd0.x * f32(q4kw_sc(pw0, is));
        let ms = pd0.y * f32(q4kw_m(pw0, is));
        let sh = vec4u(4u * (is % 2u));
        let e0 = (0u) * (BN * RS) + (i / 2u) * RS + (i % 2u) * 16u;
        if (i < BV) {
          put_b4(e0 + 0u, ds * nib_f32(pq0.x, sh) - ms);
          put_b4(e0 + 4u, ds * nib_f32(pq0.y, sh) - ms);
          put_b4(e0 + 8u, ds * nib_f32(pq0.z, sh) - ms);
          put_b4(e0 + 12u, ds * nib_f32(pq0.w, sh) - ms);
        }
      }
    }
  workgroupBarrier();
  for (var kb = 0u; kb < KB; kb++) {
    let cur = kb % 2u;
    let more = kb + 1u < KB;
    if (more) {
      {
        // Prefetch stage kb + 1u: B [BN, 32] as 2 qs quads a row.
        // Sub-block is = kb % 8 is the low / high nibble of qs bytes 32*(is/2) .. +31; item i takes quad i % 2.
        {
          let i = tid + 0u * NT;
          let nrow = ncol0 + i / 2u;
          pq0 = vec4u(0u);
          pd0 = vec2f(0.0);
          pw0 = vec3u(0u);
          if (i < BV && nrow < N) {
            let blk = nrow * NSB + (kb + 1u) / 8u;
            pq0 = wqs[blk * 8u + (((kb + 1u) % 8u) / 2u) * 2u + i % 2u];
            pd0 = vec2f(wd[blk], wdm[blk]);
            pw0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
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
          let ra = (mrow0 + sm * 16u + p / 16u) * K + kb * 32u; // first f16 of this element's A row
          let rb = cur * (BN * RS) + (sn * 16u + p % 16u) * RS; // ... and of its B row (= output column)
          // One 32-block in f32, K in order, then into the accumulator: the seed's default arm.
          var s = 0.0;
          for (var l = 0u; l < 16u; l++) {
            let av = get_a2(ra + 2u * l);
            let bv = get_b2(rb + 2u * l);
            s += av.x * bv.x;
            s += av.y * bv.y;
          }
          acc[(im * RN + jn) * PER + e] += s;
        }
      }
    }
    if (more) {
      {
        // Commit stage kb + 1u into buffer 1u - cur: w = d*sc*q - dmin*m in f32, then f16 (as the unpipelined stage).
        {
          let i = tid + 0u * NT;
          let is = (kb + 1u) % 8u;
          let ds = pd0.x * f32(q4kw_sc(pw0, is));
          let ms = pd0.y * f32(q4kw_m(pw0, is));
          let sh = vec4u(4u * (is % 2u));
          let e0 = (1u - cur) * (BN * RS) + (i / 2u) * RS + (i % 2u) * 16u;
          if (i < BV) {
            put_b4(e0 + 0u, ds * nib_f32(pq0.x, sh) - ms);
            put_b4(e0 + 4u, ds * nib_f32(pq0.y, sh) - ms);
            put_b4(e0 + 8u, ds * nib_f32(pq0.z, sh) - ms);
            put_b4(e0 + 12u, ds * nib_f32(pq0.w, sh) - ms);
          }
        }
      }
    }
    // Buffer cur is read by everyone before the next iteration overwrites it, and 1 - cur is complete.
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
