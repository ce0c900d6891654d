// The split plan: pre-passes (Q4_K -> f16 rows wh [NP, K]; x -> f16 xt in 16x16 fragment tiles), then a
// GEMM, because decoding in the GEMM repeats it in every workgroup row (docs/decisions/0001-split-plan.md).
// The GEMM reads A fragments straight from xt one 64-wide stage ahead (0003-a-read-directly.md) and stages
// B (pre-passed rows, or Q4_K decoded with the pre-pass's arithmetic: the same f16 operand) into two
// row-padded buffers. The scalar arm sums each 32-block in K order, as mmqQ4kF16RoundedRef. Also the
// emitters the one-pass and stream GEMMs share.
import { bindingLayout, readOnly, readWrite, type BindingTable } from '../gpu/bindings';
import { GRID_SLICE_PARAM, gridSliceLets, withGridSlice } from '../gpu/gridSlice';
import { f16TilesPart, prePassKernel, type PrePassPart, type SplitPrePass } from '../gpu/prepass';
import * as quant from '../quant/q4k.wgsl';
import {
  coopmatSplitExtents,
  coopmatSplitGeometry,
  SPLIT_K_STAGE,
  SPLIT_SLACK_BYTES,
  stagingOf,
} from './coopmat.params';
import type { CoopmatArm, CoopmatGeometry, CoopmatSpec, OutRows } from './coopmat.params';

/** A GEMM's kernel text and its buffers in @binding order. */
export type GemmModule = { wgsl: string; bindings: string[] };

/** 0, 1, ..., n - 1 (the generators unroll over it); `lines` joins `line(i)` of each. */
export const range = (n: number) => Array.from({ length: n }, (_, i) => i);
export const lines = (n: number, line: (i: number) => string) => range(n).map(line).join('\n');
/** `part(i)` for i in 0..n-1 on one line. */
const inline = (n: number, part: (i: number) => string) => range(n).map(part).join(' ');
/** `pad` + each line, joined: the emitters place their blocks at the indent where they go. */
export const at = (pad: string, lines: readonly string[]) => lines.map((l) => pad + l).join('\n');
/** A statement whose body spans lines: its first line at `pad`, the rest one level in. */
const block = (pad: string, head: string, lines: readonly string[]) =>
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
const partSums = (spec: CoopmatSpec) => (spec.ksplit ?? 1) > 1 && !stagingOf(spec).stream;

/** Where a GEMM's output element goes: dense, a mapped row, or a split-K part. */
export const outRows = (spec: CoopmatSpec): OutRows =>
  spec.rowMap?.out ?? {
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

/**
 * The pre-passes of a split staging in dispatch order, each with its label: 'prepass' the weight then
 * the activation; 'fused-prepass' both in one dispatch; 'in-gemm' and 'stream' the activation's alone.
 * `act` replaces the activation's (a gather).
 * @example coopmatPrePasses(spec).map(([, what]) => what) // ['weight Q4_K to f16', 'activation to f16 tiles']
 */
export function coopmatPrePasses(
  spec: CoopmatSpec,
  act: PrePassPart = f16TilesPart(spec.m, spec.k, coopmatSplitExtents(spec).mp, SPLIT_SLACK_BYTES),
  plan = 'coopmat-f16 split plan',
): [SplitPrePass, string][] {
  const [{ n, k }, { np }] = [spec, coopmatSplitExtents(spec)];
  // The scalar arm decodes 'separate', as the emulation does, on every compiler (quant.q4kDecode).
  const guard = spec.arm === 'scalar' ? 'separate' : 'compiler';
  const rows = () =>
    quant.q4kF16RowsPart({ n, k, np, banks: spec.rowMap?.banks ?? 1, guard, slack: SPLIT_SLACK_BYTES });
  const pass = (title: string, parts: PrePassPart[], what: string): [SplitPrePass, string] => [
    prePassKernel(k, `${plan}, pass ${title}`, parts),
    what,
  ];
  const activation = pass('1: the activation to f16 tiles', [act], 'activation to f16 tiles');
  const weight = stagingOf(spec).weightPrePass;
  if (weight === 'none') return [activation];
  if (weight === 'own') return [pass('0: the weight to f16', [rows()], 'weight Q4_K to f16'), activation];
  const both = '0: the weight to f16 and the activation to f16 tiles, one dispatch';
  return [pass(both, [rows(), act], 'weight and activation to f16')];
}

/** A split or stream GEMM's B (f16 rows, or Q4_K decoded in the GEMM): what it adds to the module. */
export type BOperand = { consts?: string; bindings: BindingTable; decls?: string; head?: string };
/** A weight row `r` (WGSL) of this workgroup's matrix. */
const weightRow = (spec: CoopmatSpec, r: string) => (spec.rowMap ? `(w0 + ${r})` : r);
const NSB = 'const NSB = K / 256u; // Q4_K super-blocks per weight row\n';

/** The scalar arm's B, `wh_pair(c, k)`: pre-passed rows, or Q4_K decoded and rounded as the pre-pass does. */
export function scalarB(spec: CoopmatSpec): BOperand {
  if (stagingOf(spec).b === 'rows')
    return {
      bindings: { wh: readOnly('array<u32>', 'f16 pairs, [NP, K] row-major') },
      decls: `
// f16 pair (k, k+1), k even, of weight row c.
fn wh_pair(c: u32, k: u32) -> vec2f { return unpack2x16float(wh[(${weightRow(spec, 'c')} * K + k) / 2u]); }`,
    };
  return {
    consts: NSB,
    bindings: quant.q4kWeight('u32'),
    head: quant.SET_NO_FUSE,
    decls: `
${quant.Q4K_SCALES_WGSL}${quant.NO_FUSE_DECODE}${quant.ROUND_F16X2}// f16 pair (k, k+1), k even, of weight row c (rows n..NP-1 read row n - 1: never stored).
fn wh_pair(c: u32, k: u32) -> vec2f {
  let blk = ${weightRow(spec, 'min(c, N - 1u)')} * NSB + k / 256u;
  let j = (k % 256u) / 32u; // sub-block 2g + s: nibble s of qs bytes 32g .. 32g + 31
${at('  ', quant.q4kDecode.scaleMin('', 'wd[blk]', 'q4k_sc(blk * 3u, j)', 'wdm[blk]', 'q4k_m(blk * 3u, j)', 'separate'))}
  let byte0 = 32u * (j / 2u) + k % 32u; // even, so the pair's two bytes share a word
  let sh = 8u * (byte0 % 4u) + 4u * (j % 2u);
  let word = wqs[blk * 32u + byte0 / 4u];
  let q = vec2f(f32((word >> sh) & 15u), f32((word >> (sh + 8u)) & 15u));
  return round_f16x2(${quant.q4kDecode.value('', 'q', 'separate', '2')});
}`,
  };
}

/** The scalar arm's per-element loop over 32-blocks kb in [from, to), K in order within each. */
export const scalarLoop = (from: string, to: string) => `  for (var kb = ${from}; kb < ${to}; kb++) {
${eachElement(
  '    ',
  [],
  [
    'let r = mrow0 + (warp_m * RM + im) * 16u + p / 16u;',
    'let c = ncol0 + (warp_n * RN + jn) * 16u + p % 16u;',
    ...scalarSum('xt_pair(r, kb * 32u + 2u * l)', 'wh_pair(c, kb * 32u + 2u * l)'),
  ],
)}
  }
`;

/**
 * A split or stream GEMM from its parts (`decls` after the bindings: the scalar arm's XT_PAIR, the matrix
 * arm's B stage memory): one binding table gives the WGSL and the host's names.
 */
export function gemmModule(
  spec: CoopmatSpec,
  g: CoopmatGeometry,
  b: BOperand,
  o: { title: string; consts: string; between?: string; decls: string; head: string; body: string },
): GemmModule {
  const xt =
    spec.arm === 'scalar'
      ? readOnly('array<u32>', 'f16 pairs, 16x16 fragment tiles')
      : readOnly('array<array<f16, 256>>', '16x16 fragment tiles [MP/16][KT][16][16]');
  // A's binding is declared apart from the rest (the matrix arm's B constants go between).
  const layout = bindingLayout(
    { xt },
    withGridSlice({ ...b.bindings, ...outBinding(spec), ...spec.rowMap?.bindings }),
  );
  const map = spec.rowMap;
  const splitK = partSums(spec)
    ? `const KSPLIT = ${spec.ksplit}u; // K parts: workgroup z sums K / KSPLIT into partial sums out[z][M][N]
var<private> kz0: u32; // out offset of this part
`
    : '';
  const mapped = map
    ? `var<private> w0: u32; // first weight row of this row tile's matrix in the bank
const NP = ${coopmatSplitExtents(spec).np}u; // weight rows of a matrix, padded to whole tiles
${map.decls}`
    : '';
  // A mapped GEMM runs its map's prologue and finds its matrix's first weight row; split-K its part's offset.
  const prologue = map
    ? `${map.prologue}  w0 = w_bank * ${stagingOf(spec).b === 'q4k' ? 'N' : 'NP'};\n`
    : partSums(spec)
      ? '  kz0 = wg.z * M * N;\n'
      : '';
  return {
    bindings: layout.names,
    wgsl: `${spec.arm === 'scalar' ? '' : `${MATRIX_ENABLES}\n`}${o.title}
${tileConsts(spec, g)}const KB = K / 32u; // 32-wide K blocks (the scalar arm's sums; the trip count of 32-wide stages)
const KT = K / 16u; // 16-wide fragment tiles of xt per 16 rows
${splitK}${mapped}${o.consts}${layout.decls[0]}
${o.between ?? ''}${b.consts ?? ''}${layout.decls[1]}
${b.decls ?? ''}
${o.decls}${o.head}${b.head ?? ''}${prologue}${o.body}`,
  };
}

/** The scalar arm's A, from the activation's f16 fragment tiles. */
export const XT_PAIR = `// f16 pair (k, k+1), k even, of activation row r.
fn xt_pair(r: u32, k: u32) -> vec2f { return unpack2x16float(xt[(((r / 16u) * KT + k / 16u) * 256u + (r % 16u) * 16u + k % 16u) / 2u]); }

`;

/** The matrix arm's B: prefetch registers, `fetch` a stage into them, `put` them into `sb`. */
export interface BSource extends BOperand {
  regs: string;
  fetch(kb: string, pad: string): string;
  put(buf: string, pad: string): string;
}

/** The K stage (WGSL) of a GEMM stage `kb` of this workgroup's K part: split-K and stream parts start at ks0. */
const stageAt = (spec: CoopmatSpec, kb: string) =>
  (spec.ksplit ?? 1) > 1 || stagingOf(spec).stream ? `ks0 + ${kb}` : kb;
/**
 * Who stages a B stage of `perRow` items a row: every invocation of the split GEMM, or the plane group of
 * a stream part (place `pt`, its buffers after the parts before); `tag` names a raw slot's registers.
 */
function stagers(spec: CoopmatSpec, perRow: number, tag: string) {
  const g = coopmatSplitGeometry(spec);
  const stream = stagingOf(spec).stream;
  const [items, count] = [g.bn * perRow, g.nwarp * spec.plane];
  const n = Math.ceil(items / count);
  const who = (i: number) => `${stream ? 'pt' : 'tid'} + ${i * count}u`;
  return {
    n,
    who,
    guard: (i: number) => (items % count !== 0 && i === n - 1 ? `if (${who(i)} < ${items}u) ` : ''),
    bufAt: (buf: string) => `${stream ? `part * ${2 * g.bn * g.rs}u + ` : ''}(${buf}) * ${g.bn * g.rs}u + `,
    rs: g.rs,
    reg: (name: string, i: number) => `${name}${tag}${i}`,
  };
}

/** B from the weight pre-pass's f16 rows: 8 halves (one vec4u) an item, stored half by half. */
function rowsSource(spec: CoopmatSpec): BSource {
  const { n, who, guard, bufAt, rs, reg } = stagers(spec, SPLIT_K_STAGE / 8, '');
  // Written in line, not through a helper taking the offset: the bounds checks' range analysis proves an
  // offset built from tid in range and drops the clamp, but cannot see into a function parameter.
  const putRows = (buf: string, pad: string, it: number) => {
    const body = block(pad, '', [
      `let o = ${bufAt(buf)}((${who(it)}) / 8u) * ${rs}u + ((${who(it)}) % 8u) * 8u;`,
      ...range(4).map((w) => `let ${'pqrs'[w]} = bitcast<vec2<f16>>(${reg('gb', it)}.${'xyzw'[w]});`),
      inline(8, (h) => `sb[o + ${h}u] = ${'pqrs'[h >> 1]}.${'xy'[h & 1]};`),
    ]);
    return guard(it) ? `${pad}${guard(it)}{ ${body.slice(pad.length)} }` : body;
  };
  const load = (kb: string, it: number) =>
    `${reg('gb', it)} = wh[((${spec.rowMap ? 'w0 + ' : ''}ncol0 + (${who(it)}) / 8u) * K + (${stageAt(spec, kb)}) * ${SPLIT_K_STAGE}u + ((${who(it)}) % 8u) * 8u) / 8u];`;
  return {
    bindings: { wh: readOnly('array<vec4u>', 'f16 [NP, K] row-major, 8 halves per vec4') },
    regs: lines(n, (it) => `  var ${reg('gb', it)} = vec4u(0u);`),
    fetch: (kb, pad) =>
      lines(n, (it) => `${pad}${guard(it) ? `${guard(it)}{ ${load(kb, it)} }` : load(kb, it)}`),
    put: (buf, pad) => lines(n, (it) => putRows(buf, pad, it)),
  };
}

/**
 * B decoded from the Q4_K words in the stage: unit u is 16 qs bytes (one vec4u) of row u / QPR, K-values
 * 64 * ((u % QPR) / 2) + 16 * (u % 2) + 0..15 of sub-blocks 2g (low nibbles) and 2g + 1 (high, 32
 * further), decoded with the weight pre-pass's arithmetic (so B is the same f16 operand) into 32 halves.
 * Rows n..NP-1 read row n - 1 (their columns are never stored); the prefetch after the last stage wraps.
 * The matrix arm's gate admits a compiler's fused decode, so it leaves the rounding to the compiler.
 */
export function q4kSource(spec: CoopmatSpec, tag = ''): BSource {
  const qpr = SPLIT_K_STAGE / 32;
  const { n, who, guard, bufAt, rs, reg } = stagers(spec, qpr, tag);
  const putQ4k = (buf: string, pad: string, u: number) => {
    const quarter = (half: number, w: number) => {
      const v = `v${half}${'xyzw'[w]}`;
      return [
        `let ${v} = ${quant.q4kDecode.value(String(half), `nib_f32(${reg('gq', u)}.${'xyzw'[w]}, vec4u(${half * 4}u))`, 'compiler', '4')};`,
        `let h${v} = bitcast<vec4<f16>>(vec2u(pack2x16float(${v}.xy), pack2x16float(${v}.zw)));`,
        inline(4, (e) => `sb[o + ${half * 32 + w * 4 + e}u] = h${v}.${'xyzw'[e]};`),
      ];
    };
    const d = reg('gd', u);
    const word = (f: string, h: number) => `q4kw_${f}(${reg('gw', u)}, ${reg('gj', u)}${h ? ' + 1u' : ''})`;
    return block(pad, guard(u), [
      ...[0, 1].flatMap((h) =>
        quant.q4kDecode.scaleMin(`${h}`, `${d}.x`, word('sc', h), `${d}.y`, word('m', h), 'compiler'),
      ),
      `let o = ${bufAt(buf)}((${who(u)}) / ${qpr}u) * ${rs}u + (((${who(u)}) % ${qpr}u) / 2u) * 64u + ((${who(u)}) % 2u) * 16u;`,
      ...[0, 1].flatMap((half) => range(4).flatMap((w) => quarter(half, w))),
    ]);
  };
  return {
    consts: NSB,
    bindings: quant.q4kWeight('vec4u'),
    decls: `\n${quant.Q4K_DECODE_REGS}`,
    regs: lines(
      n,
      (u) =>
        `  var ${reg('gq', u)} = vec4u(0u);\n  var ${reg('gw', u)} = vec3u(0u);\n  var ${reg('gd', u)} = vec2f(0.0);\n  var ${reg('gj', u)} = 0u;`,
    ),
    fetch: (kb, pad) =>
      lines(n, (u) =>
        block(pad, guard(u), [
          `let kk = ((${stageAt(spec, kb)}) % (K / ${SPLIT_K_STAGE}u)) * ${SPLIT_K_STAGE}u + (((${who(u)}) % ${qpr}u) / 2u) * 64u;`,
          `let blk = ${weightRow(spec, `min(ncol0 + (${who(u)}) / ${qpr}u, N - 1u)`)} * NSB + kk / 256u;`,
          `${reg('gq', u)} = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (${who(u)}) % 2u];`,
          `${reg('gw', u)} = ${quant.q4kScaleWords('blk')};`,
          `${reg('gd', u)} = vec2f(wd[blk], wdm[blk]);`,
          `${reg('gj', u)} = (kk % 256u) / 32u;`,
        ]),
      ),
    put: (buf, pad) => lines(n, (u) => putQ4k(buf, pad, u)),
  };
}

/**
 * Lines loading the matrix arm's A fragments of K stage `stage` straight from xt into `lhs(im, kc)`. Each
 * names one 16x16 tile of an array of tiles at offset 0: with the array length, offset and stride all
 * constants, a browser's bounds checks do not wrap the load in a branch; the tile index gets a clamp.
 */
export const aFragments = (spec: CoopmatSpec) =>
  range(spec.tile.rm).flatMap((im) => range(SPLIT_K_STAGE / 16).map((kc) => [im, kc] as const));
export const loadsA = (spec: CoopmatSpec, stage: string, lhs: (im: number, kc: number) => string) =>
  aFragments(spec).map(
    ([im, kc]) =>
      `${lhs(im, kc)}subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + ${im}u) * KT + (${stage}) * ${SPLIT_K_STAGE / 16}u + ${kc}u], 0u, 16u);`,
  );

const PREFETCH_A = (im: number, kc: number) => `var ${aReg(im, kc, 'pa')} = `;
/** Before the matrix K loop: the sources' first stages fetched, the first put, A's loaded. */
export const stageZero = (spec: CoopmatSpec, why: string, srcs: readonly BSource[], stage0: string) =>
  `  // ${why}
${srcs.map((s) => s.regs).join('\n')}
${srcs.map((s, d) => s.fetch(`${d}u`, '  ')).join('\n')}
${srcs[0]!.put('0u', '  ')}
${at('  ', loadsA(spec, stage0, PREFETCH_A))}
  workgroupBarrier();
`;

/** The split matrix arm's stores: straight to out where it may, else through the spill. */
function matrixStores(spec: CoopmatSpec, directStore: boolean, edges: boolean) {
  // Split-K's direct stores offset by wg.z * M * N, not the private kz0: a matrix store's offset must be uniform.
  const direct = (pad: string) =>
    eachFragment(spec, pad, (im, jn) => [
      `subgroupMatrixStore<row_major>(&out, ${partSums(spec) ? 'wg.z * M * N + ' : ''}(mrow0 + (warp_m * RM + ${im}u) * 16u) * N + ncol0 + (warp_n * RN + ${jn}u) * 16u, acc_${im}_${jn}, N);`,
    ]);
  const spilled = spec.rowMap
    ? 'Mapped rows go where the row map says, so every fragment is spilled and copied by lanes.'
    : 'Instrumented: every fragment is spilled and copied by lanes, so store_out records the owners.';
  if (spec.rowMap || !directStore) return `  // ${spilled}\n${spillStores(spec, '    ')}`;
  if (!edges) return `  // m and n are whole blocks: every fragment goes straight to out.\n${direct('  ')}`;
  return `  if (mrow0 + BM <= M && ncol0 + BN <= N) {
    // The whole block is inside m x n: every fragment goes straight to out.
${direct('    ')}
  } else {
    // An edge block (workgroup-uniform branch, so its barriers are legal): spill and copy with guards.
${spillStores(spec, '    ')}
  }`;
}

/** The split GEMM (the host appends the set_owner/store_out suffix); see matrixStores for `directStore`. */
export function coopmatSplitModule(spec: CoopmatSpec, directStore: boolean): GemmModule {
  const g = coopmatSplitGeometry(spec);
  // Split-K: workgroup z runs its K / KSPLIT of the K blocks (the matrix arm's prefetch wraps over all K).
  const split = (spec.ksplit ?? 1) > 1;
  const title = `// coopmat-f16 split plan, pass 2 (${spec.arm} arm): out[M, N] = xt @ wh^T, the f16 operands the pre-passes
// wrote, accumulated in f32. ${tileSummary(spec, g, `, ${g.nwarp}`)}
`;
  if (spec.arm === 'scalar')
    return gemmModule(spec, g, scalarB(spec), {
      title,
      consts: '\n',
      decls: XT_PAIR,
      head: gridHead('scalar'),
      body: `${scalarLoop(split ? 'wg.z * (KB / KSPLIT)' : '0u', split ? '(wg.z + 1u) * (KB / KSPLIT)' : 'KB')}${scalarStore(outRows(spec))}`,
    });
  const stages = `K / ${SPLIT_K_STAGE}u`;
  const src = stagingOf(spec).b === 'q4k' ? q4kSource(spec) : rowsSource(spec);
  // The edge path is emitted only where m or n leaves a partial block (the kernel is generated per
  // shape), so a kernel of whole blocks carries no spill code or spill memory.
  const edges = spec.m % g.bm !== 0 || spec.n % g.bn !== 0;
  const spill =
    !directStore || edges || spec.rowMap
      ? `// One 16x16 f32 spill per plane for edge subtiles: the fragment's lane layout is opaque.
${spillCopyOut(outRows(spec))}`
      : '';
  const takeA = loadsA(
    spec,
    stageAt(spec, 'kb + 1u'),
    (im, kc) => `let ${aReg(im, kc)} = ${aReg(im, kc, 'pa')};\n    ${aReg(im, kc, 'pa')} = `,
  );
  return gemmModule(spec, g, src, {
    title,
    consts: `const RS = ${g.rs}u; // f16 elements per staged B row (${SPLIT_K_STAGE} K-values + padding against bank conflicts)\n`,
    decls: `// B [BN, ${SPLIT_K_STAGE}] of a stage, two buffers [2][BN][RS]: stage kb is read from buffer kb % 2 while kb + 1 is written.
var<workgroup> sb: array<f16, ${2 * g.bn * g.rs}u>;

${spill}
`,
    head: gridHead(spec.arm),
    body: `${split ? `  let ks0 = wg.z * (${stages} / KSPLIT);\n` : ''}${accDecls(spec)}
${stageZero(spec, 'Stage 0: B into buffer 0, A fragments into registers.', [src], stageAt(spec, '0u'))}  for (var kb = 0u; kb < ${split ? `${stages} / KSPLIT` : stages}; kb++) {
    let cur = kb % 2u;
    // Take this stage's A and issue the next stage's loads (the last stage's prefetch reads the slack).
${at('    ', takeA)}
${src.fetch('kb + 1u', '    ')}
${contractChunks(spec, { chunks: g.kc, what: 'stage', bufAt: `cur * ${g.bn * g.rs}u + `, rs: g.rs })}
    // Write the next stage into the other buffer; the barrier publishes it and retires this one.
${src.put('1u - cur', '    ')}
    workgroupBarrier();
  }
${matrixStores(spec, directStore, edges)}
}
`,
  });
}
