// WGSL snippets shared by the coopmat kernels (the one-pass kernel and the split plan): the Q4_K decode
// (the format's scales from quant/q4k.wgsl.ts, plus the nibbles), the tile constants, the matrix
// arm's entry and its spill-and-copy store, the scalar arm's 32-block sum, and the binding table.
import type { Binding } from '../gpu/plan';

/** 0, 1, ..., n - 1 (the generators unroll over it). */
export const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** The tile constants every coopmat kernel declares (a kernel adds its own after them). */
export function tileConsts(
  spec: {
    m: number;
    n: number;
    k: number;
    plane: number;
    tile: { wm: number; wn: number; rm: number; rn: number };
  },
  g: { threads: number; bm: number; bn: number; per: number },
): string {
  const { wm, wn, rm, rn } = spec.tile;
  return `const M = ${spec.m}u;
const N = ${spec.n}u;
const K = ${spec.k}u;
const WM = ${wm}u; // plane grid rows
const WN = ${wn}u; // plane grid cols
const RM = ${rm}u; // 16x16 subtiles per plane, down
const RN = ${rn}u; // 16x16 subtiles per plane, across
const PLANE = ${spec.plane}u;
const NT = ${g.threads}u; // WM*WN planes
const BM = ${g.bm}u; // WM*RM*16
const BN = ${g.bn}u; // WN*RN*16
const PER = ${g.per}u; // elements of a 16x16 subtile each lane owns: 256 / PLANE
`;
}

/**
 * Where an output element (orow, ocol) of a tile goes: the guard and the index into `out`, after
 * `lookup` (lines that define what they use). Dense: row orow of M; a row map (coopmat.params.ts RowMap)
 * looks up where a row goes; split-K adds its part's offset.
 */
export interface OutRows {
  lookup: string;
  guard: string;
  index: string;
}

export const DENSE_OUT: OutRows = { lookup: '', guard: 'orow < M && ocol < N', index: 'orow * N + ocol' };

/** One 16x16 f32 spill per plane and the per-lane copy out of it (tail guards, ownership hooks). */
export const spillCopyOut = (o: OutRows = DENSE_OUT) => `var<workgroup> sc: array<f32, WM * WN * 256u>;

fn copy_out(warp: u32, lane: u32, row0: u32, col0: u32) {
  for (var e = 0u; e < PER; e++) {
    let p = lane * PER + e;
    let orow = row0 + p / 16u;
    let ocol = col0 + p % 16u;
${o.lookup ? `    ${o.lookup}\n` : ''}    if (${o.guard}) {
      store_out(${o.index}, sc[warp * 256u + p]);
    }
  }
}
`;

/** Store result matrix acc_im_jn through the plane's spill: every lane copies its PER elements. */
export const spillStore = (im: number, jn: number, indent = '  ') =>
  [
    `subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_${im}_${jn}, 16u);`,
    'workgroupBarrier();',
    `copy_out(warp, lane, mrow0 + (warp_m * RM + ${im}u) * 16u, ncol0 + (warp_n * RN + ${jn}u) * 16u);`,
    'workgroupBarrier();',
  ]
    .map((line) => indent + line)
    .join('\n');

/** The matrix arm's entry point, through set_owner (plane and lane from the subgroup builtins). */
export const MATRIX_MAIN_HEAD = `@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) warp: u32, @builtin(subgroup_invocation_id) lane: u32,
        @builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  // subgroup_id is subgroup-uniform, so the matrix offsets derived from it are too (a requirement).
  let warp_m = warp / WN;
  let warp_n = warp % WN;
  let mrow0 = wg.y * BM;
  let ncol0 = wg.x * BN;
  set_owner(wg.y * nwg.x + wg.x, warp, lane);
`;

/**
 * One 32-block in f32, K in order, then into the accumulator: the seed's default arm. `pairA(l)` and
 * `pairB(l)` give the l-th f16 pair (as vec2f) of the element's A row and B row.
 */
export const scalarBlock = (pairA: (l: string) => string, pairB: (l: string) => string) =>
  `          // One 32-block in f32, K in order, then into the accumulator: the seed's default arm.
          var s = 0.0;
          for (var l = 0u; l < 16u; l++) {
            let av = ${pairA('l')};
            let bv = ${pairB('l')};
            s += av.x * bv.x;
            s += av.y * bv.y;
          }
          acc[(im * RN + jn) * PER + e] += s;`;

/** The scalar arm's entry point, through set_owner (plane and lane from the invocation index). */
export const SCALAR_MAIN_HEAD = `@compute @workgroup_size(NT)
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
`;

/** The scalar arm's store: each lane's PER elements of each subtile, guarded by the m and n tails. */
export const scalarStore = (o: OutRows = DENSE_OUT) => `  for (var im = 0u; im < RM; im++) {
    for (var jn = 0u; jn < RN; jn++) {
      let sm = warp_m * RM + im;
      let sn = warp_n * RN + jn;
      for (var e = 0u; e < PER; e++) {
        let p = lane * PER + e;
        let orow = mrow0 + sm * 16u + p / 16u;
        let ocol = ncol0 + sn * 16u + p % 16u;
${o.lookup ? `        ${o.lookup}\n` : ''}        if (${o.guard}) {
          store_out(${o.index}, acc[(im * RN + jn) * PER + e]);
        }
      }
    }
  }
}
`;

/** The f32 output [M, N] (or the split-K partial sums, bound as `part`). */
export const OUT_BINDING = (buffer = 'out'): Binding => ({
  name: 'out',
  ...(buffer === 'out' ? {} : { buffer }),
  access: 'read_write',
  type: 'array<f32>',
  comment: '[M, N] row-major',
});
