// How long a run will take, before it is sent: the work of the config (multiply-adds and bytes moved,
// from the family's declared shape) against a rate for this adapter and arm -- measured by an earlier run
// or by the tuner's hunts here, else a conservative default per arm, so the first run of a family is
// checked too. Pure (no DOM, no GPU): the controller asks before a run this predicts over CONFIRM_MS.
import type { FamilyCatalog, RunConfig } from '../family';
import type { Arm } from '../gpu/caps';
import { gemmWork, type Work } from '../work';

export type { Work };

/** A family without declared work (the fixed 16 x 16 x 32 demos). */
const DEMO_WORK: Work = gemmWork({ rows: 16, n: 16, k: 32, weightBytes: 1, activationBytes: 1 });

/**
 * A config's work as its family declares it (FamilyCatalog.work): multiply-adds and bytes moved once.
 * @example workOf(catalog, { ...config, params: { m: 16, n: 4096, k: 4096 } }).macs === 16 * 4096 * 4096
 */
export function workOf(catalog: Pick<FamilyCatalog, 'work'>, config: RunConfig): Work {
  return catalog.work?.(config.params) ?? DEMO_WORK;
}

/**
 * The guard: an action (a run, a sweep, a hunt, an A/B, a CLI command) estimated past this asks first (the
 * app) or is refused without `--yes` (the CLI).
 */
export const CONFIRM_MS = 5_000;

/** How fast this adapter runs an arm. */
export interface Rate {
  macsPerMs: number;
  bytesPerMs: number;
  /** Compiling one plan's pipelines, ms (seconds per kernel on a CPU adapter). */
  compileMs: number;
  /** Where the rate comes from, in words. */
  basis: string;
}

/**
 * Compiling a plan when nothing was measured: SwiftShader on 2 cores took 1.5-8 s per new pipeline set
 * (a default hunt's 26 configs: 64 s of compiling); a GPU driver a few hundred ms at most.
 */
export const DEFAULT_COMPILE_MS = { software: 3000, hardware: 300 } as const;

/**
 * Defaults when nothing was measured, on the slow side so a first run of a big shape asks: a CPU
 * adapter (SwiftShader on 2 cores ran a 16 x 4096 x 14336 int8 GEMM in about 9 s, 1e5 MACs/ms), or a
 * modest integrated GPU (0.2 int8 TOPS scalar).
 */
export const DEFAULT_RATES: Record<
  'software' | 'hardware',
  Record<Arm, Omit<Rate, 'basis' | 'compileMs'>>
> = {
  software: {
    scalar: { macsPerMs: 5e4, bytesPerMs: 2e6 },
    dp4a: { macsPerMs: 5e4, bytesPerMs: 2e6 },
    'subgroup-matrix': { macsPerMs: 5e4, bytesPerMs: 2e6 },
  },
  hardware: {
    scalar: { macsPerMs: 1e8, bytesPerMs: 5e7 },
    dp4a: { macsPerMs: 2e8, bytesPerMs: 5e7 },
    'subgroup-matrix': { macsPerMs: 5e8, bytesPerMs: 5e7 },
  },
};

/** The main thread's and worker's CPU work per run (the oracle and the full-precision GEMM), MACs/ms. */
export const CPU_MACS_PER_MS = 2e5;

/** A measured rate of one family on one arm (from a run or a tuner hunt on this device). */
export interface MeasuredRate {
  kernel: string;
  arm: Arm;
  macsPerMs: number;
  basis: string;
  /**
   * The run was too short to show the rate (its time mostly dispatch and timer overhead): the rate is
   * only a floor, and the default counts where it is higher.
   */
  floor?: boolean;
  /** What compiling its plan took, ms, when it was compiled for it. */
  compileMs?: number;
}

/** A run shorter than this (ms per kernel run) measures overhead more than the rate. */
export const INFORMATIVE_MS = 20;

/**
 * The rate a finished run shows: its multiply-adds over the plan's timed ms per run, else over the
 * correctness run's wall time (which includes submit and readback: slower, so estimates stay on the
 * safe side).
 * @example rateOfRun('mmq-q4k-rt', 'dp4a', { macs: 1e9, bytes: 0 }, 10, undefined)?.macsPerMs === 1e8
 */
export function rateOfRun(
  kernel: string,
  arm: Arm,
  work: Work,
  wallMs: number,
  timedMs: number | undefined,
  compileMs?: number,
): MeasuredRate | undefined {
  const ms =
    // Stryker disable next-line ConditionalExpression: undefined > 0 is false; the check only narrows the type
    timedMs !== undefined &&
    // (one operand a line, so that the disable above covers the type check alone)
    timedMs > 0
      ? timedMs
      : wallMs;
  if (!(ms > 0) || !(work.macs > 0)) return undefined;
  const how =
    // Stryker disable next-line ConditionalExpression: undefined > 0 is false; the check only narrows the type
    timedMs !== undefined &&
    // (as above)
    timedMs > 0
      ? 'timed'
      : 'wall-clock';
  const rate: MeasuredRate = {
    kernel,
    arm,
    macsPerMs: work.macs / ms,
    basis: `the last ${how} ${kernel} ${arm} run here`,
    // The undefined check only narrows the type (undefined > 0 is false). The disable also covers this
    // line's other conditional mutants, which the estimate tests kill.
    // Stryker disable next-line ConditionalExpression: see above
    ...(compileMs !== undefined && compileMs > 0 ? { compileMs } : {}),
  };
  return ms < INFORMATIVE_MS ? { ...rate, floor: true } : rate;
}

/**
 * The rate of a tuner hunt's measured configs (their median ms on the hunt's shape), per arm.
 * @example rateOfHunt('mmq-q4k-tile', { macs: 2e9, bytes: 0 }, [{ arm: 'dp4a', ms: 4, verdict: 'measured' }])
 */
export function rateOfHunt(
  kernel: string,
  work: Work,
  entries: readonly { arm: Arm; ms: number; verdict: string; phases?: { compileMs: number } }[],
): MeasuredRate[] {
  const byArm = new Map<Arm, { ms: number[]; compile: number[] }>();
  for (const e of entries)
    if (e.verdict === 'measured' && Number.isFinite(e.ms) && e.ms > 0) {
      const a = byArm.get(e.arm) ?? { ms: [], compile: [] };
      a.ms.push(e.ms);
      if (e.phases && e.phases.compileMs > 0) a.compile.push(e.phases.compileMs);
      byArm.set(e.arm, a);
    }
  const median = (v: readonly number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  return [...byArm].map(([arm, a]) => {
    const compileMs = median(a.compile);
    return {
      kernel,
      arm,
      macsPerMs: work.macs / (median(a.ms) ?? 1),
      basis: `the tuner's ${kernel} ${arm} hunt here`,
      ...(compileMs !== undefined ? { compileMs } : {}),
    };
  });
}

/**
 * The rate to estimate with: this family's on this arm, else the arm's default for the adapter's kind
 * (another family's rate says little: families run the same work 50x apart).
 */
export function rateFor(
  measured: readonly MeasuredRate[],
  kernel: string,
  arm: Arm,
  software: boolean,
): Rate {
  const fallback = DEFAULT_RATES[software ? 'software' : 'hardware'][arm];
  const mine = measured.filter((r) => r.arm === arm && r.kernel === kernel);
  const own = mine.at(-1);
  // Compiling: this family's last measured, on any arm, else the adapter kind's default.
  const compileMs =
    measured.filter((r) => r.kernel === kernel && r.compileMs !== undefined).at(-1)?.compileMs ??
    DEFAULT_COMPILE_MS[software ? 'software' : 'hardware'];
  if (own && !(own.floor && own.macsPerMs < fallback.macsPerMs))
    return { macsPerMs: own.macsPerMs, bytesPerMs: fallback.bytesPerMs, compileMs, basis: own.basis };
  return {
    ...fallback,
    compileMs,
    basis: `no ${kernel} ${arm} run measured here yet: a cautious default for ${software ? 'a CPU adapter' : 'a GPU'}`,
  };
}

/** How a run would be made (what its time is made of besides one kernel run). */
export interface RunShape {
  timed: boolean;
  instrument: boolean;
  targetMs: number;
  batches: number;
  /** Passes of the plan (each is timed alone too when there are several). */
  passes: number;
  /** A CPU adapter (SwiftShader): its batches disagree and double, and each costs more than it times. */
  software?: boolean;
  /** Its pipelines were compiled here already (the same kernel ran): no compiling. */
  compiled?: boolean;
}

/** An action's predicted cost, ms: with the timing as asked, and without it. */
export interface Estimate {
  ms: number;
  untimedMs: number;
  /** What of `ms` is compiling pipelines (the same whatever the shape). */
  compileMs: number;
  /** One kernel run, ms. */
  kernelMs: number;
  basis: string;
}

/** Uploading, reading back, the worker's bookkeeping: what a run costs whatever its size, ms. */
const FIXED_MS = 300;

/**
 * Timed batches per batch asked, and wall ms per timed ms, on each kind of adapter. A CPU adapter's
 * batches disagree by more than BATCH_SPREAD_LIMIT every time, so the timing doubles them, and a batch
 * there costs about 1.3x its timed span (SwiftShader, 2 cores: 12 batches of 6 asked in every one of 8
 * runs of 4 families, 1.2-1.4x); a GPU's agree far more often.
 */
const TIMING_COST = { software: { batches: 2, wall: 1.3 }, hardware: { batches: 1.25, wall: 1.05 } };

/**
 * Predict a run: compiling its pipelines (and the ownership-recording variant's) unless they were
 * compiled here already; one kernel run is the slower of its multiply-adds and its bytes at the rate; the
 * correctness run (and the ownership-recording one), the CPU oracle, and each timing (the plan, and each
 * pass of a plan of several): a probe run, then its batches, each at least the target and one run,
 * doubled where the adapter's batches disagree.
 * @example estimate(workOf(catalog, config), rateFor([], config.kernel, config.arm, true), shape).ms
 */
export function estimate(work: Work, rate: Rate, run: RunShape): Estimate {
  const kernelMs = Math.max(work.macs / rate.macsPerMs, work.bytes / rate.bytesPerMs);
  const cpuMs = (2 * work.macs) / CPU_MACS_PER_MS;
  const compileMs = run.compiled ? 0 : rate.compileMs * (run.instrument ? 2 : 1);
  const untimedMs = FIXED_MS + compileMs + cpuMs + kernelMs * (run.instrument ? 2 : 1);
  const steps = run.passes > 1 ? run.passes + 1 : 1;
  const cost = TIMING_COST[run.software ? 'software' : 'hardware'];
  const batchMs = Math.max(run.targetMs, kernelMs) * cost.wall;
  const timingMs = steps * (kernelMs + run.batches * cost.batches * batchMs);
  return {
    ms: untimedMs + (run.timed ? timingMs : 0),
    untimedMs,
    compileMs,
    kernelMs,
    basis: `${work.macs.toExponential(2)} multiply-adds and ${(work.bytes / 1e6).toPrecision(3)} MB at ${(rate.macsPerMs * 1e3).toExponential(1)} multiply-adds/s (${rate.basis}), one run about ${formatMs(kernelMs)}; timing runs ${run.batches} batches${steps > 1 ? ` for the plan and each of its ${run.passes} passes` : ''}`,
  };
}

/**
 * A sweep's cost: each point a timed run without ownership recording (the sweep's own way), summed.
 * @example estimateSweep(points.map((p) => workOf(catalog, p)), rate, { targetMs: 25, batches: 6, passes: 1 }).ms
 */
export function estimateSweep(
  works: readonly Work[],
  rate: Rate,
  run: Omit<RunShape, 'timed' | 'instrument'>,
): Estimate {
  const each = works.map((w) => estimate(w, rate, { ...run, timed: true, instrument: false }));
  const ms = each.reduce((a, e) => a + e.ms, 0);
  return {
    ms,
    untimedMs: each.reduce((a, e) => a + e.untimedMs, 0),
    compileMs: each.reduce((a, e) => a + e.compileMs, 0),
    kernelMs: Math.max(0, ...each.map((e) => e.kernelMs)),
    basis: `${works.length} points, the largest run about ${formatMs(Math.max(0, ...each.map((e) => e.kernelMs)))} at ${(rate.macsPerMs * 1e3).toExponential(1)} multiply-adds/s (${rate.basis})`,
  };
}

/** How a tuning hunt is made: what its time is made of (the tuner's search, finalists and claim). */
export interface HuntShape {
  /** Configs the search measures: population x generations, at most the space's feasible ones. */
  configs: number;
  /** Timed batches of each measurement. */
  batches: number;
  /** GPU time per timed batch of a search measurement, ms (a finalist's is 4x). */
  measureMs: number;
  /** Configs re-timed after the search (the fastest few and the seeds). */
  finalists: number;
  /** Configs checked on their whole output before one is stored (at most). */
  verified: number;
  /** Interleaved rounds of the claim, the incumbent and the winner timed once each per round. */
  claimRounds: number;
  software?: boolean;
}

/** A hunt config's bookkeeping besides compiling and its runs (its inputs stay resident), ms. */
const HUNT_CONFIG_MS = 30;

/** The end game of the worker's hunt (src/workers/tune/handler.ts): winner checks and claim rounds. */
const HUNT_VERIFIED = 4;
const HUNT_CLAIM_ROUNDS = 3;
/**
 * The search's own numbers (DEFAULT_EVOLUTION's finalists and elitism: a test keeps them equal; this
 * module stays light for the app's main thread), and its seeds when not known.
 */
export const HUNT_SEARCH = { finalists: 3, elitism: 2, seeds: 2 } as const;

/**
 * The configs a hunt measures at most: the first generation, then each later one's children (all but the
 * elite), never more than the space's feasible configs (each is measured at most once).
 * @example plannedConfigs({ population: 8, generations: 4 }, 1000) // 26
 */
export function plannedConfigs(
  evo: { population: number; generations: number },
  feasible = Infinity,
): number {
  const elitism = Math.min(HUNT_SEARCH.elitism, evo.population - 1);
  return Math.min(feasible, evo.population + (evo.generations - 1) * (evo.population - elitism));
}

/**
 * The shape of a hunt of `evo`: its configs (plannedConfigs, at most the space's `feasible` when known),
 * its finalists (the search's few, the incumbent and `seeds` when known) and the worker's end game.
 * @example estimateHunt(work, rate, huntShape(DEFAULT_EVO, { feasible: 198, seeds: 3, software: true }))
 */
export function huntShape(
  evo: { population: number; generations: number; batches: number; measureMs: number },
  o: { feasible?: number; seeds?: number; software?: boolean } = {},
): HuntShape {
  return {
    configs: plannedConfigs(evo, o.feasible),
    batches: evo.batches,
    measureMs: evo.measureMs,
    finalists: HUNT_SEARCH.finalists + 1 + (o.seeds ?? HUNT_SEARCH.seeds),
    verified: HUNT_VERIFIED,
    claimRounds: HUNT_CLAIM_ROUNDS,
    ...(o.software !== undefined ? { software: o.software } : {}),
  };
}

/**
 * A hunt's cost at the base config's work: each config compiled, gated and timed, the finalists
 * re-timed with 4x the batch, the winner checked on its whole output (the full oracle on the CPU) and
 * incumbent and winner re-timed interleaved. Configs the static check rejects cost nothing, so this is
 * an upper bound; configs differ in speed, and the rate is the family's on this arm.
 * @example estimateHunt(workOf(catalog, base), rate, huntShape(DEFAULT_EVO)).ms
 */
export function estimateHunt(work: Work, rate: Rate, hunt: HuntShape): Estimate {
  const kernelMs = Math.max(work.macs / rate.macsPerMs, work.bytes / rate.bytesPerMs);
  const cost = TIMING_COST[hunt.software ? 'software' : 'hardware'];
  const timing = (targetMs: number, batches: number) =>
    kernelMs + batches * cost.batches * Math.max(targetMs, kernelMs) * cost.wall;
  const { configs } = hunt;
  const compileMs = configs * rate.compileMs;
  const searchMs = configs * (HUNT_CONFIG_MS + kernelMs + timing(hunt.measureMs, hunt.batches));
  const finalsMs = hunt.finalists * timing(4 * hunt.measureMs, hunt.batches);
  const verifyMs = hunt.verified * kernelMs + (2 * work.macs) / CPU_MACS_PER_MS;
  const claimMs = hunt.claimRounds * 2 * timing(4 * hunt.measureMs, 1);
  return {
    ms: compileMs + searchMs + finalsMs + verifyMs + claimMs,
    untimedMs: compileMs + configs * (HUNT_CONFIG_MS + kernelMs) + verifyMs,
    compileMs,
    kernelMs,
    basis: `${configs} configs, each compiled, checked and timed in ${hunt.batches} batches of ${hunt.measureMs} ms, then ${hunt.finalists} finalists and ${hunt.claimRounds} claim rounds re-timed, the winner checked on its whole output; one run about ${formatMs(kernelMs)} at ${(rate.macsPerMs * 1e3).toExponential(1)} multiply-adds/s (${rate.basis})`,
  };
}

/**
 * What the guard weighs of an estimate: all but compiling, which is the same whatever the shape (a
 * smaller one does not avoid it) and bounded per kernel; the rest grows with the shape and, once sent,
 * cannot be taken back.
 * @example guardedMs(estimate(work, rate, shape)) > CONFIRM_MS // ask first
 */
export const guardedMs = (e: Pick<Estimate, 'ms' | 'compileMs'>): number => e.ms - e.compileMs;

/** A duration in words: ms below a second, then s, then min. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms.toPrecision(2)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}
