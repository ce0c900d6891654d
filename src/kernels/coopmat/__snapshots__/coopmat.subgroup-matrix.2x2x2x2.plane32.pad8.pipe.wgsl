enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

// coopmat-f16 (subgroup-matrix arm, f16 native), twin of the seed's mmq_q4k_coopmat_tile:
//   out[M, N] = x[M, K] @ W[N, K]^T, W = d*sc*q - dmin*m decoded from Q4_K; both operands rounded to f16,
//   accumulated in f32. Tile wm=2 wn=2 rm=2 rn=2: BM=64 BN=64, 4 plane(s) of 32 = 128 invocations.

const M = 64u;
const N = 64u;
const K = 256u;
const WM = 2u; // plane grid rows
const WN = 2u; // plane grid cols
const RM = 2u; // 16x16 subtiles per plane, down
const RN = 2u; // 16x16 subtiles per plane, across
const PLANE = 32u;
const NT = 128u; // WM*WN planes
const BM = 64u; // WM*RM*16
const BN = 64u; // WN*RN*16
const PER = 8u; // elements of a 16x16 subtile each lane owns: 256 / PLANE
const KB = K / 32u; // 32-wide K-blocks (one Q4_K sub-block each)
const NSB = K / 256u; // Q4_K super-blocks per weight row
const RS = 40u; // f16 elements per staged row (32 K-values + padding)
const AV = BM * 8u; // activation vec4 loads of a stage
const BV = BN * 2u; // qs quad loads of a stage

@group(0) @binding(0) var<storage, read> x: array<vec4f, 4096>; // activation [M, K] row-major
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

// Double-buffered f16 operand tiles [2][rows][40] (8 f16 of padding a row): stage kb is
// read from buffer kb % 2 while stage kb + 1 is decoded into the other.
var<workgroup> sa: array<f16, 5120u>; // A [BM, 32], two buffers
fn put_a4(e: u32, v: vec4f) { let h = vec4h(v); sa[e] = h.x; sa[e + 1u] = h.y; sa[e + 2u] = h.z; sa[e + 3u] = h.w; }
fn get_a2(e: u32) -> vec2f { return vec2f(f32(sa[e]), f32(sa[e + 1u])); }
var<workgroup> sb: array<f16, 5120u>; // B [BN, 32]: row n is column n of B^T, two buffers
fn put_b4(e: u32, v: vec4f) { let h = vec4h(v); sb[e] = h.x; sb[e + 1u] = h.y; sb[e + 2u] = h.z; sb[e + 3u] = h.w; }
fn get_b2(e: u32) -> vec2f { return vec2f(f32(sb[e]), f32(sb[e + 1u])); }

// One 16x16 f32 spill per plane: the result matrix's lane layout is opaque, so it is stored here and
// copied out by the per-lane partition, which also applies the tail guards and the ownership hooks.
var<workgroup> sc: array<f32, WM * WN * 256u>;

fn copy_out(warp: u32, lane: u32, row0: u32, col0: u32) {
  for (var e = 0u; e < PER; e++) {
    let p = lane * PER + e;
    let orow = row0 + p / 16u;
    let ocol = col0 + p % 16u;
    if (orow < M && ocol < N) {
      store_out(orow * N + ocol, sc[warp * 256u + p]);
    }
  }
}

@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) warp: u32, @builtin(subgroup_invocation_id) lane: u32,
        @builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  // subgroup_id is subgroup-uniform, so the matrix offsets derived from it are too (a requirement).
  let warp_m = warp / WN;
  let warp_n = warp % WN;
  let mrow0 = wg.y * BM;
  let ncol0 = wg.x * BN;
  set_owner(wg.y * nwg.x + wg.x, warp, lane);
  // RM*RN f32 result matrices held across the whole K loop (the hand kernel's coopmat acc[][]).
  var acc_0_0 = subgroup_matrix_result<f32, 16, 16>();
  var acc_0_1 = subgroup_matrix_result<f32, 16, 16>();
  var acc_1_0 = subgroup_matrix_result<f32, 16, 16>();
  var acc_1_1 = subgroup_matrix_result<f32, 16, 16>();
  // Prefetch registers of the next stage (raw global words; decoded only after the contraction).
  var pa0 = vec4f(0.0);
  var pa1 = vec4f(0.0);
  var pa2 = vec4f(0.0);
  var pa3 = vec4f(0.0);
  var pq0 = vec4u(0u);
  var pd0 = vec2f(0.0);
  var pw0 = vec3u(0u);
    {
      // Prefetch stage 0u: A [BM, 32] as 8 vec4 a row, B [BN, 32] as 2 qs quads a row.
      // Sub-block is = kb % 8 is the low / high nibble of qs bytes 32*(is/2) .. +31; item i takes quad i % 2.
      {
        let i = tid + 0u * NT;
        let arow = mrow0 + i / 8u;
        pa0 = vec4f(0.0);
        if (arow < M) { pa0 = x[arow * (K / 4u) + (0u) * 8u + i % 8u]; }
      }
      {
        let i = tid + 1u * NT;
        let arow = mrow0 + i / 8u;
        pa1 = vec4f(0.0);
        if (arow < M) { pa1 = x[arow * (K / 4u) + (0u) * 8u + i % 8u]; }
      }
      {
        let i = tid + 2u * NT;
        let arow = mrow0 + i / 8u;
        pa2 = vec4f(0.0);
        if (arow < M) { pa2 = x[arow * (K / 4u) + (0u) * 8u + i % 8u]; }
      }
      {
        let i = tid + 3u * NT;
        let arow = mrow0 + i / 8u;
        pa3 = vec4f(0.0);
        if (arow < M) { pa3 = x[arow * (K / 4u) + (0u) * 8u + i % 8u]; }
      }
      {
        let i = tid + 0u * NT;
        let nrow = ncol0 + i / 2u;
        pq0 = vec4u(0u);
        pd0 = vec2f(0.0);
        pw0 = vec3u(0u);
        if (nrow < N) {
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
        put_a4((0u) * (BM * RS) + (i / 8u) * RS + (i % 8u) * 4u, pa0);
      }
      {
        let i = tid + 1u * NT;
        put_a4((0u) * (BM * RS) + (i / 8u) * RS + (i % 8u) * 4u, pa1);
      }
      {
        let i = tid + 2u * NT;
        put_a4((0u) * (BM * RS) + (i / 8u) * RS + (i % 8u) * 4u, pa2);
      }
      {
        let i = tid + 3u * NT;
        put_a4((0u) * (BM * RS) + (i / 8u) * RS + (i % 8u) * 4u, pa3);
      }
      {
        let i = tid + 0u * NT;
        let is = (0u) % 8u;
        let ds = pd0.x * f32(q4kw_sc(pw0, is));
        let ms = pd0.y * f32(q4kw_m(pw0, is));
        let sh = vec4u(4u * (is % 2u));
        let e0 = (0u) * (BN * RS) + (i / 2u) * RS + (i % 2u) * 16u;
        put_b4(e0 + 0u, ds * nib_f32(pq0.x, sh) - ms);
        put_b4(e0 + 4u, ds * nib_f32(pq0.y, sh) - ms);
        put_b4(e0 + 8u, ds * nib_f32(pq0.z, sh) - ms);
        put_b4(e0 + 12u, ds * nib_f32(pq0.w, sh) - ms);
      }
    }
  workgroupBarrier();
  for (var kb = 0u; kb < KB; kb++) {
    let cur = kb % 2u;
    let more = kb + 1u < KB;
    if (more) {
      {
        // Prefetch stage kb + 1u: A [BM, 32] as 8 vec4 a row, B [BN, 32] as 2 qs quads a row.
        // Sub-block is = kb % 8 is the low / high nibble of qs bytes 32*(is/2) .. +31; item i takes quad i % 2.
        {
          let i = tid + 0u * NT;
          let arow = mrow0 + i / 8u;
          pa0 = vec4f(0.0);
          if (arow < M) { pa0 = x[arow * (K / 4u) + (kb + 1u) * 8u + i % 8u]; }
        }
        {
          let i = tid + 1u * NT;
          let arow = mrow0 + i / 8u;
          pa1 = vec4f(0.0);
          if (arow < M) { pa1 = x[arow * (K / 4u) + (kb + 1u) * 8u + i % 8u]; }
        }
        {
          let i = tid + 2u * NT;
          let arow = mrow0 + i / 8u;
          pa2 = vec4f(0.0);
          if (arow < M) { pa2 = x[arow * (K / 4u) + (kb + 1u) * 8u + i % 8u]; }
        }
        {
          let i = tid + 3u * NT;
          let arow = mrow0 + i / 8u;
          pa3 = vec4f(0.0);
          if (arow < M) { pa3 = x[arow * (K / 4u) + (kb + 1u) * 8u + i % 8u]; }
        }
        {
          let i = tid + 0u * NT;
          let nrow = ncol0 + i / 2u;
          pq0 = vec4u(0u);
          pd0 = vec2f(0.0);
          pw0 = vec3u(0u);
          if (nrow < N) {
            let blk = nrow * NSB + (kb + 1u) / 8u;
            pq0 = wqs[blk * 8u + (((kb + 1u) % 8u) / 2u) * 2u + i % 2u];
            pd0 = vec2f(wd[blk], wdm[blk]);
            pw0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
          }
        }
      }
    }
    {
      // K columns 0..15 of the staged block.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 2560u + (warp_n * RN + 0u) * 640u + 0u, 40u);
      let b_1 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 2560u + (warp_n * RN + 1u) * 640u + 0u, 40u);
      {
        let a_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, cur * 2560u + (warp_m * RM + 0u) * 640u + 0u, 40u);
        acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0, b_0, acc_0_0);
        acc_0_1 = subgroupMatrixMultiplyAccumulate(a_0, b_1, acc_0_1);
      }
      {
        let a_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, cur * 2560u + (warp_m * RM + 1u) * 640u + 0u, 40u);
        acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1, b_0, acc_1_0);
        acc_1_1 = subgroupMatrixMultiplyAccumulate(a_1, b_1, acc_1_1);
      }
    }
    {
      // K columns 16..31 of the staged block.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 2560u + (warp_n * RN + 0u) * 640u + 16u, 40u);
      let b_1 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 2560u + (warp_n * RN + 1u) * 640u + 16u, 40u);
      {
        let a_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, cur * 2560u + (warp_m * RM + 0u) * 640u + 16u, 40u);
        acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0, b_0, acc_0_0);
        acc_0_1 = subgroupMatrixMultiplyAccumulate(a_0, b_1, acc_0_1);
      }
      {
        let a_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, cur * 2560u + (warp_m * RM + 1u) * 640u + 16u, 40u);
        acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1, b_0, acc_1_0);
        acc_1_1 = subgroupMatrixMultiplyAccumulate(a_1, b_1, acc_1_1);
      }
    }
    if (more) {
      {
        // Commit stage kb + 1u into buffer 1u - cur: w = d*sc*q - dmin*m in f32, then f16 (as the unpipelined stage).
        {
          let i = tid + 0u * NT;
          put_a4((1u - cur) * (BM * RS) + (i / 8u) * RS + (i % 8u) * 4u, pa0);
        }
        {
          let i = tid + 1u * NT;
          put_a4((1u - cur) * (BM * RS) + (i / 8u) * RS + (i % 8u) * 4u, pa1);
        }
        {
          let i = tid + 2u * NT;
          put_a4((1u - cur) * (BM * RS) + (i / 8u) * RS + (i % 8u) * 4u, pa2);
        }
        {
          let i = tid + 3u * NT;
          put_a4((1u - cur) * (BM * RS) + (i / 8u) * RS + (i % 8u) * 4u, pa3);
        }
        {
          let i = tid + 0u * NT;
          let is = (kb + 1u) % 8u;
          let ds = pd0.x * f32(q4kw_sc(pw0, is));
          let ms = pd0.y * f32(q4kw_m(pw0, is));
          let sh = vec4u(4u * (is % 2u));
          let e0 = (1u - cur) * (BN * RS) + (i / 2u) * RS + (i % 2u) * 16u;
          put_b4(e0 + 0u, ds * nib_f32(pq0.x, sh) - ms);
          put_b4(e0 + 4u, ds * nib_f32(pq0.y, sh) - ms);
          put_b4(e0 + 8u, ds * nib_f32(pq0.z, sh) - ms);
          put_b4(e0 + 12u, ds * nib_f32(pq0.w, sh) - ms);
        }
      }
    }
    // Buffer cur is read by everyone before the next iteration overwrites it, and 1 - cur is complete.
    workgroupBarrier();
  }

  subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_0_0, 16u);
  workgroupBarrier();
  copy_out(warp, lane, mrow0 + (warp_m * RM + 0u) * 16u, ncol0 + (warp_n * RN + 0u) * 16u);
  workgroupBarrier();
  subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_0_1, 16u);
  workgroupBarrier();
  copy_out(warp, lane, mrow0 + (warp_m * RM + 0u) * 16u, ncol0 + (warp_n * RN + 1u) * 16u);
  workgroupBarrier();
  subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_1_0, 16u);
  workgroupBarrier();
  copy_out(warp, lane, mrow0 + (warp_m * RM + 1u) * 16u, ncol0 + (warp_n * RN + 0u) * 16u);
  workgroupBarrier();
  subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_1_1, 16u);
  workgroupBarrier();
  copy_out(warp, lane, mrow0 + (warp_m * RM + 1u) * 16u, ncol0 + (warp_n * RN + 1u) * 16u);
  workgroupBarrier();
}
