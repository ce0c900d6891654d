// The operands and module of the GEMMs over pre-passed activation tiles (the split plan's and the
// stream GEMM): A read straight from xt, the f16 fragment tiles the activation pre-pass wrote
// (docs/decisions/0003-a-read-directly.md); B as pre-passed f16 rows or Q4_K decoded with the pre-pass's
// arithmetic (the same f16 operand), staged a 64-wide stage ahead; the module assembled over one binding
// table. The scalar arm sums each 32-block in K order, as mmqQ4kF16RoundedRef.
import { bindingLayout, readOnly, type BindingTable } from '../gpu/bindings';
import { withGridSlice } from '../gpu/gridSlice';
import * as quant from '../quant/q4k.wgsl';
import {
  coopmatSplitExtents,
  coopmatSplitGeometry,
  SPLIT_K_STAGE,
  stagingOf,
  type CoopmatGeometry,
  type CoopmatSpec,
} from './coopmat.params';
import {
  aReg,
  at,
  block,
  eachElement,
  inline,
  lines,
  outBinding,
  partSums,
  range,
  scalarSum,
  tileConsts,
  MATRIX_ENABLES,
  type GemmModule,
} from './coopmat.emit';

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
  // A mapped GEMM finds its matrix in the bank through its map's hook, then the matrix's first weight row;
  // split-K its part's offset.
  const prologue = map
    ? `${map.rowBank({ bank: 'w_bank', tile: 'wg.y', tid: 'tid' })}  w0 = w_bank * ${stagingOf(spec).b === 'q4k' ? 'N' : 'NP'};\n`
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
export const stageAt = (spec: CoopmatSpec, kb: string) =>
  (spec.ksplit ?? 1) > 1 || stagingOf(spec).stream ? `ks0 + ${kb}` : kb;
/**
 * Who stages a B stage of `perRow` items a row: every invocation of the split GEMM, or the plane group of
 * a stream part (place `pt`, its buffers after the parts before); `tag` names a raw slot's registers.
 */
export function stagers(spec: CoopmatSpec, perRow: number, tag: string) {
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
