// The controller: the only place that turns state changes into worker requests and worker messages into
// actions. Config edits regenerate the kernel (debounced), a generated kernel or an editor edit runs it
// (debounced), and the URL hash and the editor buffers follow the state. React components call the
// functions returned here and never see the worker or the GPU. The tuner's and the model files' wiring
// are in ./tunerController.ts and ./modelController.ts; they share this one worker client.
import type { GgufFileRef, RunConfig } from '../kernels/family';
import type { ElementPartials } from '../kernels/partials';
import { kernelWithProblems, type WorkerResponse } from '../workers/protocol';
import { loadBuffers, loadStash, saveBuffer, saveStash, type BufferStorage } from './editor/bufferStorage';
import { createModelController, type ModelController } from './modelController';
import type { ModelRunEnv } from './modelRunController';
import { decodePermalink, encodePermalink } from './permalink/codec';
import type { TuneRunStore } from './persistence/tuneRuns';
import {
  acceptLink,
  act,
  applyPermalink,
  configKey,
  configProblems,
  currentCatalog,
  declineLink,
  deviceLost,
  deviceReady,
  deviceRestarting,
  gpuDraining,
  deviceUnavailable,
  editBuffer,
  editedWgsl,
  generated,
  generating,
  getApp,
  linkFailed,
  openTensor,
  oracleFinished,
  oracleStarted,
  permalinkOf,
  previewPermalink,
  resetBuffer,
  restoreBuffers,
  runBlockers,
  runCancelled,
  runCompileError,
  runFailed,
  runFinished,
  runProgress,
  runStarted,
  subscribeApp,
  wantTensor,
  type AppState,
} from './store';
import { CONFIRM_MS, estimate, workOf } from '../kernels/perf/estimate';
import { createGuard } from './guard';
import { createSweepController, type SweepController } from './sweepController';
import { createTunerController, type TunerController } from './tunerController';
import type { ProbeResult } from '../kernels/perf/probe.run';
import type { WorkerClient } from './worker/client';

export interface ControllerEnv {
  client: WorkerClient;
  storage: BufferStorage;
  /**
   * The tab's session storage: the hash this tab wrote last, so reloading one's own state applies it
   * without asking (any other link asks first). Absent: every link asks.
   */
  session?: Pick<Storage, 'getItem' | 'setItem'>;
  /** Current URL hash and a way to replace it without a history entry. */
  getHash(): string;
  replaceHash(hash: string): void;
  /** Where tuning runs are kept (IndexedDB); tests pass their own. */
  openTuneStore(): Promise<TuneRunStore>;
  /** Debounce delays in ms (tests shorten them). */
  delays?: { generate?: number; run?: number; hash?: number };
  /** Runs estimated to take longer than this ask first, ms. */
  confirmMs?: number;
  /** The clock (performance.now in the app). */
  now?: () => number;
}

/** How a run is asked for: `confirmed` skips the long-run question; `untimed` skips the timing. */
export interface RunChoice {
  confirmed?: boolean;
  untimed?: boolean;
  noOwnership?: boolean;
}

export interface Controller {
  /** Restore buffers and the permalink, open the device. */
  start(): void;
  /** Run the current kernel now (Ctrl/Alt+Enter anywhere, the Run button). */
  runNow(choice?: RunChoice): void;
  /** The user edited the kernel text: keep it, and re-run after a pause in typing. */
  edit(text: string): void;
  /** Back to the generated kernel (and run it). */
  reset(): void;
  /** Cancel the run (answered within about a second, even mid-dispatch). */
  cancelRun(): void;
  /** Compute the CPU oracle's output (no GPU needed). */
  computeOracle(): void;
  /** The k-block breakdown of output element (row, col) of a run's config (the error drill-down). */
  elementPartials(config: RunConfig, row: number, col: number): Promise<PartialsAnswer>;
  /** Diagnostics: destroy the device; the next request re-opens it. */
  loseDevice(): void;
  /** Re-open a lost device and run again. */
  recover(): void;
  /** The permalink of the current state (absolute URL). */
  link(base: string): string;
  /**
   * Open a permalink hash (hashchange: a link pasted into the address bar). Pass the event's new hash:
   * a debounced hash write may already have replaced `location.hash` before the event is handled.
   */
  openHash(hash?: string): void;
  /** Run the link being shown ("Run this linked kernel"): from now on it is the visitor's, and stored. */
  acceptLink(): void;
  /** Keep one's own config and kernel instead of the link being shown. */
  declineLink(): void;
  tuner: TunerController;
  models: ModelController;
  sweep: SweepController;
  /** What the model view's controller runs on (./modelRunController.ts, loaded with the view). */
  modelRunEnv: ModelRunEnv;
  /** Measure the adapter's peaks in the worker (kernels/perf/probe.run.ts); rejects with the worker's message. */
  probe(): Promise<ProbeResult>;
}

/** Where the session storage keeps the hash this tab wrote last. */
const OWN_HASH_KEY = 'mmq.ownHash';

/** The drill-down's answer: the breakdown, or why there is none (`why`), or what failed (`error`). */
export type PartialsAnswer = { partials: ElementPartials } | { why: string } | { error: string };

const sameFile = (a: GgufFileRef, b: GgufFileRef) => a.headerHash === b.headerHash && a.size === b.size;

/**
 * Create the controller and subscribe it to the store.
 * @example const ctl = createController({ client, storage: localStorage, getHash, replaceHash, openTuneStore: openTuneRuns }); ctl.start();
 */
export function createController(env: ControllerEnv): Controller {
  const { client } = env;
  const delay = { generate: 120, run: 600, hash: 250, ...env.delays };
  const confirmMs = env.confirmMs ?? CONFIRM_MS;
  const now = env.now ?? (() => performance.now());
  let generateTimer: ReturnType<typeof setTimeout> | undefined;
  let runTimer: ReturnType<typeof setTimeout> | undefined;
  let hashTimer: ReturnType<typeof setTimeout> | undefined;
  let runAfterGenerate: RunChoice | undefined;
  let lastWrittenHash = '';
  let cancelAt: number | undefined;
  /**
   * The config whose run the user cancelled: not auto-run again (the restarted worker's 'ready'
   * regenerates the kernel, and re-running the big run just cancelled kept the tab busy for minutes).
   */
  let cancelledKey: string | undefined;
  const guard = createGuard(confirmMs);
  const tuner = createTunerController({ client, openStore: env.openTuneStore, now, guard });
  const models = createModelController({ client });
  const sweep = createSweepController({ client, openStore: env.openTuneStore, guard });

  client.onEvent((msg: WorkerResponse) => {
    switch (msg.type) {
      case 'ready':
        act(deviceReady, msg.caps, msg.deviceId, msg.plane);
        return;
      case 'device-lost':
        act(deviceLost, msg.reason, msg.message);
        return;
      case 'progress':
        act(runProgress, msg.id, msg.stage, msg.fraction);
        return;
      case 'error':
        if (msg.kind === 'unsupported') act(deviceUnavailable, msg.message);
        return;
      default:
        return;
    }
  });
  client.onRespawn((reason) => {
    guard.forgetCompiled();
    act(deviceRestarting, `restarting the GPU worker: ${reason}`);
  });
  client.onDrain((d) => act(gpuDraining, d));

  const oracle = () => {
    const s = getApp();
    if (runBlockers(s).some((b) => !b.startsWith('WebGPU is not available'))) return;
    const key = configKey(s.config);
    act(oracleStarted, key);
    void client.request({ type: 'oracle', config: s.config }).done.then((msg) => {
      if (msg.type === 'oracle-result')
        act(oracleFinished, key, { rows: msg.rows, cols: msg.cols, values: msg.oracle });
      else
        act(oracleFinished, key, {
          error: msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}`,
        });
    });
  };

  const generate = () => {
    const state = getApp();
    if (state.device.status === 'starting' || state.device.status === 'lost') return; // 'ready' triggers it
    const key = configKey(state.config);
    const problems = configProblems(state);
    if (problems.length) {
      // The family's own validation on this side: the worker is not asked.
      act(generated, kernelWithProblems(problems), key);
      runAfterGenerate = undefined;
      return;
    }
    act(generating);
    const { done } = client.request({ type: 'generate', config: state.config });
    void done.then((msg) => {
      const s = getApp();
      if (configKey(s.config) !== key) return; // the config moved on
      if (msg.type === 'generated') {
        act(generated, msg.kernel, key);
        const choice = runAfterGenerate;
        runAfterGenerate = undefined;
        if (msg.kernel.problems.length) return;
        if (s.device.status === 'unavailable') {
          if (s.config.data.source !== 'tensor') oracle();
        } else if (choice || (s.runOptions.autoRun && key !== cancelledKey)) runNow(choice ?? {});
      } else if (msg.type === 'error') {
        act(generated, kernelWithProblems([msg.message]), key);
      }
    });
  };

  const scheduleGenerate = (ms = delay.generate) => {
    clearTimeout(generateTimer);
    generateTimer = setTimeout(generate, ms);
  };

  const runNow = (choice: RunChoice = {}) => {
    clearTimeout(runTimer);
    const state = getApp();
    if (runBlockers(state).length) return;
    const key = configKey(state.config);
    if (state.generatedKey !== key || state.device.status !== 'ready') {
      runAfterGenerate = choice;
      if (state.device.status === 'lost') recover();
      else scheduleGenerate(0);
      return;
    }
    if (state.generated?.problems.length) return;
    const opts = state.runOptions;
    // The pipelines a run compiles: its config's and the text that runs.
    const compiledKey = `${key}\n${editedWgsl(state) ?? ''}`;
    const timed = opts.timed && !choice.untimed;
    const instrument = opts.instrument && !choice.noOwnership;
    const est = estimate(
      workOf(currentCatalog(state), state.config),
      guard.rateOf(state, state.config.kernel, state.config.arm),
      {
        timed,
        instrument,
        targetMs: opts.targetMs,
        batches: opts.batches,
        passes: state.generated?.passes.length ?? 1,
        software: guard.software(state),
        compiled: guard.compiled(compiledKey),
      },
    );
    if (!guard.allow({ ...est, action: 'run' }, !!choice.confirmed)) return;
    if (state.run.status === 'running' && state.run.id !== undefined) client.cancel(state.run.id);
    cancelledKey = undefined;
    const wgsl = editedWgsl(state);
    const config = state.config;
    const { id, done } = client.request({
      type: 'run',
      config,
      instrument,
      ...(timed ? { timing: { targetMs: opts.targetMs, batches: opts.batches } } : {}),
      ...(wgsl !== undefined ? { wgsl } : {}),
    });
    const hunting = getApp().tuner.hunt?.status === 'running';
    act(runStarted, id, hunting && !client.inFlight(id), now());
    void done.then((msg) => {
      switch (msg.type) {
        case 'run-result':
          guard.record(msg.outcome, compiledKey);
          act(runFinished, id, msg.outcome);
          return;
        case 'compile-error':
          act(runCompileError, id, { messages: msg.messages, editorLines: msg.editorLines });
          return;
        case 'cancelled':
          act(runCancelled, id, cancelAt === undefined ? undefined : now() - cancelAt);
          cancelAt = undefined;
          return;
        case 'error':
          act(runFailed, id, msg.kind, msg.message);
          return;
        default:
          act(runFailed, id, 'internal', `unexpected reply ${msg.type}`);
      }
    });
  };

  const scheduleRun = () => {
    clearTimeout(runTimer);
    runTimer = setTimeout(() => runNow(), delay.run);
  };

  const init = () => {
    void client.request({ type: 'init' }).done.then((msg) => {
      if (msg.type === 'error') act(deviceUnavailable, msg.message);
    });
  };

  const recover = () => {
    runAfterGenerate ??= {};
    init();
  };

  const writeHash = () => {
    if (getApp().pendingLink) return; // the address bar keeps the link until it is accepted or declined
    const hash = encodePermalink(permalinkOf(getApp()));
    env.session?.setItem(OWN_HASH_KEY, hash);
    if (hash !== env.getHash()) {
      lastWrittenHash = hash;
      env.replaceHash(hash);
    }
  };

  const saveCurrentBuffers = (s: AppState) => {
    saveBuffer(env.storage, s.config.kernel, s.buffers[s.config.kernel]);
    saveStash(env.storage, s.stash);
  };

  subscribeApp((s: AppState, prev: AppState) => {
    const key = configKey(s.config);
    const statusChanged =
      s.device.status !== prev.device.status &&
      (s.device.status === 'ready' || s.device.status === 'unavailable');
    const filesChanged = s.models.files !== prev.models.files && s.config.data.source === 'tensor';
    if (key !== configKey(prev.config) || statusChanged || filesChanged) scheduleGenerate();
    if (s.config.data.tensor !== prev.config.data.tensor || filesChanged) {
      // A config (a permalink) names a tensor of a file that is not open: ask for that file.
      const t = s.config.data.source === 'tensor' ? s.config.data.tensor : undefined;
      const want =
        t && !openTensor(s.models, t) && !s.models.files.some((f) => sameFile(f.file, t.file))
          ? t
          : undefined;
      if (want !== s.models.wanted) act(wantTensor, want);
    }
    const id = s.config.kernel;
    // Nothing a link brings is stored before the visitor accepts it.
    if (!s.pendingLink && s.buffers[id] !== prev.buffers[id]) saveBuffer(env.storage, id, s.buffers[id]);
    if (!s.pendingLink && s.stash !== prev.stash) saveStash(env.storage, s.stash);
    if (
      s.config !== prev.config ||
      s.tab !== prev.tab ||
      s.buffers !== prev.buffers ||
      s.generated !== prev.generated ||
      s.ab !== prev.ab
    ) {
      clearTimeout(hashTimer);
      hashTimer = setTimeout(writeHash, delay.hash);
    }
  });

  const openHash = (hash = env.getHash(), atStart = false) => {
    // A pending write of the old state's hash must not clobber the link being opened.
    clearTimeout(hashTimer);
    if (!hash || hash === '#' || hash === lastWrittenHash) return;
    const r = decodePermalink(hash, getApp().catalogs);
    if (r.ok) act(hash === env.session?.getItem(OWN_HASH_KEY) ? applyPermalink : previewPermalink, r.state);
    else
      act(
        linkFailed,
        `${r.error} ${atStart ? 'Showing the default config instead.' : 'The config you had is kept.'}`,
      );
  };

  return {
    start() {
      const ids = getApp().catalogs.map((c) => c.id);
      act(restoreBuffers, loadBuffers(env.storage, ids), loadStash(env.storage, ids));
      openHash(env.getHash(), true);
      init();
      tuner.start();
    },
    runNow,
    edit(text) {
      const s = getApp();
      if (text === s.buffers[s.config.kernel]?.text) return;
      act(editBuffer, text);
      if (getApp().runOptions.autoRun) scheduleRun();
    },
    reset() {
      act(resetBuffer);
      if (getApp().runOptions.autoRun) scheduleRun();
    },
    cancelRun() {
      const s = getApp();
      if (s.run.status === 'running' && s.run.id !== undefined) {
        cancelAt = now();
        cancelledKey = configKey(s.config);
        client.cancel(s.run.id);
      }
    },
    computeOracle: oracle,
    async elementPartials(config, row, col) {
      const msg = await client.request({ type: 'partials', config, row, col }).done;
      if (msg.type === 'partials-result')
        return msg.partials ? { partials: msg.partials } : { why: msg.why ?? 'no breakdown' };
      return { error: msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}` };
    },
    loseDevice() {
      client.request({ type: 'lose-device' });
    },
    recover,
    link(base) {
      return base.replace(/#.*$/, '') + encodePermalink(permalinkOf(getApp()));
    },
    openHash: (hash) => openHash(hash, false),
    acceptLink() {
      if (!getApp().pendingLink) return;
      act(acceptLink);
      saveCurrentBuffers(getApp());
      writeHash();
      runNow();
    },
    declineLink() {
      act(declineLink);
    },
    tuner,
    models,
    sweep,
    modelRunEnv: { client, openStore: env.openTuneStore, guard, confirmMs, now },
    async probe() {
      const msg = await client.request({ type: 'probe' }).done;
      if (msg.type === 'probe-result') return msg.result;
      throw new Error(msg.type === 'error' ? msg.message : `the probe ended with '${msg.type}'`);
    },
  };
}
