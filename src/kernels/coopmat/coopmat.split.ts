// The split plan of the coopmat twin: the same out = x @ W^T (W = d*sc*q - dmin*m decoded from Q4_K,
// both operands rounded to f16, f32 accumulation) as three passes instead of one, because decoding
// inside the GEMM repeats the decode in every workgroup row (M / BM times per weight) and stages
// f16 one element per store:
//   pass 0  weight pre-pass: Q4_K -> f16 wh [NP, K] row-major (decoded ONCE per weight, rows >= n zero)
//   pass 1  activation pre-pass: x f32 -> f16 xt in 16x16 fragment tiles [MP/16][K/16][16][16]
//   pass 2  the GEMM: A fragments straight from xt (each a contiguous 512-byte tile, prefetched in
//           registers one 64-wide stage ahead), B staged from wh with 16-byte loads into a double-
//           buffered, row-padded workgroup tile (one barrier a stage), f32 results stored straight to
//           `out` where the subtile is inside m x n (spilled and copied by lanes at the edges).
// Measured on the H200 at 2048 x 4096 x 4096 (docs/benchmarks.md, "Follow-up 7"): the three passes took
// 0.0144 + 0.0142 + 0.2104 ms at tile 8,1,2,8 (287.5 TOPS in all) where the one-pass pipelined kernel
// took 0.8010 ms.
// Both pre-passes are core WGSL (pack2x16float), so every adapter and both arms share them; the scalar
// arm reads the same f16 pairs and sums each 32-block in K order, exactly as mmqQ4kF16RoundedRef.
import { q4kScaleWords, Q4K_SCALES_WGSL } from '../quant/q4k.wgsl';
import type { CoopmatSpec } from './coopmat.wgsl';
import {
  MATRIX_MAIN_HEAD,
  PRE_PASS_WG,
  prePassGrid,
  q4kWeightBindings,
  Q4K_DECODE_REGS,
  range,
  scalarBlock,
  SCALAR_MAIN_HEAD,
  SCALAR_STORE,
  SPILL_COPY_OUT,
  spillStore,
  tileConsts,
} from './coopmat.snippets';

/**
 * How the split GEMM feeds its matrix loads. A plane's 64x64 results need 4 A and 4 B fragments per 16
 * K-values; with A direct, no other plane shares them, so A is read from L2 N / BN times (about 1.34 GB
 * a GEMM at 2048x4096x4096 with 256x64 blocks). Sharing A through workgroup memory cuts that to 0.81 GB
 * at 128x256, yet on the H200 every shared variant was slower (0.45-1.11 ms against 0.26 ms for the
 * default; docs/benchmarks.md, "Follow-up 4"), so the default stays A direct, B rows.
 */
export interface SplitStage {
  /** 'direct': each plane loads its A fragments from xt into registers (one stage ahead); 'shared': the
   * planes copy the block's A fragments into workgroup memory once, for all WN planes of a row. */
  a: 'direct' | 'shared';
  /** 'rows': wh row-major, staged with 16-byte loads and f16 stores; 'tiles': wh in 16x16 fragment tiles
   * (as xt), staged by fragment copies (subgroupMatrixLoad, subgroupMatrixStore); 'q4k': no weight
   * pre-pass, the stage decodes B from the Q4_K words (16 qs bytes and the super-block's scales per unit
   * of 32 weights) with the pre-pass's arithmetic, so the f16 operand is the same. On the H200 the q4k
   * plan took 0.2652 ms against 0.2403 with the pre-pass at 4,1,4,4: decoding in every workgroup row
   * costs the GEMM more than the pre-pass (0.0144 ms) costs the plan (docs/benchmarks.md, "Follow-up 7"). */
  b: 'rows' | 'tiles' | 'q4k';
  /**
   * K-values per stage (one barrier each with two buffers). On the H200 at 2048 x 4096 x 4096 the GEMM
   * pass took 0.2449 ms at 32, 0.2097 at 64 (half the barriers) and 0.3511 at 128; at 128 with one B
   * buffer (17 KiB, two workgroups an SM still fit) 0.3433, so it is not the workgroup memory alone
   * (docs/benchmarks.md, "Follow-up 6"). One buffer at 64: 0.2238.
   */
  k: 16 | 32 | 64 | 128;
  /**
   * Direct A only: how many 16-wide K chunks ahead A's fragments are loaded, in a ring of that many
   * register slots per row tile; the load of chunk c + aRing is issued right after chunk c's products.
   * Unset: a whole stage ahead, issued at the top of the stage (k / 16 slots, plus the stage in use).
   * A ring of 2 under 64-wide stages took 0.2208 ms against 0.2097 unset: the distance is not what
   * A's loads cost.
   */
  aRing?: 1 | 2 | 4;
  /** Workgroup buffers per staged operand: 2 = one barrier a stage, 1 = two (half the memory). */
  buffers: 1 | 2;
  /** Weight pre-pass: 8-weight items per invocation (default W_PRE_PASS_PER). */
  wPer?: WPrePassPer;
  /** 'fused': the weight and activation pre-passes as one dispatch (default: two). On the H200 one
   * dispatch took 0.0272-0.0275 ms against 0.0139-0.0141 + 0.0134-0.0135 apart: about 1 us. */
  pre?: 'separate' | 'fused';
}
/**
 * Items (8 weights each) per invocation of the weight pre-pass (see buildCoopmatWToF16Kernel). At 4096 x
 * 4096 on the H200, before the scale decode was branch-free: 1 item 0.0203 ms, 2 0.0197, 4 0.0211, 8
 * 0.0251 (one run each, so 1-4 are within the run-to-run spread); the default is 4, the value the
 * headline runs were measured with (0.0139-0.0144 ms since).
 */
export type WPrePassPer = 1 | 2 | 4 | 8;
export const W_PRE_PASS_PER: WPrePassPer = 4;
export const SPLIT_STAGE_DEFAULT: SplitStage = { a: 'direct', b: 'rows', k: 64, buffers: 2 };

/** The staging of a split spec (defaults filled in). */
export const splitStageOf = (spec: Pick<CoopmatSpec, 'splitStage'>): SplitStage =>
  spec.splitStage ?? SPLIT_STAGE_DEFAULT;
/** Extra bytes after xt and wh: the prefetch of the stage after the last one reads them (never used; up to
 * four 512-byte tiles of xt with 64-wide stages). */
export const SPLIT_SLACK_BYTES = 2048;

/** Padded extents of the pre-pass outputs: whole tiles, so the GEMM loads them unguarded. */
export function coopmatSplitExtents(spec: Pick<CoopmatSpec, 'm' | 'n' | 'tile'>) {
  const bm = spec.tile.wm * spec.tile.rm * 16;
  const bn = spec.tile.wn * spec.tile.rn * 16;
  return { mp: Math.ceil(spec.m / bm) * bm, np: Math.ceil(spec.n / bn) * bn };
}

/** Index of element (row, col) of a [rows, k] matrix in 16x16 fragment tiles [rows/16][k/16][16][16] (xt, tiled wh). */
export const fragmentTileIndex = (row: number, col: number, k: number): number =>
  ((((row >> 4) * (k >> 4) + (col >> 4)) * 16 + (row & 15)) << 4) + (col & 15);

/**
 * WGSL: (row, col) of pre-pass item t (8 halves, one vec4u) in the fragment-tiled order of xt and tiled
 * wh, so consecutive items (a subgroup's 16-byte stores) are contiguous. `col` names the K variable.
 */
const tiledItem = (col: string) => `  let tile = t / 32u; // 32 items = one 16x16 tile [16 rows][16 K]
  let row = (tile / (K / 16u)) * 16u + (t % 32u) / 2u;
  let ${col} = (tile % (K / 16u)) * 16u + (t % 2u) * 8u;`;

/** WGSL: the u32 (f16 pair) index of element (row, k), k even, in 16x16 fragment tiles. */
const tiledPairAt = (row: string, k: string) =>
  `(((${row} / 16u) * KT + ${k} / 16u) * 256u + (${row} % 16u) * 16u + ${k} % 16u) / 2u`;

export interface SplitPrePass {
  wgsl: string;
  entryPoint: 'main';
  bindings: readonly string[];
  workgroupSize: number;
  grid: [number, number, number];
  /** The buffers the pass writes and their bytes (including the slack): the plan allocates them. */
  writes: readonly SplitPrePassOutput[];
}
export interface SplitPrePassOutput {
  name: string;
  bytes: number;
}

/**
 * One pre-pass body: its declarations (from binding `at` on), the function `${fn}(t)` doing item t, the
 * number of items, its buffers in binding order and the buffer it writes.
 */
interface PrePassPart {
  decls: (at: number) => string;
  fn: string;
  items: number;
  bindings: readonly string[];
  out: SplitPrePassOutput;
}

/**
 * Pass 0: the Q4_K weight [n, k] decoded to f16 wh [NP, k] (rows n..NP-1 zero), 8 consecutive weights
 * per item (one 16-byte store, so a subgroup writes 512 contiguous bytes; one invocation per 32-weight
 * sub-block writing 64 bytes took 0.0262 ms against 0.0213 at 4096 x 4096 on the H200, its subgroup's
 * stores being 64 bytes apart; 0.0139-0.0144 ms since the scale decode is branch-free). An invocation takes `per` items W_INV apart (W_INV = items / per), loading
 * all of their words before decoding any, so several loads are in flight per invocation while a
 * subgroup's stores stay contiguous. Sub-block j = 2g + s of a super-block takes the low (s = 0) or high
 * (s = 1) nibbles of qs bytes 32g .. 32g+31. w = ds*q - ms with ds = d*sc, ms = dmin*m in f32, as
 * dequantQ4kRows; pack2x16float rounds to f16.
 */
function weightPrePassPart(spec: Pick<CoopmatSpec, 'm' | 'n' | 'k' | 'tile' | 'splitStage'>): PrePassPart {
  const { n, k } = spec;
  const st = splitStageOf(spec);
  const per = st.wPer ?? W_PRE_PASS_PER;
  const { np } = coopmatSplitExtents(spec);
  const items = (np * k) / 8;
  // items is a multiple of 32 (k of 256), so every per divides it.
  const inv = items / per;
  const tiles = st.b === 'tiles';
  // Tiled: item t is the t-th 16-byte piece of the fragment-tiled wh (the activation pre-pass's order),
  // so a subgroup's stores stay contiguous; row-major: the t-th of [NP, K].
  const rowK = tiles
    ? tiledItem('k0')
    : `  let row = t / (K / 8u);
  let k0 = (t % (K / 8u)) * 8u;`;
  const layout = tiles ? `16x16 fragment tiles [${np / 16}][${k / 16}][16][16]` : `[${np}, ${k}] row-major`;
  const ts = range(per).map((i) => (i === 0 ? 't' : `t + ${i}u * W_INV`));
  const decls = (
    at: number,
  ) => `// Weight: Q4_K W [${n}, ${k}] decoded ONCE to f16 wh, ${layout} (rows ${n}..${np - 1} zero).
const N = ${n}u;
const NSB = K / 256u; // super-blocks per row
const W_INV = ${inv}u; // invocations, each taking items t, t + W_INV, ... (${per} items) of the ${items} vec4u (8 weights each) of wh
${q4kWeightBindings(at, 'vec2u')}@group(0) @binding(${at + 4}) var<storage, read_write> wh: array<vec4u>; // f16 as pack2x16float pairs

${Q4K_DECODE_REGS}
// The raw words of item t: its 8 nibbles' qs bytes, its super-block's scale words, d and dmin.
struct Item { q: vec2u, w: vec3u, d: f32, dm: f32, j: u32, live: bool }

fn load_item(t: u32) -> Item {
${rowK}
  // Rows n..NP-1 are written as zeros; they read row N - 1's words (in bounds, unused).
  let blk = min(row, N - 1u) * NSB + k0 / 256u;
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
    out: { name: 'wh', bytes: np * k * 2 + SPLIT_SLACK_BYTES },
  };
}

/**
 * Pass 1: the activation x [m, k] (f32) rounded to f16 into 16x16 fragment tiles, xt[((p * K/16 + c) * 16
 * + r) * 16 + kk] = x[16p + r, 16c + kk] (rows m..MP-1 zero): one 16x16 A fragment is 512 contiguous
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

fn activation_item(t: u32) {
${tiledItem('col')}
  var a = vec4f(0.0);
  var b = vec4f(0.0);
  if (row < M) {
    a = x[(row * K + col) / 4u];
    b = x[(row * K + col) / 4u + 1u];
  }
  xt[t] = vec4u(pack2x16float(a.xy), pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));
}
`;
  return {
    decls,
    fn: 'activation_item',
    items,
    bindings: ['x', 'xt'],
    out: { name: 'xt', bytes: mp * k * 2 + SPLIT_SLACK_BYTES },
  };
}

/**
 * A pre-pass module running `parts` one after another over one grid: part i takes the invocations after
 * part i - 1's, rounded up to whole workgroups so each workgroup runs one part (a uniform branch).
 */
function prePassKernel(k: number, title: string, parts: readonly PrePassPart[]): SplitPrePass {
  let at = 0;
  let first = 0;
  const decls: string[] = [];
  const calls: string[] = [];
  for (const [i, part] of parts.entries()) {
    decls.push(part.decls(at));
    at += part.bindings.length;
    // Part 0 starts at invocation 0, so it needs no lower bound.
    calls.push(
      i === 0
        ? `  if (t < ${part.items}u) { ${part.fn}(t); }`
        : `  if (t >= ${first}u && t < ${first + part.items}u) { ${part.fn}(t - ${first}u); }`,
    );
    first += Math.ceil(part.items / PRE_PASS_WG) * PRE_PASS_WG;
  }
  const grid = prePassGrid(first);
  const wgsl = `// coopmat-f16 split plan, ${title}
const K = ${k}u;
${decls.join('\n')}
@compute @workgroup_size(${PRE_PASS_WG})
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let t = gid.y * ${grid[0] * PRE_PASS_WG}u + gid.x;
${calls.join('\n')}
}
`;
  return {
    wgsl,
    entryPoint: 'main',
    bindings: parts.flatMap((p) => p.bindings),
    workgroupSize: PRE_PASS_WG,
    grid,
    writes: parts.map((p) => p.out),
  };
}

/**
 * Pass 0 of the split plan: the weight pre-pass alone (see weightPrePassPart).
 * @example const p0 = buildCoopmatWToF16Kernel(spec); pass.dispatchWorkgroups(...p0.grid)
 */
export function buildCoopmatWToF16Kernel(
  spec: Pick<CoopmatSpec, 'm' | 'n' | 'k' | 'tile' | 'splitStage'>,
): SplitPrePass {
  return prePassKernel(spec.k, 'pass 0: the weight to f16', [weightPrePassPart(spec)]);
}

/**
 * Pass 1 of the split plan: the activation pre-pass alone (see activationPrePassPart).
 * @example const p1 = buildCoopmatXTiledKernel(spec); pass.dispatchWorkgroups(...p1.grid)
 */
export function buildCoopmatXTiledKernel(spec: Pick<CoopmatSpec, 'm' | 'n' | 'k' | 'tile'>): SplitPrePass {
  return prePassKernel(spec.k, 'pass 1: the activation to f16 tiles', [activationPrePassPart(spec)]);
}

/**
 * Both pre-passes as one dispatch (splitStage.pre 'fused'): the weight's workgroups, then the
 * activation's; it writes wh and xt.
 * @example const p = buildCoopmatFusedPrePassKernel(spec); pass.dispatchWorkgroups(...p.grid)
 */
export function buildCoopmatFusedPrePassKernel(
  spec: Pick<CoopmatSpec, 'm' | 'n' | 'k' | 'tile' | 'splitStage'>,
): SplitPrePass {
  return prePassKernel(spec.k, 'pass 0: the weight to f16 and the activation to f16 tiles, one dispatch', [
    weightPrePassPart(spec),
    activationPrePassPart(spec),
  ]);
}

/** Derived geometry of the split GEMM. */
export function coopmatSplitGeometry(spec: Pick<CoopmatSpec, 'tile' | 'plane' | 'rowPad' | 'splitStage'>) {
  const { wm, wn, rm, rn } = spec.tile;
  const st = splitStageOf(spec);
  const nwarp = wm * wn;
  const threads = nwarp * spec.plane;
  const bm = wm * rm * 16;
  const bn = wn * rn * 16;
  /** 16-wide K chunks of a stage. */
  const kc = st.k / 16;
  /** B 'rows' stage: BN rows x k/8 vec4; items per invocation, and whether the last is guarded. */
  const bItems = bn * (st.k / 8);
  const qUnits = bn * (st.k / 32);
  return {
    st,
    kc,
    nwarp,
    threads,
    bm,
    bn,
    per: 256 / spec.plane,
    rs: st.k + (spec.rowPad ?? 8),
    ib: Math.ceil(bItems / threads),
    bGuard: bItems % threads !== 0,
    bItems,
    /** B 'q4k' stage: units of 32 weights (16 qs bytes: 16 low nibbles of sub-block 2g, 16 high of 2g + 1)
     * per row, units a stage, units per invocation, and whether the last is guarded. */
    qpr: st.k / 32,
    qUnits,
    iq: Math.ceil(qUnits / threads),
    qGuard: qUnits % threads !== 0,
    /** Fragment copies per plane and stage: A when shared, B when tiled (fractional = not allowed). */
    fa: ((bm / 16) * kc) / nwarp,
    fb: ((bn / 16) * kc) / nwarp,
  };
}

/** Validity of a split spec's staging (coopmatSpecErrors adds these). */
export function coopmatSplitStageErrors(spec: Pick<CoopmatSpec, 'tile' | 'plane' | 'rowPad' | 'splitStage'>) {
  const errs: string[] = [];
  const st = splitStageOf(spec);
  if (!['direct', 'shared'].includes(st.a))
    errs.push(`splitStage.a ${String(st.a)} must be direct or shared`);
  if (!['rows', 'tiles', 'q4k'].includes(st.b))
    errs.push(`splitStage.b ${String(st.b)} must be rows, tiles or q4k`);
  // A q4k unit is 64 K-values of one super-block (sub-blocks 2g and 2g + 1 share their qs bytes).
  if (st.b === 'q4k' && st.k !== 64 && st.k !== 128)
    errs.push(`splitStage.b q4k decodes sub-block pairs: k ${String(st.k)} must be 64 or 128`);
  if (![16, 32, 64, 128].includes(st.k)) errs.push(`splitStage.k ${String(st.k)} must be 16, 32, 64 or 128`);
  if (st.aRing !== undefined && ![1, 2, 4].includes(st.aRing))
    errs.push(`splitStage.aRing ${String(st.aRing)} must be 1, 2 or 4`);
  if (st.wPer !== undefined && ![1, 2, 4, 8].includes(st.wPer))
    errs.push(`splitStage.wPer ${String(st.wPer)} must be 1, 2, 4 or 8`);
  if (st.pre !== undefined && !['separate', 'fused'].includes(st.pre))
    errs.push(`splitStage.pre ${String(st.pre)} must be separate or fused`);
  if (st.pre === 'fused' && st.b === 'q4k') errs.push('splitStage.pre fused: b q4k has no weight pre-pass');
  if (st.buffers !== 1 && st.buffers !== 2)
    errs.push(`splitStage.buffers ${String(st.buffers)} must be 1 or 2`);
  if (errs.length) return errs;
  const g = coopmatSplitGeometry(spec);
  // Each plane copies whole fragments; an uneven share would need a branch on the plane index.
  if (st.a === 'shared' && !Number.isInteger(g.fa))
    errs.push(
      `shared A: the ${(g.bm / 16) * g.kc} A fragments of a stage do not divide over ${g.nwarp} planes`,
    );
  if (st.aRing !== undefined && (st.a !== 'direct' || g.kc % st.aRing !== 0))
    errs.push(`splitStage.aRing ${st.aRing} needs direct A and a stage of a multiple of ${st.aRing} chunks`);
  if (st.b === 'tiles' && !Number.isInteger(g.fb))
    errs.push(
      `tiled B: the ${(g.bn / 16) * g.kc} B fragments of a stage do not divide over ${g.nwarp} planes`,
    );
  return errs;
}

/**
 * Workgroup memory of the split GEMM: the matrix arm's staged A (when shared) and B buffers and its
 * per-plane spill (counted always, though a kernel of whole blocks that is not instrumented has no spill).
 */
export function coopmatSplitWorkgroupBytes(
  spec: Pick<CoopmatSpec, 'tile' | 'plane' | 'rowPad' | 'arm' | 'splitStage'>,
): number {
  if (spec.arm === 'scalar') return 0;
  const g = coopmatSplitGeometry(spec);
  const rows = (g.st.a === 'shared' ? g.bm : 0) + g.bn;
  return g.st.buffers * rows * g.rs * 2 + g.nwarp * 256 * 4;
}

function splitConsts(spec: CoopmatSpec): string {
  return `${tileConsts(spec, coopmatSplitGeometry(spec))}const KB = K / 32u; // 32-wide K blocks (the scalar arm's sums; the trip count of 32-wide stages)
const KT = K / 16u; // 16-wide fragment tiles of xt per 16 rows
`;
}

const SPLIT_HEADER = (spec: CoopmatSpec) => {
  const g = coopmatSplitGeometry(spec);
  const { wm, wn, rm, rn } = spec.tile;
  return `// coopmat-f16 split plan, pass 2 (${spec.arm} arm): out[M, N] = xt @ wh^T, the f16 operands the pre-passes
// wrote, accumulated in f32. Tile wm=${wm} wn=${wn} rm=${rm} rn=${rn}: BM=${g.bm} BN=${g.bn}, ${g.nwarp} plane(s) of ${spec.plane} = ${g.threads} invocations.
`;
};

/** The scalar arm: each lane's PER elements of each subtile, every 32-block summed in K order (the emulation's order). */
function splitScalarMain(spec: CoopmatSpec): string {
  const { b } = splitStageOf(spec);
  const tiles = b === 'tiles';
  // q4k: no pre-passed weight; the pair is decoded from the Q4_K words with the weight pre-pass's
  // arithmetic and rounded to f16 as it would have been stored.
  const weight =
    b === 'q4k'
      ? `const NSB = K / 256u; // Q4_K super-blocks per weight row
${q4kWeightBindings(1, 'u32')}@group(0) @binding(5) var<storage, read_write> out: array<f32>; // [M, N] row-major

${Q4K_SCALES_WGSL}
// f16 pair (k, k+1), k even, of weight row c (rows n..NP-1 read row n - 1: never stored).
fn wh_pair(c: u32, k: u32) -> vec2f {
  let blk = min(c, N - 1u) * NSB + k / 256u;
  let j = (k % 256u) / 32u; // sub-block 2g + s: nibble s of qs bytes 32g .. 32g + 31
  let ds = wd[blk] * f32(q4k_sc(blk * 3u, j));
  let ms = wdm[blk] * f32(q4k_m(blk * 3u, j));
  let byte0 = 32u * (j / 2u) + k % 32u; // even, so the pair's two bytes share a word
  let sh = 8u * (byte0 % 4u) + 4u * (j % 2u);
  let word = wqs[blk * 32u + byte0 / 4u];
  let q = vec2f(f32((word >> sh) & 15u), f32((word >> (sh + 8u)) & 15u));
  return unpack2x16float(pack2x16float(ds * q - ms));
}`
      : `@group(0) @binding(1) var<storage, read> wh: array<u32>; // f16 pairs, ${tiles ? '16x16 fragment tiles' : '[NP, K] row-major'}
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // [M, N] row-major

// f16 pair (k, k+1), k even, of weight row c.
fn wh_pair(c: u32, k: u32) -> vec2f { return unpack2x16float(wh[${tiles ? tiledPairAt('c', 'k') : '(c * K + k) / 2u'}]); }`;
  return `${SPLIT_HEADER(spec)}
${splitConsts(spec)}
@group(0) @binding(0) var<storage, read> xt: array<u32>; // f16 pairs, 16x16 fragment tiles
${weight}
// f16 pair (k, k+1), k even, of activation row r.
fn xt_pair(r: u32, k: u32) -> vec2f { return unpack2x16float(xt[${tiledPairAt('r', 'k')}]); }

${SCALAR_MAIN_HEAD}  for (var kb = 0u; kb < KB; kb++) {
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
${SCALAR_STORE}`;
}

/**
 * The matrix arm. `directStore`: subtiles inside m x n are stored from the fragment straight to `out`
 * (subgroupMatrixStore); otherwise every subtile goes through the spill, whose per-lane copy calls
 * store_out -- what the ownership instrumentation records.
 */
function splitMatrixMain(spec: CoopmatSpec, directStore: boolean): string {
  const g = coopmatSplitGeometry(spec);
  const { st } = g;
  const { rm, rn } = spec.tile;
  const ids = range(rm).flatMap((im) => range(rn).map((jn) => [im, jn] as const));
  const ks = range(g.kc);
  const two = st.buffers === 2;
  const stages = { 16: 'KT', 32: 'KB', 64: 'K / 64u', 128: 'K / 128u' }[st.k];
  const ring = st.aRing;
  const LT = 'subgroup_matrix_left<f16, 16, 16>';
  const RT = 'subgroup_matrix_right<f16, 16, 16>';
  // Offset of buffer `buf` of a staged operand of `rows` rows (nothing with one buffer); curAt: the
  // buffer this stage reads.
  const bufAt = (buf: string, rows: number) => (two ? `(${buf}) * ${rows * g.rs}u + ` : '');
  const curAt = (rows: number) => (two ? `cur * ${rows * g.rs}u + ` : '');
  // Matrix loads from storage (xt, tiled wh) name one 16x16 tile of an array of tiles at offset 0: with
  // the array length, the offset and the stride all constants, the browser's bounds checks do not wrap
  // the load in a branch (Tint's robustness predicates every subgroupMatrixLoad/Store whose three are not
  // constants, and does not consult its range analysis there); the tile index gets a clamp, one min. On
  // the H200 (bench/lab.ts round 3) this took a lab copy of this GEMM from 0.2814 to 0.2644 ms with the
  // checks on. The tile: 16-row tile `row16`, K chunk `chunk` of stage `kb`.
  const tileLoad = (T: string, major: string, src: string, row16: string, kb: string, chunk: string) =>
    `subgroupMatrixLoad<${T}, ${major}>(&${src}[(${row16}) * KT + (${kb}) * ${g.kc}u + ${chunk}], 0u, 16u)`;
  const loadA = (im: number, kc: number, kb: string) =>
    tileLoad(LT, 'row_major', 'xt', `(mrow0 / 16u) + warp_m * RM + ${im}u`, kb, `${kc}u`);
  const item = (it: number) => `tid + ${it * g.threads}u`;
  const guard = (it: number, body: string) =>
    g.bGuard && it === g.ib - 1 ? `if (${item(it)} < ${g.bItems}u) { ${body} }` : body;
  const vpr = st.k / 8;
  // Fragment copy t of a plane: fragment f = warp + t * NWARP of the stage, 16-row tile f / kc, K chunk f % kc.
  const frag = (t: number) => `(warp + ${t * g.nwarp}u)`;
  const fragTile = (t: number) => (g.kc === 1 ? frag(t) : `${frag(t)} / ${g.kc}u`);
  const fragChunk = (t: number) => (g.kc === 1 ? '0u' : `${frag(t)} % ${g.kc}u`);
  const copyLoad = (t: number, T: string, major: string, src: string, base: string, kb: string) =>
    tileLoad(T, major, src, `${base} / 16u + ${fragTile(t)}`, kb, fragChunk(t));
  const copyStore = (t: number, major: string, dst: string, rows: number, buf: string, v: string) =>
    `subgroupMatrixStore<${major}>(&${dst}, ${bufAt(buf, rows)}(${fragTile(t)}) * ${16 * g.rs}u + (${fragChunk(t)}) * 16u, ${v}, RS);`;
  const sharedA = st.a === 'shared';
  const tiledB = st.b === 'tiles';
  const q4kB = st.b === 'q4k';
  const unit = (u: number) => `tid + ${u * g.threads}u`;
  const qGuard = (u: number, body: string) =>
    g.qGuard && u === g.iq - 1 ? `if (${unit(u)} < ${g.qUnits}u) ${body}` : body;
  // q4k: unit u of a stage is row u / QPR, K-values 64 * ((u % QPR) / 2) + 16 * (u % 2) + 0..15 of sub-blocks
  // 2g (low nibbles) and 2g + 1 (high, 32 further); its 16 qs bytes are one vec4u. Rows n..NP-1 read row
  // n - 1 (their columns are never stored); the prefetch after the last stage wraps to stage 0.
  const fetchQ4k = (kb: string) =>
    range(g.iq).map(
      (u) =>
        `    ${qGuard(
          u,
          `{
      let kk = ((${kb}) % (${stages})) * ${st.k}u + (((${unit(u)}) % ${g.qpr}u) / 2u) * 64u;
      let blk = min(ncol0 + (${unit(u)}) / ${g.qpr}u, N - 1u) * NSB + kk / 256u;
      gq${u} = wqs[blk * 8u + ((kk % 256u) / 64u) * 2u + (${unit(u)}) % 2u];
      gw${u} = ${q4kScaleWords('blk')};
      gd${u} = vec2f(wd[blk], wdm[blk]);
      gj${u} = (kk % 256u) / 32u;
    }`,
        )}`,
    );
  // The weight pre-pass's arithmetic (ds * q - ms in f32, pack2x16float), so B is the same f16 operand.
  const putQ4k = (buf: string) =>
    range(g.iq).map((u) => {
      const quarter = (half: number, w: number) => {
        const v = `v${half}${'xyzw'[w]}`;
        const at = half * 32 + w * 4;
        return `      let ${v} = ds${half} * nib_f32(gq${u}.${'xyzw'[w]}, vec4u(${half * 4}u)) - ms${half};
      let h${v} = bitcast<vec4<f16>>(vec2u(pack2x16float(${v}.xy), pack2x16float(${v}.zw)));
      ${range(4)
        .map((e) => `sb[o + ${at + e}u] = h${v}.${'xyzw'[e]};`)
        .join(' ')}`;
      };
      return `    ${qGuard(
        u,
        `{
      let ds0 = gd${u}.x * f32(q4kw_sc(gw${u}, gj${u}));
      let ms0 = gd${u}.y * f32(q4kw_m(gw${u}, gj${u}));
      let ds1 = gd${u}.x * f32(q4kw_sc(gw${u}, gj${u} + 1u));
      let ms1 = gd${u}.y * f32(q4kw_m(gw${u}, gj${u} + 1u));
      let o = ${bufAt(buf, g.bn)}((${unit(u)}) / ${g.qpr}u) * ${g.rs}u + (((${unit(u)}) % ${g.qpr}u) / 2u) * 64u + ((${unit(u)}) % 2u) * 16u;
${[0, 1].flatMap((half) => range(4).map((w) => quarter(half, w))).join('\n')}
    }`,
      )}`;
    });
  // Next-stage loads into registers: B items (row i / vpr, 8 halves i % vpr) or fragments; shared A fragments.
  const fetch = (kb: string) => {
    const b = q4kB
      ? fetchQ4k(kb)
      : tiledB
        ? range(g.fb).map((t) => `    gb${t} = ${copyLoad(t, RT, 'col_major', 'wh', 'ncol0', kb)};`)
        : range(g.ib).map(
            (it) =>
              `    ${guard(it, `gb${it} = wh[((ncol0 + (${item(it)}) / ${vpr}u) * K + (${kb}) * ${st.k}u + ((${item(it)}) % ${vpr}u) * 8u) / 8u];`)}`,
          );
    const a = sharedA
      ? range(g.fa).map((t) => `    ga${t} = ${copyLoad(t, LT, 'row_major', 'xt', 'mrow0', kb)};`)
      : [];
    return [...b, ...a].join('\n');
  };
  // Written in line, not through a helper taking the offset: the bounds checks' range analysis proves
  // an offset built from tid in range and drops the clamp, but cannot see into a function parameter
  // (a put_b8(e, v) helper made the GEMM 1.35x slower at 2 planes a block on the H200).
  const put = (buf: string) => {
    const b = q4kB
      ? putQ4k(buf)
      : tiledB
        ? range(g.fb).map((t) => `    ${copyStore(t, 'col_major', 'sb', g.bn, buf, `gb${t}`)}`)
        : range(g.ib).map((it) => {
            const halves = range(8)
              .map((h) => `sb[o + ${h}u] = ${'pqrs'[h >> 1]}.${'xy'[h & 1]};`)
              .join(' ');
            const body = `{
      let o = ${bufAt(buf, g.bn)}((${item(it)}) / ${vpr}u) * ${g.rs}u + ((${item(it)}) % ${vpr}u) * 8u;
      let p = bitcast<vec2<f16>>(gb${it}.x);
      let q = bitcast<vec2<f16>>(gb${it}.y);
      let r = bitcast<vec2<f16>>(gb${it}.z);
      let s = bitcast<vec2<f16>>(gb${it}.w);
      ${halves}
    }`;
            return `    ${guard(it, body)}`;
          });
    const a = sharedA
      ? range(g.fa).map((t) => `    ${copyStore(t, 'row_major', 'sa', g.bm, buf, `ga${t}`)}`)
      : [];
    return [...b, ...a].join('\n');
  };
  const regs = [
    ...(q4kB
      ? range(g.iq).map(
          (u) =>
            `  var gq${u} = vec4u(0u);\n  var gw${u} = vec3u(0u);\n  var gd${u} = vec2f(0.0);\n  var gj${u} = 0u;`,
        )
      : tiledB
        ? range(g.fb).map((t) => `  var gb${t} = ${RT}();`)
        : range(g.ib).map((it) => `  var gb${it} = vec4u(0u);`)),
    ...(sharedA ? range(g.fa).map((t) => `  var ga${t} = ${LT}();`) : []),
  ].join('\n');
  const contract = ks
    .map((kc) => {
      // Ring: this chunk's A from its slot, and the slot refilled with chunk kc + ring after the products.
      const ringA = ring
        ? range(rm)
            .map((im) => `      let a_${im}_${kc} = pa_${im}_${kc % ring};\n`)
            .join('')
        : '';
      const refill = ring
        ? '\n' +
          range(rm)
            .map((im) => `      pa_${im}_${kc % ring} = ${loadA(im, kc + ring, 'kb')};`)
            .join('\n')
        : '';
      const loadsA = sharedA
        ? range(rm)
            .map(
              (im) =>
                `      let a_${im}_${kc} = subgroupMatrixLoad<${LT}, row_major>(&sa, ${curAt(g.bm)}(warp_m * RM + ${im}u) * ${16 * g.rs}u + ${kc * 16}u, ${g.rs}u);\n`,
            )
            .join('')
        : '';
      const loadsB = range(rn)
        .map(
          (jn) =>
            `      let b_${jn} = subgroupMatrixLoad<${RT}, col_major>(&sb, ${curAt(g.bn)}(warp_n * RN + ${jn}u) * ${16 * g.rs}u + ${kc * 16}u, ${g.rs}u);`,
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
${ringA}${loadsA}${loadsB}
${mmas}${refill}
    }`;
    })
    .join('\n');
  const direct = ids
    .map(
      ([im, jn]) =>
        `    subgroupMatrixStore<row_major>(&out, (mrow0 + (warp_m * RM + ${im}u) * 16u) * N + ncol0 + (warp_n * RN + ${jn}u) * 16u, acc_${im}_${jn}, N);`,
    )
    .join('\n');
  const spilled = ids.map(([im, jn]) => spillStore(im, jn, '    ')).join('\n');
  // The edge path is emitted only where m or n leaves a partial block (the kernel is generated per
  // shape), so a kernel of whole blocks carries no spill code or spill memory.
  const edges = spec.m % g.bm !== 0 || spec.n % g.bn !== 0;
  const stores = !directStore
    ? `  // Instrumented: every fragment is spilled and copied by lanes, so store_out records the owners.
${spilled}`
    : !edges
      ? `  // m and n are whole blocks: every fragment goes straight to out.
${direct.replace(/^ {2}/gm, '')}`
      : `  if (mrow0 + BM <= M && ncol0 + BN <= N) {
    // The whole block is inside m x n: every fragment goes straight to out.
${direct}
  } else {
    // An edge block (workgroup-uniform branch, so its barriers are legal): spill and copy with guards.
${spilled}
  }`;
  const spillDecl = `// One 16x16 f32 spill per plane for edge subtiles: the fragment's lane layout is opaque.
${SPILL_COPY_OUT}`;
  const directA =
    sharedA || ring
      ? ''
      : range(rm)
          .flatMap((im) =>
            ks.map(
              (kc) =>
                `    let a_${im}_${kc} = pa_${im}_${kc};\n    pa_${im}_${kc} = ${loadA(im, kc, 'kb + 1u')};`,
            ),
          )
          .join('\n') + '\n';
  const firstA = sharedA
    ? ''
    : range(rm)
        .flatMap((im) => range(ring ?? g.kc).map((kc) => `  var pa_${im}_${kc} = ${loadA(im, kc, '0u')};`))
        .join('\n') + '\n';
  const what = `${sharedA ? 'A [BM, ' + st.k + '] and ' : ''}B [BN, ${st.k}]`;
  const wsDecl = two
    ? `// ${what} of a stage, two buffers [2][${sharedA ? 'rows' : 'BN'}][RS]: stage kb is read from buffer kb % 2 while kb + 1 is written.`
    : `// ${what} of a stage, one buffer [${sharedA ? 'rows' : 'BN'}][RS]: written after a barrier, read before the next.`;
  const loop = two
    ? `  // Stage 0: B into buffer 0${sharedA ? ', A into buffer 0' : ', A fragments into registers'}.
${regs}
${fetch('0u').replace(/^ {2}/gm, '')}
${put('0u').replace(/^ {2}/gm, '')}
${firstA}  workgroupBarrier();
  for (var kb = 0u; kb < ${stages}; kb++) {
    let cur = kb % 2u;
    // ${sharedA ? 'Issue' : "Take this stage's A and issue"} the next stage's loads (the last stage's prefetch reads the slack).
${directA}${fetch('kb + 1u')}
${contract}
    // Write the next stage into the other buffer; the barrier publishes it and retires this one.
${put('1u - cur')}
    workgroupBarrier();
  }`
    : `  // Stage 0's loads into registers.
${regs}
${fetch('0u').replace(/^ {2}/gm, '')}
${firstA}  for (var kb = 0u; kb < ${stages}; kb++) {
    // Publish this stage (every plane finished reading the last one at the barrier that ended it).
${put('0u')}
    workgroupBarrier();
    // ${sharedA ? 'Issue' : "Take this stage's A and issue"} the next stage's loads (the last stage's prefetch reads the slack).
${directA}${fetch('kb + 1u')}
${contract}
    workgroupBarrier();
  }`;
  return `enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

${SPLIT_HEADER(spec)}
${splitConsts(spec)}const RS = ${g.rs}u; // f16 elements per staged ${sharedA ? '' : 'B '}row (${st.k} K-values + padding against bank conflicts)
@group(0) @binding(0) var<storage, read> xt: array<array<f16, 256>>; // 16x16 fragment tiles [MP/16][KT][16][16]
${
  q4kB
    ? `const NSB = K / 256u; // Q4_K super-blocks per weight row
${q4kWeightBindings(1, 'vec4u')}@group(0) @binding(5) var<storage, read_write> out: array<f32>; // [M, N] row-major

${Q4K_DECODE_REGS}`
    : `@group(0) @binding(1) var<storage, read> wh: ${tiledB ? 'array<array<f16, 256>>; // 16x16 fragment tiles [NP/16][KT][16][16]' : 'array<vec4u>; // f16 [NP, K] row-major, 8 halves per vec4'}
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // [M, N] row-major
`
}
${wsDecl}
${sharedA ? `var<workgroup> sa: array<f16, ${st.buffers * g.bm * g.rs}u>;\n` : ''}var<workgroup> sb: array<f16, ${st.buffers * g.bn * g.rs}u>;

${!directStore || edges ? spillDecl : ''}
${MATRIX_MAIN_HEAD}${ids.map(([im, jn]) => `  var acc_${im}_${jn} = subgroup_matrix_result<f32, 16, 16>();`).join('\n')}
${loop}
${stores}
}
`;
}

/**
 * The split GEMM's kernel text (the host appends the set_owner/store_out suffix).
 * @example coopmatSplitWgsl({ m: 64, n: 64, k: 256, tile, plane: 32, arm: 'subgroup-matrix', f16: 'native', split: true })
 */
export function coopmatSplitWgsl(spec: CoopmatSpec, opts: { directStore?: boolean } = {}): string {
  return spec.arm === 'scalar' ? splitScalarMain(spec) : splitMatrixMain(spec, opts.directStore ?? true);
}

/** The split GEMM reads the pre-passes' outputs in x's and the weight's places. */
export const COOPMAT_SPLIT_BINDINGS = ['xt', 'wh', 'out'] as const;
/** With B decoded in the stage ('q4k'), the GEMM reads the Q4_K weight itself. */
export const COOPMAT_SPLIT_Q4K_BINDINGS = ['xt', 'wqs', 'wsc', 'wd', 'wdm', 'out'] as const;

/** The split GEMM's buffers in @binding order. */
export const coopmatSplitBindings = (spec: Pick<CoopmatSpec, 'splitStage'>): readonly string[] =>
  splitStageOf(spec).b === 'q4k' ? COOPMAT_SPLIT_Q4K_BINDINGS : COOPMAT_SPLIT_BINDINGS;
