enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

// coopmat-f16 stream GEMM (subgroup-matrix arm): out[M, N] = xt @ W^T with W streamed from its Q4_K words.
// Tile wm=1 wn=1 rm=2 rn=1: BM=32 BN=16; 2 K part(s) of 4 64-wide stage(s), one plane group of 1 plane(s) each: 2 plane(s) of 32 = 64 invocations.

const M = 192u;
const N = 40u;
const K = 512u;
const WM = 1u; // plane grid rows
const WN = 1u; // plane grid cols
const RM = 2u; // 16x16 subtiles per plane, down
const RN = 1u; // 16x16 subtiles per plane, across
const PLANE = 32u;
const NT = 64u; // WM*WN planes
const BM = 32u; // WM*RM*16
const BN = 16u; // WN*RN*16
const PER = 8u; // elements of a 16x16 subtile each lane owns: 256 / PLANE
const KB = K / 32u; // 32-wide K blocks (the scalar arm's sums; the trip count of 32-wide stages)
const KT = K / 16u; // 16-wide fragment tiles of xt per 16 rows
var<private> w0: u32; // first weight row of this row tile's matrix in the bank
const NP = 48u; // weight rows of a matrix, padded to whole tiles
const NONE = 4294967295u;
const SLOTS_AT = 7u; // routing table: [0] row tiles in use, [1 + y] expert of row tile y, [SLOTS_AT + row] slot of a row
var<workgroup> tile_expert: u32;
const PARTS = 2u; // K parts, one plane group each (NT = PARTS x WM*WN planes)
const STAGES = 4u; // 64-wide stages of a part
// Each part's sums of the tile [PARTS][BM][BN], added in order at the end.
var<workgroup> ps: array<f32, 1024u>;
@group(0) @binding(0) var<storage, read> xt: array<array<f16, 256>>; // 16x16 fragment tiles [MP/16][KT][16][16]
const RS = 72u; // f16 elements per staged B row (64 K-values + padding against bank conflicts)
const NSB = K / 256u; // Q4_K super-blocks per weight row
@group(0) @binding(1) var<storage, read> wqs: array<vec4u>; // Q4_K qs: 8 vec4u (128 B) per super-block
@group(0) @binding(2) var<storage, read> wsc: array<u32>; // packed 6-bit scales: 3 words per super-block
@group(0) @binding(3) var<storage, read> wd: array<f32>; // d per super-block
@group(0) @binding(4) var<storage, read> wdm: array<f32>; // dmin per super-block
@group(0) @binding(5) var<storage, read_write> out: array<f32>; // [M, N] row-major
@group(0) @binding(6) var<storage, read> groups: array<u32>; // the routing table
struct GridSlice { base: vec3u, grid: vec3u } // a slice's first workgroup, and the whole grid
@group(0) @binding(7) var<uniform> grid_slice: GridSlice; // set by the host, which may run the grid in slices

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

// B of a stage, two buffers per part [PARTS][2][BN][RS]: stage s is read from buffer s % 2 while s + 1 is written.
var<workgroup> sb: array<f16, 4608u>;

@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) warp: u32, @builtin(subgroup_invocation_id) lane: u32,
        @builtin(workgroup_id) slice_wg: vec3u) {
  let wg = slice_wg + grid_slice.base; // this workgroup in the whole grid
  let nwg = grid_slice.grid; // the whole grid (a slice's own is smaller)
  // Plane warp is plane (warp_m, warp_n) of K part part (subgroup-uniform, as matrix offsets must be).
  let part = warp / (WM * WN);
  let warp_m = (warp % (WM * WN)) / WN;
  let warp_n = warp % WN;
  let mrow0 = wg.y * BM;
  let ncol0 = wg.x * BN;
  set_owner(wg.y * nwg.x + wg.x, warp, lane);
  // Row tile wg.y holds one expert's rows, or none past the tiles in use (the workgroup exits).
  if (tid == 0u) { tile_expert = select(NONE, groups[1u + wg.y], wg.y < groups[0]); }
  let w_bank = workgroupUniformLoad(&tile_expert);
  if (w_bank == NONE) { return; }
  w0 = w_bank * N;
  // This invocation's place among its part's stagers, from the same builtins as its part.
  let pt = (warp % (WM * WN)) * PLANE + lane;
  let ks0 = part * STAGES;
  var acc_0_0 = subgroup_matrix_result<f32, 16, 16>();
  var acc_1_0 = subgroup_matrix_result<f32, 16, 16>();
  // The first 4 stages' words in flight, stage 0 staged, A of stage 0 in registers.
  var gq0_0 = vec4u(0u);
  var gw0_0 = vec3u(0u);
  var gd0_0 = vec2f(0.0);
  var gj0_0 = 0u;
  var gq1_0 = vec4u(0u);
  var gw1_0 = vec3u(0u);
  var gd1_0 = vec2f(0.0);
  var gj1_0 = 0u;
  var gq2_0 = vec4u(0u);
  var gw2_0 = vec3u(0u);
  var gd2_0 = vec2f(0.0);
  var gj2_0 = 0u;
  var gq3_0 = vec4u(0u);
  var gw3_0 = vec3u(0u);
  var gd3_0 = vec2f(0.0);
  var gj3_0 = 0u;
  {
    let kk = ((ks0 + 0u) % (K / 64u)) * 64u + (((pt + 0u) % 2u) / 2u) * 64u;
    let blk = (w0 + min(ncol0 + (pt + 0u) / 2u, N - 1u)) * NSB + kk / 256u;
    gq0_0 = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (pt + 0u) % 2u];
    gw0_0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
    gd0_0 = vec2f(wd[blk], wdm[blk]);
    gj0_0 = (kk % 256u) / 32u;
  }
  {
    let kk = ((ks0 + 1u) % (K / 64u)) * 64u + (((pt + 0u) % 2u) / 2u) * 64u;
    let blk = (w0 + min(ncol0 + (pt + 0u) / 2u, N - 1u)) * NSB + kk / 256u;
    gq1_0 = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (pt + 0u) % 2u];
    gw1_0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
    gd1_0 = vec2f(wd[blk], wdm[blk]);
    gj1_0 = (kk % 256u) / 32u;
  }
  {
    let kk = ((ks0 + 2u) % (K / 64u)) * 64u + (((pt + 0u) % 2u) / 2u) * 64u;
    let blk = (w0 + min(ncol0 + (pt + 0u) / 2u, N - 1u)) * NSB + kk / 256u;
    gq2_0 = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (pt + 0u) % 2u];
    gw2_0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
    gd2_0 = vec2f(wd[blk], wdm[blk]);
    gj2_0 = (kk % 256u) / 32u;
  }
  {
    let kk = ((ks0 + 3u) % (K / 64u)) * 64u + (((pt + 0u) % 2u) / 2u) * 64u;
    let blk = (w0 + min(ncol0 + (pt + 0u) / 2u, N - 1u)) * NSB + kk / 256u;
    gq3_0 = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (pt + 0u) % 2u];
    gw3_0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
    gd3_0 = vec2f(wd[blk], wdm[blk]);
    gj3_0 = (kk % 256u) / 32u;
  }
  {
    let ds0 = gd0_0.x * f32(q4kw_sc(gw0_0, gj0_0));
    let ms0 = gd0_0.y * f32(q4kw_m(gw0_0, gj0_0));
    let ds1 = gd0_0.x * f32(q4kw_sc(gw0_0, gj0_0 + 1u));
    let ms1 = gd0_0.y * f32(q4kw_m(gw0_0, gj0_0 + 1u));
    let o = part * 2304u + (0u) * 1152u + ((pt + 0u) / 2u) * 72u + (((pt + 0u) % 2u) / 2u) * 64u + ((pt + 0u) % 2u) * 16u;
    let v0x = ds0 * nib_f32(gq0_0.x, vec4u(0u)) - ms0;
    let hv0x = bitcast<vec4<f16>>(vec2u(pack2x16float(v0x.xy), pack2x16float(v0x.zw)));
    sb[o + 0u] = hv0x.x; sb[o + 1u] = hv0x.y; sb[o + 2u] = hv0x.z; sb[o + 3u] = hv0x.w;
    let v0y = ds0 * nib_f32(gq0_0.y, vec4u(0u)) - ms0;
    let hv0y = bitcast<vec4<f16>>(vec2u(pack2x16float(v0y.xy), pack2x16float(v0y.zw)));
    sb[o + 4u] = hv0y.x; sb[o + 5u] = hv0y.y; sb[o + 6u] = hv0y.z; sb[o + 7u] = hv0y.w;
    let v0z = ds0 * nib_f32(gq0_0.z, vec4u(0u)) - ms0;
    let hv0z = bitcast<vec4<f16>>(vec2u(pack2x16float(v0z.xy), pack2x16float(v0z.zw)));
    sb[o + 8u] = hv0z.x; sb[o + 9u] = hv0z.y; sb[o + 10u] = hv0z.z; sb[o + 11u] = hv0z.w;
    let v0w = ds0 * nib_f32(gq0_0.w, vec4u(0u)) - ms0;
    let hv0w = bitcast<vec4<f16>>(vec2u(pack2x16float(v0w.xy), pack2x16float(v0w.zw)));
    sb[o + 12u] = hv0w.x; sb[o + 13u] = hv0w.y; sb[o + 14u] = hv0w.z; sb[o + 15u] = hv0w.w;
    let v1x = ds1 * nib_f32(gq0_0.x, vec4u(4u)) - ms1;
    let hv1x = bitcast<vec4<f16>>(vec2u(pack2x16float(v1x.xy), pack2x16float(v1x.zw)));
    sb[o + 32u] = hv1x.x; sb[o + 33u] = hv1x.y; sb[o + 34u] = hv1x.z; sb[o + 35u] = hv1x.w;
    let v1y = ds1 * nib_f32(gq0_0.y, vec4u(4u)) - ms1;
    let hv1y = bitcast<vec4<f16>>(vec2u(pack2x16float(v1y.xy), pack2x16float(v1y.zw)));
    sb[o + 36u] = hv1y.x; sb[o + 37u] = hv1y.y; sb[o + 38u] = hv1y.z; sb[o + 39u] = hv1y.w;
    let v1z = ds1 * nib_f32(gq0_0.z, vec4u(4u)) - ms1;
    let hv1z = bitcast<vec4<f16>>(vec2u(pack2x16float(v1z.xy), pack2x16float(v1z.zw)));
    sb[o + 40u] = hv1z.x; sb[o + 41u] = hv1z.y; sb[o + 42u] = hv1z.z; sb[o + 43u] = hv1z.w;
    let v1w = ds1 * nib_f32(gq0_0.w, vec4u(4u)) - ms1;
    let hv1w = bitcast<vec4<f16>>(vec2u(pack2x16float(v1w.xy), pack2x16float(v1w.zw)));
    sb[o + 44u] = hv1w.x; sb[o + 45u] = hv1w.y; sb[o + 46u] = hv1w.z; sb[o + 47u] = hv1w.w;
  }
  var pa_0_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0) * 4u + 0u], 0u, 16u);
  var pa_0_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0) * 4u + 1u], 0u, 16u);
  var pa_0_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0) * 4u + 2u], 0u, 16u);
  var pa_0_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0) * 4u + 3u], 0u, 16u);
  var pa_1_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0) * 4u + 0u], 0u, 16u);
  var pa_1_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0) * 4u + 1u], 0u, 16u);
  var pa_1_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0) * 4u + 2u], 0u, 16u);
  var pa_1_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0) * 4u + 3u], 0u, 16u);
  workgroupBarrier();
  for (var kb = 0u; kb < STAGES; kb += 4u) {
    {
      let s = kb + 0u;
      let cur = s % 2u;
      let a_0_0 = pa_0_0;
      let a_0_1 = pa_0_1;
      let a_0_2 = pa_0_2;
      let a_0_3 = pa_0_3;
      let a_1_0 = pa_1_0;
      let a_1_1 = pa_1_1;
      let a_1_2 = pa_1_2;
      let a_1_3 = pa_1_3;
      pa_0_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 0u], 0u, 16u);
      pa_0_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 1u], 0u, 16u);
      pa_0_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 2u], 0u, 16u);
      pa_0_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 3u], 0u, 16u);
      pa_1_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 0u], 0u, 16u);
      pa_1_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 1u], 0u, 16u);
      pa_1_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 2u], 0u, 16u);
      pa_1_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 3u], 0u, 16u);
    {
      // K columns 0..15 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 0u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_0, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_0, b_0, acc_1_0);
    }
    {
      // K columns 16..31 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 16u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_1, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_1, b_0, acc_1_0);
    }
    {
      // K columns 32..47 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 32u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_2, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_2, b_0, acc_1_0);
    }
    {
      // K columns 48..63 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 48u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_3, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_3, b_0, acc_1_0);
    }
      // The next stage into the other buffer, then this slot refilled 4 stages ahead.
      {
        let ds0 = gd1_0.x * f32(q4kw_sc(gw1_0, gj1_0));
        let ms0 = gd1_0.y * f32(q4kw_m(gw1_0, gj1_0));
        let ds1 = gd1_0.x * f32(q4kw_sc(gw1_0, gj1_0 + 1u));
        let ms1 = gd1_0.y * f32(q4kw_m(gw1_0, gj1_0 + 1u));
        let o = part * 2304u + (1u - cur) * 1152u + ((pt + 0u) / 2u) * 72u + (((pt + 0u) % 2u) / 2u) * 64u + ((pt + 0u) % 2u) * 16u;
        let v0x = ds0 * nib_f32(gq1_0.x, vec4u(0u)) - ms0;
        let hv0x = bitcast<vec4<f16>>(vec2u(pack2x16float(v0x.xy), pack2x16float(v0x.zw)));
        sb[o + 0u] = hv0x.x; sb[o + 1u] = hv0x.y; sb[o + 2u] = hv0x.z; sb[o + 3u] = hv0x.w;
        let v0y = ds0 * nib_f32(gq1_0.y, vec4u(0u)) - ms0;
        let hv0y = bitcast<vec4<f16>>(vec2u(pack2x16float(v0y.xy), pack2x16float(v0y.zw)));
        sb[o + 4u] = hv0y.x; sb[o + 5u] = hv0y.y; sb[o + 6u] = hv0y.z; sb[o + 7u] = hv0y.w;
        let v0z = ds0 * nib_f32(gq1_0.z, vec4u(0u)) - ms0;
        let hv0z = bitcast<vec4<f16>>(vec2u(pack2x16float(v0z.xy), pack2x16float(v0z.zw)));
        sb[o + 8u] = hv0z.x; sb[o + 9u] = hv0z.y; sb[o + 10u] = hv0z.z; sb[o + 11u] = hv0z.w;
        let v0w = ds0 * nib_f32(gq1_0.w, vec4u(0u)) - ms0;
        let hv0w = bitcast<vec4<f16>>(vec2u(pack2x16float(v0w.xy), pack2x16float(v0w.zw)));
        sb[o + 12u] = hv0w.x; sb[o + 13u] = hv0w.y; sb[o + 14u] = hv0w.z; sb[o + 15u] = hv0w.w;
        let v1x = ds1 * nib_f32(gq1_0.x, vec4u(4u)) - ms1;
        let hv1x = bitcast<vec4<f16>>(vec2u(pack2x16float(v1x.xy), pack2x16float(v1x.zw)));
        sb[o + 32u] = hv1x.x; sb[o + 33u] = hv1x.y; sb[o + 34u] = hv1x.z; sb[o + 35u] = hv1x.w;
        let v1y = ds1 * nib_f32(gq1_0.y, vec4u(4u)) - ms1;
        let hv1y = bitcast<vec4<f16>>(vec2u(pack2x16float(v1y.xy), pack2x16float(v1y.zw)));
        sb[o + 36u] = hv1y.x; sb[o + 37u] = hv1y.y; sb[o + 38u] = hv1y.z; sb[o + 39u] = hv1y.w;
        let v1z = ds1 * nib_f32(gq1_0.z, vec4u(4u)) - ms1;
        let hv1z = bitcast<vec4<f16>>(vec2u(pack2x16float(v1z.xy), pack2x16float(v1z.zw)));
        sb[o + 40u] = hv1z.x; sb[o + 41u] = hv1z.y; sb[o + 42u] = hv1z.z; sb[o + 43u] = hv1z.w;
        let v1w = ds1 * nib_f32(gq1_0.w, vec4u(4u)) - ms1;
        let hv1w = bitcast<vec4<f16>>(vec2u(pack2x16float(v1w.xy), pack2x16float(v1w.zw)));
        sb[o + 44u] = hv1w.x; sb[o + 45u] = hv1w.y; sb[o + 46u] = hv1w.z; sb[o + 47u] = hv1w.w;
      }
      {
        let kk = ((ks0 + s + 4u) % (K / 64u)) * 64u + (((pt + 0u) % 2u) / 2u) * 64u;
        let blk = (w0 + min(ncol0 + (pt + 0u) / 2u, N - 1u)) * NSB + kk / 256u;
        gq0_0 = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (pt + 0u) % 2u];
        gw0_0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
        gd0_0 = vec2f(wd[blk], wdm[blk]);
        gj0_0 = (kk % 256u) / 32u;
      }
      workgroupBarrier();
    }
    {
      let s = kb + 1u;
      let cur = s % 2u;
      let a_0_0 = pa_0_0;
      let a_0_1 = pa_0_1;
      let a_0_2 = pa_0_2;
      let a_0_3 = pa_0_3;
      let a_1_0 = pa_1_0;
      let a_1_1 = pa_1_1;
      let a_1_2 = pa_1_2;
      let a_1_3 = pa_1_3;
      pa_0_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 0u], 0u, 16u);
      pa_0_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 1u], 0u, 16u);
      pa_0_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 2u], 0u, 16u);
      pa_0_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 3u], 0u, 16u);
      pa_1_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 0u], 0u, 16u);
      pa_1_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 1u], 0u, 16u);
      pa_1_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 2u], 0u, 16u);
      pa_1_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 3u], 0u, 16u);
    {
      // K columns 0..15 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 0u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_0, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_0, b_0, acc_1_0);
    }
    {
      // K columns 16..31 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 16u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_1, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_1, b_0, acc_1_0);
    }
    {
      // K columns 32..47 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 32u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_2, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_2, b_0, acc_1_0);
    }
    {
      // K columns 48..63 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 48u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_3, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_3, b_0, acc_1_0);
    }
      // The next stage into the other buffer, then this slot refilled 4 stages ahead.
      {
        let ds0 = gd2_0.x * f32(q4kw_sc(gw2_0, gj2_0));
        let ms0 = gd2_0.y * f32(q4kw_m(gw2_0, gj2_0));
        let ds1 = gd2_0.x * f32(q4kw_sc(gw2_0, gj2_0 + 1u));
        let ms1 = gd2_0.y * f32(q4kw_m(gw2_0, gj2_0 + 1u));
        let o = part * 2304u + (1u - cur) * 1152u + ((pt + 0u) / 2u) * 72u + (((pt + 0u) % 2u) / 2u) * 64u + ((pt + 0u) % 2u) * 16u;
        let v0x = ds0 * nib_f32(gq2_0.x, vec4u(0u)) - ms0;
        let hv0x = bitcast<vec4<f16>>(vec2u(pack2x16float(v0x.xy), pack2x16float(v0x.zw)));
        sb[o + 0u] = hv0x.x; sb[o + 1u] = hv0x.y; sb[o + 2u] = hv0x.z; sb[o + 3u] = hv0x.w;
        let v0y = ds0 * nib_f32(gq2_0.y, vec4u(0u)) - ms0;
        let hv0y = bitcast<vec4<f16>>(vec2u(pack2x16float(v0y.xy), pack2x16float(v0y.zw)));
        sb[o + 4u] = hv0y.x; sb[o + 5u] = hv0y.y; sb[o + 6u] = hv0y.z; sb[o + 7u] = hv0y.w;
        let v0z = ds0 * nib_f32(gq2_0.z, vec4u(0u)) - ms0;
        let hv0z = bitcast<vec4<f16>>(vec2u(pack2x16float(v0z.xy), pack2x16float(v0z.zw)));
        sb[o + 8u] = hv0z.x; sb[o + 9u] = hv0z.y; sb[o + 10u] = hv0z.z; sb[o + 11u] = hv0z.w;
        let v0w = ds0 * nib_f32(gq2_0.w, vec4u(0u)) - ms0;
        let hv0w = bitcast<vec4<f16>>(vec2u(pack2x16float(v0w.xy), pack2x16float(v0w.zw)));
        sb[o + 12u] = hv0w.x; sb[o + 13u] = hv0w.y; sb[o + 14u] = hv0w.z; sb[o + 15u] = hv0w.w;
        let v1x = ds1 * nib_f32(gq2_0.x, vec4u(4u)) - ms1;
        let hv1x = bitcast<vec4<f16>>(vec2u(pack2x16float(v1x.xy), pack2x16float(v1x.zw)));
        sb[o + 32u] = hv1x.x; sb[o + 33u] = hv1x.y; sb[o + 34u] = hv1x.z; sb[o + 35u] = hv1x.w;
        let v1y = ds1 * nib_f32(gq2_0.y, vec4u(4u)) - ms1;
        let hv1y = bitcast<vec4<f16>>(vec2u(pack2x16float(v1y.xy), pack2x16float(v1y.zw)));
        sb[o + 36u] = hv1y.x; sb[o + 37u] = hv1y.y; sb[o + 38u] = hv1y.z; sb[o + 39u] = hv1y.w;
        let v1z = ds1 * nib_f32(gq2_0.z, vec4u(4u)) - ms1;
        let hv1z = bitcast<vec4<f16>>(vec2u(pack2x16float(v1z.xy), pack2x16float(v1z.zw)));
        sb[o + 40u] = hv1z.x; sb[o + 41u] = hv1z.y; sb[o + 42u] = hv1z.z; sb[o + 43u] = hv1z.w;
        let v1w = ds1 * nib_f32(gq2_0.w, vec4u(4u)) - ms1;
        let hv1w = bitcast<vec4<f16>>(vec2u(pack2x16float(v1w.xy), pack2x16float(v1w.zw)));
        sb[o + 44u] = hv1w.x; sb[o + 45u] = hv1w.y; sb[o + 46u] = hv1w.z; sb[o + 47u] = hv1w.w;
      }
      {
        let kk = ((ks0 + s + 4u) % (K / 64u)) * 64u + (((pt + 0u) % 2u) / 2u) * 64u;
        let blk = (w0 + min(ncol0 + (pt + 0u) / 2u, N - 1u)) * NSB + kk / 256u;
        gq1_0 = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (pt + 0u) % 2u];
        gw1_0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
        gd1_0 = vec2f(wd[blk], wdm[blk]);
        gj1_0 = (kk % 256u) / 32u;
      }
      workgroupBarrier();
    }
    {
      let s = kb + 2u;
      let cur = s % 2u;
      let a_0_0 = pa_0_0;
      let a_0_1 = pa_0_1;
      let a_0_2 = pa_0_2;
      let a_0_3 = pa_0_3;
      let a_1_0 = pa_1_0;
      let a_1_1 = pa_1_1;
      let a_1_2 = pa_1_2;
      let a_1_3 = pa_1_3;
      pa_0_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 0u], 0u, 16u);
      pa_0_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 1u], 0u, 16u);
      pa_0_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 2u], 0u, 16u);
      pa_0_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 3u], 0u, 16u);
      pa_1_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 0u], 0u, 16u);
      pa_1_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 1u], 0u, 16u);
      pa_1_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 2u], 0u, 16u);
      pa_1_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 3u], 0u, 16u);
    {
      // K columns 0..15 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 0u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_0, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_0, b_0, acc_1_0);
    }
    {
      // K columns 16..31 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 16u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_1, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_1, b_0, acc_1_0);
    }
    {
      // K columns 32..47 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 32u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_2, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_2, b_0, acc_1_0);
    }
    {
      // K columns 48..63 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 48u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_3, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_3, b_0, acc_1_0);
    }
      // The next stage into the other buffer, then this slot refilled 4 stages ahead.
      {
        let ds0 = gd3_0.x * f32(q4kw_sc(gw3_0, gj3_0));
        let ms0 = gd3_0.y * f32(q4kw_m(gw3_0, gj3_0));
        let ds1 = gd3_0.x * f32(q4kw_sc(gw3_0, gj3_0 + 1u));
        let ms1 = gd3_0.y * f32(q4kw_m(gw3_0, gj3_0 + 1u));
        let o = part * 2304u + (1u - cur) * 1152u + ((pt + 0u) / 2u) * 72u + (((pt + 0u) % 2u) / 2u) * 64u + ((pt + 0u) % 2u) * 16u;
        let v0x = ds0 * nib_f32(gq3_0.x, vec4u(0u)) - ms0;
        let hv0x = bitcast<vec4<f16>>(vec2u(pack2x16float(v0x.xy), pack2x16float(v0x.zw)));
        sb[o + 0u] = hv0x.x; sb[o + 1u] = hv0x.y; sb[o + 2u] = hv0x.z; sb[o + 3u] = hv0x.w;
        let v0y = ds0 * nib_f32(gq3_0.y, vec4u(0u)) - ms0;
        let hv0y = bitcast<vec4<f16>>(vec2u(pack2x16float(v0y.xy), pack2x16float(v0y.zw)));
        sb[o + 4u] = hv0y.x; sb[o + 5u] = hv0y.y; sb[o + 6u] = hv0y.z; sb[o + 7u] = hv0y.w;
        let v0z = ds0 * nib_f32(gq3_0.z, vec4u(0u)) - ms0;
        let hv0z = bitcast<vec4<f16>>(vec2u(pack2x16float(v0z.xy), pack2x16float(v0z.zw)));
        sb[o + 8u] = hv0z.x; sb[o + 9u] = hv0z.y; sb[o + 10u] = hv0z.z; sb[o + 11u] = hv0z.w;
        let v0w = ds0 * nib_f32(gq3_0.w, vec4u(0u)) - ms0;
        let hv0w = bitcast<vec4<f16>>(vec2u(pack2x16float(v0w.xy), pack2x16float(v0w.zw)));
        sb[o + 12u] = hv0w.x; sb[o + 13u] = hv0w.y; sb[o + 14u] = hv0w.z; sb[o + 15u] = hv0w.w;
        let v1x = ds1 * nib_f32(gq3_0.x, vec4u(4u)) - ms1;
        let hv1x = bitcast<vec4<f16>>(vec2u(pack2x16float(v1x.xy), pack2x16float(v1x.zw)));
        sb[o + 32u] = hv1x.x; sb[o + 33u] = hv1x.y; sb[o + 34u] = hv1x.z; sb[o + 35u] = hv1x.w;
        let v1y = ds1 * nib_f32(gq3_0.y, vec4u(4u)) - ms1;
        let hv1y = bitcast<vec4<f16>>(vec2u(pack2x16float(v1y.xy), pack2x16float(v1y.zw)));
        sb[o + 36u] = hv1y.x; sb[o + 37u] = hv1y.y; sb[o + 38u] = hv1y.z; sb[o + 39u] = hv1y.w;
        let v1z = ds1 * nib_f32(gq3_0.z, vec4u(4u)) - ms1;
        let hv1z = bitcast<vec4<f16>>(vec2u(pack2x16float(v1z.xy), pack2x16float(v1z.zw)));
        sb[o + 40u] = hv1z.x; sb[o + 41u] = hv1z.y; sb[o + 42u] = hv1z.z; sb[o + 43u] = hv1z.w;
        let v1w = ds1 * nib_f32(gq3_0.w, vec4u(4u)) - ms1;
        let hv1w = bitcast<vec4<f16>>(vec2u(pack2x16float(v1w.xy), pack2x16float(v1w.zw)));
        sb[o + 44u] = hv1w.x; sb[o + 45u] = hv1w.y; sb[o + 46u] = hv1w.z; sb[o + 47u] = hv1w.w;
      }
      {
        let kk = ((ks0 + s + 4u) % (K / 64u)) * 64u + (((pt + 0u) % 2u) / 2u) * 64u;
        let blk = (w0 + min(ncol0 + (pt + 0u) / 2u, N - 1u)) * NSB + kk / 256u;
        gq2_0 = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (pt + 0u) % 2u];
        gw2_0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
        gd2_0 = vec2f(wd[blk], wdm[blk]);
        gj2_0 = (kk % 256u) / 32u;
      }
      workgroupBarrier();
    }
    {
      let s = kb + 3u;
      let cur = s % 2u;
      let a_0_0 = pa_0_0;
      let a_0_1 = pa_0_1;
      let a_0_2 = pa_0_2;
      let a_0_3 = pa_0_3;
      let a_1_0 = pa_1_0;
      let a_1_1 = pa_1_1;
      let a_1_2 = pa_1_2;
      let a_1_3 = pa_1_3;
      pa_0_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 0u], 0u, 16u);
      pa_0_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 1u], 0u, 16u);
      pa_0_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 2u], 0u, 16u);
      pa_0_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 0u) * KT + (ks0 + s + 1u) * 4u + 3u], 0u, 16u);
      pa_1_0 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 0u], 0u, 16u);
      pa_1_1 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 1u], 0u, 16u);
      pa_1_2 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 2u], 0u, 16u);
      pa_1_3 = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + 1u) * KT + (ks0 + s + 1u) * 4u + 3u], 0u, 16u);
    {
      // K columns 0..15 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 0u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_0, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_0, b_0, acc_1_0);
    }
    {
      // K columns 16..31 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 16u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_1, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_1, b_0, acc_1_0);
    }
    {
      // K columns 32..47 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 32u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_2, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_2, b_0, acc_1_0);
    }
    {
      // K columns 48..63 of the stage.
      let b_0 = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, part * 2304u + cur * 1152u + (warp_n * RN + 0u) * 1152u + 48u, 72u);
      acc_0_0 = subgroupMatrixMultiplyAccumulate(a_0_3, b_0, acc_0_0);
      acc_1_0 = subgroupMatrixMultiplyAccumulate(a_1_3, b_0, acc_1_0);
    }
      // The next stage into the other buffer, then this slot refilled 4 stages ahead.
      {
        let ds0 = gd0_0.x * f32(q4kw_sc(gw0_0, gj0_0));
        let ms0 = gd0_0.y * f32(q4kw_m(gw0_0, gj0_0));
        let ds1 = gd0_0.x * f32(q4kw_sc(gw0_0, gj0_0 + 1u));
        let ms1 = gd0_0.y * f32(q4kw_m(gw0_0, gj0_0 + 1u));
        let o = part * 2304u + (1u - cur) * 1152u + ((pt + 0u) / 2u) * 72u + (((pt + 0u) % 2u) / 2u) * 64u + ((pt + 0u) % 2u) * 16u;
        let v0x = ds0 * nib_f32(gq0_0.x, vec4u(0u)) - ms0;
        let hv0x = bitcast<vec4<f16>>(vec2u(pack2x16float(v0x.xy), pack2x16float(v0x.zw)));
        sb[o + 0u] = hv0x.x; sb[o + 1u] = hv0x.y; sb[o + 2u] = hv0x.z; sb[o + 3u] = hv0x.w;
        let v0y = ds0 * nib_f32(gq0_0.y, vec4u(0u)) - ms0;
        let hv0y = bitcast<vec4<f16>>(vec2u(pack2x16float(v0y.xy), pack2x16float(v0y.zw)));
        sb[o + 4u] = hv0y.x; sb[o + 5u] = hv0y.y; sb[o + 6u] = hv0y.z; sb[o + 7u] = hv0y.w;
        let v0z = ds0 * nib_f32(gq0_0.z, vec4u(0u)) - ms0;
        let hv0z = bitcast<vec4<f16>>(vec2u(pack2x16float(v0z.xy), pack2x16float(v0z.zw)));
        sb[o + 8u] = hv0z.x; sb[o + 9u] = hv0z.y; sb[o + 10u] = hv0z.z; sb[o + 11u] = hv0z.w;
        let v0w = ds0 * nib_f32(gq0_0.w, vec4u(0u)) - ms0;
        let hv0w = bitcast<vec4<f16>>(vec2u(pack2x16float(v0w.xy), pack2x16float(v0w.zw)));
        sb[o + 12u] = hv0w.x; sb[o + 13u] = hv0w.y; sb[o + 14u] = hv0w.z; sb[o + 15u] = hv0w.w;
        let v1x = ds1 * nib_f32(gq0_0.x, vec4u(4u)) - ms1;
        let hv1x = bitcast<vec4<f16>>(vec2u(pack2x16float(v1x.xy), pack2x16float(v1x.zw)));
        sb[o + 32u] = hv1x.x; sb[o + 33u] = hv1x.y; sb[o + 34u] = hv1x.z; sb[o + 35u] = hv1x.w;
        let v1y = ds1 * nib_f32(gq0_0.y, vec4u(4u)) - ms1;
        let hv1y = bitcast<vec4<f16>>(vec2u(pack2x16float(v1y.xy), pack2x16float(v1y.zw)));
        sb[o + 36u] = hv1y.x; sb[o + 37u] = hv1y.y; sb[o + 38u] = hv1y.z; sb[o + 39u] = hv1y.w;
        let v1z = ds1 * nib_f32(gq0_0.z, vec4u(4u)) - ms1;
        let hv1z = bitcast<vec4<f16>>(vec2u(pack2x16float(v1z.xy), pack2x16float(v1z.zw)));
        sb[o + 40u] = hv1z.x; sb[o + 41u] = hv1z.y; sb[o + 42u] = hv1z.z; sb[o + 43u] = hv1z.w;
        let v1w = ds1 * nib_f32(gq0_0.w, vec4u(4u)) - ms1;
        let hv1w = bitcast<vec4<f16>>(vec2u(pack2x16float(v1w.xy), pack2x16float(v1w.zw)));
        sb[o + 44u] = hv1w.x; sb[o + 45u] = hv1w.y; sb[o + 46u] = hv1w.z; sb[o + 47u] = hv1w.w;
      }
      {
        let kk = ((ks0 + s + 4u) % (K / 64u)) * 64u + (((pt + 0u) % 2u) / 2u) * 64u;
        let blk = (w0 + min(ncol0 + (pt + 0u) / 2u, N - 1u)) * NSB + kk / 256u;
        gq3_0 = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (pt + 0u) % 2u];
        gw3_0 = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
        gd3_0 = vec2f(wd[blk], wdm[blk]);
        gj3_0 = (kk % 256u) / 32u;
      }
      workgroupBarrier();
    }
  }
  subgroupMatrixStore<row_major>(&ps, part * BM * BN + (warp_m * RM + 0u) * 16u * BN + (warp_n * RN + 0u) * 16u, acc_0_0, BN);
  subgroupMatrixStore<row_major>(&ps, part * BM * BN + (warp_m * RM + 1u) * 16u * BN + (warp_n * RN + 0u) * 16u, acc_1_0, BN);
  workgroupBarrier();
  // Every element of the tile: its K parts added in order (the emulation's split-K order), then stored.
  for (var e = warp * PLANE + lane; e < BM * BN; e += NT) {
    var s = ps[e];
    for (var p = 1u; p < PARTS; p++) { s += ps[p * BM * BN + e]; }
    let orow = mrow0 + e / BN;
    let ocol = ncol0 + e % BN;
    let slot = groups[SLOTS_AT + orow];
    if (slot != NONE && ocol < N) {
      store_out(slot * N + ocol, s);
    }
  }
}
