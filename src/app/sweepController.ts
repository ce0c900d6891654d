// The shape sweep's wiring: the sweep form's range over the current config, one worker 'run' per point
// (timed as the playground times, no ownership recording), in order, cancellable between and during
// points; points the family refuses are never sent. Each point is saved as it lands (the tune-runs
// database's "sweeps" store), so a reload keeps what was measured.
import { estimateSweep, workOf } from '../kernels/perf/estimate';
import type { Guard } from './guard';
import { sweepPointOf } from './perf/sweepPerf';
import type { TuneRunStore } from './persistence/tuneRuns';
import {
  act,
  currentCatalog,
  endSweep,
  getApp,
  newSweep,
  setSweep,
  sweepPlan,
  sweepValues,
  withPoint,
  type AppState,
  type SweepPoint,
  type SweepRecord,
} from './store';
import type { WorkerClient } from './worker/client';

export interface SweepController {
  /**
   * Run the form's range over the current config (its generated kernel, not an edit); a sweep estimated
   * past the guard's limit asks first unless `confirmed`.
   */
  start(confirmed?: boolean): void;
  /** Stop the sweep: the point in flight is cancelled, the rest are marked cancelled. */
  cancel(): void;
  /** Show a stored sweep. */
  show(key: string): void;
  remove(key: string): void;
  /** Read the stored sweeps. */
  refresh(): Promise<void>;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** What the sweep controller works with. */
interface SweepEnv {
  client: WorkerClient;
  openStore: () => Promise<TuneRunStore>;
  guard: Guard;
}

/** What the sweep controller keeps between calls. */
interface SweepSession {
  env: SweepEnv;
  storeP?: Promise<TuneRunStore>;
  /** The request in flight (a cancel goes to it). */
  inFlight?: number | undefined;
  /** The running sweep was cancelled: no more points are sent. */
  cancelled: boolean;
}

const store = (r: SweepSession) => (r.storeP ??= r.env.openStore());
const failed = (e: unknown) => act(setSweep, { error: `sweeps unavailable (IndexedDB): ${message(e)}` });
const showSweep = (rec: SweepRecord) => act(setSweep, { current: rec });

/** Read the stored sweeps into the store. */
async function refresh(r: SweepSession) {
  try {
    act(setSweep, { stored: await (await store(r)).listSweeps() });
  } catch (e) {
    failed(e);
  }
}

async function save(r: SweepSession, rec: SweepRecord) {
  try {
    await (await store(r)).putSweep(rec);
  } catch (e) {
    failed(e);
  }
}

/** Run point `i` of a sweep through the worker's 'run'; resolves with the point measured, or why not. */
async function runPoint(r: SweepSession, rec: SweepRecord, i: number): Promise<SweepPoint> {
  const point = rec.points[i]!;
  const opts = getApp().runOptions;
  const { id, done } = r.env.client.request({
    type: 'run',
    config: { ...rec.base, params: { ...rec.base.params, [rec.axis]: point.value } },
    instrument: false,
    timing: { targetMs: opts.targetMs, batches: opts.batches },
  });
  r.inFlight = id;
  const msg = await done;
  r.inFlight = undefined;
  if (msg.type === 'run-result') return sweepPointOf(point.value, msg.outcome);
  if (msg.type === 'cancelled') return { ...point, status: 'cancelled' };
  if (msg.type === 'error')
    return {
      value: point.value,
      status: msg.kind === 'shape' ? 'refused' : 'failed',
      message: msg.message,
    };
  return { value: point.value, status: 'failed', message: `unexpected reply ${msg.type}` };
}

/** The form's sweep over the current config, or why there is none (shown). */
function plannedSweep(s: AppState) {
  if (s.sweep.current?.status === 'running') return undefined;
  const deviceId = s.device.deviceId;
  if (s.device.status !== 'ready' || !deviceId) {
    act(setSweep, { error: 'no GPU device is ready to run the sweep' });
    return undefined;
  }
  const range = sweepValues(s.sweep.form);
  if ('error' in range) {
    act(setSweep, { error: range.error });
    return undefined;
  }
  return {
    deviceId,
    plan: sweepPlan(currentCatalog(s), s.config, s.sweep.form.axis, range.values, s.device.caps),
  };
}

/** What timing the points the family accepts costs here. */
function sweepEstimate(guard: Guard, s: AppState, plan: ReturnType<typeof sweepPlan>) {
  const catalog = currentCatalog(s);
  const opts = s.runOptions;
  const sent = plan.filter((p) => !p.problems.length);
  return estimateSweep(
    sent.map((p) => workOf(catalog, p.config)),
    guard.rateOf(s, s.config.kernel, s.config.arm),
    {
      targetMs: opts.targetMs,
      batches: opts.batches,
      passes: s.generated?.passes.length ?? 1,
      software: guard.software(s),
    },
  );
}

/** Run the form's range over the current config; past the guard's limit it asks first. */
function start(r: SweepSession, confirmed = false) {
  const s = getApp();
  const planned = plannedSweep(s);
  if (!planned) return;
  const est = sweepEstimate(r.env.guard, s, planned.plan);
  if (!r.env.guard.allow({ ...est, action: 'sweep' }, confirmed)) return;
  const rec = newSweep(planned.deviceId, s.config, s.sweep.form.axis, planned.plan, new Date().toISOString());
  r.cancelled = false;
  act(setSweep, { current: rec, error: undefined });
  void runSweep(r, rec);
}

/** Send the pending points in order, each shown and saved as it lands, until done or cancelled. */
async function runSweep(r: SweepSession, rec: SweepRecord) {
  for (let i = 0; i < rec.points.length && !r.cancelled; i++) {
    if (rec.points[i]!.status !== 'pending') continue;
    showSweep((rec = withPoint(rec, i, { ...rec.points[i]!, status: 'running' })));
    rec = withPoint(rec, i, await runPoint(r, rec, i));
    showSweep(rec);
    await save(r, rec);
  }
  showSweep((rec = endSweep(rec, r.cancelled ? 'cancelled' : 'complete')));
  await save(r, rec);
  await refresh(r);
}

async function remove(r: SweepSession, key: string) {
  try {
    await (await store(r)).deleteSweep(key);
  } catch (e) {
    failed(e);
  }
  await refresh(r);
}

/**
 * The sweep controller over the app's worker client and the tune-runs store.
 * @example const sweep = createSweepController({ client, openStore: openTuneRuns }); sweep.start();
 */
export function createSweepController(env: SweepEnv): SweepController {
  const r: SweepSession = { env, cancelled: false };
  return {
    start: (confirmed) => start(r, confirmed),
    cancel() {
      r.cancelled = true;
      if (r.inFlight !== undefined) env.client.cancel(r.inFlight);
    },
    show(key) {
      const rec = getApp().sweep.stored.find((x) => x.key === key);
      if (rec && getApp().sweep.current?.status !== 'running') showSweep(rec);
    },
    remove(key) {
      void remove(r, key);
    },
    refresh: () => refresh(r),
  };
}
