enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

// coopmat-f16 split plan, pass 2 (subgroup-matrix arm): out[M, N] = xt @ wh^T, the f16 operands the pre-passes
// wrote, accumulated in f32. Tile wm=2 wn=1 rm=4 rn=4: BM=128 BN=64, 2 plane(s) of 32 = 64 invocations.

const M = 64u;
const N = 64u;
const K = 256u;
const WM = 2u; // plane grid rows
const WN = 1u; // plane grid cols
const RM = 4u; // 16x16 subtiles per plane, down
const RN = 4u; // 16x16 subtiles per plane, across
const PLANE = 32u;
const NT = 64u; // WM*WN planes
const BM = 128u; // WM*RM*16
const BN = 64u; // WN*RN*16
const PER = 8u; // elements of a 16x16 subtile each lane owns: 256 / PLANE
const KB = K / 32u; // 32-wide K blocks (the scalar arm's sums; the trip count of 32-wide stages)
const KT = K / 16u; // 16-wide fragment tiles of xt per 16 rows
const RS = 72u; // f16 elements per staged B row (64 K-values + padding against bank conflicts)
@group(0) @binding(0) var<storage, read> xt: array<array<f16, 256>>; // 16x16 fragment tiles [MP/16][KT][16][16]
@group(0) @binding(1) var<storage, read> wh: array<vec4u>; // f16 [NP, K] row-major, 8 halves per vec4
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // [M, N] row-major
struct GridSlice { base: vec3u, grid: vec3u } // a slice's first workgroup, and the whole grid
@group(0) @binding(3) var<uniform> grid_slice: GridSlice; // set by the host, which may run the grid in slices

// B [BN, 64] of a stage, two buffers [2][BN][RS]: stage kb is read from buffer kb % 2 while kb + 1 is written.
var<workgroup> sb: array<f16, 9216u>;

// One 16x16 f32 spill per plane for edge subtiles: the fragment's lane layout is opaque.
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
        @builtin(workgroup_id) slice_wg: vec3u) {
  let wg = slice_wg + grid_slice.base; // this workgroup in the whole grid
  let nwg = grid_slice.grid; // the whole grid (a slice's own is smaller)
  // subgroup_id is subgroup-uniform, so the matrix offsets derived from it are too (a requirement).
  let warp_m = warp / WN;
  let warp_n = warp % WN;
  let mrow0 = wg.y * BM;
  let ncol0 = wg.x * BN;
  set_owner(wg.y * nwg.x + wg.x, warp, lane);
  var acc_0_0 = subgroup_matrix_result<f32, 16, 16>();
  var acc_0_1 = subgroup_matrix_result<f32, 16, 16>();
  var acc_0_2 = subgroup_matrix_result<f32, 16, 16>();
  var acc_0_3 = subgroup_matrix_result<f32, 16, 16>();
  var acc_1_0 = subgroup_matrix_result<f32, 16, 16>();
  var acc_1_1 = subgroup_matrix_result<f32, 16, 16>();
  var acc_1_2 = subgroup_matrix_result<f32, 16, 16>();
  var acc_1_3 = subgroup_matrix_result<f32, 16, 16>();
  var acc_2_0 = subgroup_matrix_result<f32, 16, 16>();
  var acc_2_1 = subgroup_matrix_result<f32, 16, 16>();
  var acc_2_2 = subgroup_matrix_result<f32, 16, 16>();
  var acc_2_3 = subgroup_matrix_result<f32, 16, 16>();
  var acc_3_0 = subgroup_matrix_result<f32, 16, 16>();
  var acc_3_1 = subgroup_matrix_result<f32, 16, 16>();
  var acc_3_2 = subgroup_matrix_result<f32, 16, 16>();
  var acc_3_3 = subgroup_matrix_result<f32, 16, 16>();
  // Stage 0: B into buffer 0, A fragments into registers.
  var gb0 = vec4u(0u);
  var gb1 = vec4u(0u);
  var gb2 = vec4u(0u);
  var gb3 = vec4u(0u);
  var gb4 = vec4u(0u);
  var gb5 = vec4u(0u);
  var gb6 = vec4u(0u);
  var gb7 = vec4u(0u);
  gb0 = wh[((ncol0 + (tid + 0u) / 8u) * K + (0u) * 64u + ((tid + 0u) % 8u) * 8u) / 8u];
  gb1 = wh[((ncol0 + (tid + 64u) / 8u) * K + (0u) * 64u + ((tid + 64u) % 8u) * 8u) / 8u];
  gb2 = wh[((ncol0 + (tid + 128u) / 8u) * K + (0u) * 64u + ((tid + 128u) % 8u) * 8u) / 8u];
  gb3 = wh[((ncol0 + (tid + 192u) / 8u) * K + (0u) * 64u + ((tid + 192u) % 8u) * 8u) / 8u];
  gb4 = wh[((ncol0 + (tid + 256u) / 8u) * K + (0u) * 64u + ((tid + 256u) % 8u) * 8u) / 8u];
  gb5 = wh[((ncol0 + (tid + 320u) / 8u) * K + (0u) * 64u + ((tid + 320u) % 8u) * 8u) / 8u];
  gb6 = wh[((ncol0 + (tid + 384u) / 8u) * K + (0u) * 64u + ((tid + 384u) % 8u) * 8u) / 8u];
  gb7 = wh[((ncol0 + (tid + 448u) / 8u) * K + (0u) * 64u + ((tid + 448u) % 8u) * 8u) / 8u];
  {
    let o = (0u) * 4608u + ((tid + 0u) / 8u) * 72u + ((tid + 0u) % 8u) * 8u;
    let p = bitcast<vec2<f16>>(gb0.x);
    let q = bitcast<vec2<f16>>(gb0.y);
    let r = bitcast<vec2<f16>>(gb0.z);
    let s = bitcast<vec2<f16>>(gb0.w);
    sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
  }
  {
    let o = (0u) * 4608u + ((tid + 64u) / 8u) * 72u + ((tid + 64u) % 8u) * 8u;
    let p = bitcast<vec2<f16>>(gb1.x);
    let q = bitcast<vec2<f16>>(gb1.y);
    let r = bitcast<vec2<f16>>(gb1.z);
    let s = bitcast<vec2<f16>>(gb1.w);
    sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
  }
  {
    let o = (0u) * 4608u + ((tid + 128u) / 8u) * 72u + ((tid + 128u) % 8u) * 8u;
    let p = bitcast<vec2<f16>>(gb2.x);
    let q = bitcast<vec2<f16>>(gb2.y);
    let r = bitcast<vec2<f16>>(gb2.z);
    let s = bitcast<vec2<f16>>(gb2.w);
    sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
  }
  {
    let o = (0u) * 4608u + ((tid + 192u) / 8u) * 72u + ((tid + 192u) % 8u) * 8u;
    let p = bitcast<vec2<f16>>(gb3.x);
    let q = bitcast<vec2<f16>>(gb3.y);
    let r = bitcast<vec2<f16>>(gb3.z);
    let s = bitcast<vec2<f16>>(gb3.w);
    sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
  }
  {
    let o = (0u) * 4608u + ((tid + 256u) / 8u) * 72u + ((tid + 256u) % 8u) * 8u;
    let p = bitcast<vec2<f16>>(gb4.x);
    let q = bitcast<vec2<f16>>(gb4.y);
    let r = bitcast<vec2<f16>>(gb4.z);
    let s = bitcast<vec2<f16>>(gb4.w);
    sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
  }
  {
    let o = (0u) * 4608u + ((tid + 320u) / 8u) * 72u + ((tid + 320u) % 8u) * 8u;
    let p = bitcast<vec2<f16>>(gb5.x);
    let q = bitcast<vec2<f16>>(gb5.y);
    let r = bitcast<vec2<f16>>(gb5.z);
    let s = bitcast<vec2<f16>>(gb5.w);
    sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
  }
  {
    let o = (0u) * 4608u + ((tid + 384u) / 8u) * 72u + ((tid + 384u) % 8u) * 8u;
    let p = bitcast<vec2<f16>>(gb6.x);
    let q = bitcast<vec2<f16>>(gb6.y);
    let r = bitcast<vec2<f16>>(gb6.z);
    let s = bitcast<vec2<f16>>(gb6.w);
    sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
  }
  {
    let o = (0u) * 4608u + ((tid + 448u) / 8u) * 72u + ((tid + 448u) % 8u) * 8u;
    let p = bitcast<vec2<f16>>(gb7.x);
    let q = bitcast<vec2<f16>>(gb7.y);
    let r = bitcast<vec2<f16>>(gb7.z);
    let s = bitcast<vec2<f16>>(gb7.w);
    sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
  }
  var pa_0_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (0u) * 4u + 0u], 0u, 16u);
  var pa_0_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (0u) * 4u + 1u], 0u, 16u);
  var pa_0_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (0u) * 4u + 2u], 0u, 16u);
  var pa_0_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (0u) * 4u + 3u], 0u, 16u);
  var pa_1_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (0u) * 4u + 0u], 0u, 16u);
  var pa_1_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (0u) * 4u + 1u], 0u, 16u);
  var pa_1_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (0u) * 4u + 2u], 0u, 16u);
  var pa_1_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (0u) * 4u + 3u], 0u, 16u);
  var pa_2_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 2u) * KT + (0u) * 4u + 0u], 0u, 16u);
  var pa_2_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 2u) * KT + (0u) * 4u + 1u], 0u, 16u);
  var pa_2_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 2u) * KT + (0u) * 4u + 2u], 0u, 16u);
  var pa_2_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 2u) * KT + (0u) * 4u + 3u], 0u, 16u);
  var pa_3_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 3u) * KT + (0u) * 4u + 0u], 0u, 16u);
  var pa_3_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 3u) * KT + (0u) * 4u + 1u], 0u, 16u);
  var pa_3_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 3u) * KT + (0u) * 4u + 2u], 0u, 16u);
  var pa_3_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 3u) * KT + (0u) * 4u + 3u], 0u, 16u);
  workgroupBarrier();
  for (var kb = 0u; kb < K / 64u; kb++) {
    let cur = kb % 2u;
    // Take this stage's A and issue the next stage's loads (the last stage's prefetch reads the slack).
    let a_0_0 = pa_0_0;
    pa_0_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (kb + 1u) * 4u + 0u], 0u, 16u);
    let a_0_1 = pa_0_1;
    pa_0_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (kb + 1u) * 4u + 1u], 0u, 16u);
    let a_0_2 = pa_0_2;
    pa_0_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (kb + 1u) * 4u + 2u], 0u, 16u);
    let a_0_3 = pa_0_3;
    pa_0_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (kb + 1u) * 4u + 3u], 0u, 16u);
    let a_1_0 = pa_1_0;
    pa_1_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (kb + 1u) * 4u + 0u], 0u, 16u);
    let a_1_1 = pa_1_1;
    pa_1_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (kb + 1u) * 4u + 1u], 0u, 16u);
    let a_1_2 = pa_1_2;
    pa_1_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (kb + 1u) * 4u + 2u], 0u, 16u);
    let a_1_3 = pa_1_3;
    pa_1_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (kb + 1u) * 4u + 3u], 0u, 16u);
    let a_2_0 = pa_2_0;
    pa_2_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 2u) * KT + (kb + 1u) * 4u + 0u], 0u, 16u);
    let a_2_1 = pa_2_1;
    pa_2_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 2u) * KT + (kb + 1u) * 4u + 1u], 0u, 16u);
    let a_2_2 = pa_2_2;
    pa_2_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 2u) * KT + (kb + 1u) * 4u + 2u], 0u, 16u);
    let a_2_3 = pa_2_3;
    pa_2_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 2u) * KT + (kb + 1u) * 4u + 3u], 0u, 16u);
    let a_3_0 = pa_3_0;
    pa_3_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 3u) * KT + (kb + 1u) * 4u + 0u], 0u, 16u);
    let a_3_1 = pa_3_1;
    pa_3_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 3u) * KT + (kb + 1u) * 4u + 1u], 0u, 16u);
    let a_3_2 = pa_3_2;
    pa_3_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 3u) * KT + (kb + 1u) * 4u + 2u], 0u, 16u);
    let a_3_3 = pa_3_3;
    pa_3_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 3u) * KT + (kb + 1u) * 4u + 3u], 0u, 16u);
    gb0 = wh[((ncol0 + (tid + 0u) / 8u) * K + (kb + 1u) * 64u + ((tid + 0u) % 8u) * 8u) / 8u];
    gb1 = wh[((ncol0 + (tid + 64u) / 8u) * K + (kb + 1u) * 64u + ((tid + 64u) % 8u) * 8u) / 8u];
    gb2 = wh[((ncol0 + (tid + 128u) / 8u) * K + (kb + 1u) * 64u + ((tid + 128u) % 8u) * 8u) / 8u];
    gb3 = wh[((ncol0 + (tid + 192u) / 8u) * K + (kb + 1u) * 64u + ((tid + 192u) % 8u) * 8u) / 8u];
    gb4 = wh[((ncol0 + (tid + 256u) / 8u) * K + (kb + 1u) * 64u + ((tid + 256u) % 8u) * 8u) / 8u];
    gb5 = wh[((ncol0 + (tid + 320u) / 8u) * K + (kb + 1u) * 64u + ((tid + 320u) % 8u) * 8u) / 8u];
    gb6 = wh[((ncol0 + (tid + 384u) / 8u) * K + (kb + 1u) * 64u + ((tid + 384u) % 8u) * 8u) / 8u];
    gb7 = wh[((ncol0 + (tid + 448u) / 8u) * K + (kb + 1u) * 64u + ((tid + 448u) % 8u) * 8u) / 8u];
    {
      // K columns 0..15 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 0u) * 1152u + 0u, 72u);
      let b_1 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 1u) * 1152u + 0u, 72u);
      let b_2 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 2u) * 1152u + 0u, 72u);
      let b_3 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 3u) * 1152u + 0u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_0, b_0, acc_0_0);
      acc_0_1 = subgroupMatrixMultiplyAccumulate(a_0_0, b_1, acc_0_1);
      acc_0_2 = subgroupMatrixMultiplyAccumulate(a_0_0, b_2, acc_0_2);
      acc_0_3 = subgroupMatrixMultiplyAccumulate(a_0_0, b_3, acc_0_3);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_0, b_0, acc_1_0);
      acc_1_1 = subgroupMatrixMultiplyAccumulate(a_1_0, b_1, acc_1_1);
      acc_1_2 = subgroupMatrixMultiplyAccumulate(a_1_0, b_2, acc_1_2);
      acc_1_3 = subgroupMatrixMultiplyAccumulate(a_1_0, b_3, acc_1_3);
      acc_2_0 = subgroupMatrixMultiplyAccumulate(a_2_0, b_0, acc_2_0);
      acc_2_1 = subgroupMatrixMultiplyAccumulate(a_2_0, b_1, acc_2_1);
      acc_2_2 = subgroupMatrixMultiplyAccumulate(a_2_0, b_2, acc_2_2);
      acc_2_3 = subgroupMatrixMultiplyAccumulate(a_2_0, b_3, acc_2_3);
      acc_3_0 = subgroupMatrixMultiplyAccumulate(a_3_0, b_0, acc_3_0);
      acc_3_1 = subgroupMatrixMultiplyAccumulate(a_3_0, b_1, acc_3_1);
      acc_3_2 = subgroupMatrixMultiplyAccumulate(a_3_0, b_2, acc_3_2);
      acc_3_3 = subgroupMatrixMultiplyAccumulate(a_3_0, b_3, acc_3_3);
    }
    {
      // K columns 16..31 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 0u) * 1152u + 16u, 72u);
      let b_1 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 1u) * 1152u + 16u, 72u);
      let b_2 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 2u) * 1152u + 16u, 72u);
      let b_3 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 3u) * 1152u + 16u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_1, b_0, acc_0_0);
      acc_0_1 = subgroupMatrixMultiplyAccumulate(a_0_1, b_1, acc_0_1);
      acc_0_2 = subgroupMatrixMultiplyAccumulate(a_0_1, b_2, acc_0_2);
      acc_0_3 = subgroupMatrixMultiplyAccumulate(a_0_1, b_3, acc_0_3);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_1, b_0, acc_1_0);
      acc_1_1 = subgroupMatrixMultiplyAccumulate(a_1_1, b_1, acc_1_1);
      acc_1_2 = subgroupMatrixMultiplyAccumulate(a_1_1, b_2, acc_1_2);
      acc_1_3 = subgroupMatrixMultiplyAccumulate(a_1_1, b_3, acc_1_3);
      acc_2_0 = subgroupMatrixMultiplyAccumulate(a_2_1, b_0, acc_2_0);
      acc_2_1 = subgroupMatrixMultiplyAccumulate(a_2_1, b_1, acc_2_1);
      acc_2_2 = subgroupMatrixMultiplyAccumulate(a_2_1, b_2, acc_2_2);
      acc_2_3 = subgroupMatrixMultiplyAccumulate(a_2_1, b_3, acc_2_3);
      acc_3_0 = subgroupMatrixMultiplyAccumulate(a_3_1, b_0, acc_3_0);
      acc_3_1 = subgroupMatrixMultiplyAccumulate(a_3_1, b_1, acc_3_1);
      acc_3_2 = subgroupMatrixMultiplyAccumulate(a_3_1, b_2, acc_3_2);
      acc_3_3 = subgroupMatrixMultiplyAccumulate(a_3_1, b_3, acc_3_3);
    }
    {
      // K columns 32..47 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 0u) * 1152u + 32u, 72u);
      let b_1 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 1u) * 1152u + 32u, 72u);
      let b_2 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 2u) * 1152u + 32u, 72u);
      let b_3 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 3u) * 1152u + 32u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_2, b_0, acc_0_0);
      acc_0_1 = subgroupMatrixMultiplyAccumulate(a_0_2, b_1, acc_0_1);
      acc_0_2 = subgroupMatrixMultiplyAccumulate(a_0_2, b_2, acc_0_2);
      acc_0_3 = subgroupMatrixMultiplyAccumulate(a_0_2, b_3, acc_0_3);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_2, b_0, acc_1_0);
      acc_1_1 = subgroupMatrixMultiplyAccumulate(a_1_2, b_1, acc_1_1);
      acc_1_2 = subgroupMatrixMultiplyAccumulate(a_1_2, b_2, acc_1_2);
      acc_1_3 = subgroupMatrixMultiplyAccumulate(a_1_2, b_3, acc_1_3);
      acc_2_0 = subgroupMatrixMultiplyAccumulate(a_2_2, b_0, acc_2_0);
      acc_2_1 = subgroupMatrixMultiplyAccumulate(a_2_2, b_1, acc_2_1);
      acc_2_2 = subgroupMatrixMultiplyAccumulate(a_2_2, b_2, acc_2_2);
      acc_2_3 = subgroupMatrixMultiplyAccumulate(a_2_2, b_3, acc_2_3);
      acc_3_0 = subgroupMatrixMultiplyAccumulate(a_3_2, b_0, acc_3_0);
      acc_3_1 = subgroupMatrixMultiplyAccumulate(a_3_2, b_1, acc_3_1);
      acc_3_2 = subgroupMatrixMultiplyAccumulate(a_3_2, b_2, acc_3_2);
      acc_3_3 = subgroupMatrixMultiplyAccumulate(a_3_2, b_3, acc_3_3);
    }
    {
      // K columns 48..63 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 0u) * 1152u + 48u, 72u);
      let b_1 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 1u) * 1152u + 48u, 72u);
      let b_2 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 2u) * 1152u + 48u, 72u);
      let b_3 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 4608u + (warp_n * RN + 3u) * 1152u + 48u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_3, b_0, acc_0_0);
      acc_0_1 = subgroupMatrixMultiplyAccumulate(a_0_3, b_1, acc_0_1);
      acc_0_2 = subgroupMatrixMultiplyAccumulate(a_0_3, b_2, acc_0_2);
      acc_0_3 = subgroupMatrixMultiplyAccumulate(a_0_3, b_3, acc_0_3);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_3, b_0, acc_1_0);
      acc_1_1 = subgroupMatrixMultiplyAccumulate(a_1_3, b_1, acc_1_1);
      acc_1_2 = subgroupMatrixMultiplyAccumulate(a_1_3, b_2, acc_1_2);
      acc_1_3 = subgroupMatrixMultiplyAccumulate(a_1_3, b_3, acc_1_3);
      acc_2_0 = subgroupMatrixMultiplyAccumulate(a_2_3, b_0, acc_2_0);
      acc_2_1 = subgroupMatrixMultiplyAccumulate(a_2_3, b_1, acc_2_1);
      acc_2_2 = subgroupMatrixMultiplyAccumulate(a_2_3, b_2, acc_2_2);
      acc_2_3 = subgroupMatrixMultiplyAccumulate(a_2_3, b_3, acc_2_3);
      acc_3_0 = subgroupMatrixMultiplyAccumulate(a_3_3, b_0, acc_3_0);
      acc_3_1 = subgroupMatrixMultiplyAccumulate(a_3_3, b_1, acc_3_1);
      acc_3_2 = subgroupMatrixMultiplyAccumulate(a_3_3, b_2, acc_3_2);
      acc_3_3 = subgroupMatrixMultiplyAccumulate(a_3_3, b_3, acc_3_3);
    }
    // Write the next stage into the other buffer; the barrier publishes it and retires this one.
    {
      let o = (1u - cur) * 4608u + ((tid + 0u) / 8u) * 72u + ((tid + 0u) % 8u) * 8u;
      let p = bitcast<vec2<f16>>(gb0.x);
      let q = bitcast<vec2<f16>>(gb0.y);
      let r = bitcast<vec2<f16>>(gb0.z);
      let s = bitcast<vec2<f16>>(gb0.w);
      sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
    }
    {
      let o = (1u - cur) * 4608u + ((tid + 64u) / 8u) * 72u + ((tid + 64u) % 8u) * 8u;
      let p = bitcast<vec2<f16>>(gb1.x);
      let q = bitcast<vec2<f16>>(gb1.y);
      let r = bitcast<vec2<f16>>(gb1.z);
      let s = bitcast<vec2<f16>>(gb1.w);
      sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
    }
    {
      let o = (1u - cur) * 4608u + ((tid + 128u) / 8u) * 72u + ((tid + 128u) % 8u) * 8u;
      let p = bitcast<vec2<f16>>(gb2.x);
      let q = bitcast<vec2<f16>>(gb2.y);
      let r = bitcast<vec2<f16>>(gb2.z);
      let s = bitcast<vec2<f16>>(gb2.w);
      sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
    }
    {
      let o = (1u - cur) * 4608u + ((tid + 192u) / 8u) * 72u + ((tid + 192u) % 8u) * 8u;
      let p = bitcast<vec2<f16>>(gb3.x);
      let q = bitcast<vec2<f16>>(gb3.y);
      let r = bitcast<vec2<f16>>(gb3.z);
      let s = bitcast<vec2<f16>>(gb3.w);
      sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
    }
    {
      let o = (1u - cur) * 4608u + ((tid + 256u) / 8u) * 72u + ((tid + 256u) % 8u) * 8u;
      let p = bitcast<vec2<f16>>(gb4.x);
      let q = bitcast<vec2<f16>>(gb4.y);
      let r = bitcast<vec2<f16>>(gb4.z);
      let s = bitcast<vec2<f16>>(gb4.w);
      sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
    }
    {
      let o = (1u - cur) * 4608u + ((tid + 320u) / 8u) * 72u + ((tid + 320u) % 8u) * 8u;
      let p = bitcast<vec2<f16>>(gb5.x);
      let q = bitcast<vec2<f16>>(gb5.y);
      let r = bitcast<vec2<f16>>(gb5.z);
      let s = bitcast<vec2<f16>>(gb5.w);
      sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
    }
    {
      let o = (1u - cur) * 4608u + ((tid + 384u) / 8u) * 72u + ((tid + 384u) % 8u) * 8u;
      let p = bitcast<vec2<f16>>(gb6.x);
      let q = bitcast<vec2<f16>>(gb6.y);
      let r = bitcast<vec2<f16>>(gb6.z);
      let s = bitcast<vec2<f16>>(gb6.w);
      sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
    }
    {
      let o = (1u - cur) * 4608u + ((tid + 448u) / 8u) * 72u + ((tid + 448u) % 8u) * 8u;
      let p = bitcast<vec2<f16>>(gb7.x);
      let q = bitcast<vec2<f16>>(gb7.y);
      let r = bitcast<vec2<f16>>(gb7.z);
      let s = bitcast<vec2<f16>>(gb7.w);
      sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
    }
    workgroupBarrier();
  }
  if (mrow0 + BM <= M && ncol0 + BN <= N) {
    // The whole block is inside m x n: every fragment goes straight to out.
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 0u) * 16u) * N + ncol0 + (warp_n * RN + 0u) * 16u, acc_0_0, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 0u) * 16u) * N + ncol0 + (warp_n * RN + 1u) * 16u, acc_0_1, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 0u) * 16u) * N + ncol0 + (warp_n * RN + 2u) * 16u, acc_0_2, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 0u) * 16u) * N + ncol0 + (warp_n * RN + 3u) * 16u, acc_0_3, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 1u) * 16u) * N + ncol0 + (warp_n * RN + 0u) * 16u, acc_1_0, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 1u) * 16u) * N + ncol0 + (warp_n * RN + 1u) * 16u, acc_1_1, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 1u) * 16u) * N + ncol0 + (warp_n * RN + 2u) * 16u, acc_1_2, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 1u) * 16u) * N + ncol0 + (warp_n * RN + 3u) * 16u, acc_1_3, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 2u) * 16u) * N + ncol0 + (warp_n * RN + 0u) * 16u, acc_2_0, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 2u) * 16u) * N + ncol0 + (warp_n * RN + 1u) * 16u, acc_2_1, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 2u) * 16u) * N + ncol0 + (warp_n * RN + 2u) * 16u, acc_2_2, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 2u) * 16u) * N + ncol0 + (warp_n * RN + 3u) * 16u, acc_2_3, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 3u) * 16u) * N + ncol0 + (warp_n * RN + 0u) * 16u, acc_3_0, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 3u) * 16u) * N + ncol0 + (warp_n * RN + 1u) * 16u, acc_3_1, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 3u) * 16u) * N + ncol0 + (warp_n * RN + 2u) * 16u, acc_3_2, N);
    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + 3u) * 16u) * N + ncol0 + (warp_n * RN + 3u) * 16u, acc_3_3, N);
  } else {
    // An edge block (workgroup-uniform branch, so its barriers are legal): spill and copy with guards.
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_0_0, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 0u) * 16u, ncol0 + (warp_n * RN + 0u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_0_1, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 0u) * 16u, ncol0 + (warp_n * RN + 1u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_0_2, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 0u) * 16u, ncol0 + (warp_n * RN + 2u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_0_3, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 0u) * 16u, ncol0 + (warp_n * RN + 3u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_1_0, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 1u) * 16u, ncol0 + (warp_n * RN + 0u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_1_1, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 1u) * 16u, ncol0 + (warp_n * RN + 1u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_1_2, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 1u) * 16u, ncol0 + (warp_n * RN + 2u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_1_3, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 1u) * 16u, ncol0 + (warp_n * RN + 3u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_2_0, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 2u) * 16u, ncol0 + (warp_n * RN + 0u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_2_1, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 2u) * 16u, ncol0 + (warp_n * RN + 1u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_2_2, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 2u) * 16u, ncol0 + (warp_n * RN + 2u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_2_3, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 2u) * 16u, ncol0 + (warp_n * RN + 3u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_3_0, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 3u) * 16u, ncol0 + (warp_n * RN + 0u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_3_1, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 3u) * 16u, ncol0 + (warp_n * RN + 1u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_3_2, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 3u) * 16u, ncol0 + (warp_n * RN + 2u) * 16u);
    workgroupBarrier();
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_3_3, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 3u) * 16u, ncol0 + (warp_n * RN + 3u) * 16u);
    workgroupBarrier();
  }
}
