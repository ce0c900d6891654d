// WGSL generator for the f16-dequant register-blocked Q4_K GEMM, the twin of the seed's
// mmq_q4k_coopmat_tile, written ONCE as a function of typed parameters.
//
// Same algorithm as the seed (NOT the int8 MMQ): per 32-wide K-block, stage the activation tile
// A[BM, 32] rounded to f16 and the weight tile B[BN, 32] decoded from Q4_K with the affine scale FOLDED
// in (w = d*sc*q - dmin*m, in f32) and rounded to f16; contract in f32. Because the scale is folded
// before the contraction, the accumulators sum across ALL of K and stay in registers.
// Comptime tile: a wm x wn grid of planes, each owning rm x rn 16x16 subtiles: BM = wm*rm*16,
// BN = wn*rn*16. Tail guards on m and n (rows past the edge stage 0 and are never stored); k is a
// multiple of the 256-wide Q4_K super-block, so it never tails.
//   scalar          : the normative arm -- each lane owns PER = 256/plane elements of each of its
//                     rm*rn subtiles as f32 registers; f16 as real `f16` (enable f16) or, in core
//                     WGSL, rounded through pack2x16float -- both round each operand to f16 the same way.
//   subgroup-matrix : f16 x f16 -> f32 16x16x16 subgroup matrices, rm*rn result matrices held across
//                     K; at the end each is spilled to workgroup memory and stored by the same
//                     per-lane partition (the fragment's lane map is opaque, and the tail guards and
//                     ownership hooks need element stores).
// The kernel calls set_owner / store_out, which the host defines in a suffix (gpu/instrument.ts).
import { q4kScaleWords, Q4K_SCALES_WGSL } from '../quant/q4k.wgsl';
import { positiveIntegerProblems, type TileParams } from '../family';
import { ownerSuffix } from '../gpu/instrument';
import {
  coopmatSplitBindings,
  coopmatSplitStageErrors,
  coopmatSplitWgsl,
  coopmatSplitWorkgroupBytes,
  type SplitStage,
} from './coopmat.split';
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

export type CoopmatArm = 'scalar' | 'subgroup-matrix';

export interface CoopmatSpec {
  m: number;
  n: number;
  k: number;
  tile: TileParams;
  /** Plane width the tile is partitioned by (the hardware subgroup size for the matrix arm). */
  plane: number;
  arm: CoopmatArm;
  /** 'native': `enable f16;` (needs shader-f16); 'emulated': core-WGSL f16 rounding via pack2x16float. */
  f16: 'native' | 'emulated';
  /**
   * 32-wide K-blocks staged per barrier pair (default 1, today's kernel byte for byte). An even depth
   * also stages B by (row, Q4_K qs group, 4-word quad): the scale and min of each sub-block are decoded
   * once per 32 weights instead of once per 2. Workgroup memory grows with it (the tiles are BM x 32*kStage).
   */
  kStage?: CoopmatKStage;
  /**
   * f16 elements of padding after each staged row of sa / sb (default 0: today's layout). A multiple of
   * 8 (16 bytes, the matrix loads' alignment) moves consecutive rows off the same workgroup-memory banks:
   * a 64- or 128-byte row stride puts every 16-element fragment row on the same few banks.
   */
  rowPad?: number;
  /**
   * Register-prefetched, double-buffered staging (default false: today's kernel). Each stage's global
   * loads (16-byte activation and qs loads, the raw scale words) are issued into registers BEFORE the
   * current stage's contraction and decoded into the other buffer after it, so the load latency hides
   * behind the matrix work and a stage costs one barrier instead of two. Doubles the tile memory; 32-wide
   * stages only (kStage 1).
   */
  pipeline?: boolean;
  /**
   * Pipelined kernels only: read the A operand straight from global memory with subgroupMatrixLoad
   * (scalar arm: plain loads), out of an f16 copy `xh` of the activation that a pre-pass writes once
   * (coopmatXToF16Kernel), instead of re-staging and re-rounding A in every workgroup column. Only B is
   * staged, so its tiles may be twice as large in the same workgroup memory.
   */
  aDirect?: boolean;
  /**
   * The split plan (coopmat.split.ts): pre-passes decode the weight to f16 once and tile the activation
   * into 16x16 fragments, then a GEMM reads A fragments straight from global memory and stages B with
   * 16-byte loads. Three passes; rowPad pads its B rows (default 8). Excludes kStage, pipeline, aDirect.
   */
  split?: boolean;
  /** The split GEMM's staging (default SPLIT_STAGE_DEFAULT: A direct, B rows, 64-wide, 2 buffers). */
  splitStage?: SplitStage;
}

/** Allowed K-stage depths: 1, or an even count of 32-blocks that divides the 8 of a Q4_K super-block. */
export type CoopmatKStage = 1 | 2 | 4 | 8;
export const COOPMAT_K_STAGES: readonly CoopmatKStage[] = [1, 2, 4, 8];

export const COOPMAT_BINDINGS = ['x', 'wqs', 'wsc', 'wd', 'wdm', 'out'] as const;

/** Derived tile geometry. */
export function coopmatGeometry(
  spec: Pick<CoopmatSpec, 'tile' | 'plane' | 'kStage' | 'rowPad' | 'pipeline' | 'aDirect'>,
) {
  const { wm, wn, rm, rn } = spec.tile;
  const nwarp = wm * wn;
  const ks = spec.kStage ?? 1;
  return {
    nwarp,
    bm: wm * rm * 16,
    bn: wn * rn * 16,
    threads: nwarp * spec.plane,
    per: 256 / spec.plane,
    /** 32-blocks per stage, and the staged K width (the f16 tiles' row length). */
    ks,
    kw: 32 * ks,
    /** Row stride of the f16 tiles in elements: kw plus the padding. */
    rs: 32 * ks + (spec.rowPad ?? 0),
    /** Staging buffers: 2 when pipelined (one being read while the next is written). */
    bufs: spec.pipeline ? 2 : 1,
    /** Rows of A staged in workgroup memory (none when A is read from global memory). */
    aRows: spec.aDirect ? 0 : wm * rm * 16,
  };
}

/**
 * Workgroup memory of a tile: the f16 A and B tiles (2 bytes an element, as the seed's LDS budget
 * counts them), plus, on the matrix arm, one 16x16 f32 spill per plane for the guarded store.
 * @example coopmatWorkgroupBytes({ tile: { wm: 2, wn: 2, rm: 4, rn: 4 }, plane: 32, arm: 'scalar' }) === 16384
 */
export function coopmatWorkgroupBytes(
  spec: Pick<
    CoopmatSpec,
    'tile' | 'plane' | 'arm' | 'kStage' | 'rowPad' | 'pipeline' | 'aDirect' | 'split' | 'splitStage'
  >,
): number {
  if (spec.split) return coopmatSplitWorkgroupBytes(spec);
  const g = coopmatGeometry(spec);
  const tiles = g.bufs * (g.aRows * g.rs + g.bn * g.rs) * 2;
  return spec.arm === 'subgroup-matrix' ? tiles + g.nwarp * 256 * 4 : tiles;
}

/** Generator-level validity of a spec, independent of any adapter. Empty = fine. */
export function coopmatSpecErrors(spec: CoopmatSpec): string[] {
  const { m, n, k, plane } = spec;
  const errs = positiveIntegerProblems({ m, n });
  if (!Number.isInteger(k) || k < 256 || k % 256 !== 0)
    errs.push(`k = ${k} must be a positive multiple of the 256-wide Q4_K super-block`);
  for (const key of ['wm', 'wn', 'rm', 'rn'] as const) {
    const v = spec.tile[key];
    if (!Number.isInteger(v) || v < 1 || v > 16) errs.push(`tile ${key} = ${v} must be an integer in 1..16`);
  }
  if (!Number.isInteger(plane) || plane < 1 || plane > 256 || (plane & (plane - 1)) !== 0) {
    errs.push(
      `plane ${plane} must be a power of two in 1..256 (each lane owns 256/plane elements of a 16x16 subtile)`,
    );
  }
  if (spec.kStage !== undefined && !COOPMAT_K_STAGES.includes(spec.kStage))
    errs.push(
      `kStage ${String(spec.kStage)} must be one of ${COOPMAT_K_STAGES.join(', ')} (32-blocks per stage)`,
    );
  const pad = spec.rowPad ?? 0;
  if (!Number.isInteger(pad) || pad < 0 || pad > 64 || pad % 8 !== 0)
    errs.push(`rowPad ${pad} must be a multiple of 8 f16 elements in 0..64`);
  if (spec.pipeline && (spec.kStage ?? 1) !== 1)
    errs.push(`the pipelined staging stages one 32-block at a time (kStage 1, not ${String(spec.kStage)})`);
  if (spec.aDirect && !spec.pipeline) errs.push('aDirect (A from global memory) needs the pipelined staging');
  if (spec.split && (spec.pipeline || spec.aDirect || (spec.kStage ?? 1) !== 1))
    errs.push('the split plan has its own staging: no kStage, pipeline or aDirect with it');
  if (spec.splitStage && !spec.split) errs.push('splitStage applies to the split plan only');
  if (spec.split) errs.push(...coopmatSplitStageErrors(spec));
  if (spec.arm === 'subgroup-matrix' && spec.f16 !== 'native')
    errs.push('the subgroup-matrix arm needs native f16 (shader-f16)');
  return errs;
}

function header(spec: CoopmatSpec): string {
  const g = coopmatGeometry(spec);
  const { wm, wn, rm, rn } = spec.tile;
  const f16 = spec.f16 === 'native' ? 'f16 native' : 'f16 emulated with pack2x16float';
  const stage = g.ks > 1 ? `\n//   ${g.ks} K-blocks of 32 (${g.kw} K-values) staged per barrier pair.` : '';
  return `// coopmat-f16 (${spec.arm} arm, ${f16}), twin of the seed's mmq_q4k_coopmat_tile:
//   out[M, N] = x[M, K] @ W[N, K]^T, W = d*sc*q - dmin*m decoded from Q4_K; both operands rounded to f16,
//   accumulated in f32. Tile wm=${wm} wn=${wn} rm=${rm} rn=${rn}: BM=${g.bm} BN=${g.bn}, ${g.nwarp} plane(s) of ${spec.plane} = ${g.threads} invocations.${stage}
`;
}

function consts(spec: CoopmatSpec): string {
  const g = coopmatGeometry(spec);
  return `${tileConsts(spec, g)}const KB = K / 32u; // 32-wide K-blocks (one Q4_K sub-block each)
const NSB = K / 256u; // Q4_K super-blocks per weight row
${g.ks > 1 ? `const KS = ${g.ks}u; // 32-wide K-blocks staged per barrier pair\n` : ''}${
    spec.pipeline
      ? `const RS = ${g.rs}u; // f16 elements per staged row (32 K-values + padding)
${spec.aDirect ? '' : 'const AV = BM * 8u; // activation vec4 loads of a stage\n'}const BV = BN * 2u; // qs quad loads of a stage
`
      : ''
  }`;
}

function bindings(spec: CoopmatSpec): string {
  // The pipelined staging reads 16 bytes per load: the same buffers viewed as vec4 (K % 256 == 0, so
  // every activation row and every 128-byte qs super-block starts on a vec4). Its input arrays are
  // sized (array<T, n>): the bounds checks a browser adds then compare with constants, not arrayLength.
  const pipe = spec.pipeline ?? false;
  const nsb = (spec.n * spec.k) / 256;
  const arr = (t: string, n: number) => (pipe ? `array<${t}, ${n}>` : `array<${t}>`);
  const native = spec.f16 === 'native';
  const a = spec.aDirect
    ? `var<storage, read> xh: ${arr(native ? 'f16' : 'u32', (coopmatXhRows(spec) * spec.k) / (native ? 1 : 2))}; // f16 activation [MP, K] row-major${native ? '' : ' as f16 pairs'}, from the pre-pass`
    : `var<storage, read> x: ${pipe ? arr('vec4f', (spec.m * spec.k) / 4) : 'array<f32>'}; // activation [M, K] row-major`;
  return `@group(0) @binding(0) ${a}
${q4kWeightBindings(1, pipe ? 'vec4u' : 'u32', arr, nsb)}@group(0) @binding(5) var<storage, read_write> out: array<f32>; // [M, N] row-major
`;
}

/** The f16 tile storage: two K-consecutive operands per slot, stored rounded to f16. */
function tileStorage(spec: CoopmatSpec): string {
  const { kw, rs } = coopmatGeometry(spec);
  const text =
    spec.f16 === 'native'
      ? `// f16 operand tiles, row-major with ${kw} K-values a row (the matrix arm loads them directly).
var<workgroup> sa: array<f16, BM * ${rs}u>; // A [BM, ${kw}]
var<workgroup> sb: array<f16, BN * ${rs}u>; // B [BN, ${kw}]: row n is column n of B^T
fn put_a(i: u32, v: vec2f) { sa[2u * i] = f16(v.x); sa[2u * i + 1u] = f16(v.y); }
fn put_b(i: u32, v: vec2f) { sb[2u * i] = f16(v.x); sb[2u * i + 1u] = f16(v.y); }
fn get_a(i: u32) -> vec2f { return vec2f(f32(sa[2u * i]), f32(sa[2u * i + 1u])); }
fn get_b(i: u32) -> vec2f { return vec2f(f32(sb[2u * i]), f32(sb[2u * i + 1u])); }
`
      : `// f16 operand tiles in core WGSL: pack2x16float rounds each of two K-consecutive values to f16
// (what f16(v) does), unpack2x16float widens them back exactly.
var<workgroup> sa: array<u32, BM * ${rs / 2}u>; // A [BM, ${kw}] as f16 pairs
var<workgroup> sb: array<u32, BN * ${rs / 2}u>; // B [BN, ${kw}] as f16 pairs
fn put_a(i: u32, v: vec2f) { sa[i] = pack2x16float(v); }
fn put_b(i: u32, v: vec2f) { sb[i] = pack2x16float(v); }
fn get_a(i: u32) -> vec2f { return unpack2x16float(sa[i]); }
fn get_b(i: u32) -> vec2f { return unpack2x16float(sb[i]); }
`;
  if (rs === kw) return text;
  // Padded rows: callers index f16 pairs as if rows were unpadded; slot() skips each row's padding.
  const slot = `// Rows padded to ${rs} f16 (${rs - kw} past the ${kw} K-values) so consecutive rows fall on other banks.
fn slot(i: u32) -> u32 { return i + (i / ${kw / 2}u) * ${(rs - kw) / 2}u; }
`;
  return (
    slot +
    text
      .replace(/\[2u \* i\]/g, '[2u * slot(i)]')
      .replace(/\[2u \* i \+ 1u\]/g, '[2u * slot(i) + 1u]')
      .replace(/\b(s[ab])\[i\]/g, '$1[slot(i)]')
  );
}

/**
 * Staging of one stage -- ks 32-wide K-blocks from block kb on -- into sa / sb (both arms), by all NT
 * invocations. ks = 1 is today's kernel; an even ks stages B by (row, qs group, 4-word quad).
 */
function stage(ks: number): string {
  const pairs = 16 * ks; // f16 pairs per staged row
  return `    let k0 = kb * 32u;
    // A [BM, ${32 * ks}]: the activation, two K-consecutive values per slot; rows past M stage 0.
    for (var i = tid; i < BM * ${pairs}u; i += NT) {
      let arow = mrow0 + i / ${pairs}u;
      var v = vec2f(0.0);
      if (arow < M) {
        let o = arow * K + k0 + (i % ${pairs}u) * 2u;
        v = vec2f(x[o], x[o + 1u]);
      }
      put_a(i, v);
    }
${ks === 1 ? STAGE_B_PER_PAIR : STAGE_B_PER_QUAD}    workgroupBarrier();
`;
}

const STAGE_B_PER_PAIR = `    // B [BN, 32]: Q4_K sub-block is = kb % 8 decoded with its scale folded in, w = d*sc*q - dmin*m.
    // Sub-block 2g / 2g+1 is the low / high nibble of qs byte g*32 + qi (matvec_q4k's map); qi is even,
    // so bytes qi and qi+1 share a word. Rows past N stage 0.
    let is = kb % 8u;
    let g = is / 2u;
    let sbk = kb / 8u;
    let shift = 4u * (is % 2u);
    for (var i = tid; i < BN * 16u; i += NT) {
      let nrow = ncol0 + i / 16u;
      let qi = (i % 16u) * 2u;
      var v = vec2f(0.0);
      if (nrow < N) {
        let blk = nrow * NSB + sbk;
        let ds = wd[blk] * f32(q4k_sc(blk * 3u, is));
        let ms = wdm[blk] * f32(q4k_m(blk * 3u, is));
        let pair = wqs[blk * 32u + (g * 32u + qi) / 4u] >> (8u * (qi % 4u));
        v = vec2f(ds * f32((pair >> shift) & 15u) - ms, ds * f32((pair >> (shift + 8u)) & 15u) - ms);
      }
      put_b(i, v);
    }
`;

// kb is even here, so the stage's blocks come in (2g, 2g+1) pairs sharing the 32 qs bytes of group g.
const STAGE_B_PER_QUAD = `    // B [BN, 32*KS]: one invocation per (row, qs group g, quad j of 4 words): it decodes d*sc and
    // dmin*m of sub-blocks 2g and 2g+1 once and expands the 16 bytes g*32 + 16j .. +15 into 16 weights
    // of each (low nibble -> sub-block 2g, high -> 2g+1; w = d*sc*q - dmin*m as in the per-pair stage).
    // Rows past N stage 0.
    for (var i = tid; i < BN * KS; i += NT) {
      let r = i / KS;
      let c = i % KS;
      let nrow = ncol0 + r;
      let kbi = kb + (c / 2u) * 2u; // the stage's even block 2g of this item
      let is = kbi % 8u;
      let dst = r * (KS * 16u) + (c / 2u) * 32u + (c % 2u) * 8u; // first pair slot of sub-block 2g
      var ds0 = 0.0;
      var ms0 = 0.0;
      var ds1 = 0.0;
      var ms1 = 0.0;
      var wbase = 0u;
      if (nrow < N) {
        let blk = nrow * NSB + kbi / 8u;
        let d = wd[blk];
        let dm = wdm[blk];
        ds0 = d * f32(q4k_sc(blk * 3u, is));
        ms0 = dm * f32(q4k_m(blk * 3u, is));
        ds1 = d * f32(q4k_sc(blk * 3u, is + 1u));
        ms1 = dm * f32(q4k_m(blk * 3u, is + 1u));
        wbase = blk * 32u + (is / 2u) * 8u + (c % 2u) * 4u;
      }
      for (var w = 0u; w < 4u; w++) {
        var lo = vec4f(0.0);
        var hi = vec4f(0.0);
        if (nrow < N) {
          let q = vec4u(wqs[wbase + w]) >> vec4u(0u, 8u, 16u, 24u);
          lo = ds0 * vec4f(q & vec4u(15u)) - ms0;
          hi = ds1 * vec4f((q >> vec4u(4u)) & vec4u(15u)) - ms1;
        }
        put_b(dst + 2u * w, lo.xy);
        put_b(dst + 2u * w + 1u, lo.zw);
        put_b(dst + 16u + 2u * w, hi.xy);
        put_b(dst + 16u + 2u * w + 1u, hi.zw);
      }
    }
`;

/**
 * The pipelined kernel's two staging buffers, [2][BM or BN][RS] f16 each, addressed by element: f16 as
 * real `f16`, or in core WGSL as pack2x16float pairs (an even element index is a pair's first).
 */
function pipelinedStorage(spec: CoopmatSpec): string {
  const g = coopmatGeometry(spec);
  const rows = `// Double-buffered f16 operand tiles [2][rows][${g.rs}] (${g.rs - 32} f16 of padding a row): stage kb is
// read from buffer kb % 2 while stage kb + 1 is decoded into the other.${
    spec.aDirect ? ' Only B is staged: A is read from xh.' : ''
  }`;
  const native = spec.f16 === 'native';
  // One tile: its declaration and put4 (and, for A unless it is direct, get2) accessors.
  const tile = (name: 'a' | 'b', len: number, what: string) => {
    const v = `s${name}`;
    return native
      ? `var<workgroup> ${v}: array<f16, ${len}u>; // ${what}, two buffers
fn put_${name}4(e: u32, v: vec4f) { let h = vec4h(v); ${v}[e] = h.x; ${v}[e + 1u] = h.y; ${v}[e + 2u] = h.z; ${v}[e + 3u] = h.w; }
fn get_${name}2(e: u32) -> vec2f { return vec2f(f32(${v}[e]), f32(${v}[e + 1u])); }
`
      : `var<workgroup> ${v}: array<u32, ${len / 2}u>; // ${what}, two buffers of f16 pairs
fn put_${name}4(e: u32, v: vec4f) { ${v}[e / 2u] = pack2x16float(v.xy); ${v}[e / 2u + 1u] = pack2x16float(v.zw); }
fn get_${name}2(e: u32) -> vec2f { return unpack2x16float(${v}[e / 2u]); }
`;
  };
  const a = spec.aDirect
    ? native
      ? `fn get_a2(e: u32) -> vec2f { return vec2f(f32(xh[e]), f32(xh[e + 1u])); } // A from global memory\n`
      : `fn get_a2(e: u32) -> vec2f { return unpack2x16float(xh[e / 2u]); } // A from global memory\n`
    : tile('a', g.bufs * g.bm * g.rs, 'A [BM, 32]');
  const b = tile('b', g.bufs * g.bn * g.rs, 'B [BN, 32]: row n is column n of B^T');
  return `${rows}${native ? '' : ' Core WGSL: pack2x16float pairs, as in the unpipelined tiles.'}
${a}${b}`;
}

/**
 * Items of one pipelined stage: A is BM rows x 8 vec4 (none when A is direct), B is BN rows x 2 qs quads
 * (16 bytes each); ia / ib per invocation, and the bound item i must check where NT does not divide them.
 */
function pipelinedItems(spec: CoopmatSpec) {
  const g = coopmatGeometry(spec);
  const av = g.aRows * 8;
  const bv = g.bn * 2;
  const bound = (items: number, lim: string) => (items % g.threads === 0 ? undefined : `i < ${lim}`);
  return {
    ia: Math.ceil(av / g.threads),
    ib: Math.ceil(bv / g.threads),
    boundA: bound(av, 'AV'),
    boundB: bound(bv, 'BV'),
  };
}

/** `cond1 && cond2 ...` of the conditions present. */
const allOf = (...conds: (string | undefined)[]) => conds.filter(Boolean).join(' && ');

/** The prefetch registers: IA activation vec4s and IB (qs quad, d/dmin, scale words) per invocation. */
function pipelinedRegisters(spec: CoopmatSpec): string {
  const { ia, ib } = pipelinedItems(spec);
  const a = range(ia).map((it) => `  var pa${it} = vec4f(0.0);`);
  const b = range(ib).map(
    (it) => `  var pq${it} = vec4u(0u);\n  var pd${it} = vec2f(0.0);\n  var pw${it} = vec3u(0u);`,
  );
  return `  // Prefetch registers of the next stage (raw global words; decoded only after the contraction).
${[...a, ...b].join('\n')}
`;
}

/**
 * Issue the global loads of stage `kb` into the registers: nothing uses them until the commit, so
 * their latency overlaps the contraction in between. Rows past M / N load zeros.
 */
function pipelinedFetch(spec: CoopmatSpec, kb: string): string {
  const { ia, ib, boundA, boundB } = pipelinedItems(spec);
  const a = range(ia).map(
    (it) => `      {
        let i = tid + ${it}u * NT;
        let arow = mrow0 + i / 8u;
        pa${it} = vec4f(0.0);
        if (${allOf(boundA, 'arow < M')}) { pa${it} = x[arow * (K / 4u) + (${kb}) * 8u + i % 8u]; }
      }`,
  );
  const b = range(ib).map(
    (it) => `      {
        let i = tid + ${it}u * NT;
        let nrow = ncol0 + i / 2u;
        pq${it} = vec4u(0u);
        pd${it} = vec2f(0.0);
        pw${it} = vec3u(0u);
        if (${allOf(boundB, 'nrow < N')}) {
          let blk = nrow * NSB + (${kb}) / 8u;
          pq${it} = wqs[blk * 8u + (((${kb}) % 8u) / 2u) * 2u + i % 2u];
          pd${it} = vec2f(wd[blk], wdm[blk]);
          pw${it} = ${q4kScaleWords('blk')};
        }
      }`,
  );
  return `    {
      // Prefetch stage ${kb}: ${spec.aDirect ? '' : 'A [BM, 32] as 8 vec4 a row, '}B [BN, 32] as 2 qs quads a row.
      // Sub-block is = kb % 8 is the low / high nibble of qs bytes 32*(is/2) .. +31; item i takes quad i % 2.
${[...a, ...b].join('\n')}
    }
`;
}

/** Decode the prefetched stage `kb` into staging buffer `buf`: A rounded to f16, B as d*sc*q - dmin*m. */
function pipelinedCommit(spec: CoopmatSpec, kb: string, buf: string): string {
  const { ia, ib, boundA, boundB } = pipelinedItems(spec);
  // A body of statements at 8 spaces, under the item bound when there is one.
  const guard = (bound: string | undefined, body: string) =>
    bound ? `if (${bound}) {\n          ${body.replace(/\n/g, '\n  ')}\n        }` : body;
  const a = range(ia).map(
    (it) => `      {
        let i = tid + ${it}u * NT;
        ${guard(boundA, `put_a4((${buf}) * (BM * RS) + (i / 8u) * RS + (i % 8u) * 4u, pa${it});`)}
      }`,
  );
  const b = range(ib).map((it) => {
    const puts = range(4)
      .map((w) => `put_b4(e0 + ${4 * w}u, ds * nib_f32(pq${it}.${'xyzw'[w]}, sh) - ms);`)
      .join('\n        ');
    return `      {
        let i = tid + ${it}u * NT;
        let is = (${kb}) % 8u;
        let ds = pd${it}.x * f32(q4kw_sc(pw${it}, is));
        let ms = pd${it}.y * f32(q4kw_m(pw${it}, is));
        let sh = vec4u(4u * (is % 2u));
        let e0 = (${buf}) * (BN * RS) + (i / 2u) * RS + (i % 2u) * 16u;
        ${guard(boundB, puts)}
      }`;
  });
  return `    {
      // Commit stage ${kb} into buffer ${buf}: w = d*sc*q - dmin*m in f32, then f16 (as the unpipelined stage).
${[...a, ...b].join('\n')}
    }
`;
}

/** Register-held operands a matrix arm prefetches itself: declared before the loop, taken at each stage's start. */
interface FragPrefetch {
  /** Declare and load stage 0. */
  init: string;
  /** Take the current stage's values (before the next stage's loads overwrite them). */
  take: string;
  /** Load stage `kb + 1` (inside the loop's prefetch branch). */
  next: string;
}

/** The pipelined K loop around an arm's contraction of buffer `cur`: one barrier per 32-block. */
function pipelinedLoop(spec: CoopmatSpec, contract: string, frags?: FragPrefetch): string {
  return `${pipelinedRegisters(spec)}${pipelinedFetch(spec, '0u')}${pipelinedCommit(spec, '0u', '0u')}${frags?.init ?? ''}  workgroupBarrier();
  for (var kb = 0u; kb < KB; kb++) {
    let cur = kb % 2u;
    let more = kb + 1u < KB;
${frags?.take ?? ''}    if (more) {
  ${pipelinedFetch(spec, 'kb + 1u').replace(/\n(?=.)/g, '\n  ')}${frags?.next ?? ''}    }
${contract}    if (more) {
  ${pipelinedCommit(spec, 'kb + 1u', '1u - cur').replace(/\n(?=.)/g, '\n  ')}    }
    // Buffer cur is read by everyone before the next iteration overwrites it, and 1 - cur is complete.
    workgroupBarrier();
  }
`;
}

function scalarMain(spec: CoopmatSpec): string {
  const { ks, kw } = coopmatGeometry(spec);
  const loop = ks === 1 ? 'kb++' : 'kb += KS';
  return `${SCALAR_MAIN_HEAD}${
    spec.pipeline
      ? pipelinedLoop(spec, scalarPipelinedContract(spec.aDirect ?? false))
      : `  for (var kb = 0u; kb < KB; ${loop}) {
${stage(ks)}    for (var im = 0u; im < RM; im++) {
      for (var jn = 0u; jn < RN; jn++) {
        let sm = warp_m * RM + im;
        let sn = warp_n * RN + jn;
        for (var e = 0u; e < PER; e++) {
          let p = lane * PER + e;
          let ra = (sm * 16u + p / 16u) * ${kw / 2}u; // first f16 pair of this element's A row
          let rb = (sn * 16u + p % 16u) * ${kw / 2}u; // ... and of its B row (= output column)
${ks === 1 ? SCALAR_BLOCK : scalarStagedBlocks()}
        }
      }
    }
    workgroupBarrier();
  }
`
  }${SCALAR_STORE}`;
}

// One 32-block in f32, K in order, then into the accumulator: the seed's default arm (ra, rb: its pairs).
const SCALAR_BLOCK = scalarBlock(
  (l) => `get_a(ra + ${l})`,
  (l) => `get_b(rb + ${l})`,
);

// The scalar arm's contraction of staging buffer cur (element-addressed), in the order of SCALAR_BLOCK; A
// from buffer cur too, or from the f16 activation copy xh (row-major [MP, K]) when it is direct.
const scalarPipelinedContract = (aDirect: boolean) => `    for (var im = 0u; im < RM; im++) {
      for (var jn = 0u; jn < RN; jn++) {
        let sm = warp_m * RM + im;
        let sn = warp_n * RN + jn;
        for (var e = 0u; e < PER; e++) {
          let p = lane * PER + e;
          let ra = ${aDirect ? '(mrow0 + sm * 16u + p / 16u) * K + kb * 32u' : 'cur * (BM * RS) + (sm * 16u + p / 16u) * RS'}; // first f16 of this element's A row
          let rb = cur * (BN * RS) + (sn * 16u + p % 16u) * RS; // ... and of its B row (= output column)
${SCALAR_BLOCK.replace('get_a(ra + l)', 'get_a2(ra + 2u * l)').replace('get_b(rb + l)', 'get_b2(rb + 2u * l)')}
        }
      }
    }
`;

/** The staged blocks one after another, each summed alone and then accumulated: the same rounding as KS = 1. */
function scalarStagedBlocks(): string {
  const inner = SCALAR_BLOCK.replace(/^ {10}/gm, '            ')
    .replace('get_a(ra + l)', 'get_a(ra + bi * 16u + l)')
    .replace('get_b(rb + l)', 'get_b(rb + bi * 16u + l)');
  return `          for (var bi = 0u; bi < KS; bi++) {
${inner}
          }`;
}

/**
 * A straight from the f16 activation copy xh: the rm x 2 left matrices of a stage, prefetched one stage
 * ahead in registers (an_*) like the staged operands, so their global latency also hides behind a stage.
 */
function directAFrags(rm: number): FragPrefetch {
  const ids = range(rm).flatMap((im) => [0, 1].map((kc) => [im, kc] as const));
  const load = (im: number, kc: number, kb: string) =>
    `subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&xh, (mrow0 + (warp_m * RM + ${im}u) * 16u) * K + (${kb}) * 32u + ${kc * 16}u, K)`;
  return {
    init: `  // A of stage 0 from global memory (xh has MP >= the grid's rows, so every load is in bounds).
${ids.map(([im, kc]) => `  var an_${im}_${kc} = ${load(im, kc, '0u')};`).join('\n')}
`,
    take: `${ids.map(([im, kc]) => `    let ac_${im}_${kc} = an_${im}_${kc};`).join('\n')}
`,
    next: `${ids.map(([im, kc]) => `      an_${im}_${kc} = ${load(im, kc, 'kb + 1u')};`).join('\n')}
`,
  };
}

function matrixMain(spec: CoopmatSpec): string {
  const { rm, rn } = spec.tile;
  const { ks, rs } = coopmatGeometry(spec);
  const ids: [number, number][] = [];
  for (let im = 0; im < rm; im++) for (let jn = 0; jn < rn; jn++) ids.push([im, jn]);
  const accDecl = ids
    .map(([im, jn]) => `  var acc_${im}_${jn} = subgroup_matrix_result<f32, 16, 16>();`)
    .join('\n');
  const g = coopmatGeometry(spec);
  // The pipelined kernel reads staging buffer cur (a subgroup-uniform offset, as the loads require).
  const [bufA, bufB] = spec.pipeline ? [`cur * ${g.bm * rs}u + `, `cur * ${g.bn * rs}u + `] : ['', ''];
  const kHalf = (kc: number) => {
    const loadsB = Array.from(
      { length: rn },
      (_, jn) =>
        `      let b_${jn} = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, ${bufB}(warp_n * RN + ${jn}u) * ${16 * rs}u + ${kc * 16}u, ${rs}u);`,
    ).join('\n');
    const perA = Array.from({ length: rm }, (_, im) => {
      const mmas = Array.from(
        { length: rn },
        (_, jn) =>
          `        acc_${im}_${jn} = subgroupMatrixMultiplyAccumulate(a_${im}, b_${jn}, acc_${im}_${jn});`,
      ).join('\n');
      const a = spec.aDirect
        ? `ac_${im}_${kc}`
        : `subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, ${bufA}(warp_m * RM + ${im}u) * ${16 * rs}u + ${kc * 16}u, ${rs}u)`;
      return `      {
        let a_${im} = ${a};
${mmas}
      }`;
    }).join('\n');
    return `    {
      // K columns ${kc * 16}..${kc * 16 + 15} of the staged block.
${loadsB}
${perA}
    }`;
  };
  const stores = ids.map(([im, jn]) => spillStore(im, jn)).join('\n');
  return `// One 16x16 f32 spill per plane: the result matrix's lane layout is opaque, so it is stored here and
// copied out by the per-lane partition, which also applies the tail guards and the ownership hooks.
${SPILL_COPY_OUT}
${MATRIX_MAIN_HEAD}  // RM*RN f32 result matrices held across the whole K loop (the hand kernel's coopmat acc[][]).
${accDecl}
${
  spec.pipeline
    ? pipelinedLoop(spec, `${kHalf(0)}\n${kHalf(1)}\n`, spec.aDirect ? directAFrags(rm) : undefined)
    : `  for (var kb = 0u; kb < KB; ${ks === 1 ? 'kb++' : 'kb += KS'}) {
${stage(ks)}${Array.from({ length: 2 * ks }, (_, kc) => kHalf(kc)).join('\n')}
    workgroupBarrier();
  }`
}
${stores}
}
`;
}

function assertSpec(spec: CoopmatSpec): void {
  const errs = coopmatSpecErrors(spec);
  if (errs.length) throw new RangeError(errs.join('; '));
}

/**
 * The kernel text of a coopmat tile (the host appends the set_owner/store_out suffix); for the split
 * plan, the text of its GEMM pass.
 * @example coopmatWgsl({ m: 16, n: 16, k: 256, tile: { wm: 1, wn: 1, rm: 1, rn: 1 }, plane: 4, arm: 'scalar', f16: 'emulated' })
 */
export function coopmatWgsl(spec: CoopmatSpec): string {
  assertSpec(spec);
  if (spec.split) return coopmatSplitWgsl(spec);
  const enables = [
    spec.f16 === 'native' ? 'enable f16;' : '',
    spec.arm === 'subgroup-matrix' ? 'enable subgroups;\nenable chromium_experimental_subgroup_matrix;' : '',
  ]
    .filter(Boolean)
    .join('\n');
  return `${enables ? `${enables}\n\n` : ''}${header(spec)}
${consts(spec)}
${bindings(spec)}
${spec.pipeline ? Q4K_DECODE_REGS : Q4K_SCALES_WGSL}
${spec.pipeline ? pipelinedStorage(spec) : tileStorage(spec)}
${spec.arm === 'scalar' ? scalarMain(spec) : matrixMain(spec)}`;
}

export interface CoopmatKernel {
  /** Kernel text plus the host suffix: ready for createShaderModule. */
  wgsl: string;
  /** The kernel text alone (what an editor shows). */
  kernelWgsl: string;
  entryPoint: 'main';
  /** Buffer names in @binding order (the owner debug buffer last, when instrumented). */
  bindings: readonly string[];
  workgroupSize: number;
  /** Workgroup grid covering an m x n output with this tile: (ceil(n/BN), ceil(m/BM), 1). */
  workgroups(m: number, n: number): [number, number, number];
  workgroupBytes: number;
}

/**
 * Everything needed to dispatch a coopmat tile on resident buffers (the tuner's entry point).
 * @example const kc = buildCoopmatKernel(spec); pass.dispatchWorkgroups(...kc.workgroups(spec.m, spec.n))
 */
export function buildCoopmatKernel(spec: CoopmatSpec, opts: { instrument?: boolean } = {}): CoopmatKernel {
  const instrument = opts.instrument ?? false;
  // The split GEMM stores interior fragments straight to out, except instrumented (see coopmat.split.ts).
  assertSpec(spec);
  const kernelWgsl = spec.split ? coopmatSplitWgsl(spec, { directStore: !instrument }) : coopmatWgsl(spec);
  const g = coopmatGeometry(spec);
  // A direct kernel reads the pre-pass's f16 copy in x's place; the split GEMM the pre-passes' outputs.
  const bindings: string[] = spec.split
    ? [...coopmatSplitBindings(spec)]
    : COOPMAT_BINDINGS.map((b) => (b === 'x' && spec.aDirect ? 'xh' : b));
  const ownerBinding = bindings.length; // the debug buffer goes one past the kernel's own bindings
  if (instrument) bindings.push('owner');
  return {
    wgsl: kernelWgsl + ownerSuffix({ instrument, outName: 'out', outType: 'f32', ownerBinding }),
    kernelWgsl,
    entryPoint: 'main',
    bindings,
    workgroupSize: g.threads,
    workgroups: (m: number, n: number) => [Math.ceil(n / g.bn), Math.ceil(m / g.bm), 1],
    workgroupBytes: coopmatWorkgroupBytes(spec),
  };
}

/** Rows of the f16 activation copy of a direct-A kernel: its grid's rows, so the last tile's loads stay in bounds. */
export function coopmatXhRows(spec: Pick<CoopmatSpec, 'm' | 'tile' | 'plane'>): number {
  const { bm } = coopmatGeometry(spec);
  return Math.ceil(spec.m / bm) * bm;
}

/**
 * The pre-pass of a direct-A kernel: x (f32 [m, k]) -> xh (f16 [MP, k] as pack2x16float pairs, rows m..MP
 * zero), rounded once per activation rather than once per workgroup column. Core WGSL, so both arms and
 * every adapter share it (a native-f16 kernel reads the same bytes as array<f16>).
 * @example const pre = buildCoopmatXToF16Kernel(spec); pass.dispatchWorkgroups(...pre.grid)
 */
export function buildCoopmatXToF16Kernel(spec: Pick<CoopmatSpec, 'm' | 'k' | 'tile' | 'plane'>) {
  const mp = coopmatXhRows(spec);
  const vecs = (mp * spec.k) / 4;
  const grid = prePassGrid(vecs);
  const wgsl = `// coopmat-f16 pre-pass: the activation x [${spec.m}, ${spec.k}] rounded to f16 once, as pack2x16float pairs,
// into xh [${mp}, ${spec.k}] (rows ${spec.m}..${mp - 1} zero: the last row tile of the GEMM reads them).
const NV = ${vecs}u; // vec4s of xh
const NX = ${(spec.m * spec.k) / 4}u; // vec4s of x
@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> xh: array<vec2u>;

@compute @workgroup_size(${PRE_PASS_WG})
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.y * ${grid[0] * PRE_PASS_WG}u + gid.x;
  if (i >= NV) { return; }
  var v = vec4f(0.0);
  if (i < NX) { v = x[i]; }
  xh[i] = vec2u(pack2x16float(v.xy), pack2x16float(v.zw));
}
`;
  return {
    wgsl,
    entryPoint: 'main' as const,
    bindings: ['x', 'xh'] as const,
    workgroupSize: PRE_PASS_WG,
    grid,
    /** Bytes of xh. */
    xhBytes: mp * spec.k * 2,
  };
}
