// The split plan of the coopmat twin: the same out = x @ W^T (W = d*sc*q - dmin*m decoded from Q4_K,
// both operands rounded to f16, f32 accumulation) as pre-passes and a GEMM instead of one kernel,
// because decoding inside the GEMM repeats the decode in every workgroup row (M / BM times per weight)
// and stages f16 one element per store (docs/decisions/0001-split-plan.md):
//   weight pre-pass      Q4_K -> f16 wh [NP, K] row-major (decoded ONCE per weight, rows >= n zero)
//   activation pre-pass  x f32 -> f16 xt in 16x16 fragment tiles [MP/16][K/16][16][16]
//   the GEMM             A fragments straight from xt (each a contiguous 512-byte tile, prefetched in
//                        registers one 64-wide stage ahead: docs/decisions/0003-a-read-directly.md), B
//                        staged from its source into a double-buffered, row-padded workgroup tile (one
//                        barrier a stage), f32 results stored straight to `out` where the subtile is
//                        inside m x n (spilled and copied by lanes at the edges).
// B's source is the staging's (STAGING_FLAGS.b): pre-passed f16 rows, or the Q4_K words decoded in the
// stage with the pre-pass's arithmetic ('in-gemm'), so the f16 operand is the same. Both pre-passes are
// core WGSL (pack2x16float), so every adapter and both arms share them; the scalar arm reads the same f16
// pairs and sums each 32-block in K order, exactly as mmqQ4kF16RoundedRef.
import { bindingDecls, type Binding } from '../gpu/plan';
import { f16TilesPart, prePassKernel, type PrePassPart, type SplitPrePass } from '../gpu/prepass';
import {
  NO_FUSE_DECODE,
  ROUND_F16X2,
  q4kDecode,
  Q4K_DECODE_REGS,
  q4kF16RowsPart,
  q4kScaleWords,
  Q4K_SCALES_WGSL,
  q4kWeight,
  SET_NO_FUSE,
  type DecodeGuard,
} from '../quant/q4k.wgsl';
import {
  MATRIX_MAIN_HEAD,
  OUT_BINDING,
  range,
  scalarBlock,
  SCALAR_MAIN_HEAD,
  scalarStore,
  spillCopyOut,
  spillStore,
  tileConsts,
  type OutRows,
} from './coopmat.snippets';
import {
  coopmatGeometry,
  coopmatSplitExtents,
  coopmatSplitGeometry,
  SPLIT_K_STAGE,
  SPLIT_SLACK_BYTES,
  stagingOf,
  type CoopmatSpec,
} from './coopmat.params';

/** The decode guard of an arm: the scalar arm matches the emulation's rounding on every compiler. */
export const guardOf = (spec: Pick<CoopmatSpec, 'arm'>): DecodeGuard =>
  spec.arm === 'scalar' ? 'separate' : 'compiler';

/** WGSL: the u32 (f16 pair) index of element (row, k), k even, in 16x16 fragment tiles. */
const tiledPairAt = (row: string, k: string) =>
  `(((${row} / 16u) * KT + ${k} / 16u) * 256u + (${row} % 16u) * 16u + ${k} % 16u) / 2u`;

/**
 * The pre-passes of a split staging, in dispatch order, each with what it is for (the plan's labels):
 * 'prepass' the weight to f16 rows then the activation to f16 tiles; 'fused-prepass' both in one
 * dispatch; 'in-gemm' and 'stream' the activation's alone. `act` replaces the activation's (a gather).
 * @example coopmatPrePasses(spec).map(([, what]) => what) // ['weight Q4_K to f16', 'activation to f16 tiles']
 */
export function coopmatPrePasses(
  spec: CoopmatSpec,
  act: PrePassPart = f16TilesPart(spec.m, spec.k, coopmatSplitExtents(spec).mp, SPLIT_SLACK_BYTES),
  plan = 'coopmat-f16 split plan',
): [SplitPrePass, string][] {
  const { n, k } = spec;
  const weight = stagingOf(spec).weightPrePass;
  const rows = () =>
    q4kF16RowsPart({
      n,
      k,
      np: coopmatSplitExtents(spec).np,
      banks: spec.rowMap?.banks ?? 1,
      guard: guardOf(spec),
      slack: SPLIT_SLACK_BYTES,
    });
  const activation: [SplitPrePass, string] = [
    prePassKernel(k, `${plan}, pass 1: the activation to f16 tiles`, [act]),
    'activation to f16 tiles',
  ];
  if (weight === 'none') return [activation];
  if (weight === 'own')
    return [
      [prePassKernel(k, `${plan}, pass 0: the weight to f16`, [rows()]), 'weight Q4_K to f16'],
      activation,
    ];
  const both = `${plan}, pass 0: the weight to f16 and the activation to f16 tiles, one dispatch`;
  return [[prePassKernel(k, both, [rows(), act]), 'weight and activation to f16']];
}

/** The constants of a split or stream GEMM: the tile's, K's blocks, split-K's and a row map's. */
export function gemmConsts(spec: CoopmatSpec, g: { threads: number; bm: number; bn: number; per: number }) {
  const ks = spec.ksplit ?? 1;
  const map = spec.rowMap;
  return `${tileConsts(spec, g)}const KB = K / 32u; // 32-wide K blocks (the scalar arm's sums; the trip count of 32-wide stages)
const KT = K / 16u; // 16-wide fragment tiles of xt per 16 rows
${
  ks > 1 && !stagingOf(spec).stream
    ? `const KSPLIT = ${ks}u; // K parts: workgroup z sums K / KSPLIT into partial sums out[z][M][N]
var<private> kz0: u32; // out offset of this part
`
    : ''
}${
    map
      ? `var<private> w0: u32; // first weight row of this row tile's matrix in the bank
const NP = ${coopmatSplitExtents(spec).np}u; // weight rows of a matrix, padded to whole tiles
${map.decls}`
      : ''
  }`;
}

/** Where a split GEMM's output element goes: dense, a mapped row, or a split-K part. */
export function outRows(spec: CoopmatSpec): OutRows {
  if (spec.rowMap) return spec.rowMap.out;
  const index = 'orow * N + ocol';
  return {
    lookup: '',
    guard: 'orow < M && ocol < N',
    index: (spec.ksplit ?? 1) > 1 && !stagingOf(spec).stream ? `kz0 + ${index}` : index,
  };
}

/**
 * What a GEMM does first: a mapped one runs its map's prologue (which may exit) and finds its matrix's
 * first weight row; split-K sets its part's output offset.
 */
export function gemmPrologue(spec: CoopmatSpec): string {
  if (spec.rowMap)
    return `${spec.rowMap.prologue}  w0 = w_bank * ${stagingOf(spec).b === 'q4k' ? 'N' : 'NP'};\n`;
  return (spec.ksplit ?? 1) > 1 && !stagingOf(spec).stream ? '  kz0 = wg.z * M * N;\n' : '';
}

/** A weight row `r` (WGSL) of this workgroup's matrix. */
export const weightRow = (spec: CoopmatSpec, r: string) => (spec.rowMap ? `(w0 + ${r})` : r);

const splitHeader = (spec: CoopmatSpec) => {
  const g = coopmatGeometry(spec);
  const { wm, wn, rm, rn } = spec.tile;
  return `// coopmat-f16 split plan, pass 2 (${spec.arm} arm): out[M, N] = xt @ wh^T, the f16 operands the pre-passes
// wrote, accumulated in f32. Tile wm=${wm} wn=${wn} rm=${rm} rn=${rn}: BM=${g.bm} BN=${g.bn}, ${g.nwarp} plane(s) of ${spec.plane} = ${g.threads} invocations.
`;
};

/**
 * The scalar arm's B: `wh_pair(c, k)`, the f16 pair (k, k + 1) of weight row c, from pre-passed rows or
 * decoded from the Q4_K words with the weight pre-pass's arithmetic (guarded) and rounded to f16 as it
 * would have been stored. Returns the declarations from binding 1 on and whether main sets no_fuse.
 */
export function scalarB(spec: CoopmatSpec, out: Binding): { decls: string; bindings: Binding[] } {
  const extra = spec.rowMap?.bindings ?? [];
  if (stagingOf(spec).b === 'rows') {
    const bindings = [
      { name: 'wh', access: 'read', type: 'array<u32>', comment: 'f16 pairs, [NP, K] row-major' } as const,
      out,
      ...extra,
    ];
    return {
      bindings,
      decls: `${bindingDecls(bindings, 1)}
// f16 pair (k, k+1), k even, of weight row c.
fn wh_pair(c: u32, k: u32) -> vec2f { return unpack2x16float(wh[(${weightRow(spec, 'c')} * K + k) / 2u]); }`,
    };
  }
  const bindings = [...q4kWeight('u32'), out, ...extra];
  return {
    bindings,
    decls: `const NSB = K / 256u; // Q4_K super-blocks per weight row
${bindingDecls(bindings, 1)}
${Q4K_SCALES_WGSL}${NO_FUSE_DECODE}${ROUND_F16X2}// f16 pair (k, k+1), k even, of weight row c (rows n..NP-1 read row n - 1: never stored).
fn wh_pair(c: u32, k: u32) -> vec2f {
  let blk = ${weightRow(spec, 'min(c, N - 1u)')} * NSB + k / 256u;
  let j = (k % 256u) / 32u; // sub-block 2g + s: nibble s of qs bytes 32g .. 32g + 31
${q4kDecode
  .scaleMin('', 'wd[blk]', 'q4k_sc(blk * 3u, j)', 'wdm[blk]', 'q4k_m(blk * 3u, j)', 'separate')
  .map((l) => `  ${l}`)
  .join('\n')}
  let byte0 = 32u * (j / 2u) + k % 32u; // even, so the pair's two bytes share a word
  let sh = 8u * (byte0 % 4u) + 4u * (j % 2u);
  let word = wqs[blk * 32u + byte0 / 4u];
  let q = vec2f(f32((word >> sh) & 15u), f32((word >> (sh + 8u)) & 15u));
  return round_f16x2(${q4kDecode.value('', 'q', 'separate', '2')});
}`,
  };
}

/** The xt_pair helper every scalar GEMM reads A through. */
export const XT_PAIR = `// f16 pair (k, k+1), k even, of activation row r.
fn xt_pair(r: u32, k: u32) -> vec2f { return unpack2x16float(xt[${tiledPairAt('r', 'k')}]); }
`;

/** The scalar arm's per-element loop over 32-blocks kb in [from, to), K in order within each. */
export const scalarLoop = (from: string, to: string) => `  for (var kb = ${from}; kb < ${to}; kb++) {
    for (var im = 0u; im < RM; im++) {
      for (var jn = 0u; jn < RN; jn++) {
        for (var e = 0u; e < PER; e++) {
          let p = lane * PER + e;
          let r = mrow0 + (warp_m * RM + im) * 16u + p / 16u;
          let c = ncol0 + (warp_n * RN + jn) * 16u + p % 16u;
${scalarBlock(
  (l) => `xt_pair(r, kb * 32u + 2u * ${l})`,
  (l) => `wh_pair(c, kb * 32u + 2u * ${l})`,
)}
        }
      }
    }
  }
`;

/** The scalar arm: each lane's PER elements of each subtile, every 32-block summed in K order (the emulation's order). */
function splitScalarMain(spec: CoopmatSpec): string {
  const ks = spec.ksplit ?? 1;
  const b = scalarB(spec, OUT_BINDING());
  return `${splitHeader(spec)}
${gemmConsts(spec, coopmatGeometry(spec))}
@group(0) @binding(0) var<storage, read> xt: array<u32>; // f16 pairs, 16x16 fragment tiles
${b.decls}
${XT_PAIR}
${SCALAR_MAIN_HEAD}${stagingOf(spec).b === 'q4k' ? SET_NO_FUSE : ''}${gemmPrologue(spec)}${scalarLoop(
    ks > 1 ? 'wg.z * (KB / KSPLIT)' : '0u',
    ks > 1 ? '(wg.z + 1u) * (KB / KSPLIT)' : 'KB',
  )}${scalarStore(outRows(spec))}`;
}

/** `pad` + each line, joined (the GEMMs emit their blocks at the indent where they go). */
export const at = (pad: string, lines: readonly string[]) => lines.map((l) => pad + l).join('\n');
/** A statement whose body spans lines: its first line at `pad`, the rest one level in. */
export const block = (pad: string, head: string, lines: readonly string[]) =>
  `${pad}${head}{\n${at(`${pad}  `, lines)}\n${pad}}`;

/**
 * A B source of the matrix arm's stage: its bindings and declarations, the prefetch registers, the
 * loads of a stage into them (`fetch`) and their stores into staging buffer `buf` (`put`). The stagers
 * (`who(i)`: the index of the i-th item an invocation stages) are the split GEMM's whole workgroup or one
 * stream plane; `stageAt(kb)` is the 64-wide stage index of K (a split-K part or stream plane offsets it).
 */
export interface BSource {
  bindings: Binding[];
  decls: string;
  regs: string;
  fetch(kb: string, pad: string): string;
  put(buf: string, pad: string): string;
}

/** Where the stage's B buffer `buf` starts in `sb`, and who stages what. */
export interface Stagers {
  who: (i: number) => string;
  count: number;
  items: number;
  bufAt: (buf: string) => string;
  stageAt: (kb: string) => string;
  rs: number;
  /** Tells apart the prefetch registers of several stages in flight (gq0_1: stage slot 0, unit 1). */
  tag?: string;
}

/** B from the weight pre-pass's f16 rows: 8 halves (one vec4u) an item, stored half by half. */
export function rowsSource(spec: CoopmatSpec, s: Stagers): BSource {
  const ib = Math.ceil(s.items / s.count);
  const gb = (it: number) => `gb${s.tag ?? ''}${it}`;
  const guard = (it: number) =>
    s.items % s.count !== 0 && it === ib - 1 ? `if (${s.who(it)} < ${s.items}u) ` : '';
  // Written in line, not through a helper taking the offset: the bounds checks' range analysis proves an
  // offset built from tid in range and drops the clamp, but cannot see into a function parameter.
  const putRows = (buf: string, pad: string, it: number) => {
    const halves = range(8)
      .map((h) => `sb[o + ${h}u] = ${'pqrs'[h >> 1]}.${'xy'[h & 1]};`)
      .join(' ');
    const body = block(pad, '', [
      `let o = ${s.bufAt(buf)}((${s.who(it)}) / 8u) * ${s.rs}u + ((${s.who(it)}) % 8u) * 8u;`,
      `let p = bitcast<vec2<f16>>(${gb(it)}.x);`,
      `let q = bitcast<vec2<f16>>(${gb(it)}.y);`,
      `let r = bitcast<vec2<f16>>(${gb(it)}.z);`,
      `let s = bitcast<vec2<f16>>(${gb(it)}.w);`,
      halves,
    ]);
    return guard(it) ? `${pad}${guard(it)}{ ${body.slice(pad.length)} }` : body;
  };
  const bindings: Binding[] = [
    { name: 'wh', access: 'read', type: 'array<vec4u>', comment: 'f16 [NP, K] row-major, 8 halves per vec4' },
  ];
  return {
    bindings,
    decls: '',
    regs: range(ib)
      .map((it) => `  var ${gb(it)} = vec4u(0u);`)
      .join('\n'),
    fetch: (kb, pad) =>
      range(ib)
        .map((it) => {
          const load = `${gb(it)} = wh[((${spec.rowMap ? 'w0 + ' : ''}ncol0 + (${s.who(it)}) / 8u) * K + (${s.stageAt(kb)}) * ${SPLIT_K_STAGE}u + ((${s.who(it)}) % 8u) * 8u) / 8u];`;
          return `${pad}${guard(it) ? `${guard(it)}{ ${load} }` : load}`;
        })
        .join('\n'),
    put: (buf, pad) =>
      range(ib)
        .map((it) => putRows(buf, pad, it))
        .join('\n'),
  };
}

/**
 * B decoded from the Q4_K words in the stage: unit u is 16 qs bytes (one vec4u) of row u / QPR, K-values
 * 64 * ((u % QPR) / 2) + 16 * (u % 2) + 0..15 of sub-blocks 2g (low nibbles) and 2g + 1 (high, 32
 * further), decoded with the weight pre-pass's arithmetic (so B is the same f16 operand) into 32 halves.
 * Rows n..NP-1 read row n - 1 (their columns are never stored); the prefetch after the last stage wraps.
 */
export function q4kSource(spec: CoopmatSpec, s: Stagers): BSource {
  const qpr = SPLIT_K_STAGE / 32;
  const r = (name: string, u: number) => `${name}${s.tag ?? ''}${u}`;
  const iq = Math.ceil(s.items / s.count);
  const guard = (u: number) =>
    s.items % s.count !== 0 && u === iq - 1 ? `if (${s.who(u)} < ${s.items}u) ` : '';
  const dec = guardOf(spec);
  const putQ4k = (buf: string, pad: string, u: number) => {
    const quarter = (half: number, w: number) => {
      const v = `v${half}${'xyzw'[w]}`;
      const first = half * 32 + w * 4;
      return [
        `let ${v} = ${q4kDecode.value(String(half), `nib_f32(${r('gq', u)}.${'xyzw'[w]}, vec4u(${half * 4}u))`, dec, '4')};`,
        `let h${v} = bitcast<vec4<f16>>(vec2u(pack2x16float(${v}.xy), pack2x16float(${v}.zw)));`,
        range(4)
          .map((e) => `sb[o + ${first + e}u] = h${v}.${'xyzw'[e]};`)
          .join(' '),
      ];
    };
    return block(pad, guard(u), [
      ...[0, 1].flatMap((half) =>
        q4kDecode.scaleMin(
          String(half),
          `${r('gd', u)}.x`,
          `q4kw_sc(${r('gw', u)}, ${r('gj', u)}${half ? ' + 1u' : ''})`,
          `${r('gd', u)}.y`,
          `q4kw_m(${r('gw', u)}, ${r('gj', u)}${half ? ' + 1u' : ''})`,
          dec,
        ),
      ),
      `let o = ${s.bufAt(buf)}((${s.who(u)}) / ${qpr}u) * ${s.rs}u + (((${s.who(u)}) % ${qpr}u) / 2u) * 64u + ((${s.who(u)}) % 2u) * 16u;`,
      ...[0, 1].flatMap((half) => range(4).flatMap((w) => quarter(half, w))),
    ]);
  };
  return {
    bindings: q4kWeight('vec4u'),
    decls: `${Q4K_DECODE_REGS}${dec === 'separate' ? NO_FUSE_DECODE : ''}`,
    regs: range(iq)
      .map(
        (u) =>
          `  var ${r('gq', u)} = vec4u(0u);\n  var ${r('gw', u)} = vec3u(0u);\n  var ${r('gd', u)} = vec2f(0.0);\n  var ${r('gj', u)} = 0u;`,
      )
      .join('\n'),
    fetch: (kb, pad) =>
      range(iq)
        .map((u) =>
          block(pad, guard(u), [
            `let kk = ((${s.stageAt(kb)}) % (K / ${SPLIT_K_STAGE}u)) * ${SPLIT_K_STAGE}u + (((${s.who(u)}) % ${qpr}u) / 2u) * 64u;`,
            `let blk = ${weightRow(spec, `min(ncol0 + (${s.who(u)}) / ${qpr}u, N - 1u)`)} * NSB + kk / 256u;`,
            `${r('gq', u)} = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (${s.who(u)}) % 2u];`,
            `${r('gw', u)} = ${q4kScaleWords('blk')};`,
            `${r('gd', u)} = vec2f(wd[blk], wdm[blk]);`,
            `${r('gj', u)} = (kk % 256u) / 32u;`,
          ]),
        )
        .join('\n'),
    put: (buf, pad) =>
      range(iq)
        .map((u) => putQ4k(buf, pad, u))
        .join('\n'),
  };
}

/**
 * The matrix arm's A fragment (rows of subtile `im`, K chunk `kc` of stage `kb`) straight from xt. It
 * names one 16x16 tile of an array of tiles at offset 0: with the array length, the offset and the stride
 * all constants, a browser's bounds checks do not wrap the load in a branch (they predicate every
 * subgroupMatrixLoad whose three are not constants); the tile index gets a clamp.
 */
export const loadA = (im: number, kc: number, stage: string, perStage: number) =>
  `subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + ${im}u) * KT + (${stage}) * ${perStage}u + ${kc}u], 0u, 16u)`;

/** The MMAs of one stage: for each K chunk, RN B fragments from `sb` at `bufAt`, RM x RN accumulations. */
export function contractStage(
  spec: CoopmatSpec,
  bufAt: string,
  rs: number,
  a: (im: number, kc: number) => string,
) {
  const { rm, rn } = spec.tile;
  return range(SPLIT_K_STAGE / 16)
    .map((kc) => {
      const loadsB = range(rn)
        .map(
          (jn) =>
            `      let b_${jn} = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, ${bufAt}(warp_n * RN + ${jn}u) * ${16 * rs}u + ${kc * 16}u, ${rs}u);`,
        )
        .join('\n');
      const mmas = range(rm)
        .flatMap((im) =>
          range(rn).map(
            (jn) =>
              `      acc_${im}_${jn} = subgroupMatrixMultiplyAccumulate(${a(im, kc)}, b_${jn}, acc_${im}_${jn});`,
          ),
        )
        .join('\n');
      return `    {
      // K columns ${kc * 16}..${kc * 16 + 15} of the stage.
${loadsB}
${mmas}
    }`;
    })
    .join('\n');
}

/** The result fragments' ids (im, jn) of a tile. */
export const fragments = (spec: CoopmatSpec) =>
  range(spec.tile.rm).flatMap((im) => range(spec.tile.rn).map((jn) => [im, jn] as const));

/** The matrix arm's module head: the enables, the header, constants and the B source's declarations. */
const MATRIX_ENABLES = 'enable f16;\nenable subgroups;\nenable chromium_experimental_subgroup_matrix;\n';

/**
 * The matrix arm. `directStore`: subtiles inside m x n are stored from the fragment straight to `out`
 * (subgroupMatrixStore); otherwise every subtile goes through the spill, whose per-lane copy calls
 * store_out -- what the ownership instrumentation records.
 */
function splitMatrixMain(spec: CoopmatSpec, directStore: boolean): string {
  const g = coopmatSplitGeometry(spec);
  const q4k = stagingOf(spec).b === 'q4k';
  // Split-K: workgroup z runs stages ks0 .. ks0 + KS - 1 of the K / 64 (the prefetch wraps over all of K);
  // its direct stores offset by wg.z * M * N, not the private kz0: a matrix store's offset must be uniform.
  const split = (spec.ksplit ?? 1) > 1;
  const stages = `K / ${SPLIT_K_STAGE}u`;
  const stagers: Stagers = {
    who: (i) => `tid + ${i * g.threads}u`,
    count: g.threads,
    items: q4k ? g.qUnits : g.bItems,
    bufAt: (buf) => `(${buf}) * ${g.bn * g.rs}u + `,
    stageAt: (kb) => (split ? `ks0 + ${kb}` : kb),
    rs: g.rs,
  };
  const src = (q4k ? q4kSource : rowsSource)(spec, stagers);
  const ids = fragments(spec);
  const direct = (pad: string) =>
    ids
      .map(
        ([im, jn]) =>
          `${pad}subgroupMatrixStore<row_major>(&out, ${split ? 'wg.z * M * N + ' : ''}(mrow0 + (warp_m * RM + ${im}u) * 16u) * N + ncol0 + (warp_n * RN + ${jn}u) * 16u, acc_${im}_${jn}, N);`,
      )
      .join('\n');
  const spilled = ids.map(([im, jn]) => spillStore(im, jn, '    ')).join('\n');
  // The edge path is emitted only where m or n leaves a partial block (the kernel is generated per
  // shape), so a kernel of whole blocks carries no spill code or spill memory.
  const edges = spec.m % g.bm !== 0 || spec.n % g.bn !== 0;
  const stores = spec.rowMap
    ? `  // Mapped rows go where the row map says, so every fragment is spilled and copied by lanes.
${spilled}`
    : !directStore
      ? `  // Instrumented: every fragment is spilled and copied by lanes, so store_out records the owners.
${spilled}`
      : !edges
        ? `  // m and n are whole blocks: every fragment goes straight to out.
${direct('  ')}`
        : `  if (mrow0 + BM <= M && ncol0 + BN <= N) {
    // The whole block is inside m x n: every fragment goes straight to out.
${direct('    ')}
  } else {
    // An edge block (workgroup-uniform branch, so its barriers are legal): spill and copy with guards.
${spilled}
  }`;
  const stageA = (kb: string) => (split ? `ks0 + ${kb}` : kb);
  const pa = (im: number, kc: number) => `pa_${im}_${kc}`;
  const takeA = ids
    .filter(([, jn]) => jn === 0)
    .flatMap(([im]) =>
      range(g.kc).map(
        (kc) =>
          `    let a_${im}_${kc} = ${pa(im, kc)};\n    ${pa(im, kc)} = ${loadA(im, kc, stageA('kb + 1u'), g.kc)};`,
      ),
    )
    .join('\n');
  const firstA = ids
    .filter(([, jn]) => jn === 0)
    .flatMap(([im]) => range(g.kc).map((kc) => `  var ${pa(im, kc)} = ${loadA(im, kc, stageA('0u'), g.kc)};`))
    .join('\n');
  const bindings = [...src.bindings, OUT_BINDING(), ...(spec.rowMap?.bindings ?? [])];
  return `${MATRIX_ENABLES}
${splitHeader(spec)}
${gemmConsts(spec, g)}const RS = ${g.rs}u; // f16 elements per staged B row (${SPLIT_K_STAGE} K-values + padding against bank conflicts)
@group(0) @binding(0) var<storage, read> xt: array<array<f16, 256>>; // 16x16 fragment tiles [MP/16][KT][16][16]
${q4k ? 'const NSB = K / 256u; // Q4_K super-blocks per weight row\n' : ''}${bindingDecls(bindings, 1)}${q4k ? `\n${src.decls}` : ''}
// B [BN, ${SPLIT_K_STAGE}] of a stage, two buffers [2][BN][RS]: stage kb is read from buffer kb % 2 while kb + 1 is written.
var<workgroup> sb: array<f16, ${2 * g.bn * g.rs}u>;

${
  !directStore || edges || spec.rowMap
    ? `// One 16x16 f32 spill per plane for edge subtiles: the fragment's lane layout is opaque.
${spillCopyOut(outRows(spec))}`
    : ''
}
${MATRIX_MAIN_HEAD}${q4k && guardOf(spec) === 'separate' ? SET_NO_FUSE : ''}${gemmPrologue(spec)}${split ? `  let ks0 = wg.z * (${stages} / KSPLIT);\n` : ''}${ids.map(([im, jn]) => `  var acc_${im}_${jn} = subgroup_matrix_result<f32, 16, 16>();`).join('\n')}
  // Stage 0: B into buffer 0, A fragments into registers.
${src.regs}
${src.fetch('0u', '  ')}
${src.put('0u', '  ')}
${firstA}
  workgroupBarrier();
  for (var kb = 0u; kb < ${split ? `${stages} / KSPLIT` : stages}; kb++) {
    let cur = kb % 2u;
    // Take this stage's A and issue the next stage's loads (the last stage's prefetch reads the slack).
${takeA}
${src.fetch('kb + 1u', '    ')}
${contractStage(spec, `cur * ${g.bn * g.rs}u + `, g.rs, (im, kc) => `a_${im}_${kc}`)}
    // Write the next stage into the other buffer; the barrier publishes it and retires this one.
${src.put('1u - cur', '    ')}
    workgroupBarrier();
  }
${stores}
}
`;
}

/**
 * The split GEMM's kernel text (the host appends the set_owner/store_out suffix).
 * @example coopmatSplitWgsl({ m: 64, n: 64, k: 256, tile, plane: 32, arm: 'subgroup-matrix', f16: 'native', staging: 'prepass' })
 */
export function coopmatSplitWgsl(spec: CoopmatSpec, opts: { directStore?: boolean } = {}): string {
  return spec.arm === 'scalar' ? splitScalarMain(spec) : splitMatrixMain(spec, opts.directStore ?? true);
}

/** The split GEMM's buffers in @binding order: xt, B's source, out (or the split-K parts), a row map's. */
export function coopmatSplitBindings(spec: CoopmatSpec): string[] {
  const b = stagingOf(spec).b === 'q4k' ? ['wqs', 'wsc', 'wd', 'wdm'] : ['wh'];
  const out = (spec.ksplit ?? 1) > 1 && !stagingOf(spec).stream ? 'part' : 'out';
  return ['xt', ...b, out, ...(spec.rowMap?.bindings ?? []).map((x) => x.buffer ?? x.name)];
}
