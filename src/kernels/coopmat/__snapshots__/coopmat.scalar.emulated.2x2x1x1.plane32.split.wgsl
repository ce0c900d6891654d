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
@group(0) @binding(1) var<storage, read> wh: array<u32>; // f16 pairs, [NP, K] row-major
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // [M, N] row-major
struct GridSlice { base: vec3u, grid: vec3u } // a slice's first workgroup, and the whole grid
@group(0) @binding(3) var<uniform> grid_slice: GridSlice; // set by the host, which may run the grid in slices

// f16 pair (k, k+1), k even, of weight row c.
fn wh_pair(c: u32, k: u32) -> vec2f { return unpack2x16float(wh[(c * K + k) / 2u]); }
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
