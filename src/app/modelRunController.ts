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

/**
 * The model view's controller over the app's worker client, the tune-runs store and the guard.
 * @example const modelRun = createModelRunController({ client, openStore: openTuneRuns, guard, confirmMs: CONFIRM_MS });
 */
export function createModelRunController(env: ModelRunEnv): ModelRunController {
  const { client } = env;
  const now = env.now ?? (() => performance.now());
  let storeP: Promise<TuneRunStore> | undefined;
  const store = () => (storeP ??= env.openStore());
  let inFlight: number | undefined;
  let stopped = false;

  const catalogs = () => getApp().catalogs;
  const fail = (error: string) => act(setModelRun, { error });

  /** The run the form asks for, every pick empty; or undefined (and the reason shown). */
  const fresh = (measured: boolean): ModelRun | undefined => {
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
  };

  /** The stored winner a GEMM's tunable families may serve (finished hunts that beat their incumbent). */
  const storedFor = async (deviceId: string, gemm: PickGemm): Promise<StoredPicks> => {
    const out: Record<string, string> = {};
    for (const f of pickCatalogs(catalogs(), gemm)) {
      if (!f.tuning) continue;
      const report = await (
        await store()
      )
        .cachedReport(runKey({ deviceId, op: f.tuning.op, problem: pickProblem(f, gemm) }))
        .catch(() => undefined);
      const w = report && storedPickOf(report);
      if (w) out[f.id] = w;
    }
    return out;
  };

  /** The guard's question: true when `est` is within the limit or confirmed; else it asks in the view. */
  const allowed = (what: 'run' | 'tune', est: Estimate, confirmed: boolean): boolean => {
    if (confirmed || guardedMs(est) <= env.confirmMs) return true;
    act(setModelRun, { confirm: { what, ms: est.ms, basis: est.basis }, error: undefined });
    return false;
  };

  /** Send one phase's 'model-run'; resolves with its final message. */
  const runPhase = (run: ModelRun, phase: number, stored: StoredPicks[]) => {
    const gemms = phaseGemms(run, phase);
    const p = run.phases[phase]!;
    const label = p.phase === 'decode' ? 'decode' : `prefill of ${p.m}`;
    const { id, done } = client.request(
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
    inFlight = id;
    return done.finally(() => (inFlight = undefined));
  };

  /** What measuring every candidate of a run costs here. */
  const runEstimate = (s: AppState, planned: ModelRun): Estimate =>
    estimatePicks(
      catalogs(),
      planned.phases.flatMap((_, i) => phaseGemms(planned, i)),
      s.device.caps!,
      (kernel, arm) => env.guard.rateOf(s, kernel, arm),
      planned.timing,
    );

  const run = (confirmed = false) => {
    if (modelRunOf(getApp()).busy) return;
    const planned = fresh(true);
    if (!planned) return;
    const gemms = planned.phases.map((_, i) => phaseGemms(planned, i));
    if (!allowed('run', runEstimate(getApp(), planned), confirmed)) return;
    stopped = false;
    act(modelRunStarted, planned, 'run');
    const t0 = now();
    void (async () => {
      try {
        for (let i = 0; i < planned.phases.length && !stopped; i++) {
          act(modelRunProgress, 'reading the stored winners', i / planned.phases.length);
          const stored = await Promise.all(gemms[i]!.map((g) => storedFor(planned.adapter.deviceId, g)));
          if (stopped) break;
          const msg = await runPhase(planned, i, stored);
          if (msg.type === 'cancelled') stopped = true;
          else if (msg.type === 'model-run-done')
            msg.results.forEach((pick, j) => act(modelRunPicked, i, j, pick));
          else {
            act(
              modelRunEnded,
              'cancelled',
              now() - t0,
              msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}`,
            );
            return;
          }
        }
        act(modelRunEnded, stopped ? 'cancelled' : 'complete', now() - t0);
      } catch (e) {
        act(modelRunEnded, 'cancelled', now() - t0, message(e));
      }
    })();
  };

  /** The hunts "tune all" runs: each GEMM's tunable families that accept it here, unless hunted already. */
  const huntsOf = async (planned: ModelRun, caps: AdapterCaps) => {
    const hunts = new Map<string, { base: RunConfig; family: FamilyCatalog; resume: TuneRecordEntry[] }>();
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
          const old = await (await store()).get(key).catch(() => undefined);
          if (old?.status === 'complete') continue;
          hunts.set(key, { base, family: f, resume: old?.report.entries ?? [] });
        }
    return hunts;
  };

  const tuneAll = (confirmed = false) => {
    if (modelRunOf(getApp()).busy) return;
    const planned = fresh(true);
    if (!planned) return;
    const s = getApp();
    const caps = s.device.caps!;
    const software = isSoftwareAdapter(caps);
    void (async () => {
      let hunts;
      try {
        hunts = await huntsOf(planned, caps);
      } catch (e) {
        fail(`the stored hunts could not be read (IndexedDB): ${message(e)}`);
        return;
      }
      if (!hunts.size) {
        act(setModelRun, { error: undefined });
        run(confirmed);
        return;
      }
      const evo = DEFAULT_EVO;
      const shape = huntShape(evo, { software });
      const each = [...hunts.values()].map(({ base, family, resume }) =>
        estimateHunt(workOf(family, base), env.guard.rateOf(s, base.kernel, base.arm), {
          ...shape,
          configs: Math.max(1, shape.configs - resume.length),
        }),
      );
      const est = sumOf(runEstimate(s, planned), each);
      est.basis = `${hunts.size} hunts of ${evo.population} x ${evo.generations} configs, then the model run (${est.basis})`;
      if (!allowed('tune', est, confirmed)) return;
      stopped = false;
      act(modelRunStarted, planned, 'tune');
      const t0 = now();
      let done = 0;
      for (const [key, { base, family, resume }] of hunts) {
        if (stopped) break;
        const what = `hunt ${done + 1} of ${hunts.size}: ${family.id} ${tuneProblemKey(family, base)}`;
        act(modelRunProgress, what, done / hunts.size);
        const entries: TuneRecordEntry[] = [...resume];
        const startedAt = new Date().toISOString();
        const partial = (): TuneReport => ({
          op: family.tuning!.op,
          kernel: family.id,
          deviceId: planned.adapter.deviceId,
          problem: tuneProblemKey(family, base),
          base,
          winner: '',
          bestMs: entries.reduce((b, e) => (e.verdict === 'measured' ? Math.min(b, e.ms) : b), Infinity),
          entries,
          bestPerGeneration: [],
          evo,
          startedAt,
          durationMs: now() - t0,
          status: 'interrupted',
        });
        let writes: Promise<unknown> = Promise.resolve();
        const persist = (r: TuneReport) =>
          (writes = writes
            .then(() => store().then((x) => x.put(r)))
            .catch((e: unknown) => fail(`could not save the hunt (IndexedDB): ${message(e)}`)));
        void persist(partial());
        const { id, done: answer } = client.request(
          { type: 'tune', base, evo, ...(resume.length ? { resume } : {}) },
          (msg: WorkerResponse) => {
            if (msg.type !== 'tune-progress') return;
            act(
              modelRunProgress,
              `${what}: ${msg.stage ?? 'searching'}, ${msg.evaluated} configs`,
              done / hunts.size,
            );
            if (msg.entry && !entries.some((e) => e.config === msg.entry!.config)) {
              entries.push(msg.entry);
              void persist(partial());
            }
          },
        );
        inFlight = id;
        const msg = await answer;
        inFlight = undefined;
        await writes;
        if (msg.type === 'tune-done') await persist(msg.report);
        else if (msg.type === 'cancelled') stopped = true;
        else {
          act(
            modelRunEnded,
            'cancelled',
            now() - t0,
            `${key}: ${msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}`}`,
          );
          return;
        }
        done++;
      }
      if (stopped) {
        act(modelRunEnded, 'cancelled', now() - t0);
        return;
      }
      act(modelRunEnded, 'complete', now() - t0);
      // The hunts are stored: the run picks with their winners.
      run(true);
    })();
  };

  return {
    run,
    guess() {
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
    },
    tuneAll,
    cancel() {
      stopped = true;
      act(setModelRun, { confirm: undefined });
      if (inFlight !== undefined) client.cancel(inFlight);
    },
    exportJson() {
      const r = modelRunOf(getApp()).current;
      return r && modelRunJson(r, modelRunKtCaches(r, catalogs()));
    },
    importJson(text) {
      try {
        const r = parseModelRun(text);
        act(setModelRun, { imported: [...modelRunOf(getApp()).imported, r], error: undefined });
      } catch (e) {
        fail(`not a model run (${MODEL_RUN_FORMAT}): ${message(e)}`);
      }
    },
    removeImported(index) {
      act(setModelRun, { imported: modelRunOf(getApp()).imported.filter((_, i) => i !== index) });
    },
  };
}
