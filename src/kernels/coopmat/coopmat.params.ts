// The f16 coopmat twin's generator parameters and the geometry every one of its kernels derives from
// them. The one-pass kernel (coopmat.wgsl.ts), the split plan (coopmat.split.ts) and the stream GEMM
// (coopmat.stream.ts) all read these; the rules live in catalog.ts (coopmatRuleProblems), once.
import type { Binding } from '../gpu/plan';
import type { TileParams } from '../tile';
import { coopmatRuleProblems, STAGING_FLAGS, type CoopmatArm, type CoopmatStaging } from './catalog';
import type { OutRows } from './coopmat.snippets';

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
  /** How the operands reach the contraction (catalog.ts COOPMAT_STAGINGS, STAGING_FLAGS). */
  staging: CoopmatStaging;
  /**
   * K parts, each summed on its own and added in order (the emulation's ksplit): the split stagings'
   * grid z writes partial sums [ksplit, M, N] that a reduction pass adds; the stream GEMM's planes take
   * one part each and add them in its workgroup.
   */
  ksplit?: number;
  /** Rows mapped through a caller's strategy (gathered rows, a bank of weights); absent = dense. */
  rowMap?: RowMap;
}

/**
 * How a GEMM's row tiles map to weights and output rows, passed in by a caller that gathers rows into
 * tiles: each row tile multiplies one weight matrix of a bank of `banks`, and each output row goes where
 * `out` says. The generator names none of the caller's concepts.
 */
export interface RowMap {
  /** Weight matrices [n, k] in the bank, one after another. */
  banks: number;
  /** Bindings after the GEMM's own. */
  bindings: readonly Binding[];
  /** Module-scope WGSL (constants, workgroup variables) after the kernel's constants. */
  decls: string;
  /**
   * WGSL at the top of main: sets the private `w_bank` (this row tile's weight matrix) from wg.y and
   * `tid`, workgroup-uniformly, and returns (uniformly) for a row tile that maps to nothing.
   */
  prologue: string;
  /** Where element (orow, ocol) of the tile's rows goes. */
  out: OutRows;
}

/** The flags of a spec's staging (catalog.ts STAGING_FLAGS). */
export const stagingOf = (spec: Pick<CoopmatSpec, 'staging'>) => STAGING_FLAGS[spec.staging];
/** Whether a staging is one of the split plans (pre-passes, then a GEMM on f16 operands). */
export const isSplit = (staging: CoopmatStaging): boolean => STAGING_FLAGS[staging].prePasses;

/** Derived tile geometry (every staging). */
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
/** Extra bytes after xt and wh: the prefetch of the stage after the last reads them (never used). */
export const SPLIT_SLACK_BYTES = 2048;

/** Padded extents of the pre-pass outputs: whole tiles, so the GEMM loads them unguarded. */
export function coopmatSplitExtents(spec: Pick<CoopmatSpec, 'm' | 'n' | 'tile'>) {
  const { bm, bn } = coopmatGeometry({ tile: spec.tile, plane: 1 });
  return { mp: Math.ceil(spec.m / bm) * bm, np: Math.ceil(spec.n / bn) * bn };
}

/**
 * Derived geometry of a 64-wide B stage shared by `stagers` invocations (the split GEMM's whole
 * workgroup, or one plane of the stream GEMM): 'rows' items are 8 halves of a pre-passed row, 'q4k'
 * units are 16 qs bytes (32 weights of two sub-blocks) decoded in the stage.
 */
export function stageGeometry(bn: number, stagers: number) {
  const bItems = bn * (SPLIT_K_STAGE / 8);
  const qUnits = bn * (SPLIT_K_STAGE / 32);
  return {
    /** 16-wide K chunks of a stage. */
    kc: SPLIT_K_STAGE / 16,
    rs: SPLIT_K_STAGE + SPLIT_ROW_PAD,
    bItems,
    ib: Math.ceil(bItems / stagers),
    bGuard: bItems % stagers !== 0,
    qpr: SPLIT_K_STAGE / 32,
    qUnits,
    iq: Math.ceil(qUnits / stagers),
    qGuard: qUnits % stagers !== 0,
  };
}

/** Derived geometry of the split GEMM's stage. */
export function coopmatSplitGeometry(spec: Pick<CoopmatSpec, 'tile' | 'plane'>) {
  const g = coopmatGeometry(spec);
  return { ...g, ...stageGeometry(g.bn, g.threads) };
}

/**
 * The stream GEMM's geometry: ksplit planes of the wm x wn grid each, every plane group taking its own
 * K part and staging its own B (64 K-values a stage, double-buffered), so the workgroup has
 * ksplit * wm * wn planes; `stages` per plane, raw words prefetched `depth` stages ahead.
 */
export function streamGeometry(spec: Pick<CoopmatSpec, 'tile' | 'plane' | 'k' | 'ksplit'>) {
  const g = coopmatGeometry(spec);
  const parts = spec.ksplit ?? 1;
  const stages = spec.k / (parts * SPLIT_K_STAGE);
  const st = stageGeometry(g.bn, spec.plane);
  return {
    ...g,
    ...st,
    parts,
    planes: parts * g.nwarp,
    threads: parts * g.threads,
    stages,
    depth: Math.min(stages, STREAM_DEPTH),
    /** f16 of one part's two B buffers (its planes stage and read them together). */
    bufHalves: 2 * g.bn * st.rs,
  };
}
/** Stages of raw weight words a stream plane keeps in flight. */
export const STREAM_DEPTH = 4;

/**
 * Workgroup memory of a kernel: the one-pass f16 A and B tiles (2 bytes an element) plus, on the matrix
 * arm, one 16x16 f32 spill per plane; the split GEMM's two B buffers and spill (matrix arm only); the
 * stream GEMM's B buffers per plane and its part sums.
 * @example coopmatWorkgroupBytes({ tile: { wm: 2, wn: 2, rm: 4, rn: 4 }, plane: 32, arm: 'scalar', staging: 'one-pass', k: 256 }) === 16384
 */
export function coopmatWorkgroupBytes(
  spec: Pick<CoopmatSpec, 'tile' | 'plane' | 'arm' | 'staging' | 'k' | 'ksplit'>,
): number {
  const g = coopmatGeometry(spec);
  const spill = spec.arm === 'subgroup-matrix' ? g.nwarp * 256 * 4 : 0;
  if (stagingOf(spec).stream) {
    const s = streamGeometry(spec);
    const parts = s.parts * g.bm * g.bn * 4;
    return (spec.arm === 'scalar' ? 0 : s.parts * s.bufHalves * 2) + parts;
  }
  if (!isSplit(spec.staging)) return (g.bm + g.bn) * 32 * 2 + spill;
  if (spec.arm === 'scalar') return 0;
  return 2 * g.bn * coopmatSplitGeometry(spec).rs * 2 + spill;
}

/** Generator-level validity of a spec, independent of any adapter. Empty = fine. */
export function coopmatSpecErrors(spec: CoopmatSpec): string[] {
  const errs = coopmatRuleProblems({ ...spec, ...spec.tile, ksplit: spec.ksplit ?? 1 });
  const { plane } = spec;
  if (!Number.isInteger(plane) || plane < 1 || plane > 256 || (plane & (plane - 1)) !== 0)
    errs.push(
      `plane ${plane} must be a power of two in 1..256 (each lane owns 256/plane elements of a 16x16 subtile)`,
    );
  if (spec.rowMap && !isSplit(spec.staging)) errs.push('mapped rows need a split staging');
  if (spec.rowMap && (spec.ksplit ?? 1) > 1 && !stagingOf(spec).stream)
    errs.push('mapped rows take no split-K partial sums (the stream staging adds its parts itself)');
  if (spec.arm === 'subgroup-matrix' && spec.f16 !== 'native')
    errs.push('the subgroup-matrix arm needs native f16 (shader-f16)');
  return errs;
}
