// The controller: the only place that turns state changes into worker requests and worker messages into
// actions. Config edits regenerate the kernel (debounced), a generated kernel or an editor edit runs it
// (debounced), and the URL hash and the editor buffers follow the state. React components call the
// functions returned here and never see the worker or the GPU.
import type { CoopmatStaging, KernelFamily, KernelId, TileParams } from '../kernels/family';
import { kernelWithProblems, type TuneOp, type WorkerResponse } from '../workers/protocol';
import type {
  AutokernelRunRequest,
  AutokernelRunResult,
  ProblemShape,
  TuneProgress,
  TuneRunRequest,
  TuneRunResult,
} from './tuner/types';
import { loadBuffers, loadStash, saveBuffer, saveStash, type BufferStorage } from './editor/bufferStorage';
import { decodePermalink, encodePermalink } from './permalink/codec';
import {
  act,
  applyPermalink,
  configKey,
  configProblems,
  deviceLost,
  deviceReady,
  deviceUnavailable,
  editBuffer,
  editedWgsl,
  generated,
  generating,
  getApp,
  linkFailed,
  permalinkOf,
  resetBuffer,
  restoreBuffers,
  runCancelled,
  runCompileError,
  runConfig,
  runFailed,
  runFinished,
  runProgress,
  runStarted,
  selectKernel,
  setField,
  setStaging,
  setTab,
  setTile,
  subscribeApp,
  type AppState,
} from './store';
import type { WorkerClient } from './worker/client';

export interface ControllerEnv {
  client: WorkerClient;
  families: readonly KernelFamily[];
  storage: BufferStorage;
  /** Current URL hash and a way to replace it without a history entry. */
  getHash(): string;
  replaceHash(hash: string): void;
  /** Debounce delays in ms (tests shorten them). */
  delays?: { generate?: number; run?: number; hash?: number };
}

export interface Controller {
  /** Restore buffers and the permalink, open the device. */
  start(): void;
  /** Run the current kernel now (Ctrl/Alt+Enter, the Run button). */
  runNow(): void;
  /** The user edited the kernel text: keep it, and re-run after a pause in typing. */
  edit(text: string): void;
  /** Back to the generated kernel (and run it). */
  reset(): void;
  cancelRun(): void;
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
  /** The tuner dashboard's wiring to the worker (see src/app/tuner/types.ts). */
  tuner: {
    runTune(req: TuneRunRequest, onProgress: (p: TuneProgress) => void): Promise<TuneRunResult>;
    cancelTune(): void;
    runAutokernel(req: AutokernelRunRequest): Promise<AutokernelRunResult>;
    loadTile(tile: TileParams, op: TuneOp, shape: ProblemShape, staging?: CoopmatStaging): void;
  };
}

/** The kernel family a tuning op tunes. */
export const TUNE_OP_KERNEL: Record<TuneOp, KernelId> = {
  mmq_q4k_tile: 'mmq-q4k-tile',
  mmq_q4k_coopmat: 'coopmat-f16',
};

class WorkerRequestError extends Error {
  constructor(kind: string, message: string) {
    super(message);
    this.name = kind === 'cancelled' ? 'CancelledError' : 'WorkerRequestError';
  }
}

/**
 * Create the controller and subscribe it to the store.
 * @example const ctl = createController({ client, families: KERNEL_FAMILIES, storage: localStorage, getHash: () => location.hash, replaceHash }); ctl.start();
 */
export function createController(env: ControllerEnv): Controller {
  const { client, families } = env;
  const delay = { generate: 120, run: 600, hash: 250, ...env.delays };
  let generateTimer: ReturnType<typeof setTimeout> | undefined;
  let runTimer: ReturnType<typeof setTimeout> | undefined;
  let hashTimer: ReturnType<typeof setTimeout> | undefined;
  let runAfterGenerate = false;
  let lastWrittenHash = '';
  let tuneId: number | undefined;

  const kernelIds = families.map((f) => f.id);

  const onMessage = (msg: WorkerResponse) => {
    switch (msg.type) {
      case 'ready':
        act(deviceReady, msg.caps, msg.deviceId, msg.plane, families);
        return;
      case 'device-lost':
        act(deviceLost, msg.reason, msg.message);
        return;
      case 'progress':
        act(runProgress, msg.id, msg.stage, msg.fraction);
        return;
      default:
        return;
    }
  };
  client.onEvent(onMessage);

  const generate = () => {
    const state = getApp();
    if (state.device.status === 'unavailable') return;
    if (state.device.status !== 'ready') return; // deviceReady triggers it
    if (configProblems(state, families).length) {
      act(generated, kernelWithProblems(configProblems(state, families)), configKey(runConfig(state)));
      return;
    }
    const config = runConfig(state);
    const key = configKey(config);
    act(generating);
    const { done } = client.request({ type: 'generate', config });
    void done.then((msg) => {
      if (configKey(runConfig(getApp())) !== key) return; // the config moved on
      if (msg.type === 'generated') {
        act(generated, msg.kernel, key);
        const s = getApp();
        if ((runAfterGenerate || s.autoRun) && !msg.kernel.problems.length) {
          runAfterGenerate = false;
          runNow();
        }
      } else if (msg.type === 'error') {
        act(generated, kernelWithProblems([msg.message]), key);
        if (msg.kind === 'unsupported') act(deviceUnavailable, msg.message);
      }
    });
  };

  const scheduleGenerate = () => {
    clearTimeout(generateTimer);
    generateTimer = setTimeout(generate, delay.generate);
  };

  const runNow = () => {
    clearTimeout(runTimer);
    const state = getApp();
    if (state.device.status === 'unavailable') return;
    const config = runConfig(state);
    if (state.generatedKey !== configKey(config) || state.device.status !== 'ready') {
      runAfterGenerate = true;
      if (state.device.status === 'lost') recover();
      else scheduleGenerate();
      return;
    }
    if (state.generated?.problems.length) return;
    if (state.run.status === 'running' && state.run.id !== undefined) client.cancel(state.run.id);
    const wgsl = editedWgsl(state);
    const { id, done } = client.request({
      type: 'run',
      config,
      iters: state.iters,
      instrument: true,
      ...(wgsl !== undefined ? { wgsl } : {}),
    });
    act(runStarted, id);
    void done.then((msg) => {
      switch (msg.type) {
        case 'run-result':
          act(runFinished, id, msg.outcome);
          return;
        case 'compile-error':
          act(runCompileError, id, { messages: msg.messages, editorLines: msg.editorLines });
          return;
        case 'cancelled':
          act(runCancelled, id);
          return;
        case 'error':
          act(runFailed, id, msg.kind, msg.message);
          if (msg.kind === 'unsupported') act(deviceUnavailable, msg.message);
          return;
        default:
          act(runFailed, id, 'internal', `unexpected reply ${msg.type}`);
      }
    });
  };

  const scheduleRun = () => {
    clearTimeout(runTimer);
    runTimer = setTimeout(runNow, delay.run);
  };

  const init = () => {
    const { done } = client.request({ type: 'init' });
    void done.then((msg) => {
      if (msg.type === 'error') act(deviceUnavailable, msg.message);
    });
  };

  const recover = () => {
    runAfterGenerate = true;
    init();
  };

  const writeHash = () => {
    const hash = encodePermalink(permalinkOf(getApp()));
    if (hash !== env.getHash()) {
      lastWrittenHash = hash;
      env.replaceHash(hash);
    }
  };

  subscribeApp((s: AppState, prev: AppState) => {
    const key = configKey(runConfig(s));
    if (key !== configKey(runConfig(prev)) || (s.device.status === 'ready' && prev.device.status !== 'ready'))
      scheduleGenerate();
    const id = s.config.kernel;
    if (s.buffers[id] !== prev.buffers[id]) saveBuffer(env.storage, id, s.buffers[id]);
    if (s.stash !== prev.stash) saveStash(env.storage, s.stash);
    if (
      s.config !== prev.config ||
      s.tab !== prev.tab ||
      s.buffers !== prev.buffers ||
      s.generated !== prev.generated
    ) {
      clearTimeout(hashTimer);
      hashTimer = setTimeout(writeHash, delay.hash);
    }
  });

  const openHash = (hash = env.getHash()) => {
    // A pending write of the old state's hash must not clobber the link being opened.
    clearTimeout(hashTimer);
    if (!hash || hash === '#' || hash === lastWrittenHash) return;
    const r = decodePermalink(hash, kernelIds);
    if (r.ok) act(applyPermalink, r.state);
    else act(linkFailed, r.error);
  };

  return {
    start() {
      act(restoreBuffers, loadBuffers(env.storage, kernelIds), loadStash(env.storage, kernelIds));
      openHash();
      init();
    },
    runNow,
    edit(text) {
      if (text === getApp().buffers[getApp().config.kernel]?.text) return;
      act(editBuffer, text);
      if (getApp().autoRun) scheduleRun();
    },
    reset() {
      act(resetBuffer);
      if (getApp().autoRun) scheduleRun();
    },
    cancelRun() {
      const s = getApp();
      if (s.run.status === 'running' && s.run.id !== undefined) client.cancel(s.run.id);
    },
    loseDevice() {
      client.request({ type: 'lose-device' });
    },
    recover,
    link(base) {
      return base.replace(/#.*$/, '') + encodePermalink(permalinkOf(getApp()));
    },
    openHash,
    tuner: {
      runTune(req, onProgress) {
        const { id, done } = client.request({ type: 'tune', ...req }, (msg) => {
          if (msg.type === 'tune-progress') {
            const { generation, evaluated, bestMs, entry } = msg;
            onProgress({ generation, evaluated, bestMs, ...(entry ? { entry } : {}) });
          }
        });
        tuneId = id;
        return done.then((msg) => {
          if (tuneId === id) tuneId = undefined;
          if (msg.type === 'tune-done') return { report: msg.report, fromCache: msg.fromCache };
          if (msg.type === 'cancelled') throw new WorkerRequestError('cancelled', 'hunt cancelled');
          throw new WorkerRequestError(
            'error',
            msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}`,
          );
        });
      },
      cancelTune() {
        if (tuneId !== undefined) client.cancel(tuneId);
      },
      runAutokernel(req) {
        return client.request({ type: 'autokernel', ...req }).done.then((msg) => {
          if (msg.type !== 'autokernel-result')
            throw new WorkerRequestError(
              'error',
              msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}`,
            );
          const { type: _type, id: _id, ...result } = msg;
          return result;
        });
      },
      loadTile(tile, op, shape, staging) {
        const family = families.find((f) => f.id === TUNE_OP_KERNEL[op]);
        if (!family) return;
        act(selectKernel, family);
        act(setField, 'm', shape.m);
        act(setField, 'n', shape.n);
        act(setField, 'k', shape.k);
        for (const f of ['wm', 'wn', 'rm', 'rn'] as const) act(setTile, f, tile[f]);
        if (staging) act(setStaging, staging);
        act(setTab, 'ownership');
      },
    },
  };
}
