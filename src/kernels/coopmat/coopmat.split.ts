// The split plan of the coopmat twin: the same out = x @ W^T (W = d*sc*q - dmin*m decoded from Q4_K,
// both operands rounded to f16, f32 accumulation) as pre-passes and a GEMM instead of one kernel,
// because decoding inside the GEMM repeats the decode in every workgroup row (M / BM times per weight)
// and stages f16 one element per store (docs/decisions/0001-split-plan.md):
//   weight pre-pass      Q4_K -> f16 wh [NP, K] row-major (decoded ONCE per weight, rows >= n zero)
//   activation pre-pass  x f32 -> f16 xt in 16x16 fragment tiles [MP/16][K/16][16][16]
//   the GEMM             A fragments straight from xt (each a contiguous 512-byte tile, prefetched in
//                        registers one 64-wide stage ahead: docs/decisions/0003-a-read-directly.md), B
//                        staged from wh with 16-byte loads into a double-buffered, row-padded workgroup
//                        tile (one barrier a stage), f32 results stored straight to `out` where the
//                        subtile is inside m x n (spilled and copied by lanes at the edges).
// 'fused-prepass' runs both pre-passes as one dispatch; 'in-gemm' has no weight pre-pass: the GEMM's
// stage decodes B from the Q4_K words with the pre-pass's arithmetic, so the f16 operand is the same.
// Both pre-passes are core WGSL (pack2x16float), so every adapter and both arms share them; the scalar
// arm reads the same f16 pairs and sums each 32-block in K order, exactly as mmqQ4kF16RoundedRef.
import { PRE_PASS_WG, prePassGrid, prePassKernel, type PrePassPart, type SplitPrePass } from '../gpu/prepass';
import { Q4K_DECODE_REGS, q4kScaleWords, Q4K_SCALES_WGSL, q4kWeightBindings } from '../quant/q4k.wgsl';
import type { CoopmatStaging } from './catalog';
import {
  MATRIX_MAIN_HEAD,
  NO_FUSE_DECODE,
  range,
  scalarBlock,
  SCALAR_MAIN_HEAD,
  scalarStore,
  SET_NO_FUSE,
  spillCopyOut,
  spillStore,
  tileConsts,
  type OutRows,
} from './coopmat.snippets';
import {
  coopmatSplitExtents,
  coopmatSplitGeometry,
  routedTable,
  ROUTED_NONE,
  SPLIT_K_STAGE,
  SPLIT_SLACK_BYTES,
  W_PRE_PASS_PER,
  type CoopmatSpec,
} from './coopmat.spec';

/** Whether a split staging's GEMM decodes B from the Q4_K words itself (no weight pre-pass). */
const decodesB = (staging: CoopmatStaging) => staging === 'in-gemm';

/**
 * WGSL: (row, col) of pre-pass item t (8 halves, one vec4u) in the fragment-tiled order of xt, so
 * consecutive items (a subgroup's 16-byte stores) are contiguous. `col` names the K variable.
 */
const tiledItem = (col: string) => `  let tile = t / 32u; // 32 items = one 16x16 tile [16 rows][16 K]
  let row = (tile / (K / 16u)) * 16u + (t % 32u) / 2u;
  let ${col} = (tile % (K / 16u)) * 16u + (t % 2u) * 8u;`;

/**
 * WGSL fn `name(t)`: item t of the f16 fragment tiles xt from row `src` of x (zero unless `live`), after
 * the `head` lines (which may return, or define `src`). The activation pre-pass and the MoE gather.
 */
export const f16TileItem = (name: string, head: string, src: string, live: string) => `fn ${name}(t: u32) {
${tiledItem('col')}
${head}  var a = vec4f(0.0);
  var b = vec4f(0.0);
  if (${live}) {
    a = x[(${src} * K + col) / 4u];
    b = x[(${src} * K + col) / 4u + 1u];
  }
  xt[t] = vec4u(pack2x16float(a.xy), pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));
}
`;

/** WGSL: the u32 (f16 pair) index of element (row, k), k even, in 16x16 fragment tiles. */
const tiledPairAt = (row: string, k: string) =>
  `(((${row} / 16u) * KT + ${k} / 16u) * 256u + (${row} % 16u) * 16u + ${k} % 16u) / 2u`;

/** Index of element (row, col) of a [rows, k] matrix in 16x16 fragment tiles [rows/16][k/16][16][16] (xt). */
export const fragmentTileIndex = (row: number, col: number, k: number): number =>
  ((((row >> 4) * (k >> 4) + (col >> 4)) * 16 + (row & 15)) << 4) + (col & 15);

/**
 * The weight pre-pass: Q4_K [n, k] decoded to f16 wh [NP, k] (rows n..NP-1 zero), 8 consecutive weights
 * per item (one 16-byte store, so a subgroup writes 512 contiguous bytes). An invocation takes
 * W_PRE_PASS_PER items W_INV apart, loading all of their words before decoding any, so several loads are
 * in flight per invocation while a subgroup's stores stay contiguous. Sub-block j = 2g + s of a
 * super-block takes the low (s = 0) or high (s = 1) nibbles of qs bytes 32g .. 32g+31. w = ds*q - ms
 * with ds = d*sc, ms = dmin*m in f32, as dequantQ4kRows; pack2x16float rounds to f16.
 */
function weightPrePassPart(spec: Pick<CoopmatSpec, 'm' | 'n' | 'k' | 'tile' | 'routed'>): PrePassPart {
  const { n, k } = spec;
  const per = W_PRE_PASS_PER;
  const { np } = coopmatSplitExtents(spec);
  // An expert bank: each expert's rows padded to NP, one after another.
  const e = spec.routed?.experts ?? 1;
  const items = (e * np * k) / 8;
  // items is a multiple of 32 (k of 256), so every per divides it.
  const inv = items / per;
  const ts = range(per).map((i) => (i === 0 ? 't' : `t + ${i}u * W_INV`));
  const decls = (at: number) => `${
    spec.routed
      ? `// Weight: the Q4_K bank of ${e} experts [${n}, ${k}] decoded ONCE to f16 wh, [${e} x ${np}, ${k}] row-major
// (each expert's rows ${n}..${np - 1} zero).
const NP = ${np}u;`
      : `// Weight: Q4_K W [${n}, ${k}] decoded ONCE to f16 wh, [${np}, ${k}] row-major (rows ${n}..${np - 1} zero).`
  }
const N = ${n}u;
const NSB = K / 256u; // super-blocks per row
const W_INV = ${inv}u; // invocations, each taking items t, t + W_INV, ... (${per} items) of the ${items} vec4u (8 weights each) of wh
${q4kWeightBindings(at, 'vec2u')}@group(0) @binding(${at + 4}) var<storage, read_write> wh: array<vec4u>; // f16 as pack2x16float pairs

${Q4K_DECODE_REGS}
// The raw words of item t: its 8 nibbles' qs bytes, its super-block's scale words, d and dmin.
struct Item { q: vec2u, w: vec3u, d: f32, dm: f32, j: u32, live: bool }

fn load_item(t: u32) -> Item {
  let row = t / (K / 8u)${spec.routed ? ' % NP' : ''};
  let k0 = (t % (K / 8u)) * 8u;
  // Rows n..NP-1 are written as zeros; they read row N - 1's words (in bounds, unused).
  let blk = ${spec.routed ? '(t / (K / 8u) / NP * N + min(row, N - 1u))' : 'min(row, N - 1u)'} * NSB + k0 / 256u;
  let j = (k0 % 256u) / 32u; // sub-block 2g + s
  let q = wqs[blk * 16u + (j / 2u) * 4u + (k0 % 32u) / 8u]; // qs bytes 32g + k0 % 32 .. +7
  let w = ${q4kScaleWords('blk')};
  return Item(q, w, wd[blk], wdm[blk], j, row < N);
}

fn store_item(t: u32, it: Item) {
  let ds = it.d * f32(q4kw_sc(it.w, it.j));
  let ms = it.dm * f32(q4kw_m(it.w, it.j));
  let sh = vec4u(4u * (it.j % 2u));
  let a = ds * nib_f32(it.q.x, sh) - ms;
  let b = ds * nib_f32(it.q.y, sh) - ms;
  let h = vec4u(pack2x16float(a.xy), pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));
  wh[t] = select(vec4u(0u), h, it.live);
}

// Every item's loads first, then the decodes and stores.
fn weight_items(t: u32) {
${ts.map((e, i) => `  let it${i} = load_item(${e});`).join('\n')}
${ts.map((e, i) => `  store_item(${e}, it${i});`).join('\n')}
}
`;
  return {
    decls,
    fn: 'weight_items',
    items: inv,
    bindings: ['wqs', 'wsc', 'wd', 'wdm', 'wh'],
    out: { name: 'wh', bytes: e * np * k * 2 + SPLIT_SLACK_BYTES },
  };
}

/**
 * The activation pre-pass: x [m, k] (f32) rounded to f16 into 16x16 fragment tiles, xt[((p * K/16 + c) *
 * 16 + r) * 16 + kk] = x[16p + r, 16c + kk] (rows m..MP-1 zero): one 16x16 A fragment is 512 contiguous
 * bytes, which is what lets the GEMM load it straight from global memory. One invocation per 8 halves.
 */
function activationPrePassPart(spec: Pick<CoopmatSpec, 'm' | 'n' | 'k' | 'tile'>): PrePassPart {
  const { m, k } = spec;
  const { mp } = coopmatSplitExtents(spec);
  const items = (mp * k) / 8;
  const decls = (
    at: number,
  ) => `// Activation: x [${m}, ${k}] rounded to f16 into 16x16 fragment tiles xt [${mp / 16}][${k / 16}][16][16]
// (rows ${m}..${mp - 1} zero).
const M = ${m}u;
@group(0) @binding(${at}) var<storage, read> x: array<vec4f>; // [M, K] row-major
@group(0) @binding(${at + 1}) var<storage, read_write> xt: array<vec4u>; // f16 tiles as pack2x16float pairs

${f16TileItem('activation_item', '', 'row', 'row < M')}`;
  return {
    decls,
    fn: 'activation_item',
    items,
    bindings: ['x', 'xt'],
    out: { name: 'xt', bytes: mp * k * 2 + SPLIT_SLACK_BYTES },
  };
}

/**
 * The pre-passes of a split staging, in dispatch order, each with what it is for (the plan's labels):
 * 'prepass' the weight pre-pass then the activation's; 'fused-prepass' both in one dispatch; 'in-gemm'
 * the activation's alone.
 * @example coopmatPrePasses(spec).map(([, what]) => what) // ['weight Q4_K to f16', 'activation to f16 tiles']
 */
export function coopmatPrePasses(
  spec: CoopmatSpec,
  act: PrePassPart = activationPrePassPart(spec),
  plan = 'coopmat-f16 split plan',
): [SplitPrePass, string][] {
  const { k } = spec;
  if (spec.staging === 'fused-prepass')
    return [
      [
        prePassKernel(k, `${plan}, pass 0: the weight to f16 and the activation to f16 tiles, one dispatch`, [
          weightPrePassPart(spec),
          act,
        ]),
        'weight and activation to f16',
      ],
    ];
  const activation: [SplitPrePass, string] = [
    prePassKernel(k, `${plan}, pass 1: the activation to f16 tiles`, [act]),
    'activation to f16 tiles',
  ];
  if (decodesB(spec.staging)) return [activation];
  return [
    [prePassKernel(k, `${plan}, pass 0: the weight to f16`, [weightPrePassPart(spec)]), 'weight Q4_K to f16'],
    activation,
  ];
}

function splitConsts(spec: CoopmatSpec): string {
  const ks = spec.ksplit ?? 1;
  const r = spec.routed;
  const t = r && routedTable(r.tiles, coopmatSplitGeometry(spec).bm);
  return `${tileConsts(spec, coopmatSplitGeometry(spec))}const KB = K / 32u; // 32-wide K blocks (the scalar arm's sums; the trip count of 32-wide stages)
const KT = K / 16u; // 16-wide fragment tiles of xt per 16 rows
${
  ks > 1
    ? `const KSPLIT = ${ks}u; // K parts: workgroup z sums K / KSPLIT into partial sums out[z][M][N]
var<private> kz0: u32; // out offset of this part
`
    : ''
}${
    t
      ? `const NONE = ${ROUTED_NONE}u;
const SLOTS_AT = ${t.slotAt}u; // routing table: [0] row tiles in use, [1 + y] expert of row tile y, [SLOTS_AT + row] slot of a row
var<workgroup> tile_expert: u32;
var<private> w0: u32; // first weight row of this row tile's expert
const NP = ${coopmatSplitExtents(spec).np}u; // weight rows of an expert, padded to whole tiles
`
      : ''
  }`;
}

/** Where a split GEMM's output element goes: dense, a routed row's slot, or a split-K part. */
function outRows(spec: CoopmatSpec): OutRows {
  if (spec.routed)
    return {
      lookup: 'let slot = groups[SLOTS_AT + orow];',
      guard: 'slot != NONE && ocol < N',
      index: 'slot * N + ocol',
    };
  const index = 'orow * N + ocol';
  return {
    lookup: '',
    guard: 'orow < M && ocol < N',
    index: (spec.ksplit ?? 1) > 1 ? `kz0 + ${index}` : index,
  };
}

/** The routing table's binding after the GEMM's own (`at`), for a routed GEMM. */
const routedBinding = (spec: CoopmatSpec, at: number) =>
  spec.routed
    ? `@group(0) @binding(${at}) var<storage, read> groups: array<u32>; // the routing table\n`
    : '';

/**
 * What a split GEMM does first: a routed one finds its row tile's expert (uniformly, so the matrix
 * loads stay uniform) and exits past the tiles in use; split-K sets its part's output offset.
 */
function splitPrologue(spec: CoopmatSpec): string {
  if (spec.routed)
    return `  // Routed: row tile wg.y holds one expert's rows, or none past the tiles in use (the workgroup exits).
  if (tid == 0u) { tile_expert = select(NONE, groups[1u + wg.y], wg.y < groups[0]); }
  let expert = workgroupUniformLoad(&tile_expert);
  if (expert == NONE) { return; }
  w0 = expert * ${decodesB(spec.staging) ? 'N' : 'NP'};
`;
  return (spec.ksplit ?? 1) > 1 ? '  kz0 = wg.z * M * N;\n' : '';
}

const splitHeader = (spec: CoopmatSpec) => {
  const g = coopmatSplitGeometry(spec);
  const { wm, wn, rm, rn } = spec.tile;
  return `// coopmat-f16 split plan, pass 2 (${spec.arm} arm): out[M, N] = xt @ wh^T, the f16 operands the pre-passes
// wrote, accumulated in f32. Tile wm=${wm} wn=${wn} rm=${rm} rn=${rn}: BM=${g.bm} BN=${g.bn}, ${g.nwarp} plane(s) of ${spec.plane} = ${g.threads} invocations.
`;
};

/** The scalar arm: each lane's PER elements of each subtile, every 32-block summed in K order (the emulation's order). */
function splitScalarMain(spec: CoopmatSpec): string {
  // In-gemm: no pre-passed weight; the pair is decoded from the Q4_K words with the weight pre-pass's
  // arithmetic and rounded to f16 as it would have been stored.
  const weight = decodesB(spec.staging)
    ? `const NSB = K / 256u; // Q4_K super-blocks per weight row
${q4kWeightBindings(1, 'u32')}@group(0) @binding(5) var<storage, read_write> out: array<f32>; // [M, N] row-major
${routedBinding(spec, 6)}
${Q4K_SCALES_WGSL}${NO_FUSE_DECODE}
// f16 pair (k, k+1), k even, of weight row c (rows n..NP-1 read row n - 1: never stored).
fn wh_pair(c: u32, k: u32) -> vec2f {
  let blk = ${spec.routed ? '(w0 + min(c, N - 1u))' : 'min(c, N - 1u)'} * NSB + k / 256u;
  let j = (k % 256u) / 32u; // sub-block 2g + s: nibble s of qs bytes 32g .. 32g + 31
  let ds = wd[blk] * f32(q4k_sc(blk * 3u, j));
  let ms = no_fuse(wdm[blk] * f32(q4k_m(blk * 3u, j)));
  let byte0 = 32u * (j / 2u) + k % 32u; // even, so the pair's two bytes share a word
  let sh = 8u * (byte0 % 4u) + 4u * (j % 2u);
  let word = wqs[blk * 32u + byte0 / 4u];
  let q = vec2f(f32((word >> sh) & 15u), f32((word >> (sh + 8u)) & 15u));
  return unpack2x16float(pack2x16float(no_fuse2(ds * q) - ms));
}`
    : `@group(0) @binding(1) var<storage, read> wh: array<u32>; // f16 pairs, [NP, K] row-major
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // [M, N] row-major
${routedBinding(spec, 3)}
// f16 pair (k, k+1), k even, of weight row c.
fn wh_pair(c: u32, k: u32) -> vec2f { return unpack2x16float(wh[(${spec.routed ? '(w0 + c)' : 'c'} * K + k) / 2u]); }`;
  const ks = spec.ksplit ?? 1;
  return `${splitHeader(spec)}
${splitConsts(spec)}
@group(0) @binding(0) var<storage, read> xt: array<u32>; // f16 pairs, 16x16 fragment tiles
${weight}
// f16 pair (k, k+1), k even, of activation row r.
fn xt_pair(r: u32, k: u32) -> vec2f { return unpack2x16float(xt[${tiledPairAt('r', 'k')}]); }

${SCALAR_MAIN_HEAD}${decodesB(spec.staging) ? SET_NO_FUSE : ''}${splitPrologue(spec)}  for (var kb = ${ks > 1 ? 'wg.z * (KB / KSPLIT); kb < (wg.z + 1u) * (KB / KSPLIT)' : '0u; kb < KB'}; kb++) {
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
${scalarStore(outRows(spec))}`;
}

/** `pad` + each line, joined (the split GEMM emits its blocks at the indent where they go). */
const at = (pad: string, lines: readonly string[]) => lines.map((l) => pad + l).join('\n');

/**
 * The matrix arm. `directStore`: subtiles inside m x n are stored from the fragment straight to `out`
 * (subgroupMatrixStore); otherwise every subtile goes through the spill, whose per-lane copy calls
 * store_out -- what the ownership instrumentation records.
 */
function splitMatrixMain(spec: CoopmatSpec, directStore: boolean): string {
  const g = coopmatSplitGeometry(spec);
  const { rm, rn } = spec.tile;
  const ids = range(rm).flatMap((im) => range(rn).map((jn) => [im, jn] as const));
  const ks = range(g.kc);
  const q4kB = decodesB(spec.staging);
  const stages = `K / ${SPLIT_K_STAGE}u`;
  // Split-K: workgroup z runs stages ks0 .. ks0 + KS - 1 of the K / 64 (the prefetch wraps over all of K);
  // its direct stores offset by wg.z * M * N, not the private kz0: a matrix store's offset must be uniform.
  const split = (spec.ksplit ?? 1) > 1;
  const st = (kb: string) => (split ? `ks0 + ${kb}` : kb);
  const routed = !!spec.routed;
  // Offset of staging buffer `buf` of B (bufAt), and the one this stage reads (curAt).
  const bufAt = (buf: string) => `(${buf}) * ${g.bn * g.rs}u + `;
  const curAt = `cur * ${g.bn * g.rs}u + `;
  // A matrix load from xt names one 16x16 tile of an array of tiles at offset 0: with the array length,
  // the offset and the stride all constants, a browser's bounds checks do not wrap the load in a branch
  // (they predicate every subgroupMatrixLoad whose three are not constants); the tile index gets a clamp.
  const loadA = (im: number, kc: number, kb: string) =>
    `subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xt[((mrow0 / 16u) + warp_m * RM + ${im}u) * KT + (${st(kb)}) * ${g.kc}u + ${kc}u], 0u, 16u)`;
  const item = (it: number) => `tid + ${it * g.threads}u`;
  const unit = (u: number) => `tid + ${u * g.threads}u`;
  // A statement whose body spans lines: its first line at `pad`, the rest one level in.
  const block = (pad: string, head: string, lines: readonly string[]) =>
    `${pad}${head}{\n${at(`${pad}  `, lines)}\n${pad}}`;
  const bGuard = (it: number) => (g.bGuard && it === g.ib - 1 ? `if (${item(it)} < ${g.bItems}u) ` : '');
  const qGuard = (u: number) => (g.qGuard && u === g.iq - 1 ? `if (${unit(u)} < ${g.qUnits}u) ` : '');
  // In-gemm: unit u of a stage is row u / QPR, K-values 64 * ((u % QPR) / 2) + 16 * (u % 2) + 0..15 of
  // sub-blocks 2g (low nibbles) and 2g + 1 (high, 32 further); its 16 qs bytes are one vec4u. Rows
  // n..NP-1 read row n - 1 (their columns are never stored); the prefetch after the last stage wraps to 0.
  const fetch = (kb: string, pad: string) =>
    q4kB
      ? range(g.iq)
          .map((u) =>
            block(pad, qGuard(u), [
              `let kk = ((${st(kb)}) % (${stages})) * ${SPLIT_K_STAGE}u + (((${unit(u)}) % ${g.qpr}u) / 2u) * 64u;`,
              `let blk = ${routed ? '(w0 + ' : ''}min(ncol0 + (${unit(u)}) / ${g.qpr}u, N - 1u)${routed ? ')' : ''} * NSB + kk / 256u;`,
              `gq${u} = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (${unit(u)}) % 2u];`,
              `gw${u} = ${q4kScaleWords('blk')};`,
              `gd${u} = vec2f(wd[blk], wdm[blk]);`,
              `gj${u} = (kk % 256u) / 32u;`,
            ]),
          )
          .join('\n')
      : range(g.ib)
          .map((it) => {
            const load = `gb${it} = wh[((${routed ? 'w0 + ' : ''}ncol0 + (${item(it)}) / 8u) * K + (${st(kb)}) * ${SPLIT_K_STAGE}u + ((${item(it)}) % 8u) * 8u) / 8u];`;
            return `${pad}${bGuard(it) ? `${bGuard(it)}{ ${load} }` : load}`;
          })
          .join('\n');
  // The weight pre-pass's arithmetic (ds * q - ms in f32, pack2x16float), so B is the same f16 operand.
  const putQ4k = (buf: string, pad: string, u: number) => {
    const quarter = (half: number, w: number) => {
      const v = `v${half}${'xyzw'[w]}`;
      const first = half * 32 + w * 4;
      return [
        `let ${v} = ds${half} * nib_f32(gq${u}.${'xyzw'[w]}, vec4u(${half * 4}u)) - ms${half};`,
        `let h${v} = bitcast<vec4<f16>>(vec2u(pack2x16float(${v}.xy), pack2x16float(${v}.zw)));`,
        range(4)
          .map((e) => `sb[o + ${first + e}u] = h${v}.${'xyzw'[e]};`)
          .join(' '),
      ];
    };
    return block(pad, qGuard(u), [
      `let ds0 = gd${u}.x * f32(q4kw_sc(gw${u}, gj${u}));`,
      `let ms0 = gd${u}.y * f32(q4kw_m(gw${u}, gj${u}));`,
      `let ds1 = gd${u}.x * f32(q4kw_sc(gw${u}, gj${u} + 1u));`,
      `let ms1 = gd${u}.y * f32(q4kw_m(gw${u}, gj${u} + 1u));`,
      `let o = ${bufAt(buf)}((${unit(u)}) / ${g.qpr}u) * ${g.rs}u + (((${unit(u)}) % ${g.qpr}u) / 2u) * 64u + ((${unit(u)}) % 2u) * 16u;`,
      ...[0, 1].flatMap((half) => range(4).flatMap((w) => quarter(half, w))),
    ]);
  };
  // Written in line, not through a helper taking the offset: the bounds checks' range analysis proves an
  // offset built from tid in range and drops the clamp, but cannot see into a function parameter.
  const putRows = (buf: string, pad: string, it: number) => {
    const halves = range(8)
      .map((h) => `sb[o + ${h}u] = ${'pqrs'[h >> 1]}.${'xy'[h & 1]};`)
      .join(' ');
    const lines = [
      `let o = ${bufAt(buf)}((${item(it)}) / 8u) * ${g.rs}u + ((${item(it)}) % 8u) * 8u;`,
      `let p = bitcast<vec2<f16>>(gb${it}.x);`,
      `let q = bitcast<vec2<f16>>(gb${it}.y);`,
      `let r = bitcast<vec2<f16>>(gb${it}.z);`,
      `let s = bitcast<vec2<f16>>(gb${it}.w);`,
      halves,
    ];
    const body = block(pad, '', lines);
    return bGuard(it) ? `${pad}${bGuard(it)}{ ${body.slice(pad.length)} }` : body;
  };
  const put = (buf: string, pad: string) =>
    (q4kB
      ? range(g.iq).map((u) => putQ4k(buf, pad, u))
      : range(g.ib).map((it) => putRows(buf, pad, it))
    ).join('\n');
  const regs = (
    q4kB
      ? range(g.iq).map(
          (u) =>
            `  var gq${u} = vec4u(0u);\n  var gw${u} = vec3u(0u);\n  var gd${u} = vec2f(0.0);\n  var gj${u} = 0u;`,
        )
      : range(g.ib).map((it) => `  var gb${it} = vec4u(0u);`)
  ).join('\n');
  const contract = ks
    .map((kc) => {
      const loadsB = range(rn)
        .map(
          (jn) =>
            `      let b_${jn} = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, ${curAt}(warp_n * RN + ${jn}u) * ${16 * g.rs}u + ${kc * 16}u, ${g.rs}u);`,
        )
        .join('\n');
      const mmas = ids
        .map(
          ([im, jn]) =>
            `      acc_${im}_${jn} = subgroupMatrixMultiplyAccumulate(a_${im}_${kc}, b_${jn}, acc_${im}_${jn});`,
        )
        .join('\n');
      return `    {
      // K columns ${kc * 16}..${kc * 16 + 15} of the stage.
${loadsB}
${mmas}
    }`;
    })
    .join('\n');
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
  const stores = routed
    ? `  // Routed: rows scatter to their slots, so every fragment is spilled and copied by lanes.
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
  const takeA = range(rm)
    .flatMap((im) =>
      ks.map(
        (kc) => `    let a_${im}_${kc} = pa_${im}_${kc};\n    pa_${im}_${kc} = ${loadA(im, kc, 'kb + 1u')};`,
      ),
    )
    .join('\n');
  const firstA = range(rm)
    .flatMap((im) => ks.map((kc) => `  var pa_${im}_${kc} = ${loadA(im, kc, '0u')};`))
    .join('\n');
  const weight = q4kB
    ? `const NSB = K / 256u; // Q4_K super-blocks per weight row
${q4kWeightBindings(1, 'vec4u')}@group(0) @binding(5) var<storage, read_write> out: array<f32>; // [M, N] row-major
${routedBinding(spec, 6)}
${Q4K_DECODE_REGS}`
    : `@group(0) @binding(1) var<storage, read> wh: array<vec4u>; // f16 [NP, K] row-major, 8 halves per vec4
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // [M, N] row-major
${routedBinding(spec, 3)}`;
  return `enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

${splitHeader(spec)}
${splitConsts(spec)}const RS = ${g.rs}u; // f16 elements per staged B row (${SPLIT_K_STAGE} K-values + padding against bank conflicts)
@group(0) @binding(0) var<storage, read> xt: array<array<f16, 256>>; // 16x16 fragment tiles [MP/16][KT][16][16]
${weight}
// B [BN, ${SPLIT_K_STAGE}] of a stage, two buffers [2][BN][RS]: stage kb is read from buffer kb % 2 while kb + 1 is written.
var<workgroup> sb: array<f16, ${2 * g.bn * g.rs}u>;

${
  !directStore || edges || routed
    ? `// One 16x16 f32 spill per plane for edge subtiles: the fragment's lane layout is opaque.
${spillCopyOut(outRows(spec))}`
    : ''
}
${MATRIX_MAIN_HEAD}${splitPrologue(spec)}${split ? `  let ks0 = wg.z * (${stages} / KSPLIT);\n` : ''}${ids.map(([im, jn]) => `  var acc_${im}_${jn} = subgroup_matrix_result<f32, 16, 16>();`).join('\n')}
  // Stage 0: B into buffer 0, A fragments into registers.
${regs}
${fetch('0u', '  ')}
${put('0u', '  ')}
${firstA}
  workgroupBarrier();
  for (var kb = 0u; kb < ${split ? `${stages} / KSPLIT` : stages}; kb++) {
    let cur = kb % 2u;
    // Take this stage's A and issue the next stage's loads (the last stage's prefetch reads the slack).
${takeA}
${fetch('kb + 1u', '    ')}
${contract}
    // Write the next stage into the other buffer; the barrier publishes it and retires this one.
${put('1u - cur', '    ')}
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

/** The split GEMM reads the pre-passes' outputs in x's and the weight's places ... */
export const COOPMAT_SPLIT_BINDINGS = ['xt', 'wh', 'out'] as const;
/** ... and with B decoded in the stage ('in-gemm'), the Q4_K weight itself. */
export const COOPMAT_SPLIT_Q4K_BINDINGS = ['xt', 'wqs', 'wsc', 'wd', 'wdm', 'out'] as const;

/** The split GEMM's buffers in @binding order. */
export const coopmatSplitBindings = (staging: CoopmatStaging): readonly string[] =>
  decodesB(staging) ? COOPMAT_SPLIT_Q4K_BINDINGS : COOPMAT_SPLIT_BINDINGS;

/**
 * Split-K's reduction: out = the KSPLIT partial sums of each element added in z order, as the
 * emulation adds them (one invocation an element).
 * @example coopmatReducePass({ ...spec, ksplit: 4 }).bindings // ['part', 'out']
 */
export function coopmatReducePass(spec: CoopmatSpec): SplitPrePass {
  const mn = spec.m * spec.n;
  const ks = spec.ksplit ?? 1;
  const grid = prePassGrid(mn);
  return {
    wgsl: `// coopmat-f16 split-K reduction: out = part[0] + part[1] + ... + part[${ks - 1}], in that order.
const MN = ${mn}u;
@group(0) @binding(0) var<storage, read> part: array<f32>; // [KSPLIT, M, N] partial sums
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // [M, N]

@compute @workgroup_size(${PRE_PASS_WG})
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.y * ${grid[0] * PRE_PASS_WG}u + gid.x;
  if (i < MN) {
    var s = part[i];
    for (var z = 1u; z < ${ks}u; z++) { s += part[z * MN + i]; }
    out[i] = s;
  }
}
`,
    entryPoint: 'main',
    bindings: ['part', 'out'],
    workgroupSize: PRE_PASS_WG,
    grid,
    writes: [{ name: 'out', bytes: mn * 4 }],
  };
}
