// The Q4_K MMQ tile schedule space, shared by the int8 MMQ and the f16 coopmat twin: the warp grid
// WM x WN and the per-warp register tile RM x RN (BM = WM*RM*16, BN = WN*RN*16, nwarp = WM*WN).
// The Space carries only device-independent feasibility; the plane-dependent workgroup size, the
// workgroup-storage (LDS) limit and the register budget are the evaluator's free static tier, because
// they need the adapter's limits and the real kernel's footprint.
import type { Gate } from '../compare';
import { COOPMAT_STAGINGS, type CoopmatStaging, type TileParams } from '../family';
import type { AdapterCaps } from '../gpu/caps';
import { reject, PASS, type StaticVerdict } from './evaluator';
import { Space, type Config } from './space';

/** The tuner's ops (cache keys), as the seed names them. */
export const MMQ_Q4K_TILE_OP = 'mmq_q4k_tile';
export const MMQ_Q4K_COOPMAT_OP = 'mmq_q4k_coopmat';

/** Correctness gates folded into fitness: int8 accumulation is exact, so only f32 order differs. */
export const INT8_TUNE_GATE: Gate = { kind: 'rel-to-max', tol: 1e-3 };
/** Both operands round to f16 in the coopmat twin, the hand coopmat kernel's gate class. */
export const F16_TUNE_GATE: Gate = { kind: 'rel-to-max', tol: 5e-2 };

/**
 * Accumulator fragments per warp (RM*RN 16x16 tiles held in registers across K). The hand coopmat
 * kernel budgets 16; a tile needing more spills to scratch and cannot beat a resident one. The count
 * is plane-independent, so the same budget gates every adapter.
 */
export const REGISTER_TILE_BUDGET = 16;

/** The tile space over warp-grid rows `wms`: WN in {1,2,4}, RM in {1,2,4}, RN in {1,2,4,8}, 1 <= WM*WN <= 16. */
function tileSpaceOver(wms: readonly number[]): Space {
  return (
    new Space()
      .param('WM', wms)
      .param('WN', [1, 2, 4])
      .param('RM', [1, 2, 4])
      .param('RN', [1, 2, 4, 8])
      // nwarp = WM*WN in [1, 16] (16 subgroups of 64 is the 1024-invocation ceiling).
      .constraint((c, s) => {
        const w = s.get(c, 'WM') * s.get(c, 'WN');
        return w >= 1 && w <= 16;
      }, '1 <= WM*WN <= 16')
  );
}

/**
 * The int8 MMQ's {WM x WN x RM x RN} space: WM, WN in {1,2,4}, RM in {1,2,4}, RN in {1,2,4,8}, 1 <= WM*WN <= 16.
 * @example mmqQ4kSpace().enumerate().length === 108
 */
export function mmqQ4kSpace(): Space {
  return tileSpaceOver([1, 2, 4]);
}

/** The coopmat space's staging parameter: an index into COOPMAT_STAGINGS (Space values are integers). */
export const STAGING_PARAM = 'STAGING';

/**
 * The coopmat twin's space: mmqQ4kSpace plus WM = 8 (WN <= 2), times the four stagings (STAGING = the
 * index into COOPMAT_STAGINGS): 528 configs. Eight planes of 32x128 results (8,1,2,8: BM 256, BN 128)
 * were the split plan's fastest tile at 2048x4096x4096 on the H200 (docs/benchmarks.md, "Follow-up 6"),
 * and B decoded in the GEMM ('in-gemm') the fastest staging at most shapes with m <= 128 ("Follow-up 8").
 * @example coopmatTileSpace().enumerate().length === 528
 */
export function coopmatTileSpace(): Space {
  return tileSpaceOver([1, 2, 4, 8]).param(
    STAGING_PARAM,
    COOPMAT_STAGINGS.map((_, i) => i),
  );
}

/** The tile space an op searches (the cache key's op). */
export function tileSpaceFor(op: typeof MMQ_Q4K_TILE_OP | typeof MMQ_Q4K_COOPMAT_OP): Space {
  return op === MMQ_Q4K_COOPMAT_OP ? coopmatTileSpace() : mmqQ4kSpace();
}

/**
 * The always-feasible default tile before any hunt: BM=32, BN=64, 8 warps -- the fixed blocked kernel's
 * shape, so a cold cache dispatches a known-good schedule.
 */
export function mmqQ4kIncumbent(): TileParams {
  return { wm: 2, wn: 4, rm: 1, rn: 1 };
}

/** The kernel's tile of a config of `mmqQ4kSpace()`. */
export function tileOf(space: Space, cfg: Config): TileParams {
  return {
    wm: space.get(cfg, 'WM'),
    wn: space.get(cfg, 'WN'),
    rm: space.get(cfg, 'RM'),
    rn: space.get(cfg, 'RN'),
  };
}

/** Whether a space searches the staging (coopmatTileSpace) besides the tile. */
const searchesStaging = (space: Space): boolean => space.params.some((p) => p.name === STAGING_PARAM);

/** The staging of a config, when its space searches one (coopmatTileSpace), else undefined. */
export function stagingOf(space: Space, cfg: Config): CoopmatStaging | undefined {
  if (!searchesStaging(space)) return undefined;
  const staging = COOPMAT_STAGINGS[space.get(cfg, STAGING_PARAM)];
  if (!staging) throw new RangeError(`${STAGING_PARAM} = ${space.get(cfg, STAGING_PARAM)} names no staging`);
  return staging;
}

/** What a config of a tile space chooses: the tile, and the staging where the space searches it. */
export interface TileChoice {
  tile: TileParams;
  staging?: CoopmatStaging;
}

/**
 * The tile and staging of a config.
 * @example choiceOf(coopmatTileSpace(), cfg) // { tile: { wm: 8, wn: 1, rm: 2, rn: 8 }, staging: 'prepass' }
 */
export function choiceOf(space: Space, cfg: Config): TileChoice {
  const staging = stagingOf(space, cfg);
  return { tile: tileOf(space, cfg), ...(staging ? { staging } : {}) };
}

/**
 * The config of a tile (and, in a space that searches it, a staging); throws RangeError when a value is
 * not in the space or the space needs a staging that was not given.
 * @example tileConfig(coopmatTileSpace(), { wm: 8, wn: 1, rm: 2, rn: 8 }, 'in-gemm')
 */
export function tileConfig(space: Space, tile: TileParams, staging?: CoopmatStaging): Config {
  const values: Record<string, number> = { WM: tile.wm, WN: tile.wn, RM: tile.rm, RN: tile.rn };
  if (searchesStaging(space)) {
    if (staging === undefined) throw new RangeError(`this space searches the staging too: name one`);
    values[STAGING_PARAM] = COOPMAT_STAGINGS.indexOf(staging);
  }
  const cfg = space.config(values);
  if (!cfg)
    throw new RangeError(
      `tile ${tile.wm}x${tile.wn}x${tile.rm}x${tile.rn}${staging ? ` (${staging})` : ''} is not in the tile space`,
    );
  return cfg;
}

/**
 * The configs a hunt seeds generation 0 with: the tile at every staging the space searches, `first`
 * first (the incumbent a report's speedup is against), or the tile alone where it searches none. Random
 * sampling reaches a quarter of the coopmat space per staging, so on the H200 a 16 x 4 hunt seeded with
 * the incumbent alone missed the staging that won at some small shapes.
 * @example tileSeeds(coopmatTileSpace(), mmqQ4kIncumbent(), 'prepass').length === 4
 */
export function tileSeeds(space: Space, tile: TileParams, first?: CoopmatStaging): Config[] {
  if (!searchesStaging(space)) return [tileConfig(space, tile)];
  const order = first ? [first, ...COOPMAT_STAGINGS.filter((s) => s !== first)] : COOPMAT_STAGINGS;
  return order.map((s) => tileConfig(space, tile, s));
}

/**
 * Tile and staging pairs that were the fastest coopmat plan at some prefill shape on the H200
 * (docs/benchmarks.md, Follow-ups 6-9): large m wants big register tiles with the weight decoded once
 * (8,1,2,8 and 4,1,4,4 fused; 8,1,2,4 at m = 512), small m wants small blocks with B decoded in the
 * GEMM (2,1,1,2, 4,1,1,4) or 32 x 32 blocks (2,2,1,1). A 16 x 4 hunt samples about 58 of the 528
 * configs, and seeded with the incumbent alone it missed these by 7-41% at 6 of 12 shapes; seeding
 * them puts each shape class's known winner in generation 0, and the search has to beat it.
 */
export const COOPMAT_PRIOR_CHOICES: readonly Required<TileChoice>[] = [
  { tile: { wm: 8, wn: 1, rm: 2, rn: 8 }, staging: 'fused-prepass' },
  { tile: { wm: 4, wn: 1, rm: 4, rn: 4 }, staging: 'fused-prepass' },
  { tile: { wm: 8, wn: 1, rm: 2, rn: 4 }, staging: 'prepass' },
  { tile: { wm: 4, wn: 1, rm: 1, rn: 4 }, staging: 'in-gemm' },
  { tile: { wm: 2, wn: 1, rm: 1, rn: 2 }, staging: 'in-gemm' },
  { tile: { wm: 2, wn: 2, rm: 1, rn: 1 }, staging: 'fused-prepass' },
];

/**
 * Generation 0 of a hunt: the incumbent's seeds (tileSeeds), then, in a space that searches the staging,
 * the coopmat priors (COOPMAT_PRIOR_CHOICES) not already among them. Evolution keeps the first
 * `population` of them, so a small population drops priors before the incumbent.
 * @example huntSeeds(coopmatTileSpace(), mmqQ4kIncumbent(), 'prepass').length === 10
 */
export function huntSeeds(space: Space, tile: TileParams, first?: CoopmatStaging): Config[] {
  const seeds = tileSeeds(space, tile, first);
  if (!searchesStaging(space)) return seeds;
  const names = new Set(seeds.map((c) => space.name(c)));
  for (const { tile: t, staging } of COOPMAT_PRIOR_CHOICES) {
    const cfg = tileConfig(space, t, staging);
    if (names.has(space.name(cfg))) continue;
    seeds.push(cfg);
    names.add(space.name(cfg));
  }
  return seeds;
}

/** Canonical name of a tile, e.g. "WM=2,WN=4,RM=1,RN=1". */
export function tileName(tile: TileParams): string {
  return `WM=${tile.wm},WN=${tile.wn},RM=${tile.rm},RN=${tile.rn}`;
}

/** Block geometry of a tile. */
export function tileGeometry(tile: TileParams): { bm: number; bn: number; nwarp: number } {
  return { bm: tile.wm * tile.rm * 16, bn: tile.wn * tile.rn * 16, nwarp: tile.wm * tile.wn };
}

/** The adapter limits the static tier checks against (read from the real adapter's caps). */
export interface TileLimits {
  /** Plane (subgroup) width the kernel partitions by; a warp is one plane. */
  plane: number;
  maxInvocations: number;
  maxWorkgroupSizeX: number;
  /** The adapter's maxComputeWorkgroupStorageSize. */
  storageLimit: number;
  /** Occupancy budget (<= storageLimit): a tile over it is rejected even if it would compile. */
  storageBudget: number;
  registerBudget: number;
}

/**
 * Limits for the static tier from an adapter. `storageBudget` defaults to the adapter's limit; pass a
 * smaller one to keep a spare workgroup resident (the seed keeps 48 of 64 KiB on gfx1151).
 */
export function tileLimits(
  caps: AdapterCaps,
  plane: number,
  opts: { storageBudget?: number; registerBudget?: number } = {},
): TileLimits {
  const storageLimit = caps.limits.maxComputeWorkgroupStorageSize;
  return {
    plane,
    maxInvocations: caps.limits.maxComputeInvocationsPerWorkgroup,
    maxWorkgroupSizeX: caps.limits.maxComputeWorkgroupSizeX,
    storageLimit,
    storageBudget: Math.min(storageLimit, opts.storageBudget ?? storageLimit),
    registerBudget: opts.registerBudget ?? REGISTER_TILE_BUDGET,
  };
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(bytes % 1024 ? 1 : 0)} KiB`;

/**
 * The static tier: workgroup invocations, workgroup storage of the REAL kernel (`workgroupBytes`, from
 * the generator) and the register-tile budget. Checked in the seed's order; the first failure is the reason.
 * @example tileStaticCheck({ wm: 4, wn: 4, rm: 4, rn: 8 }, limits, bytes) // { kind: 'reject', reason: '...' }
 */
export function tileStaticCheck(
  tile: TileParams,
  limits: TileLimits,
  workgroupBytes: (tile: TileParams) => number,
): StaticVerdict {
  const { bm, bn, nwarp } = tileGeometry(tile);
  const wg = nwarp * limits.plane;
  if (wg > limits.maxInvocations) {
    return reject(
      `workgroup ${wg} invocations = nwarp ${nwarp} x plane ${limits.plane} > ${limits.maxInvocations} (maxComputeInvocationsPerWorkgroup)`,
    );
  }
  if (wg > limits.maxWorkgroupSizeX) {
    return reject(
      `workgroup x-size ${wg} = nwarp ${nwarp} x plane ${limits.plane} > ${limits.maxWorkgroupSizeX} (maxComputeWorkgroupSizeX)`,
    );
  }
  const bytes = workgroupBytes(tile);
  if (bytes > limits.storageLimit) {
    return reject(
      `workgroup storage ${kib(bytes)} (BM ${bm} x BN ${bn}) > ${kib(limits.storageLimit)} adapter limit`,
    );
  }
  if (bytes > limits.storageBudget) {
    return reject(
      `workgroup storage ${kib(bytes)} (BM ${bm} x BN ${bn}) > ${kib(limits.storageBudget)} occupancy budget`,
    );
  }
  const frags = tile.rm * tile.rn;
  if (frags > limits.registerBudget) {
    return reject(
      `register tile ${frags} fragments/warp (RM ${tile.rm} x RN ${tile.rn}) > ${limits.registerBudget} budget`,
    );
  }
  return PASS;
}
