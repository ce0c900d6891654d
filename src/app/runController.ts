// The run's wiring: a config edit regenerates the kernel (debounced), a generated kernel or an editor
// edit runs it (debounced, when auto-run is on), the guard asks before a long run, a cancel is answered
// within about a second, and the oracle and the error drill-down are asked of the worker. What comes back
// goes to the store; React components never see the worker.
import type { RunConfig } from '../kernels/family';
import type { ElementPartials } from '../kernels/partials';
import { estimate, workOf } from '../kernels/perf/estimate';
import { kernelWithProblems, type WorkerResponse } from '../workers/protocol';
import type { DeviceController } from './deviceController';
import type { Guard } from './guard';
import {
  act,
  configKey,
  configProblems,
  currentCatalog,
  editBuffer,
  editedWgsl,
  generated,
  generating,
  getApp,
  oracleFinished,
  oracleStarted,
  resetBuffer,
  runBlockers,
  runCancelled,
  runCompileError,
  runFailed,
  runFinished,
  runProgress,
  runStarted,
  type AppState,
} from './store';
import type { WorkerClient } from './worker/client';

/** How a run is asked for: `confirmed` skips the long-run question; `untimed` skips the timing. */
export interface RunChoice {
  confirmed?: boolean;
  untimed?: boolean;
  noOwnership?: boolean;
}

/** The drill-down's answer: the breakdown, or why there is none (`why`), or what failed (`error`). */
export type PartialsAnswer = { partials: ElementPartials } | { why: string } | { error: string };

export interface RunController {
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
  /** Re-open a lost device and run again. */
  recover(): void;
  /** The config, the device or the open files changed: regenerate after the debounce. */
  scheduleGenerate(): void;
}

/** What the run controller works with. */
interface RunEnv {
  client: WorkerClient;
  guard: Guard;
  device: DeviceController;
  now: () => number;
  delays: { generate: number; run: number };
}

/** What the run controller keeps between calls. */
interface RunSession {
  env: RunEnv;
  generateTimer?: ReturnType<typeof setTimeout>;
  runTimer?: ReturnType<typeof setTimeout>;
  /** The choice a run asked for before its kernel was generated: it runs once it is. */
  runAfterGenerate?: RunChoice | undefined;
  /** When the user pressed cancel (the app's own figure of how fast a cancel is answered). */
  cancelAt?: number | undefined;
  /**
   * The config whose run the user cancelled: not auto-run again (the restarted worker's 'ready'
   * regenerates the kernel, and re-running the big run just cancelled kept the tab busy for minutes).
   */
  cancelledKey?: string | undefined;
}

/** The CPU oracle of the current config, asked of the worker (no GPU needed). */
function computeOracle(client: WorkerClient) {
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
}

/** A generated kernel runs when a run waits for it, or auto-run is on and it was not just cancelled. */
function afterGenerate(r: RunSession, s: AppState, key: string, problems: readonly string[]) {
  const choice = r.runAfterGenerate;
  r.runAfterGenerate = undefined;
  if (problems.length) return;
  if (s.device.status === 'unavailable') {
    if (s.config.data.source !== 'tensor') computeOracle(r.env.client);
  } else if (choice || (s.runOptions.autoRun && key !== r.cancelledKey)) runNow(r, choice ?? {});
}

/** Generate the current config's kernel: the family's own problems on this side, else the worker's text. */
function generate(r: RunSession) {
  const state = getApp();
  if (state.device.status === 'starting' || state.device.status === 'lost') return; // 'ready' triggers it
  const key = configKey(state.config);
  const problems = configProblems(state);
  if (problems.length) {
    // The family's own validation on this side: the worker is not asked.
    act(generated, kernelWithProblems(problems), key);
    r.runAfterGenerate = undefined;
    return;
  }
  act(generating);
  void r.env.client.request({ type: 'generate', config: state.config }).done.then((msg) => {
    const s = getApp();
    if (configKey(s.config) !== key) return; // the config moved on
    if (msg.type === 'generated') {
      act(generated, msg.kernel, key);
      afterGenerate(r, s, key, msg.kernel.problems);
    } else if (msg.type === 'error') {
      act(generated, kernelWithProblems([msg.message]), key);
    }
  });
}

function scheduleGenerate(r: RunSession, ms = r.env.delays.generate) {
  clearTimeout(r.generateTimer);
  r.generateTimer = setTimeout(() => generate(r), ms);
}

/** The guard's question on a run of the current state; false when it is not to start. */
function allowed(guard: Guard, state: AppState, choice: RunChoice, compiledKey: string) {
  const opts = state.runOptions;
  const est = estimate(
    workOf(currentCatalog(state), state.config),
    guard.rateOf(state, state.config.kernel, state.config.arm),
    {
      timed: opts.timed && !choice.untimed,
      instrument: opts.instrument && !choice.noOwnership,
      targetMs: opts.targetMs,
      batches: opts.batches,
      passes: state.generated?.passes.length ?? 1,
      software: guard.software(state),
      compiled: guard.compiled(compiledKey),
    },
  );
  return guard.allow({ ...est, action: 'run' }, !!choice.confirmed);
}

/** What the worker answers a run: into the store (and the guard, which learns the rate). */
function onRunReply(r: RunSession, id: number, compiledKey: string, msg: WorkerResponse) {
  switch (msg.type) {
    case 'run-result':
      r.env.guard.record(msg.outcome, compiledKey);
      act(runFinished, id, msg.outcome);
      return;
    case 'compile-error':
      act(runCompileError, id, { messages: msg.messages, editorLines: msg.editorLines });
      return;
    case 'cancelled':
      act(runCancelled, id, r.cancelAt === undefined ? undefined : r.env.now() - r.cancelAt);
      r.cancelAt = undefined;
      return;
    case 'error':
      act(runFailed, id, msg.kind, msg.message);
      return;
    default:
      act(runFailed, id, 'internal', `unexpected reply ${msg.type}`);
  }
}

/** Run the current kernel: generate it first where it is not, ask the guard, then send the run. */
function runNow(r: RunSession, choice: RunChoice = {}) {
  const { client } = r.env;
  clearTimeout(r.runTimer);
  const state = getApp();
  if (runBlockers(state).length) return;
  const key = configKey(state.config);
  if (state.generatedKey !== key || state.device.status !== 'ready') {
    r.runAfterGenerate = choice;
    if (state.device.status === 'lost') recover(r);
    else scheduleGenerate(r, 0);
    return;
  }
  if (state.generated?.problems.length) return;
  // The pipelines a run compiles: its config's and the text that runs.
  const compiledKey = `${key}\n${editedWgsl(state) ?? ''}`;
  if (!allowed(r.env.guard, state, choice, compiledKey)) return;
  if (state.run.status === 'running' && state.run.id !== undefined) client.cancel(state.run.id);
  r.cancelledKey = undefined;
  const opts = state.runOptions;
  const wgsl = editedWgsl(state);
  const { id, done } = client.request({
    type: 'run',
    config: state.config,
    instrument: opts.instrument && !choice.noOwnership,
    ...(opts.timed && !choice.untimed ? { timing: { targetMs: opts.targetMs, batches: opts.batches } } : {}),
    ...(wgsl !== undefined ? { wgsl } : {}),
  });
  const hunting = getApp().tuner.hunt?.status === 'running';
  act(runStarted, id, hunting && !client.inFlight(id), r.env.now());
  void done.then((msg) => onRunReply(r, id, compiledKey, msg));
}

/** Run after a pause in typing (auto-run). */
function scheduleRun(r: RunSession) {
  clearTimeout(r.runTimer);
  r.runTimer = setTimeout(() => runNow(r), r.env.delays.run);
}

function recover(r: RunSession) {
  r.runAfterGenerate ??= {};
  r.env.device.init();
}

/**
 * The run controller over the app's worker client.
 * @example const run = createRunController({ client, guard, device, now, delays: { generate: 120, run: 600 } });
 */
export function createRunController(env: RunEnv): RunController {
  const r: RunSession = { env };
  const { client } = env;
  client.onEvent((msg: WorkerResponse) => {
    if (msg.type === 'progress') act(runProgress, msg.id, msg.stage, msg.fraction);
  });
  return {
    runNow: (choice) => runNow(r, choice),
    edit(text) {
      const s = getApp();
      if (text === s.buffers[s.config.kernel]?.text) return;
      act(editBuffer, text);
      if (getApp().runOptions.autoRun) scheduleRun(r);
    },
    reset() {
      act(resetBuffer);
      if (getApp().runOptions.autoRun) scheduleRun(r);
    },
    cancelRun() {
      const s = getApp();
      if (s.run.status === 'running' && s.run.id !== undefined) {
        r.cancelAt = env.now();
        r.cancelledKey = configKey(s.config);
        client.cancel(s.run.id);
      }
    },
    computeOracle: () => computeOracle(client),
    async elementPartials(config, row, col) {
      const msg = await client.request({ type: 'partials', config, row, col }).done;
      if (msg.type === 'partials-result')
        return msg.partials ? { partials: msg.partials } : { why: msg.why ?? 'no breakdown' };
      return { error: msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}` };
    },
    recover: () => recover(r),
    scheduleGenerate: () => scheduleGenerate(r),
  };
}
