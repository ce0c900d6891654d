// The coopmat generators' parameters and the geometry all its kernels derive from them; the rules live
// once in catalog.ts (coopmatRuleProblems).
import type { BindingTable } from '../gpu/bindings';
import type { TileParams } from '../tile';
import { coopmatRuleProblems, STAGING_FLAGS, type CoopmatArm, type CoopmatStaging } from './catalog';

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
   * K parts, each summed on its own and added in order (the emulation's ksplit): split stagings write
   * partial sums [ksplit, M, N] on grid z for a reduction pass; the stream GEMM adds them in its workgroup.
   */
  ksplit?: number;
  /** Rows mapped through a caller's strategy (gathered rows, a bank of weights); absent = dense. */
  rowMap?: RowMap;
}

/**
 * How a caller that gathers rows into tiles maps them: each row tile multiplies one weight matrix of a
 * bank, each output row goes where `outSlot` says. Two typed hooks the GEMM calls with the names of its
 * own values, so the generator names none of the caller's concepts and the caller none of the GEMM's
 * locals.
 */
export interface RowMap {
  /** Weight matrices [n, k] in the bank, one after another. */
  banks: number;
  /** Bindings after the GEMM's own. */
  bindings: BindingTable;
  /** Module-scope WGSL after the kernel's constants. */
  decls: string;
  /**
   * Lines at the top of main (indented two spaces) that declare `let ${bank}`: the matrix of row tile
   * `tile` in the bank, read workgroup-uniformly (invocation `tid` may load it for all), returning
   * (uniformly) for an empty tile.
   */
  rowBank(names: { bank: string; tile: string; tid: string }): string;
  /** Where output element (`row`, `col`) goes: lines finding it, the guard and the index into out. */
  outSlot(names: { row: string; col: string }): OutRows;
}

export const stagingOf = (spec: Pick<CoopmatSpec, 'staging'>) => STAGING_FLAGS[spec.staging];

/** A tile's planes, blocks and threads; `per` elements of a 16x16 subtile each lane owns. */
export function coopmatGeometry(spec: Pick<CoopmatSpec, 'tile' | 'plane'>) {
  const { wm, wn, rm, rn } = spec.tile;
  const nwarp = wm * wn;
  return { nwarp, bm: wm * rm * 16, bn: wn * rn * 16, threads: nwarp * spec.plane, per: 256 / spec.plane };
}
export type CoopmatGeometry = ReturnType<typeof coopmatGeometry>;

/**
 * The split GEMM's stage, fixed by docs/decisions/0001-split-plan.md and 0003-a-read-directly.md: B rows
 * staged through two workgroup buffers of 64 K-values, rows padded by 8 f16 against bank conflicts.
 */
export const SPLIT_K_STAGE = 64;
const SPLIT_ROW_PAD = 8;
/** Extra bytes after xt and wh: the prefetch of the stage after the last reads them (never used). */
export const SPLIT_SLACK_BYTES = 2048;

/** Padded extents of the pre-pass outputs: whole tiles, so the GEMM loads them unguarded. */
export function coopmatSplitExtents(spec: Pick<CoopmatSpec, 'm' | 'n' | 'tile'>) {
  const { bm, bn } = coopmatGeometry({ tile: spec.tile, plane: 1 });
  return { mp: Math.ceil(spec.m / bm) * bm, np: Math.ceil(spec.n / bn) * bn };
}

/** The split GEMM: the tile's geometry plus its 64-wide B stage, 16-wide K chunks of rows of `rs` halves. */
export function coopmatSplitGeometry(spec: Pick<CoopmatSpec, 'tile' | 'plane'>) {
  return { ...coopmatGeometry(spec), kc: SPLIT_K_STAGE / 16, rs: SPLIT_K_STAGE + SPLIT_ROW_PAD };
}

/** Stages of raw weight words a stream plane keeps in flight. */
const STREAM_DEPTH = 4;

/** The stream GEMM: ksplit plane groups, each with its own K part of `stages`, `depth` stages in flight. */
export function streamGeometry(spec: Pick<CoopmatSpec, 'tile' | 'plane' | 'k' | 'ksplit'>) {
  const g = coopmatSplitGeometry(spec);
  const parts = spec.ksplit ?? 1;
  const stages = spec.k / (parts * SPLIT_K_STAGE);
  return {
    ...g,
    parts,
    threads: parts * g.threads,
    stages,
    depth: Math.min(stages, STREAM_DEPTH),
    /** f16 of one part's two B buffers. */
    bufHalves: 2 * g.bn * g.rs,
  };
}

/**
 * Workgroup memory: the one-pass f16 A and B tiles; the split GEMM's two B buffers; the stream GEMM's B
 * buffers per part and its part sums; plus one 16x16 f32 spill per plane on the matrix arm.
 * @example coopmatWorkgroupBytes({ tile: { wm: 2, wn: 2, rm: 4, rn: 4 }, plane: 32, arm: 'scalar', staging: 'one-pass', k: 256 }) === 16384
 */
export function coopmatWorkgroupBytes(
  spec: Pick<CoopmatSpec, 'tile' | 'plane' | 'arm' | 'staging' | 'k' | 'ksplit'>,
): number {
  const g = streamGeometry(spec);
  const matrix = spec.arm === 'subgroup-matrix';
  const spill = matrix ? g.nwarp * 256 * 4 : 0;
  if (stagingOf(spec).stream) return (matrix ? g.parts * g.bufHalves * 2 : 0) + g.parts * g.bm * g.bn * 4;
  if (!stagingOf(spec).prePasses) return (g.bm + g.bn) * 32 * 2 + spill;
  return matrix ? g.bufHalves * 2 + spill : 0;
}

/** Generator-level validity of a spec, independent of any adapter. Empty = fine. */
export function coopmatSpecErrors(spec: CoopmatSpec): string[] {
  const errs = coopmatRuleProblems({ ...spec, ...spec.tile, ksplit: spec.ksplit ?? 1 });
  const { plane } = spec;
  if (!Number.isInteger(plane) || plane < 1 || plane > 256 || (plane & (plane - 1)) !== 0)
    errs.push(
      `plane ${plane} must be a power of two in 1..256 (each lane owns 256/plane elements of a 16x16 subtile)`,
    );
  if (spec.rowMap && !stagingOf(spec).prePasses) errs.push('mapped rows need a split staging');
  if (spec.rowMap && (spec.ksplit ?? 1) > 1 && !stagingOf(spec).stream)
    errs.push('mapped rows take no split-K partial sums (the stream staging adds its parts itself)');
  if (spec.arm === 'subgroup-matrix' && spec.f16 !== 'native')
    errs.push('the subgroup-matrix arm needs native f16 (shader-f16)');
  return errs;
}

/** Where output element (orow, ocol) goes: after `lookup` (lines), the guard and the index into `out`. */
export type OutRows = { lookup: string; guard: string; index: string };
