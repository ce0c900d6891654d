// The seeded, deterministic genetic search over a Space (the seed's `tune::Evolution`).
//
// Generation 0 is the caller's seed configs (e.g. the incumbent tile, so the winner is never worse
// than the default) plus distinct random feasible configs. Each later generation keeps the `elitism`
// best members and breeds the rest: two tournament-selected parents, uniform crossover, per-gene
// mutation, repaired to a feasible config nobody has evaluated yet. Every config is evaluated AT MOST
// ONCE (a timing is expensive and a re-measure would only add noise), and every evaluation -- measured,
// rejected by the static tier or failed at the correctness gate -- lands in the report with its
// generation, so the dashboard can show the whole trail. At the end the fastest few and every seed
// are re-timed with more dispatches (the finalists), in several rounds that take turns (a clock dip lands
// on one round of several finalists, not on every round of one), and the finalist with the fastest median
// re-timing wins: a single timing is a few percent noisy, one can be spoiled 3x by a clock dip, and
// neither may decide the pick nor drop a seed for good. Same seed + same fitnesses = same search.
import type { Evaluator } from './evaluator';
import { CancelledError } from '../cancel';
import { measurementMs } from './rounds';
import { TuneRng } from './rng';
import type { Config, Space } from '../space';

export type EvaluationVerdict = 'measured' | 'rejected' | 'failed-gate';

/** One evaluated config. */
export interface Evaluation {
  /** Canonical config name (Space.name). */
  config: string;
  values: Config;
  /** Generation that first evaluated it (0-based). */
  generation: number;
  /** Position in evaluation order (0-based). */
  order: number;
  verdict: EvaluationVerdict;
  /** ms per dispatch; Infinity unless measured. */
  ms: number;
  /** Why it was rejected or failed the gate. */
  reason?: string;
  /** rel_to_max against the oracle, when it was dispatched. */
  worstRel?: number;
  timing?: 'timestamp' | 'wall';
  /** ms per run of each timed batch of its measurement. */
  samples?: number[];
  /** Where its measurement's wall time went (Measurement.phases). */
  phases?: { compileMs: number; verifyMs: number; benchmarkMs: number };
  /** ISO time it was evaluated. */
  at?: string;
}

/** Everything a search saw. */
export interface EvolutionReport {
  /** Name of the fastest measured config; undefined when nothing passed the gate. */
  winner: string | undefined;
  bestMs: number;
  evaluated: number;
  /** Every evaluation, in evaluation order. */
  entries: Evaluation[];
  measured: Evaluation[];
  /** Rejected by the static tier or because dispatching it threw. */
  rejected: Evaluation[];
  failedGate: Evaluation[];
  /** Best ms found up to the end of each generation (non-increasing; Infinity before a pass). */
  bestPerGeneration: number[];
  /** The worst rel_to_max any dispatched config showed (0 when none was dispatched). */
  worstRel: number;
  /** True when the search stopped early because every feasible config had been evaluated. */
  exhausted: boolean;
  /**
   * The finalists' re-timings (EvolutionOptions.finalists), fastest search timing first, then the seeds
   * not among those in seed order; the winner is the fastest of these. Empty when fewer than two configs
   * were measured or finalists is 0.
   */
  finals: FinalTiming[];
}

/**
 * A finalist re-timed with longer batches (`finalMs`) in `finalRounds` rounds after the search (Infinity
 * if it failed its gate or its dispatch in any of them).
 */
export interface FinalTiming {
  config: string;
  /** The median of its re-timings' figures, ms per dispatch: what finalists are ranked by. */
  ms: number;
  /** Each re-timing's figure (its batches' median), in round order. */
  rounds?: number[];
  /** What the search measured for it. */
  searchMs: number;
  /** Wall-clock ms its re-timings took (gates, warm-ups and timed dispatches): what it added to the hunt. */
  wallMs: number;
}

export interface EvolutionOptions {
  /** Members per generation. */
  population: number;
  generations: number;
  /** Best members carried unchanged into the next generation (< population). */
  elitism: number;
  /** Members drawn per tournament selection. */
  tournament: number;
  /** Probability a child is a uniform crossover of two parents (else a copy of the first). */
  crossoverRate: number;
  /** Per-gene probability of resampling to a different value. */
  mutationRate: number;
  /** GPU time per timed batch of a measurement, ms (the runner calibrates the batch length to it). */
  measureMs: number;
  /**
   * The fastest measured configs re-timed at the end with longer batches (`finalMs`), together with every
   * measured seed (the incumbent first), the fastest re-timing winning: one short timing per config is a
   * few percent noisy, about the gap between the top configs, and a seed is a config the caller expects
   * to be good, whose one search timing can come out well off its real speed
   * (docs/decisions/0010-tuner-seeds-and-finalists.md). 0: the search's own fastest wins.
   */
  finalists: number;
  /** GPU time per timed batch of a finalist re-timing, ms; 0 = 4 x measureMs. */
  finalMs: number;
  /**
   * Re-timings per finalist, taken in turns; the median of their figures ranks the finalists, so one
   * noisy re-timing neither makes nor breaks a pick (>= 1; docs/decisions/0017-finalists-by-median.md).
   */
  finalRounds: number;
}

export const DEFAULT_EVOLUTION: Readonly<EvolutionOptions> = {
  population: 16,
  generations: 6,
  elitism: 2,
  tournament: 3,
  crossoverRate: 0.9,
  mutationRate: 0.25,
  measureMs: 10,
  finalists: 3,
  finalMs: 0,
  finalRounds: 3,
};

export interface EvolutionHooks {
  /** Configs placed in generation 0 before the random ones (must be feasible). */
  seeds?: readonly Config[];
  /** Called after each evaluation. */
  onEvaluated?(entry: Evaluation, progress: { generation: number; evaluated: number; bestMs: number }): void;
  /** Polled before each evaluation; true aborts the search with CancelledError. */
  cancelled?(): boolean;
}

/** The search was cancelled between two evaluations. */

// How many bred children to try before falling back to a random unevaluated config.
const BREED_ATTEMPTS = 64;

/** The median of a non-empty list. */
function medianOf(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function better(a: Evaluation, b: Evaluation): boolean {
  return a.ms < b.ms || (a.ms === b.ms && a.order < b.order);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * A GA configuration; `run` executes one search.
 * @example
 * const evo = new Evolution({ population: 8, generations: 3, measureMs: 1 });
 * const report = await evo.run(space, evaluator, 0xc0ffee, { seeds: [incumbent] });
 */
export class Evolution {
  readonly options: Readonly<EvolutionOptions>;

  constructor(options: Partial<EvolutionOptions> = {}) {
    const o = { ...DEFAULT_EVOLUTION, ...options };
    if (options.elitism === undefined) o.elitism = Math.min(DEFAULT_EVOLUTION.elitism, o.population - 1);
    const positive = ['population', 'generations', 'tournament', 'finalRounds'] as const;
    if (!Number.isInteger(o.finalists) || o.finalists < 0)
      throw new RangeError(`Evolution finalists = ${o.finalists}: need an integer >= 0`);
    if (!(o.measureMs > 0) || !(o.finalMs >= 0) || !Number.isFinite(o.measureMs + o.finalMs))
      throw new RangeError(
        `Evolution measureMs = ${o.measureMs}, finalMs = ${o.finalMs}: need ms > 0 (finalMs >= 0)`,
      );
    for (const key of positive) {
      if (!Number.isInteger(o[key]) || o[key] < 1)
        throw new RangeError(`Evolution ${key} = ${o[key]}: need an integer >= 1`);
    }
    // elitism < population so every generation after the first breeds at least one child.
    if (!Number.isInteger(o.elitism) || o.elitism < 0 || o.elitism >= o.population) {
      throw new RangeError(
        `Evolution elitism = ${o.elitism}: need an integer in [0, population ${o.population})`,
      );
    }
    for (const key of ['crossoverRate', 'mutationRate'] as const) {
      if (!(o[key] >= 0 && o[key] <= 1))
        throw new RangeError(`Evolution ${key} = ${o[key]}: need a probability in [0, 1]`);
    }
    this.options = Object.freeze(o);
  }

  /** Search `space` on `evaluator`; deterministic in `seed` given deterministic fitnesses. */
  async run(
    space: Space,
    evaluator: Evaluator,
    seed: number | bigint,
    hooks: EvolutionHooks = {},
  ): Promise<EvolutionReport> {
    const o = this.options;
    const rng = new TuneRng(seed);
    const feasible = space.enumerate();
    if (feasible.length === 0) throw new RangeError('the search space has no feasible config');
    const seen = new Map<string, Evaluation>();
    const entries: Evaluation[] = [];
    const bestPerGeneration: number[] = [];
    let best: Evaluation | undefined;

    const evaluate = async (cfg: Config, generation: number): Promise<Evaluation> => {
      if (hooks.cancelled?.()) throw new CancelledError();
      const name = space.name(cfg);
      const base = {
        config: name,
        values: cfg,
        generation,
        order: entries.length,
        at: new Date().toISOString(),
      };
      let entry: Evaluation;
      const verdict = evaluator.staticCheck(cfg);
      if (verdict.kind === 'reject') {
        entry = { ...base, verdict: 'rejected', ms: Infinity, reason: verdict.reason };
      } else {
        try {
          const m = await evaluator.measure(cfg, o.measureMs);
          const timing = {
            ...(m.timing ? { timing: m.timing } : {}),
            ...(m.samples ? { samples: m.samples } : {}),
            ...(m.phases ? { phases: m.phases } : {}),
          };
          entry = Number.isFinite(m.ms)
            ? { ...base, verdict: 'measured', ms: m.ms, worstRel: m.worstRel, ...timing }
            : {
                ...base,
                verdict: 'failed-gate',
                ms: Infinity,
                worstRel: m.worstRel,
                reason: m.reason ?? 'failed the correctness gate',
              };
        } catch (e) {
          if (e instanceof CancelledError) throw e;
          entry = { ...base, verdict: 'rejected', ms: Infinity, reason: `dispatch failed: ${errorText(e)}` };
        }
      }
      seen.set(name, entry);
      entries.push(entry);
      if (entry.verdict === 'measured' && (!best || better(entry, best))) best = entry;
      hooks.onEvaluated?.(entry, { generation, evaluated: entries.length, bestMs: best?.ms ?? Infinity });
      return entry;
    };

    // Generation 0: seeds, then distinct random feasible configs (partial Fisher-Yates).
    const initial: Config[] = [];
    for (const s of hooks.seeds ?? []) {
      if (!space.feasible(s))
        throw new RangeError(`seed config [${s.join(', ')}] is not feasible in this space`);
      if (initial.length < o.population && !initial.some((c) => space.name(c) === space.name(s)))
        initial.push(s);
    }
    const taken = new Set(initial.map((c) => space.name(c)));
    const pool = feasible.filter((c) => !taken.has(space.name(c)));
    while (initial.length < o.population && pool.length > 0) {
      const j = rng.int(pool.length);
      initial.push(pool[j]!);
      pool[j] = pool[pool.length - 1]!;
      pool.pop();
    }
    let population: Evaluation[] = [];
    for (const cfg of initial) population.push(await evaluate(cfg, 0));
    bestPerGeneration.push(best?.ms ?? Infinity);

    const tournament = (pop: readonly Evaluation[]): Evaluation => {
      let pick = pop[rng.int(pop.length)]!;
      for (let t = 1; t < o.tournament; t++) {
        const c = pop[rng.int(pop.length)]!;
        if (better(c, pick)) pick = c;
      }
      return pick;
    };

    const breed = (pop: readonly Evaluation[], taken: ReadonlySet<string>): Config | undefined => {
      const fresh = (c: Config) => space.feasible(c) && !seen.has(space.name(c)) && !taken.has(space.name(c));
      for (let attempt = 0; attempt < BREED_ATTEMPTS; attempt++) {
        const a = tournament(pop).values;
        const b = tournament(pop).values;
        const cross = rng.chance(o.crossoverRate);
        const child = space.params.map((p, i) => {
          let v = cross && rng.chance(0.5) ? b[i]! : a[i]!;
          if (p.values.length > 1 && rng.chance(o.mutationRate)) {
            // Resample to a DIFFERENT value: index + 1 + r (mod len) skips the current one uniformly.
            const cur = p.values.indexOf(v);
            v = p.values[(cur + 1 + rng.int(p.values.length - 1)) % p.values.length]!;
          }
          return v;
        });
        if (fresh(child)) return child;
      }
      // Converged population: inject a random unevaluated config rather than stall.
      const unseen = feasible.filter(fresh);
      return unseen.length ? unseen[rng.int(unseen.length)] : undefined;
    };

    let exhausted = seen.size >= feasible.length && o.generations > 1;
    for (let g = 1; g < o.generations && !exhausted; g++) {
      const ranked = [...population].sort((x, y) => (better(x, y) ? -1 : better(y, x) ? 1 : 0));
      const next = ranked.slice(0, o.elitism);
      const names = new Set(next.map((e) => e.config));
      while (next.length < o.population) {
        const child = breed(population, names);
        if (!child) {
          exhausted = true;
          break;
        }
        const e = await evaluate(child, g);
        next.push(e);
        names.add(e.config);
      }
      population = next;
      bestPerGeneration.push(best?.ms ?? Infinity);
    }

    // Finalists: the fastest measured configs and every measured seed, re-timed longer in rounds that take
    // turns; the fastest median re-timing wins.
    const finals: FinalTiming[] = [];
    const measured = entries.filter((e) => e.verdict === 'measured');
    if (o.finalists > 0 && measured.length > 1) {
      const ranked = [...measured].sort((x, y) => (better(x, y) ? -1 : better(y, x) ? 1 : 0));
      const picks = ranked.slice(0, o.finalists);
      for (const seed of hooks.seeds ?? []) {
        const e = seen.get(space.name(seed));
        if (e?.verdict === 'measured' && !picks.includes(e)) picks.push(e);
      }
      const rounds = picks.map(() => [] as number[]);
      const wallMs = picks.map(() => 0);
      for (let r = 0; r < o.finalRounds; r++)
        for (const [i, e] of picks.entries()) {
          // A finalist that failed once is out: its later rounds are not timed.
          if (rounds[i]!.length < r) continue;
          if (hooks.cancelled?.()) throw new CancelledError();
          const t0 = performance.now();
          try {
            const m = await evaluator.measure(e.values, o.finalMs || 4 * o.measureMs);
            if (Number.isFinite(m.ms)) rounds[i]!.push(measurementMs(m));
          } catch (err) {
            if (err instanceof CancelledError) throw err;
          }
          wallMs[i]! += performance.now() - t0;
        }
      picks.forEach((e, i) => {
        const got = rounds[i]!;
        finals.push({
          config: e.config,
          ms: got.length === o.finalRounds ? medianOf(got) : Infinity,
          rounds: got,
          searchMs: e.ms,
          wallMs: wallMs[i]!,
        });
      });
    }
    const fastestFinal = finals.reduce<FinalTiming | undefined>(
      (f, x) => (Number.isFinite(x.ms) && (!f || x.ms < f.ms) ? x : f),
      undefined,
    );
    const b = best as Evaluation | undefined;
    let worstRel = 0;
    for (const e of entries) if (e.worstRel !== undefined) worstRel = Math.max(worstRel, e.worstRel);
    return {
      winner: fastestFinal?.config ?? b?.config,
      bestMs: fastestFinal?.ms ?? b?.ms ?? Infinity,
      evaluated: entries.length,
      entries,
      measured,
      rejected: entries.filter((e) => e.verdict === 'rejected'),
      failedGate: entries.filter((e) => e.verdict === 'failed-gate'),
      bestPerGeneration,
      worstRel,
      exhausted,
      finals,
    };
  }
}
