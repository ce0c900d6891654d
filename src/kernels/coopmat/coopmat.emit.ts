// The emitters every coopmat GEMM shares -- the one-pass kernel, the split plan's GEMM and the stream
// GEMM: text helpers, the tile constants, the entry point, the scalar arm's element walk and store, the
// matrix arm's fragments, spill and contraction, and where an output element goes.
import { readWrite, type BindingTable } from '../gpu/bindings';
import { GRID_SLICE_PARAM, gridSliceLets } from '../gpu/gridSlice';
import {
  stagingOf,
  type CoopmatArm,
  type CoopmatGeometry,
  type CoopmatSpec,
  type OutRows,
} from './coopmat.params';

/** A GEMM's kernel text and its buffers in @binding order. */
export type GemmModule = { wgsl: string; bindings: string[] };

/** 0, 1, ..., n - 1 (the generators unroll over it); `lines` joins `line(i)` of each. */
export const range = (n: number) => Array.from({ length: n }, (_, i) => i);
export const lines = (n: number, line: (i: number) => string) => range(n).map(line).join('\n');
/** `part(i)` for i in 0..n-1 on one line. */
export const inline = (n: number, part: (i: number) => string) => range(n).map(part).join(' ');
/** `pad` + each line, joined: the emitters place their blocks at the indent where they go. */
export const at = (pad: string, lines: readonly string[]) => lines.map((l) => pad + l).join('\n');
/** A statement whose body spans lines: its first line at `pad`, the rest one level in. */
export const block = (pad: string, head: string, lines: readonly string[]) =>
  `${pad}${head}{\n${at(`${pad}  `, lines)}\n${pad}}`;

/** The tile line of a kernel's header; `planes` says how its planes are grouped. */
export const tileSummary = (spec: CoopmatSpec, g: CoopmatGeometry, planes: string) =>
  `Tile wm=${spec.tile.wm} wn=${spec.tile.wn} rm=${spec.tile.rm} rn=${spec.tile.rn}: BM=${g.bm} BN=${g.bn}${planes} plane(s) of ${spec.plane} = ${g.threads} invocations.`;

/** The tile constants every coopmat kernel declares first. */
export function tileConsts(spec: CoopmatSpec, g: CoopmatGeometry) {
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

/** Lines storing `value` to element (orow, ocol) through the lookup and guard of `o`. */
export const storeOut = (o: OutRows, value: string) => [
  ...(o.lookup ? [o.lookup] : []),
  `if (${o.guard}) {`,
  `  store_out(${o.index}, ${value});`,
  '}',
];

/** Whether K parts leave the GEMM as partial sums on grid z (the stream GEMM adds its parts itself). */
export const partSums = (spec: CoopmatSpec) => (spec.ksplit ?? 1) > 1 && !stagingOf(spec).stream;

/** Where a GEMM's output element goes: dense, a mapped row, or a split-K part. */
export const outRows = (spec: CoopmatSpec): OutRows =>
  spec.rowMap?.outSlot({ row: 'orow', col: 'ocol' }) ?? {
    lookup: '',
    guard: 'orow < M && ocol < N',
    index: `${partSums(spec) ? 'kz0 + ' : ''}orow * N + ocol`,
  };

/** The f32 output [M, N], bound as `part` where it holds split-K partial sums. */
export const outBinding = (spec: CoopmatSpec): BindingTable => ({
  out: { ...readWrite('array<f32>', '[M, N] row-major'), ...(partSums(spec) ? { buffer: 'part' } : {}) },
});

/** The entry point, through set_owner; `place` finds the plane's place in the grid. */
export const mainHead = (arm: CoopmatArm, place: readonly string[]) => `@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) tid: u32, ${
  arm === 'scalar'
    ? ''
    : '@builtin(subgroup_id) warp: u32, @builtin(subgroup_invocation_id) lane: u32,\n        '
}${GRID_SLICE_PARAM}) {
${at('  ', gridSliceLets('wg', 'nwg'))}
${arm === 'scalar' ? '  let warp = tid / PLANE;\n  let lane = tid % PLANE;\n' : ''}${at('  ', place)}
  let mrow0 = wg.y * BM;
  let ncol0 = wg.x * BN;
  set_owner(wg.y * nwg.x + wg.x, warp, lane);
`;

const GRID_PLACE = ['let warp_m = warp / WN;', 'let warp_n = warp % WN;'];
/** The one-pass and split GEMMs' entry point (the scalar arm with its register accumulators). */
export const gridHead = (arm: CoopmatArm) =>
  arm === 'scalar'
    ? `${mainHead(arm, GRID_PLACE)}  // f32 accumulators held in registers across K: RM*RN subtiles x PER elements (zero-initialised).
  var acc: array<f32, RM * RN * PER>;
`
    : mainHead(arm, [
        '// subgroup_id is subgroup-uniform, so the matrix offsets derived from it are too (a requirement).',
        ...GRID_PLACE,
      ]);

/** The scalar arm's walk over each lane's PER elements of each of its subtiles. */
export const eachElement = (pad: string, perSubtile: readonly string[], body: readonly string[]) =>
  at(pad, [
    'for (var im = 0u; im < RM; im++) {',
    '  for (var jn = 0u; jn < RN; jn++) {',
    ...perSubtile.map((l) => `    ${l}`),
    '    for (var e = 0u; e < PER; e++) {',
    '      let p = lane * PER + e;',
    ...body.map((l) => `      ${l}`),
    '    }',
    '  }',
    '}',
  ]);

export const SUBTILE = ['let sm = warp_m * RM + im;', 'let sn = warp_n * RN + jn;'];

/** One 32-block in f32, K in order; `pairA` and `pairB` are the l-th f16 pairs of A and B. */
export const scalarSum = (pairA: string, pairB: string) => [
  "// One 32-block in f32, K in order, then into the accumulator: the seed's default arm.",
  'var s = 0.0;',
  'for (var l = 0u; l < 16u; l++) {',
  `  let av = ${pairA};`,
  `  let bv = ${pairB};`,
  '  s += av.x * bv.x;',
  '  s += av.y * bv.y;',
  '}',
  'acc[(im * RN + jn) * PER + e] += s;',
];

/** The scalar arm's store of each lane's elements, guarded by the tails. */
export const scalarStore = (o: OutRows) => `${eachElement('  ', SUBTILE, [
  'let orow = mrow0 + sm * 16u + p / 16u;',
  'let ocol = ncol0 + sn * 16u + p % 16u;',
  ...storeOut(o, 'acc[(im * RN + jn) * PER + e]'),
])}
}
`;

/** `line(im, jn)` for each result fragment of the tile, at `pad`. */
export const eachFragment = (spec: CoopmatSpec, pad: string, line: (im: number, jn: number) => string[]) =>
  at(
    pad,
    range(spec.tile.rm).flatMap((im) => range(spec.tile.rn).flatMap((jn) => line(im, jn))),
  );
export const accDecls = (spec: CoopmatSpec) =>
  eachFragment(spec, '  ', (im, jn) => [`var acc_${im}_${jn} = subgroup_matrix_result<f32, 16, 16>();`]);

/** One 16x16 f32 spill per plane and the per-lane copy out of it (tail guards, ownership hooks). */
export const spillCopyOut = (o: OutRows) => `var<workgroup> sc: array<f32, WM * WN * 256u>;

fn copy_out(warp: u32, lane: u32, row0: u32, col0: u32) {
  for (var e = 0u; e < PER; e++) {
    let p = lane * PER + e;
    let orow = row0 + p / 16u;
    let ocol = col0 + p % 16u;
${at('    ', storeOut(o, 'sc[warp * 256u + p]'))}
  }
}
`;

/** Every result matrix through the plane's spill: every lane copies its PER elements. */
export const spillStores = (spec: CoopmatSpec, pad: string) =>
  eachFragment(spec, pad, (im, jn) => [
    `subgroupMatrixStore<row_major>(&sc, warp * 256u, acc_${im}_${jn}, 16u);`,
    'workgroupBarrier();',
    `copy_out(warp, lane, mrow0 + (warp_m * RM + ${im}u) * 16u, ncol0 + (warp_n * RN + ${jn}u) * 16u);`,
    'workgroupBarrier();',
  ]);

/** The register of A fragment (im, kc); prefix `pa`, its prefetch. */
export const aReg = (im: number, kc: number, prefix = 'a') => `${prefix}_${im}_${kc}`;
/** The MMAs of 16-wide K chunks: B from `sb` at `bufAt` (rows of `rs`), A from `aLet` or registers. */
export function contractChunks(
  spec: CoopmatSpec,
  o: { chunks: number; what: string; bufAt: string; rs: number },
  aLet?: (im: number, kc: number) => string,
) {
  const { rm, rn } = spec.tile;
  return lines(o.chunks, (kc) => {
    const a = (im: number) => (aLet ? `a_${im}` : aReg(im, kc));
    const mma = (im: number, jn: number) =>
      `acc_${im}_${jn} = subgroupMatrixMultiplyAccumulate(${a(im)}, b_${jn}, acc_${im}_${jn});`;
    const mmas = range(rm).flatMap((im) =>
      aLet
        ? ['{', `  let ${a(im)} = ${aLet(im, kc)};`, ...range(rn).map((jn) => `  ${mma(im, jn)}`), '}']
        : range(rn).map((jn) => mma(im, jn)),
    );
    return block('    ', '', [
      `// K columns ${kc * 16}..${kc * 16 + 15} of the ${o.what}.`,
      ...range(rn).map(
        (jn) =>
          `let b_${jn} = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, ${o.bufAt}(warp_n * RN + ${jn}u) * ${16 * o.rs}u + ${kc * 16}u, ${o.rs}u);`,
      ),
      ...mmas,
    ]);
  });
}

export const MATRIX_ENABLES =
  'enable f16;\nenable subgroups;\nenable chromium_experimental_subgroup_matrix;\n';
