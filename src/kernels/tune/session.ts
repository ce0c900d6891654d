// Configs of one problem on a GPUDevice, for the tuner and the bench: every config is built by its family
// (the same build() the app runs), prepared and timed by the one runner, on inputs uploaded once with
// cold weight banks, and gated against the family's oracle (on a row sample for large shapes, every
// other element still required to be written). A tuned winner is then held to the family's own gate on
// its whole output (verify). Kept out of ./index.ts, the pure tuner: this is its GPU side, for the
// worker's tune handler and the bench.
import { checkCancelled } from '../cancel';
import { judge, type Gate, type Verdict } from '../compare';
import {
  ShapeError,
  type BuiltProblem,
  type KernelFamily,
  type ProblemFacts,
  type RunConfig,
  type TuningSearch,
  type WeightOperand,
} from '../family';
import { resolveConfig } from '../arms';
import type { AdapterCaps } from '../gpu/caps';
import { preparePlan, uploadResident, type PreparedPlan, type ResidentBuffers } from '../gpu/runner';
import type { Timing } from '../gpu/timing';
import { planTraffic, totalTraffic } from '../perf';
import { PASS, reject, type Evaluator, type Measurement, type StaticVerdict } from './evaluator';
import { gateRows } from './gate';
import type { Config } from '../space';

export interface PlanEvaluatorOptions {
  /** Cold weight banks rotated per timed run (>= 1). */
  banks: number;
  /** Timed batches per measurement; the fastest counts. */
  batches: number;
  /** Untimed work before each timing on a hardware GPU (clockWarmMs), 0 on a CPU adapter. */
  warmMs: number;
  /** CPU oracle multiply-adds before the search's gate samples rows (default ORACLE_MAC_BUDGET). */
  oracleMacBudget?: number;
  cancelled?: () => boolean;
  /** The real tensor the problem's data names (read by the worker core). */
  weight?: WeightOperand;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Output to a typed view of the plan's element type. */
function typed(
  raw: ArrayBuffer,
  facts: ProblemFacts,
  like: Float32Array | Int32Array,
): Float32Array | Int32Array {
  const len = facts.rows * facts.cols;
  return like instanceof Int32Array ? new Int32Array(raw, 0, len) : new Float32Array(raw, 0, len);
}

/** A gated, timed config of a problem session. */
export interface SessionRun {
  verdict: Verdict;
  /** Output elements nothing wrote (the output starts NaN-filled). */
  unwritten: number;
  /** The whole plan's timing (absent when the gate failed). */
  timing?: Timing;
  /** Each pass alone (plans of several passes, when asked). */
  passes?: { label: string; ms: number }[];
  /** The config's own facts (its gate, arithmetic and weight bytes: a route or arm may differ). */
  facts: ProblemFacts;
  /** Wall ms of preparing the plan (compiles), its gated run, and its timing. */
  phases: { compileMs: number; verifyMs: number; benchmarkMs: number };
}

/**
 * One problem (a family, its shape and data) on a device, for configs that differ in tile, staging or
 * arm: the inputs are uploaded once with cold weight banks and bound by every config, each config is
 * built by its family and prepared by the one runner, and gated against the family's oracle on the same
 * rows (a sample for large shapes). The tuner's evaluator and the bench run through it.
 * @example
 * const s = new ProblemSession(device, caps, family, base, { banks: 4, warmMs: clockWarmMs(caps) });
 * const r = await s.run(config, { targetMs: 25, batches: 6 }); s.destroy();
 */
export class ProblemSession {
  /** The base config's facts (its shape; every config of the problem has the same output). */
  readonly facts: ProblemFacts;
  /** Output rows the gate checks (undefined: every row). */
  readonly sampled: number[] | undefined;
  /** Per data key (ProblemFacts.dataKey): the inputs uploaded once, and the oracle of the gate's rows. */
  private readonly data = new Map<
    string,
    { facts: ProblemFacts; oracle: Float32Array | Int32Array; resident?: ResidentBuffers }
  >();
  private destroyed = false;

  constructor(
    readonly device: GPUDevice,
    readonly caps: AdapterCaps,
    readonly family: KernelFamily,
    base: RunConfig,
    private readonly opts: {
      banks: number;
      warmMs: number;
      oracleMacBudget?: number;
      cancelled?: () => boolean;
      weight?: WeightOperand;
    },
  ) {
    if (!Number.isInteger(opts.banks) || opts.banks < 1)
      throw new RangeError(`banks = ${opts.banks}: need >= 1`);
    // Configs of one data key share their data (the families memoize it): one build's facts serve them.
    this.facts = this.build(base).facts;
    this.sampled = gateRows(this.facts.rows, this.facts.ops / 2, opts.oracleMacBudget);
    this.dataOf(this.facts);
  }

  private dataOf(facts: ProblemFacts) {
    const key = facts.dataKey ?? '';
    let d = this.data.get(key);
    if (!d) this.data.set(key, (d = { facts, oracle: facts.oracle(this.sampled) }));
    return d;
  }

  build(config: RunConfig): BuiltProblem {
    return this.family.build(resolveConfig(config, this.caps), this.caps, this.opts.weight);
  }

  /** Why a config cannot run here (the family's validation, then the plan's limits), or undefined. */
  problems(config: RunConfig): string | undefined {
    const problems = this.family.validate(config, this.caps);
    if (problems.length) return problems.join('; ');
    try {
      this.build(config);
    } catch (e) {
      return message(e);
    }
    return undefined;
  }

  private async prepare(config: RunConfig) {
    if (this.destroyed) throw new Error('problem session used after destroy()');
    const built = this.build(config);
    const d = this.dataOf(built.facts);
    // The inputs are uploaded once per data key (from its first config's plan) and bound by every config.
    d.resident ??= uploadResident(
      this.device,
      built.plan.buffers.filter((b) => b.data && b.kind !== 'uniform'),
      { banks: this.opts.banks, label: this.family.id },
    );
    const cancelled = this.opts.cancelled;
    const p = await preparePlan(this.device, built.plan, {
      resident: d.resident,
      ...(cancelled ? { cancelled } : {}),
    });
    return { p, d, own: built.facts };
  }

  /** Run once into a NaN-filled output, judge the gate's rows under `gate`, count unwritten elements. */
  private async gate(
    p: PreparedPlan,
    d: { facts: ProblemFacts; oracle: Float32Array | Int32Array },
    gate: Gate,
  ): Promise<{ verdict: Verdict; unwritten: number }> {
    await p.run();
    const oracle = d.oracle;
    const out = typed(await p.read(p.plan.output), d.facts, oracle);
    const { cols } = d.facts;
    let unwritten = 0;
    if (out instanceof Float32Array)
      for (let i = 0; i < out.length; i++) if (!Number.isFinite(out[i]!)) unwritten++;
    let verdict: Verdict;
    if (!this.sampled) verdict = judge(out, oracle, gate);
    else {
      const picked =
        out instanceof Int32Array ? new Int32Array(oracle.length) : new Float32Array(oracle.length);
      this.sampled.forEach((r, i) => picked.set(out.subarray(r * cols, (r + 1) * cols), i * cols));
      verdict = judge(picked, oracle, gate);
    }
    // Rows the oracle skips must still have been written.
    if (unwritten)
      verdict = {
        ...verdict,
        pass: false,
        relToMax: Infinity,
        mismatches: Math.max(verdict.mismatches, unwritten),
      };
    return { verdict, unwritten };
  }

  /**
   * Gate a config (under `gate`, default the config's own family gate) and, when it passes, time its
   * whole plan and, with `passes`, each pass alone.
   */
  async run(
    config: RunConfig,
    timing: { targetMs: number; batches: number; passes?: boolean; maxRuns?: number },
    gate?: Gate,
  ): Promise<SessionRun> {
    const t0 = performance.now();
    const { p, d, own } = await this.prepare(config);
    const t1 = performance.now();
    try {
      // The config's own gate: configs sharing a data key may differ in it (coopmat's scalar and matrix arm).
      const gated = await this.gate(p, d, gate ?? own.gate);
      const t2 = performance.now();
      const phases = { compileMs: t1 - t0, verifyMs: t2 - t1, benchmarkMs: 0 };
      const g = { ...gated, facts: own, phases };
      if (!g.verdict.pass) return g;
      checkCancelled(this.opts.cancelled);
      const t = {
        targetMs: timing.targetMs,
        batches: timing.batches,
        ...(timing.maxRuns ? { maxRuns: timing.maxRuns } : {}),
        warmMs: this.opts.warmMs,
        ...(this.opts.cancelled ? { cancelled: this.opts.cancelled } : {}),
      };
      const whole = await p.time(t);
      phases.benchmarkMs = performance.now() - t2;
      if (!timing.passes || p.plan.passes.length < 2) return { ...g, timing: whole };
      const passes: { label: string; ms: number }[] = [];
      for (let i = 0; i < p.plan.passes.length; i++)
        passes.push({
          label: p.plan.passes[i]!.label,
          ms: (await p.time({ ...t, passes: i, warmMs: 0 })).ms,
        });
      return { ...g, timing: whole, passes };
    } finally {
      p.destroy();
    }
  }

  /** A config against its family's own gate on its whole output (what a tuned winner must pass). */
  async verify(config: RunConfig): Promise<Verdict> {
    const { p, d, own } = await this.prepare(config);
    try {
      await p.run();
      const full = d.facts.oracle();
      return judge(typed(await p.read(p.plan.output), d.facts, full), full, own.gate);
    } finally {
      p.destroy();
    }
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const d of this.data.values()) d.resident?.destroy();
  }
}

/**
 * A family's search fitness on a device: a problem session over the search's base, each choice applied.
 * Call destroy() when done: it frees the resident inputs.
 * @example
 * const ev = new PlanEvaluator(device, caps, family, family.search!(base, caps), { banks: 2, batches: 3, warmMs: 0 });
 * const report = await new Evolution({ population: 8, generations: 2, measureMs: 5 }).run(ev.search.space, ev, 7);
 */
export class PlanEvaluator implements Evaluator {
  private readonly session: ProblemSession;
  private worst = 0;
  private lastTiming: 'timestamp' | 'wall' | undefined;

  constructor(
    readonly device: GPUDevice,
    readonly caps: AdapterCaps,
    readonly family: KernelFamily,
    readonly search: TuningSearch,
    private readonly opts: PlanEvaluatorOptions,
  ) {
    if (!Number.isInteger(opts.batches) || opts.batches < 1)
      throw new RangeError(`batches = ${opts.batches}: need >= 1`);
    this.session = new ProblemSession(device, caps, family, search.apply(search.incumbent), opts);
  }

  /** The worst rel_to_max any dispatched config showed (the correctness witness). */
  get worstRel(): number {
    return this.worst;
  }

  get timing(): 'timestamp' | 'wall' | undefined {
    return this.lastTiming;
  }

  /** Operations of one run of the problem (2mnk). */
  get ops(): number {
    return this.session.facts.ops;
  }

  /** Bytes one run of a choice's plan moves (../perf/traffic.ts); undefined when it cannot be built. */
  bytesOf(cfg: Config): number | undefined {
    try {
      const built = this.session.build(this.search.apply(cfg));
      return totalTraffic(planTraffic(built.plan, built.facts.ops)).bytes;
    } catch {
      return undefined;
    }
  }

  /** Output rows the search's gate checks (undefined: every row). */
  get gatedRows(): number | undefined {
    return this.session.sampled?.length;
  }

  /** The config a choice stands for. */
  configOf(cfg: Config): RunConfig {
    return this.search.apply(cfg);
  }

  /** Free: the family's validation and the plan's adapter limits, before anything compiles. */
  staticCheck(cfg: Config): StaticVerdict {
    const why = this.session.problems(this.search.apply(cfg));
    return why === undefined ? PASS : reject(why);
  }

  async measure(cfg: Config, batchMs: number): Promise<Measurement> {
    const r = await this.session.run(
      this.search.apply(cfg),
      { targetMs: batchMs, batches: this.opts.batches },
      this.search.gate,
    );
    const v = r.verdict;
    this.worst = Math.max(this.worst, v.relToMax);
    if (!r.timing) {
      const g = this.search.gate;
      const tol = g.kind === 'rel-to-max' ? g.tol.toExponential(0) : 'bit-exact';
      return {
        ms: Infinity,
        worstRel: v.relToMax,
        reason: `rel_to_max ${v.relToMax.toExponential(2)} > ${tol} gate (${v.mismatches} elements off${this.gatedRows ? ` on ${this.gatedRows} sampled rows` : ''})`,
      };
    }
    this.lastTiming = r.timing.method;
    return {
      ms: r.timing.ms,
      worstRel: v.relToMax,
      timing: r.timing.method,
      samples: r.timing.samples,
      phases: r.phases,
    };
  }

  /** A choice against the family's own gate on its whole output. */
  verify(cfg: Config): Promise<Verdict> {
    return this.session.verify(this.search.apply(cfg));
  }

  destroy(): void {
    this.session.destroy();
  }
}

/**
 * A family's search, or ShapeError when it declares none.
 * @example const search = searchOf(family, base, caps);
 */
export function searchOf(family: KernelFamily, base: RunConfig, caps: AdapterCaps): TuningSearch {
  if (!family.tuning || !family.search) throw new ShapeError(`${family.title} has no tuning`);
  return family.search(base, caps);
}
