// The static tier of the two tile tuners, bound to the REAL kernels: workgroup storage is what the
// generator declares (mmqWorkgroupBytes / coopmatWorkgroupBytes for the chosen arm), limits are the
// adapter's, and after the tuner's own checks (invocations, storage, register tile) the generators' own
// adapter checks run too (arm support, grid size, storage-buffer count). Pure: caps in, verdicts out.
import {
  coopmatF16Family,
  coopmatSpec,
  coopmatWorkgroupBytes,
  type CoopmatArm,
  type CoopmatSpec,
} from '../coopmat';
import type { CoopmatStaging, ProblemConfig, TileParams } from '../family';
import type { AdapterCaps, Arm } from '../gpu/caps';
import {
  mmqCapsProblems,
  mmqPresetSpec,
  mmqShapeProblems,
  mmqSpecProblems,
  mmqWorkgroupBytes,
  type MmqSpec,
} from '../mmq';
import { reject, type StaticVerdict } from './evaluator';
import { tileLimits, tileStaticCheck, type TileLimits } from './tileSpace';

export interface StaticTierOptions {
  m: number;
  n: number;
  k: number;
  plane: number;
  /** Workgroup-storage occupancy budget (defaults to the adapter's limit). */
  storageBudget?: number;
}

/** A tuner's static tier for one (adapter, shape, arm). */
export interface StaticTier<S> {
  limits: TileLimits;
  /** The generator spec of a tile (and staging, for the coopmat twin; absent = the arm's default). */
  spec(tile: TileParams, staging?: CoopmatStaging): S;
  check(tile: TileParams, staging?: CoopmatStaging): StaticVerdict;
}

function limitsOf(caps: AdapterCaps, o: StaticTierOptions): TileLimits {
  return tileLimits(caps, o.plane, o.storageBudget === undefined ? {} : { storageBudget: o.storageBudget });
}

/**
 * The int8 Q4_K MMQ tile kernel's static tier ('mmq-q4k-tile' preset).
 * @example mmqQ4kStaticTier(caps, { m: 16, n: 16, k: 256, plane: 4, arm: 'dp4a' }).check({ wm: 4, wn: 4, rm: 4, rn: 8 })
 */
export function mmqQ4kStaticTier(
  caps: AdapterCaps,
  o: StaticTierOptions & { arm: Arm },
): StaticTier<MmqSpec> {
  const limits = limitsOf(caps, o);
  const spec = (tile: TileParams) =>
    mmqPresetSpec('mmq-q4k-tile', { m: o.m, n: o.n, k: o.k, tile, arm: o.arm, plane: o.plane });
  return {
    limits,
    spec,
    check(tile) {
      const s = spec(tile);
      const v = tileStaticCheck(tile, limits, () => mmqWorkgroupBytes(s));
      if (v.kind === 'reject') return v;
      // The tuner dispatches the plain kernel: no ownership debug buffer to count.
      const more = [
        ...mmqSpecProblems(s),
        ...mmqCapsProblems(s, caps, { instrumented: false }),
        ...mmqShapeProblems(s, o.m, o.n, o.k, caps.limits.maxComputeWorkgroupsPerDimension),
      ];
      return more.length ? reject(more.join('; ')) : v;
    },
  };
}

/** The coopmat family config of a tile and staging (what the playground would load). */
export function coopmatTileConfig(
  o: StaticTierOptions & { arm: CoopmatArm; dataSeed?: number },
  tile: TileParams,
  staging?: CoopmatStaging,
): ProblemConfig {
  return {
    ...(staging ? { staging } : {}),
    kernel: 'coopmat-f16',
    m: o.m,
    n: o.n,
    k: o.k,
    experts: 1,
    topk: 1,
    ytiles: 1,
    tile,
    arm: o.arm,
    plane: o.plane,
    dataSource: 'seed',
    dataSeed: o.dataSeed ?? 0,
  };
}

/**
 * The f16 coopmat twin's static tier (native f16 wherever the adapter has shader-f16).
 * @example coopmatStaticTier(caps, { m: 16, n: 16, k: 256, plane: 4, arm: 'scalar' }).check(tile)
 */
export function coopmatStaticTier(
  caps: AdapterCaps,
  o: StaticTierOptions & { arm: CoopmatArm; dataSeed?: number },
): StaticTier<CoopmatSpec> {
  const limits = limitsOf(caps, o);
  const spec = (tile: TileParams, staging?: CoopmatStaging) =>
    coopmatSpec(coopmatTileConfig(o, tile, staging), caps);
  return {
    limits,
    spec,
    check(tile, staging) {
      const v = tileStaticCheck(tile, limits, () => coopmatWorkgroupBytes(spec(tile, staging)));
      if (v.kind === 'reject') return v;
      const more = coopmatF16Family.validate(coopmatTileConfig(o, tile, staging), caps);
      return more.length ? reject(more.join('; ')) : v;
    },
  };
}
