enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

// coopmat-f16 split plan, pass 2 (subgroup-matrix arm): out[M, N] = xt @ wh^T, the f16 operands the pre-passes
// wrote, accumulated in f32. Tile wm=2 wn=2 rm=1 rn=1: BM=32 BN=32, 4 plane(s) of 32 = 128 invocations.

const M = 192u;
const N = 40u;
const K = 512u;
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
var<private> w0: u32; // first weight row of this row tile's matrix in the bank
const NP = 64u; // weight rows of a matrix, padded to whole tiles
const NONE = 4294967295u;
const SLOTS_AT = 7u; // routing table: [0] row tiles in use, [1 + y] expert of row tile y, [SLOTS_AT + row] slot of a row
var<workgroup> tile_expert: u32;
const RS = 72u; // f16 elements per staged B row (64 K-values + padding against bank conflicts)
@group(0) @binding(0) var<storage, read> xt: array<array<f16, 256>>; // 16x16 fragment tiles [MP/16][KT][16][16]
@group(0) @binding(1) var<storage, read> wh: array<vec4u>; // f16 [NP, K] row-major, 8 halves per vec4
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // [M, N] row-major
@group(0) @binding(3) var<storage, read> groups: array<u32>; // the routing table
struct GridSlice { base: vec3u, grid: vec3u } // a slice's first workgroup, and the whole grid
@group(0) @binding(4) var<uniform> grid_slice: GridSlice; // set by the host, which may run the grid in slices

// B [BN, 64] of a stage, two buffers [2][BN][RS]: stage kb is read from buffer kb % 2 while kb + 1 is written.
var<workgroup> sb: array<f16, 4608u>;

// One 16x16 f32 spill per plane for edge subtiles: the fragment's lane layout is opaque.
var<workgroup> sc: array<f32, WM * WN * 256u>;

fn copy_out(warp: u32, lane: u32, row0: u32, col0: u32) {
  for (var e = 0u; e < PER; e++) {
    let p = lane * PER + e;
    let orow = row0 + p / 16u;
    let ocol = col0 + p % 16u;
    let slot = groups[SLOTS_AT + orow];
    if (slot != NONE && ocol < N) {
      store_out(slot * N + ocol, sc[warp * 256u + p]);
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
  // Row tile wg.y holds one expert's rows, or none past the tiles in use (the workgroup exits).
  if (tid == 0u) { tile_expert = select(NONE, groups[1u + wg.y], wg.y < groups[0]); }
  let w_bank = workgroupUniformLoad(&tile_expert);
  if (w_bank == NONE) { return; }
  w0 = w_bank * NP;
  var acc_0_0 = subgroup_matrix_result<f32, 16, 16>();
  // Stage 0: B into buffer 0, A fragments into registers.
  var gb0 = vec4u(0u);
  var gb1 = vec4u(0u);
  gb0 = wh[((w0 + ncol0 + (tid + 0u) / 8u) * K + (0u) * 64u + ((tid + 0u) % 8u) * 8u) / 8u];
  gb1 = wh[((w0 + ncol0 + (tid + 128u) / 8u) * K + (0u) * 64u + ((tid + 128u) % 8u) * 8u) / 8u];
  {
    let o = (0u) * 2304u + ((tid + 0u) / 8u) * 72u + ((tid + 0u) % 8u) * 8u;
    let p = bitcast<vec2<f16>>(gb0.x);
    let q = bitcast<vec2<f16>>(gb0.y);
    let r = bitcast<vec2<f16>>(gb0.z);
    let s = bitcast<vec2<f16>>(gb0.w);
    sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
  }
  {
    let o = (0u) * 2304u + ((tid + 128u) / 8u) * 72u + ((tid + 128u) % 8u) * 8u;
    let p = bitcast<vec2<f16>>(gb1.x);
    let q = bitcast<vec2<f16>>(gb1.y);
    let r = bitcast<vec2<f16>>(gb1.z);
    let s = bitcast<vec2<f16>>(gb1.w);
    sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
  }
  var pa_0_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (0u) * 4u + 0u], 0u, 16u);
  var pa_0_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (0u) * 4u + 1u], 0u, 16u);
  var pa_0_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (0u) * 4u + 2u], 0u, 16u);
  var pa_0_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (0u) * 4u + 3u], 0u, 16u);
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
    gb0 = wh[((w0 + ncol0 + (tid + 0u) / 8u) * K + (kb + 1u) * 64u + ((tid + 0u) % 8u) * 8u) / 8u];
    gb1 = wh[((w0 + ncol0 + (tid + 128u) / 8u) * K + (kb + 1u) * 64u + ((tid + 128u) % 8u) * 8u) / 8u];
    {
      // K columns 0..15 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 2304u + (warp_n * RN + 0u) * 1152u + 0u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_0, b_0, acc_0_0);
    }
    {
      // K columns 16..31 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 2304u + (warp_n * RN + 0u) * 1152u + 16u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_1, b_0, acc_0_0);
    }
    {
      // K columns 32..47 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 2304u + (warp_n * RN + 0u) * 1152u + 32u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_2, b_0, acc_0_0);
    }
    {
      // K columns 48..63 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, cur * 2304u + (warp_n * RN + 0u) * 1152u + 48u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_3, b_0, acc_0_0);
    }
    // Write the next stage into the other buffer; the barrier publishes it and retires this one.
    {
      let o = (1u - cur) * 2304u + ((tid + 0u) / 8u) * 72u + ((tid + 0u) % 8u) * 8u;
      let p = bitcast<vec2<f16>>(gb0.x);
      let q = bitcast<vec2<f16>>(gb0.y);
      let r = bitcast<vec2<f16>>(gb0.z);
      let s = bitcast<vec2<f16>>(gb0.w);
      sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
    }
    {
      let o = (1u - cur) * 2304u + ((tid + 128u) / 8u) * 72u + ((tid + 128u) % 8u) * 8u;
      let p = bitcast<vec2<f16>>(gb1.x);
      let q = bitcast<vec2<f16>>(gb1.y);
      let r = bitcast<vec2<f16>>(gb1.z);
      let s = bitcast<vec2<f16>>(gb1.w);
      sb[o + 0u] = p.x; sb[o + 1u] = p.y; sb[o + 2u] = q.x; sb[o + 3u] = q.y; sb[o + 4u] = r.x; sb[o + 5u] = r.y; sb[o + 6u] = s.x; sb[o + 7u] = s.y;
    }
    workgroupBarrier();
  }
  // Mapped rows go where the row map says, so every fragment is spilled and copied by lanes.
    subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_0_0, 16u);
    workgroupBarrier();
    copy_out(warp, lane, mrow0 + (warp_m * RM + 0u) * 16u, ncol0 + (warp_n * RN + 0u) * 16u);
    workgroupBarrier();
}
