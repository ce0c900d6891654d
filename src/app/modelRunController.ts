// The model view's wiring: a model's GEMMs (a preset, or an opened GGUF's forward pass) picked across
// families and timed on this adapter through the worker's 'model-run' (one request per phase), each
// family offering its stored winner from the tune-runs database where a finished hunt has one that beat
// its incumbent; "tune all" hunts each GEMM's tunable families in turn through the worker's 'tune',
// stored entry by entry like every hunt (an interrupted one resumes without measuring again), then runs.
// Each is estimated first and asks past the guard's limit; a cancel goes to the request in flight. A
// guess runs nothing (kernels/tune/pick.ts guessPick) and says so. Runs are exported and imported as JSON.
import type { FamilyCatalog, RunConfig } from '../kernels/family';
import { isSoftwareAdapter, type AdapterCaps } from '../kernels/gpu/caps';
import {
  MODEL_RUN_FORMAT,
  modelRunJson,
  modelRunKtCaches,
  newModelRun,
  parseModelRun,
  phaseGemms,
  type ModelRun,
  type ModelRunAdapter,
} from '../kernels/models/modelRun';
import { estimateHunt, guardedMs, huntShape, workOf, type Estimate } from '../kernels/perf/estimate';
import {
  estimatePicks,
  guessPick,
  pickBase,
  pickCatalogs,
  pickProblem,
  storedPickOf,
  type PickGemm,
} from '../kernels/tune/pick';
import { tuneProblemKey } from '../kernels/tune/problem';
import {
  DEFAULT_EVO,
  type StoredPicks,
  type TuneRecordEntry,
  type TuneReport,
  type WorkerResponse,
} from '../workers/protocol';
import type { Guard } from './guard';
import { runKey, type TuneRunStore } from './persistence/tuneRuns';
import { act, draftProblems, getApp, type AppState } from './store';
import {
  chosenPass,
  formPhases,
  modelRunEnded,
  modelRunOf,
  modelRunPicked,
  modelRunProgress,
  modelRunStarted,
  setModelRun,
} from './store/modelRun';
import type { WorkerClient } from './worker/client';

export interface ModelRunController {
  /** Pick and time every GEMM of the form's model here; past the guard it asks first unless `confirmed`. */
  run(confirmed?: boolean): void;
  /** The same table from this adapter's roofs (its measured peaks, else default rates): nothing runs. */
  guess(): void;
  /** Hunt each GEMM's tunable families not hunted here yet (resuming interrupted hunts), then run. */
  tuneAll(confirmed?: boolean): void;
  /** Stop the run or the hunts: the request in flight is cancelled. */
  cancel(): void;
  /** The run on display as JSON, with a Kernel Tuner cache per shape; undefined when there is none. */
  exportJson(): string | undefined;
  /** Show a run exported elsewhere (another adapter) beside this one; a bad file says why. */
  importJson(text: string): void;
  removeImported(index: number): void;
}

/** Draft ids of the model view's number fields ("modelrun:m"): they block its runs only. */
export const MODEL_RUN_SCOPE = 'modelrun';

/**
 * Why the model view cannot run now (each a sentence), empty when it can.
 * @example modelRunBlockers(getApp()) // ['no GPU device (WebGPU is not available)']
 */
export function modelRunBlockers(s: AppState): string[] {
  const out: string[] = [];
  if (s.device.status !== 'ready' || !s.device.caps || !s.device.deviceId)
    out.push(s.device.status === 'starting' ? 'the GPU device is starting' : 'no GPU device is ready');
  out.push(...draftProblems(s.drafts, [MODEL_RUN_SCOPE]));
  const form = modelRunOf(s).form;
  if (!formPhases(form).length) out.push('pick prefill, decode or both');
  const chosen = chosenPass(form, s.models.files);
  if ('problem' in chosen) out.push(chosen.problem);
  return out;
}

/** The adapter as a run names it. */
function adapterOf(s: AppState): ModelRunAdapter {
  const caps = s.device.caps!;
  return {
    name: `${caps.vendor} ${caps.description || caps.architecture}`.trim(),
    deviceId: s.device.deviceId!,
    vendor: caps.vendor,
    architecture: caps.architecture,
    description: caps.description,
    plane: s.device.plane ?? caps.subgroupMaxSize,
    software: isSoftwareAdapter(caps),
  };
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Sum estimates (the guard weighs the whole action). */
function sumOf(first: Estimate, more: readonly Estimate[]): Estimate {
  return more.reduce(
    (x, y) => ({
      ms: x.ms + y.ms,
      untimedMs: x.untimedMs + y.untimedMs,
      compileMs: x.compileMs + y.compileMs,
      kernelMs: Math.max(x.kernelMs, y.kernelMs),
      basis: x.basis,
    }),
    first,
  );
}

/** What the model view's controller runs on: the app controller hands it over (Controller.modelRunEnv). */
export interface ModelRunEnv {
  client: WorkerClient;
  openStore: () => Promise<TuneRunStore>;
  guard: Guard;
  /** Past this (less compiling), a run asks first, ms. */
  confirmMs: number;
  now?: () => number;
}

const controllers = new WeakMap<ModelRunEnv, ModelRunController>();

/**
 * The one model-run controller of an app controller's environment, made on first use: it loads with the
 * model view's chunk, not the first paint's, and outlives the view (a run goes on, and can be cancelled,
 * after the tab is left and opened again).
 * @example const ctl = modelRunControllerFor(controller.modelRunEnv);
 */
export function modelRunControllerFor(env: ModelRunEnv): ModelRunController {
  let c = controllers.get(env);
  if (!c) controllers.set(env, (c = createModelRunController(env)));
  return c;
}

/** What the model-run controller keeps between calls. */
interface ModelRunSession {
  env: ModelRunEnv;
  now: () => number;
  storeP?: Promise<TuneRunStore>;
  /** The request a cancel goes to. */
  inFlight?: number | undefined;
  /** Set by a cancel: the run or the hunts stop before their next request. */
  stopped: boolean;
}

/** One hunt of "tune all": a family on one GEMM's problem, with the entries an interrupted hunt kept. */
interface Hunt {
  base: RunConfig;
  family: FamilyCatalog;
  resume: TuneRecordEntry[];
}

const catalogs = () => getApp().catalogs;
const fail = (error: string) => act(setModelRun, { error });
const store = (r: ModelRunSession) => (r.storeP ??= r.env.openStore());
const replyError = (msg: WorkerResponse) =>
  msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}`;

/** The run the form asks for, every pick empty; or undefined (and the reason shown). */
function fresh(measured: boolean): ModelRun | undefined {
  const s = getApp();
  const blockers = modelRunBlockers(s);
  if (blockers.length) {
    fail(blockers.join('; '));
    return undefined;
  }
  const chosen = chosenPass(modelRunOf(s).form, s.models.files);
  if ('problem' in chosen) return undefined;
  const peaks = s.peaks.probe?.peaks;
  return newModelRun(chosen.pass, chosen.model, adapterOf(s), formPhases(modelRunOf(s).form), {
    timing: { targetMs: s.runOptions.targetMs, batches: s.runOptions.batches },
    measured,
    startedAt: new Date().toISOString(),
    ...(peaks ? { peaks } : {}),
  });
}

/** The stored winner a GEMM's tunable families may serve (finished hunts that beat their incumbent). */
async function storedFor(r: ModelRunSession, deviceId: string, gemm: PickGemm): Promise<StoredPicks> {
  const out: Record<string, string> = {};
  for (const f of pickCatalogs(catalogs(), gemm)) {
    if (!f.tuning) continue;
    const report = await (
      await store(r)
    )
      .cachedReport(runKey({ deviceId, op: f.tuning.op, problem: pickProblem(f, gemm) }))
      .catch(() => undefined);
    const w = report && storedPickOf(report);
    if (w) out[f.id] = w;
  }
  return out;
}

/** The guard's question: true when `est` is within the limit or confirmed; else it asks in the view. */
function allowed(r: ModelRunSession, what: 'run' | 'tune', est: Estimate, confirmed: boolean): boolean {
  if (confirmed || guardedMs(est) <= r.env.confirmMs) return true;
  act(setModelRun, { confirm: { what, ms: est.ms, basis: est.basis }, error: undefined });
  return false;
}

/** Send one phase's 'model-run'; resolves with its final message. */
function runPhase(r: ModelRunSession, run: ModelRun, phase: number, stored: StoredPicks[]) {
  const gemms = phaseGemms(run, phase);
  const p = run.phases[phase]!;
  const label = p.phase === 'decode' ? 'decode' : `prefill of ${p.m}`;
  const { id, done } = r.env.client.request(
    {
      type: 'model-run',
      gemms: gemms.map((gemm, i) => ({ gemm, stored: stored[i] ?? {} })),
      timing: run.timing,
    },
    (msg: WorkerResponse) => {
      if (msg.type === 'progress')
        act(modelRunProgress, `${label}: ${msg.stage}`, (phase + msg.fraction) / run.phases.length);
      if (msg.type === 'model-progress') act(modelRunPicked, phase, msg.index, msg.result);
    },
  );
  r.inFlight = id;
  return done.finally(() => (r.inFlight = undefined));
}

/** What measuring every candidate of a run costs here. */
function runEstimate(r: ModelRunSession, s: AppState, planned: ModelRun): Estimate {
  return estimatePicks(
    catalogs(),
    planned.phases.flatMap((_, i) => phaseGemms(planned, i)),
    s.device.caps!,
    (kernel, arm) => r.env.guard.rateOf(s, kernel, arm),
    planned.timing,
  );
}

/** Pick and time every GEMM of the form's model, phase by phase; past the guard it asks first. */
function run(r: ModelRunSession, confirmed = false) {
  if (modelRunOf(getApp()).busy) return;
  const planned = fresh(true);
  if (!planned) return;
  if (!allowed(r, 'run', runEstimate(r, getApp(), planned), confirmed)) return;
  r.stopped = false;
  act(modelRunStarted, planned, 'run');
  void runPhases(r, planned, r.now());
}

/** Time each phase of a started run with the stored winners on offer, until done, cancelled or failed. */
async function runPhases(r: ModelRunSession, planned: ModelRun, t0: number) {
  try {
    for (let i = 0; i < planned.phases.length && !r.stopped; i++) {
      act(modelRunProgress, 'reading the stored winners', i / planned.phases.length);
      const gemms = phaseGemms(planned, i);
      const stored = await Promise.all(gemms.map((g) => storedFor(r, planned.adapter.deviceId, g)));
      if (r.stopped) break;
      const msg = await runPhase(r, planned, i, stored);
      if (msg.type === 'cancelled') r.stopped = true;
      else if (msg.type === 'model-run-done')
        msg.results.forEach((pick, j) => act(modelRunPicked, i, j, pick));
      else {
        act(modelRunEnded, 'cancelled', r.now() - t0, replyError(msg));
        return;
      }
    }
    act(modelRunEnded, r.stopped ? 'cancelled' : 'complete', r.now() - t0);
  } catch (e) {
    act(modelRunEnded, 'cancelled', r.now() - t0, message(e));
  }
}

/** The same table from this adapter's roofs (its measured peaks, else default rates): nothing runs. */
function guess() {
  if (modelRunOf(getApp()).busy) return;
  const planned = fresh(false);
  if (!planned) return;
  const caps = getApp().device.caps!;
  let r: ModelRun = { ...planned, status: 'complete', durationMs: 0 };
  r = {
    ...r,
    phases: r.phases.map((p, i) => ({
      ...p,
      picks: phaseGemms(r, i).map((g) => guessPick(catalogs(), g, caps, planned.peaks)),
    })),
  };
  act(setModelRun, { current: r, confirm: undefined, error: undefined });
}

/** The hunts "tune all" runs: each GEMM's tunable families that accept it here, unless hunted already. */
async function huntsOf(r: ModelRunSession, planned: ModelRun, caps: AdapterCaps) {
  const hunts = new Map<string, Hunt>();
  for (const [i] of planned.phases.entries())
    for (const g of phaseGemms(planned, i))
      for (const f of pickCatalogs(catalogs(), g)) {
        if (!f.tuning) continue;
        const base = pickBase(f, g, caps);
        const key = runKey({
          deviceId: planned.adapter.deviceId,
          op: f.tuning.op,
          problem: tuneProblemKey(f, base),
        });
        if (hunts.has(key) || f.validate(base, caps).length) continue;
        const old = await (await store(r)).get(key).catch(() => undefined);
        if (old?.status === 'complete') continue;
        hunts.set(key, { base, family: f, resume: old?.report.entries ?? [] });
      }
  return hunts;
}

/** What the hunts (less the configs they resume with) and the run after them cost here. */
function tuneEstimate(r: ModelRunSession, s: AppState, planned: ModelRun, hunts: Map<string, Hunt>) {
  const evo = DEFAULT_EVO;
  const shape = huntShape(evo, { software: isSoftwareAdapter(s.device.caps!) });
  const each = [...hunts.values()].map(({ base, family, resume }) =>
    estimateHunt(workOf(family, base), r.env.guard.rateOf(s, base.kernel, base.arm), {
      ...shape,
      configs: Math.max(1, shape.configs - resume.length),
    }),
  );
  const est = sumOf(runEstimate(r, s, planned), each);
  est.basis = `${hunts.size} hunts of ${evo.population} x ${evo.generations} configs, then the model run (${est.basis})`;
  return est;
}

/** Hunt each GEMM's tunable families not hunted here yet (resuming interrupted hunts), then run. */
function tuneAll(r: ModelRunSession, confirmed = false) {
  if (modelRunOf(getApp()).busy) return;
  const planned = fresh(true);
  if (!planned) return;
  void tuneThenRun(r, planned, getApp(), confirmed);
}

/** The steps of "tune all": find the hunts, ask the guard, hunt them in turn, then run with their winners. */
async function tuneThenRun(r: ModelRunSession, planned: ModelRun, s: AppState, confirmed: boolean) {
  let hunts;
  try {
    hunts = await huntsOf(r, planned, s.device.caps!);
  } catch (e) {
    fail(`the stored hunts could not be read (IndexedDB): ${message(e)}`);
    return;
  }
  if (!hunts.size) {
    act(setModelRun, { error: undefined });
    run(r, confirmed);
    return;
  }
  if (!allowed(r, 'tune', tuneEstimate(r, s, planned, hunts), confirmed)) return;
  r.stopped = false;
  act(modelRunStarted, planned, 'tune');
  const t0 = r.now();
  if (!(await huntAll(r, planned, hunts, t0))) return;
  if (r.stopped) {
    act(modelRunEnded, 'cancelled', r.now() - t0);
    return;
  }
  act(modelRunEnded, 'complete', r.now() - t0);
  // The hunts are stored: the run picks with their winners.
  run(r, true);
}

/** Run the hunts in turn until done or cancelled; false (and the run ended) when one failed. */
async function huntAll(r: ModelRunSession, planned: ModelRun, hunts: Map<string, Hunt>, t0: number) {
  let done = 0;
  for (const [key, h] of hunts) {
    if (r.stopped) break;
    const what = `hunt ${done + 1} of ${hunts.size}: ${h.family.id} ${tuneProblemKey(h.family, h.base)}`;
    act(modelRunProgress, what, done / hunts.size);
    const msg = await huntOne(r, planned, h, what, done / hunts.size, t0);
    if (msg.type === 'cancelled') r.stopped = true;
    else if (msg.type !== 'tune-done') {
      act(modelRunEnded, 'cancelled', r.now() - t0, `${key}: ${replyError(msg)}`);
      return false;
    }
    done++;
  }
  return true;
}

/** The report of a hunt so far, stored as interrupted so that it resumes without measuring again. */
function interruptedReport(
  planned: ModelRun,
  { base, family }: Hunt,
  entries: TuneRecordEntry[],
  startedAt: string,
  durationMs: number,
): TuneReport {
  return {
    op: family.tuning!.op,
    kernel: family.id,
    deviceId: planned.adapter.deviceId,
    problem: tuneProblemKey(family, base),
    base,
    winner: '',
    bestMs: entries.reduce((b, e) => (e.verdict === 'measured' ? Math.min(b, e.ms) : b), Infinity),
    entries,
    bestPerGeneration: [],
    evo: DEFAULT_EVO,
    startedAt,
    durationMs,
    status: 'interrupted',
  };
}

/** One hunt through the worker's 'tune', stored entry by entry; resolves with the worker's final reply. */
async function huntOne(
  r: ModelRunSession,
  planned: ModelRun,
  h: Hunt,
  what: string,
  fraction: number,
  t0: number,
): Promise<WorkerResponse> {
  const entries: TuneRecordEntry[] = [...h.resume];
  const startedAt = new Date().toISOString();
  const partial = () => interruptedReport(planned, h, entries, startedAt, r.now() - t0);
  // The writes go in order: an entry's report never overwrites a later one.
  let writes: Promise<unknown> = Promise.resolve();
  const persist = (report: TuneReport) =>
    (writes = writes
      .then(() => store(r).then((x) => x.put(report)))
      .catch((e: unknown) => fail(`could not save the hunt (IndexedDB): ${message(e)}`)));
  void persist(partial());
  const { id, done: answer } = r.env.client.request(
    { type: 'tune', base: h.base, evo: DEFAULT_EVO, ...(h.resume.length ? { resume: h.resume } : {}) },
    (msg: WorkerResponse) => {
      if (msg.type !== 'tune-progress') return;
      act(modelRunProgress, `${what}: ${msg.stage ?? 'searching'}, ${msg.evaluated} configs`, fraction);
      if (msg.entry && !entries.some((e) => e.config === msg.entry!.config)) {
        entries.push(msg.entry);
        void persist(partial());
      }
    },
  );
  r.inFlight = id;
  const msg = await answer;
  r.inFlight = undefined;
  await writes;
  if (msg.type === 'tune-done') await persist(msg.report);
  return msg;
}

/** Stop the run or the hunts: the request in flight is cancelled. */
function cancel(r: ModelRunSession) {
  r.stopped = true;
  act(setModelRun, { confirm: undefined });
  if (r.inFlight !== undefined) r.env.client.cancel(r.inFlight);
}

/** Show a run exported elsewhere beside this one; a bad file says why. */
function importJson(text: string) {
  try {
    const r = parseModelRun(text);
    act(setModelRun, { imported: [...modelRunOf(getApp()).imported, r], error: undefined });
  } catch (e) {
    fail(`not a model run (${MODEL_RUN_FORMAT}): ${message(e)}`);
  }
}

/**
 * The model view's controller over the app's worker client, the tune-runs store and the guard.
 * @example const modelRun = createModelRunController({ client, openStore: openTuneRuns, guard, confirmMs: CONFIRM_MS });
 */
export function createModelRunController(env: ModelRunEnv): ModelRunController {
  const r: ModelRunSession = { env, now: env.now ?? (() => performance.now()), stopped: false };
  return {
    run: (confirmed) => run(r, confirmed),
    guess,
    tuneAll: (confirmed) => tuneAll(r, confirmed),
    cancel: () => cancel(r),
    exportJson() {
      const current = modelRunOf(getApp()).current;
      return current && modelRunJson(current, modelRunKtCaches(current, catalogs()));
    },
    importJson,
    removeImported(index) {
      act(setModelRun, { imported: modelRunOf(getApp()).imported.filter((_, i) => i !== index) });
    },
  };
}
