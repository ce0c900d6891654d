// The f16 coopmat twin's generator parameters and the geometry every one of its kernels derives from
// them. The one-pass kernel (coopmat.wgsl.ts) and the split plan (coopmat.split.ts) both read these.
import { positiveIntegerProblems } from '../family';
import type { TileParams } from '../tile';
import { COOPMAT_STAGINGS, type CoopmatArm, type CoopmatStaging } from './catalog';

export type { CoopmatArm, CoopmatStaging } from './catalog';

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
  /** How the operands reach the contraction (catalog.ts COOPMAT_STAGINGS). */
  staging: CoopmatStaging;
  /**
   * Split-K (split stagings): the GEMM's grid z takes K / ksplit each into partial sums [ksplit, M, N],
   * which a reduction pass adds in z order: more workgroups where m x n alone leaves the GPU idle.
   */
  ksplit?: number;
  /** A routed GEMM (the MoE family's f16 route): see CoopmatRouted. */
  routed?: CoopmatRouted;
}

/**
 * A routed GEMM over an expert bank: M = tiles * BM rows gathered tile by tile, each row tile all of one
 * expert's slots, read through the routing table the MoE family's grouping pass writes (routedTable).
 */
export interface CoopmatRouted {
  experts: number;
  /** Row tiles the grid covers (an upper bound on the tiles the routing fills). */
  tiles: number;
}

/**
 * Word offsets in the routing table of a routed GEMM: [0] the row tiles in use, then the expert of each
 * row tile, then the slot of each row (NONE past an expert's count).
 */
export const routedTable = (tiles: number, bm: number) => ({
  count: 0,
  expertAt: 1,
  slotAt: 1 + tiles,
  words: 1 + tiles + tiles * bm,
});
export const ROUTED_NONE = 0xffffffff;

/** Whether a staging is one of the split plans (pre-passes, then a GEMM on f16 operands). */
export const isSplit = (staging: CoopmatStaging): boolean => staging !== 'one-pass';

/** Derived tile geometry (both stagings). */
export function coopmatGeometry(spec: Pick<CoopmatSpec, 'tile' | 'plane'>) {
  const { wm, wn, rm, rn } = spec.tile;
  const nwarp = wm * wn;
  return {
    nwarp,
    bm: wm * rm * 16,
    bn: wn * rn * 16,
    threads: nwarp * spec.plane,
    per: 256 / spec.plane,
  };
}

/**
 * The split GEMM's staging, fixed by the measurements in docs/decisions/0001-split-plan.md and
 * 0003-a-read-directly.md: A fragments read straight from the tiled activation (one stage ahead in
 * registers), B rows staged through two workgroup buffers of 64 K-values (one barrier a stage), rows
 * padded by 8 f16 against bank conflicts.
 */
export const SPLIT_K_STAGE = 64;
export const SPLIT_ROW_PAD = 8;
/** Items (8 weights each) per invocation of the weight pre-pass. */
export const W_PRE_PASS_PER = 4;
/** Extra bytes after xt and wh: the prefetch of the stage after the last reads them (never used). */
export const SPLIT_SLACK_BYTES = 2048;

/** Padded extents of the pre-pass outputs: whole tiles, so the GEMM loads them unguarded. */
export function coopmatSplitExtents(spec: Pick<CoopmatSpec, 'm' | 'n' | 'tile'>) {
  const { bm, bn } = coopmatGeometry({ tile: spec.tile, plane: 1 });
  return { mp: Math.ceil(spec.m / bm) * bm, np: Math.ceil(spec.n / bn) * bn };
}

/** Derived geometry of the split GEMM's stage. */
export function coopmatSplitGeometry(spec: Pick<CoopmatSpec, 'tile' | 'plane'>) {
  const g = coopmatGeometry(spec);
  /** B 'rows' stage: BN rows x 8 vec4 (64 halves); B 'q4k' stage: BN rows x 2 units of 32 weights. */
  const bItems = g.bn * (SPLIT_K_STAGE / 8);
  const qUnits = g.bn * (SPLIT_K_STAGE / 32);
  return {
    ...g,
    /** 16-wide K chunks of a stage. */
    kc: SPLIT_K_STAGE / 16,
    rs: SPLIT_K_STAGE + SPLIT_ROW_PAD,
    bItems,
    ib: Math.ceil(bItems / g.threads),
    bGuard: bItems % g.threads !== 0,
    qpr: SPLIT_K_STAGE / 32,
    qUnits,
    iq: Math.ceil(qUnits / g.threads),
    qGuard: qUnits % g.threads !== 0,
  };
}

/**
 * Workgroup memory of a kernel: the one-pass f16 A and B tiles (2 bytes an element) plus, on the matrix
 * arm, one 16x16 f32 spill per plane; the split GEMM's two B buffers and spill (matrix arm only).
 * @example coopmatWorkgroupBytes({ tile: { wm: 2, wn: 2, rm: 4, rn: 4 }, plane: 32, arm: 'scalar', staging: 'one-pass' }) === 16384
 */
export function coopmatWorkgroupBytes(spec: Pick<CoopmatSpec, 'tile' | 'plane' | 'arm' | 'staging'>): number {
  const g = coopmatGeometry(spec);
  const spill = spec.arm === 'subgroup-matrix' ? g.nwarp * 256 * 4 : 0;
  if (!isSplit(spec.staging)) return (g.bm + g.bn) * 32 * 2 + spill;
  if (spec.arm === 'scalar') return 0;
  return 2 * g.bn * coopmatSplitGeometry(spec).rs * 2 + spill;
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
  if (!Number.isInteger(plane) || plane < 1 || plane > 256 || (plane & (plane - 1)) !== 0)
    errs.push(
      `plane ${plane} must be a power of two in 1..256 (each lane owns 256/plane elements of a 16x16 subtile)`,
    );
  if (!COOPMAT_STAGINGS.includes(spec.staging)) errs.push(`unknown staging '${String(spec.staging)}'`);
  const ks = spec.ksplit ?? 1;
  if (ks !== 1) {
    if (!Number.isInteger(ks) || ks < 1 || ks > 64) errs.push(`ksplit = ${ks} must be an integer in 1..64`);
    else if (!isSplit(spec.staging))
      errs.push('split-K needs a split staging (the one-pass kernel has none)');
    else if (k % (ks * SPLIT_K_STAGE) !== 0)
      errs.push(`k = ${k} is not a multiple of ksplit ${ks} x the ${SPLIT_K_STAGE}-wide stage`);
    if (spec.routed) errs.push('a routed GEMM has no split-K');
  }
  if (spec.routed && !isSplit(spec.staging)) errs.push('a routed GEMM needs a split staging');
  if (spec.arm === 'subgroup-matrix' && spec.f16 !== 'native')
    errs.push('the subgroup-matrix arm needs native f16 (shader-f16)');
  return errs;
}
