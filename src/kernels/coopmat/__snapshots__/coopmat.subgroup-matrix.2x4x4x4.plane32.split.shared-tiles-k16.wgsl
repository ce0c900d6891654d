enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

// coopmat-f16 split plan, pass 2 (subgroup-matrix arm): out[M, N] = xt @ wh^T, the f16 operands the pre-passes
// wrote, accumulated in f32. Tile wm=2 wn=4 rm=4 rn=4: BM=128 BN=256, 8 plane(s) of 32 = 256 invocations.

const M = 256u;
const N = 512u;
const K = 256u;
const WM = 2u; // plane grid rows
const WN = 4u; // plane grid cols
const RM = 4u; // 16x16 subtiles per plane, down
const RN = 4u; // 16x16 subtiles per plane, across
const PLANE = 32u;
const NT = 256u; // WM*WN planes
const BM = 128u; // WM*RM*16
const BN = 256u; // WN*RN*16
const PER = 8u; // elements of a 16x16 subtile each lane owns: 256 / PLANE
const KB = K / 32u; // 32-wide K blocks (the scalar arm's sums; the trip count of 32-wide stages)
const KT = K / 16u; // 16-wide fragment tiles of xt per 16 rows
const RS = 24u; // f16 elements per staged row (16 K-values + padding against bank conflicts)
@group(0) @binding(0) var<storage, read> xt: array<array<f16, 256>>; // 16x16 fragment tiles [MP/16][KT][16][16]
@group(0) @binding(1) var<storage, read> wh: array<array<f16, 256>>; // 16x16 fragment tiles [NP/16][KT][16][16]
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // [M, N] row-major

// A [BM, 16] and B [BN, 16] of a stage, two buffers [2][rows][RS]: stage kb is read from buffer kb % 2 while kb + 1 is written.
var<workgroup> sa: array<f16, 6144u>;
var<workgroup> sb: array<f16, 12288u>;


@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) warp: u32, @builtin(subgroup_invocation_id) lane: u32,
        @builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u) {
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
  // Stage 0: B into buffer 0, A into buffer 0.
  var gb0 = subgroup_matrix_right<f16, 16, 16>();
  var gb1 = subgroup_matrix_right<f16, 16, 16>();
  var ga0 = subgroup_matrix_left<f16, 16, 16>();
  gb0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&wh[(ncol0 / 16u + (warp + 0u)) * KT + (0u) * 1u + 0u], 0u, 16u);
  gb1 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&wh[(ncol0 / 16u + (warp + 8u)) * KT + (0u) * 1u + 0u], 0u, 16u);
  ga0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[(mrow0 / 16u + (warp + 0u)) * KT + (0u) * 1u + 0u], 0u, 16u);
  subgroupMatrixStore<col_major>(&sb, (0u) * 6144u + ((warp + 0u)) * 384u + (0u) * 16u, gb0, RS);
  subgroupMatrixStore<col_major>(&sb, (0u) * 6144u + ((warp + 8u)) * 384u + (0u) * 16u, gb1, RS);
  subgroupMatrixStore<row_major>(&sa, (0u) * 3072u + ((warp + 0u)) * 384u + (0u) * 16u, ga0, RS);
  workgroupBarrier();
  for (var kb = 0u; kb < KT; kb++) {
    let cur = kb % 2u;
    // Issue the next stage's loads (the last stage's prefetch reads the slack).
    gb0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&wh[(ncol0 / 16u + (warp + 0u)) * KT + (kb + 1u) * 1u + 0u], 0u, 16u);
    gb1 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&wh[(ncol0 / 16u + (warp + 8u)) * KT + (kb + 1u) * 1u + 0u], 0u, 16u);
    ga0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[(mrow0 / 16u + (warp + 0u)) * KT + (kb + 1u) * 1u + 0u], 0u, 16u);
    {
      // K columns 0..15 of the stage.
      let a_0_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, cur * 3072u + (warp_m * RM + 0u) * 384u + 0u, 24u);
      let a_1_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, cur * 3072u + (warp_m * RM + 1u) * 384u + 0u, 24u);
      let a_2_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, cur * 3072u + (warp_m * RM + 2u) * 384u + 0u, 24u);
      let a_3_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, cur * 3072u + (warp_m * RM + 3u) * 384u + 0u, 24u);
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 6144u + (warp_n * RN + 0u) * 384u + 0u, 24u);
      let b_1 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 6144u + (warp_n * RN + 1u) * 384u + 0u, 24u);
      let b_2 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 6144u + (warp_n * RN + 2u) * 384u + 0u, 24u);
      let b_3 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 6144u + (warp_n * RN + 3u) * 384u + 0u, 24u);
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
    // Write the next stage into the other buffer; the barrier publishes it and retires this one.
    subgroupMatrixStore<col_major>(&sb, (1u - cur) * 6144u + ((warp + 0u)) * 384u + (0u) * 16u, gb0, RS);
    subgroupMatrixStore<col_major>(&sb, (1u - cur) * 6144u + ((warp + 8u)) * 384u + (0u) * 16u, gb1, RS);
    subgroupMatrixStore<row_major>(&sa, (1u - cur) * 3072u + ((warp + 0u)) * 384u + (0u) * 16u, ga0, RS);
    workgroupBarrier();
  }
  // m and n are whole blocks: every fragment goes straight to out.
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
}
