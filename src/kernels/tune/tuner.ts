// The autokernel cache in front of the GA (the seed's `tune::Tuner`): a winner is keyed by
// (device id, op, "m=..,n=..,k=.."), so the first run on a device tunes and every later run replays the
// stored winner without searching. The cache is an interface: a Map in tests and in the worker, and
// IndexedDB in the app (src/app/persistence/tuneRuns.ts), which hands its stored winner to the worker.
import type { Evaluator } from './evaluator';
import type { Evolution, EvolutionHooks, EvolutionReport } from './evolution';
import type { Config, Space } from '../space';
import type { StaticVerdict } from './evaluator';

/** Where a winner is stored. */
export interface TuneKey {
  deviceId: string;
  op: string;
  /** "m=..,n=..,k=.." (see shapeKey). */
  shape: string;
}

export interface TuneCacheRecord extends TuneKey {
  winner: string;
  bestMs: number;
  /** ISO date of the search. */
  date: string;
  /** The search that produced it, when the cache keeps it. */
  report?: EvolutionReport;
}

/** Persistent winners, async so IndexedDB can implement it. */
export interface TuneCache {
  get(key: TuneKey): Promise<TuneCacheRecord | undefined>;
  put(record: TuneCacheRecord): Promise<void>;
}

/**
 * The cache key of a problem shape, as the seed formats it.
 * @example shapeKey(16, 16, 256) === 'm=16,n=16,k=256'
 */
export function shapeKey(m: number, n: number, k: number): string {
  for (const [name, v] of [
    ['m', m],
    ['n', n],
    ['k', k],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${name} = ${v}: need a positive integer`);
  }
  return `m=${m},n=${n},k=${k}`;
}

/** Parse a shapeKey back; undefined when malformed. */
export function parseShapeKey(shape: string): { m: number; n: number; k: number } | undefined {
  const hit = /^m=(\d+),n=(\d+),k=(\d+)$/.exec(shape);
  if (!hit) return undefined;
  const [m, n, k] = [Number(hit[1]), Number(hit[2]), Number(hit[3])];
  return m > 0 && n > 0 && k > 0 ? { m, n, k } : undefined;
}

function keyString(k: TuneKey): string {
  return JSON.stringify([k.deviceId, k.op, k.shape]);
}

/** A TuneCache in memory (tests; a worker session). */
export class MemoryTuneCache implements TuneCache {
  private readonly map = new Map<string, TuneCacheRecord>();

  constructor(records: readonly TuneCacheRecord[] = []) {
    for (const r of records) this.map.set(keyString(r), r);
  }

  async get(key: TuneKey): Promise<TuneCacheRecord | undefined> {
    return this.map.get(keyString(key));
  }

  async put(record: TuneCacheRecord): Promise<void> {
    this.map.set(keyString(record), record);
  }

  get size(): number {
    return this.map.size;
  }
}

/** The result of a hunt: the winning config name, whether it came from the cache, and (on a miss) the trail. */
export interface Evolved {
  /** Winner's config name; undefined only when a fresh search found no config that passed the gate. */
  winner: string | undefined;
  fromCache: boolean;
  /** Present exactly when the search ran (a miss). */
  report?: EvolutionReport;
  /** The cached record that served a hit. */
  cached?: TuneCacheRecord;
}

export interface EvolveOptions extends EvolutionHooks {
  /** Search even when the cache has a winner (and replace it). */
  force?: boolean;
  /** Date stamp of the stored record (tests pass a fixed one). */
  now?: () => Date;
}

/**
 * Cache-fronted search.
 * @example
 * const tuner = new Tuner(new MemoryTuneCache());
 * const r = await tuner.evolve(deviceId, 'mmq_q4k_tile', shapeKey(m, n, k), space, evaluator, evo, 0xc0ffee);
 * // r.fromCache === false the first time, true after.
 */
export class Tuner {
  constructor(readonly cache: TuneCache) {}

  /**
   * The cached winner for a key, when it still names a feasible config of `space` (a stale or
   * hand-edited record is ignored rather than trusted).
   */
  async cachedWinner(
    deviceId: string,
    op: string,
    shape: string,
    space?: Space,
  ): Promise<string | undefined> {
    const hit = await this.cache.get({ deviceId, op, shape });
    if (!hit) return undefined;
    if (space) {
      const cfg = space.parse(hit.winner);
      if (!cfg || !space.feasible(cfg)) return undefined;
    }
    return hit.winner;
  }

  /** Replay the cached winner, or search and store the new one (only when something passed the gate). */
  async evolve(
    deviceId: string,
    op: string,
    shape: string,
    space: Space,
    evaluator: Evaluator,
    evolution: Evolution,
    seed: number | bigint,
    options: EvolveOptions = {},
  ): Promise<Evolved> {
    const key = { deviceId, op, shape };
    if (!options.force) {
      const hit = await this.cache.get(key);
      const cfg = hit ? space.parse(hit.winner) : undefined;
      if (hit && cfg && space.feasible(cfg)) return { winner: hit.winner, fromCache: true, cached: hit };
    }
    const report = await evolution.run(space, evaluator, seed, options);
    if (report.winner !== undefined) {
      const date = (options.now?.() ?? new Date()).toISOString();
      await this.cache.put({ ...key, winner: report.winner, bestMs: report.bestMs, date, report });
    }
    return { winner: report.winner, fromCache: false, report };
  }
}

/** Which config an autokernel dispatch runs, and why. */
export interface AutokernelChoice {
  config: Config;
  /** The cached winner's name, or 'incumbent'. */
  served: string;
  /** Set when a cached winner was offered but could not serve (unparsable, infeasible, rejected here). */
  fallback?: string;
}

/**
 * The autokernel's pick (the seed's mmq_q4k_autokernel): the cached winner when it parses to a feasible
 * config that passes this device's static check, else the incumbent.
 * @example pickAutokernel(space, 'WM=1,WN=2,RM=1,RN=1', incumbent).served === 'WM=1,WN=2,RM=1,RN=1'
 */
export function pickAutokernel(
  space: Space,
  cachedWinner: string | undefined,
  incumbent: Config,
  staticCheck?: (cfg: Config) => StaticVerdict,
): AutokernelChoice {
  if (cachedWinner === undefined) return { config: incumbent, served: 'incumbent' };
  const cfg = space.parse(cachedWinner);
  if (!cfg)
    return {
      config: incumbent,
      served: 'incumbent',
      fallback: `cached winner "${cachedWinner}" is not a config of this space`,
    };
  if (!space.feasible(cfg)) {
    return {
      config: incumbent,
      served: 'incumbent',
      fallback: `cached winner ${cachedWinner} violates ${space.violations(cfg).join(', ')}`,
    };
  }
  const v = staticCheck?.(cfg);
  if (v?.kind === 'reject')
    return {
      config: incumbent,
      served: 'incumbent',
      fallback: `cached winner ${cachedWinner} rejected here: ${v.reason}`,
    };
  return { config: cfg, served: cachedWinner };
}

/** pickAutokernel with the winner read from a Tuner's cache. */
export async function autokernelChoice(
  tuner: Tuner,
  key: TuneKey,
  space: Space,
  incumbent: Config,
  staticCheck?: (cfg: Config) => StaticVerdict,
): Promise<AutokernelChoice> {
  const hit = await tuner.cache.get(key);
  return pickAutokernel(space, hit?.winner, incumbent, staticCheck);
}
