// The worker's 'run' request: build (or take the built) problem, prepare its plan with the user's edited
// WGSL in place of the main pass, run it once, time it when asked (the whole plan, then each pass of a
// split plan alone), check the output against the family's oracle, record the ownership with the
// instrumented variant, and post the outcome. The core (./core.ts) supplies the device, the build and
// the tensor read; cancellation is checked at every stage boundary (progress) and between timed batches.
import { CancelledError, checkCancelled } from '../kernels/cancel';
import { judge } from '../kernels/compare';
import { ShapeError, type BuiltProblem, type FamilyCatalog, type OwnershipPhase } from '../kernels/family';
import { decodeOwnership, splitHostSuffix, type OwnershipMap } from '../kernels/gpu/instrument';
import { planLimitProblems, type KernelPlan } from '../kernels/gpu/plan';
import { preparePlan, WgslCompileError, type PreparedPlan, type WgslMessage } from '../kernels/gpu/runner';
import { SUBMIT_BUDGET_MS } from '../kernels/gpu/gridSlice';
import { clockWarmMs } from '../kernels/gpu/timing';
import { planTraffic } from '../kernels/perf/traffic';
import type { OpenedDevice } from './runtime/device';
import type { TensorWeight } from './models';
import type { OwnershipBuffers, RunOutcome, RunTiming, WorkerRequest, WorkerResponse } from './protocol';

export type RunRequest = Extract<WorkerRequest, { type: 'run' }>;

/** What a stage waits on, as the 'progress' message says it. */
export type Busy = { busy: 'cpu' } | { busy: 'gpu'; gpuMs?: number };
const CPU: Busy = { busy: 'cpu' };
/** GPU work of about `ms` in flight (unknown: undefined). */
const gpu = (ms: number | undefined): Busy =>
  ms !== undefined && Number.isFinite(ms) ? { busy: 'gpu', gpuMs: ms } : { busy: 'gpu' };

/** What the run handler gets from the core. */
export interface RunContext {
  dev: OpenedDevice;
  family: FamilyCatalog;
  /** The real tensor the config names, read from its file (undefined for generated data). */
  weight(): Promise<TensorWeight | undefined>;
  /** The config built on this device (memoized by the core), with the tensor as its weight. */
  build(tensor: TensorWeight | undefined): BuiltProblem;
  /**
   * Report a stage (`busy`: what it waits on; see the protocol's 'progress'); throws CancelledError when
   * the request was cancelled.
   */
  progress(stage: string, fraction: number, busy?: Busy): void;
  isCancelled(): boolean;
  post(msg: WorkerResponse): void;
}

/** A message that points past the user's text lies in the host suffix: say so, keep the position. */
export function noteSuffixMessages(messages: readonly WgslMessage[], editorLines: number): WgslMessage[] {
  return messages.map((m) =>
    m.lineNum > editorLines
      ? {
          ...m,
          message: `in host suffix (line ${m.lineNum - editorLines} after your code): ${m.message} -- the suffix defines set_owner/store_out and stores into the kernel's output array; keep those names and types`,
        }
      : m,
  );
}

/** Number of editor lines of a text (the suffix starts on the line after the last one). */
export function lineCount(text: string): number {
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

function typedOutput(
  raw: ArrayBuffer,
  type: KernelPlan['outputType'],
  len: number,
): Float32Array | Int32Array {
  if (raw.byteLength < len * 4)
    throw new Error(`output buffer has ${raw.byteLength / 4} elements, expected ${len}`);
  const copy = raw.slice(0, len * 4);
  return type === 'f32' ? new Float32Array(copy) : new Int32Array(copy);
}

/** Copies: results are transferred (detached) and a built problem memoizes its maps and oracle. */
function toBuffers(map: OwnershipMap): OwnershipBuffers {
  return {
    rows: map.rows,
    cols: map.cols,
    count: map.count.slice(),
    workgroup: map.workgroup.slice(),
    plane: map.plane.slice(),
    lane: map.lane.slice(),
  };
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

const warning = (text: string): WgslMessage => ({
  type: 'warning',
  message: text,
  lineNum: 0,
  linePos: 0,
  offset: 0,
  length: 0,
});

/** The whole plan's timing and, for a plan of several passes, each pass alone. */
async function timePlan(
  p: PreparedPlan,
  asked: NonNullable<RunRequest['timing']>,
  estimateMs: number,
  ctx: RunContext,
): Promise<RunTiming> {
  const { plan } = p;
  const passes = plan.passes.length;
  const steps = passes > 1 ? passes + 1 : 1;
  const base = { ...asked, warmMs: clockWarmMs(ctx.dev.caps), cancelled: () => ctx.isCancelled() };
  // A batch is about the target long; a run past the submission budget is timed in slices of it.
  const inFlight = gpu(
    Math.min(Math.max(asked.targetMs, estimateMs), Math.max(asked.targetMs, SUBMIT_BUDGET_MS)),
  );
  const at = (step: number) => (done: number, planned: number) =>
    ctx.progress(
      `timing${passes > 1 ? (step === 0 ? ' the whole plan' : ` pass ${step} of ${passes}`) : ''}: batch ${done} of ${planned}`,
      0.2 + (0.4 * (step + done / planned)) / steps,
      inFlight,
    );
  ctx.progress('timing', 0.2, inFlight);
  const timing: RunTiming = { ...(await p.time({ ...base, estimateMs, onBatch: at(0) })) };
  if (passes > 1) {
    timing.passes = [];
    for (let i = 0; i < passes; i++) {
      const t = await p.time({ ...base, passes: i, warmMs: 0, onBatch: at(i + 1) });
      timing.passes.push({ label: plan.passes[i]!.label, ms: t.ms, coarse: t.coarse, samples: t.samples });
    }
  }
  return timing;
}

/**
 * The ownership the instrumented variant records (with the user's edit in its main pass), or undefined
 * with a warning pushed when it cannot be recorded: the kernel itself ran.
 */
async function recordOwnership(
  b: BuiltProblem,
  ctx: RunContext,
  userText: string | undefined,
  warnings: WgslMessage[],
  estimateMs: number,
): Promise<OwnershipBuffers | undefined> {
  const iplan = b.instrumentedPlan();
  const over = planLimitProblems(iplan, ctx.dev.caps.limits);
  if (over.length) {
    warnings.push(
      warning(
        `ownership not recorded: the recording variant needs more than this adapter allows (${over.join('; ')})`,
      ),
    );
    return undefined;
  }
  const isuffix = splitHostSuffix(iplan.passes[iplan.mainPass]!.wgsl).suffix;
  let ip: PreparedPlan | undefined;
  try {
    ip = await preparePlan(ctx.dev.device, iplan, {
      ...(userText !== undefined ? { wgslOverride: { [iplan.mainPass]: userText + isuffix } } : {}),
      cancelled: ctx.isCancelled,
    });
    await ip.run({
      estimateMs,
      onSubmit: (f, ms) => ctx.progress('instrumented run (recording ownership)', 0.78 + 0.14 * f, gpu(ms)),
    });
    return toBuffers(decodeOwnership(await ip.read(b.ownerBuffer), b.facts.rows, b.facts.cols));
  } catch (e) {
    if (e instanceof CancelledError) throw e;
    // The kernel itself ran; only the recording variant failed (e.g. an edit took the debug binding).
    warnings.push(warning(`ownership recording failed: ${message(e)}`));
    return undefined;
  } finally {
    ip?.destroy();
  }
}

/**
 * Serve a 'run' request: posts 'progress'* then 'run-result', or 'compile-error' when the main pass (the
 * user's text) does not compile. Throws ShapeError, CancelledError or a GPU error for the core to post.
 * @example await serveRun(req, { dev, family, weight, build, progress, isCancelled, post });
 */
export async function serveRun(req: RunRequest, ctx: RunContext): Promise<void> {
  const { id, config } = req;
  ctx.progress('preparing inputs', 0.02, CPU);
  const problems = ctx.family.validate(config, ctx.dev.caps);
  if (problems.length) throw new ShapeError(problems.join('; '));
  if (config.data.source === 'tensor') ctx.progress('reading the tensor', 0.03, CPU);
  const tensor = await ctx.weight();
  const b = ctx.build(tensor);
  const { plan, facts } = b;
  const main = plan.mainPass;
  const { kernel, suffix } = splitHostSuffix(plan.passes[main]!.wgsl);
  const edited = req.wgsl !== undefined && req.wgsl !== kernel;
  const userText = edited ? req.wgsl! : kernel;
  ctx.progress('compiling', 0.05, gpu(undefined));
  let p: PreparedPlan;
  const compileT0 = performance.now();
  try {
    p = await preparePlan(ctx.dev.device, plan, {
      ...(edited ? { wgslOverride: { [main]: userText + suffix } } : {}),
      cancelled: ctx.isCancelled,
    });
  } catch (e) {
    if (e instanceof WgslCompileError && e.pass === plan.passes[main]!.label) {
      const editorLines = lineCount(userText);
      ctx.post({
        type: 'compile-error',
        id,
        messages: noteSuffixMessages(e.messages, editorLines),
        code: e.code,
        editorLines,
      });
      return;
    }
    throw e;
  }
  const compileMs = performance.now() - compileT0;
  const warnings: WgslMessage[] = [];
  let output: Float32Array | Int32Array;
  let timing: RunTiming | undefined;
  let runWallMs: number;
  try {
    const t0 = performance.now();
    await p.run({ onSubmit: (f, ms) => ctx.progress('running', 0.15 + 0.05 * f, gpu(ms)) });
    runWallMs = performance.now() - t0;
    output = typedOutput(await p.read(plan.output), plan.outputType, facts.rows * facts.cols);
    if (req.timing) timing = await timePlan(p, req.timing, runWallMs, ctx);
  } finally {
    p.destroy();
  }
  ctx.progress('checking against the oracle', 0.62, CPU);
  const oracle = facts.oracle().slice();
  const verdict = judge(output, oracle, facts.gate);
  ctx.progress('full-precision reference', 0.7, CPU);
  const fullPrecision = facts.fullPrecision?.().slice();
  let ownership: OwnershipBuffers | undefined;
  if (req.instrument) {
    ownership = await recordOwnership(b, ctx, edited ? userText : undefined, warnings, runWallMs);
  }
  ctx.progress('analytic ownership', 0.92, CPU);
  const analyticOwnership: Partial<Record<OwnershipPhase, OwnershipBuffers>> = {};
  for (const phase of facts.phases) analyticOwnership[phase] = toBuffers(facts.analyticOwnership(phase));
  const outcome: RunOutcome = {
    config: b.config,
    rows: facts.rows,
    cols: facts.cols,
    output,
    oracle,
    verdict,
    analyticOwnership,
    warnings,
    edited,
    runWallMs,
    compileMs,
    ops: facts.ops,
    arithmetic: facts.arithmetic ?? ctx.family.arithmetic,
    traffic: planTraffic(plan, facts.ops),
  };
  if (fullPrecision) outcome.fullPrecision = fullPrecision;
  if (tensor?.read) outcome.tensorRead = tensor.read;
  if (facts.outputTile) outcome.outputTile = { ...facts.outputTile };
  if (ownership) outcome.ownership = ownership;
  if (timing) {
    outcome.timing = timing;
    // The op's throughput: a plan's pre-passes are part of what it costs.
    if (timing.ms > 0)
      outcome.throughput = {
        value: facts.ops / (timing.ms * 1e-3) / 1e12,
        unit: outcome.arithmetic === 'int8' ? 'int8 TOPS' : 'TFLOP/s',
      };
  }
  checkCancelled(ctx.isCancelled);
  ctx.post({ type: 'run-result', id, outcome });
}
