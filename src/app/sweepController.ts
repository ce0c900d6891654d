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

/**
 * The sweep controller over the app's worker client and the tune-runs store.
 * @example const sweep = createSweepController({ client, openStore: openTuneRuns }); sweep.start();
 */
export function createSweepController(env: {
  client: WorkerClient;
  openStore: () => Promise<TuneRunStore>;
  guard: Guard;
}): SweepController {
  const { client } = env;
  let storeP: Promise<TuneRunStore> | undefined;
  const store = () => (storeP ??= env.openStore());
  /** The request in flight and whether the running sweep was cancelled. */
  let inFlight: number | undefined;
  let cancelled = false;

  const failed = (e: unknown) => act(setSweep, { error: `sweeps unavailable (IndexedDB): ${message(e)}` });
  const refresh = async () => {
    try {
      act(setSweep, { stored: await (await store()).listSweeps() });
    } catch (e) {
      failed(e);
    }
  };
  const save = async (r: SweepRecord) => {
    try {
      await (await store()).putSweep(r);
    } catch (e) {
      failed(e);
    }
  };
  const show = (r: SweepRecord) => act(setSweep, { current: r });

  async function runPoint(r: SweepRecord, i: number): Promise<SweepPoint> {
    const point = r.points[i]!;
    const opts = getApp().runOptions;
    const { id, done } = client.request({
      type: 'run',
      config: { ...r.base, params: { ...r.base.params, [r.axis]: point.value } },
      instrument: false,
      timing: { targetMs: opts.targetMs, batches: opts.batches },
    });
    inFlight = id;
    const msg = await done;
    inFlight = undefined;
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

  return {
    start(confirmed = false) {
      const s = getApp();
      if (s.sweep.current?.status === 'running') return;
      const deviceId = s.device.deviceId;
      if (s.device.status !== 'ready' || !deviceId) {
        act(setSweep, { error: 'no GPU device is ready to run the sweep' });
        return;
      }
      const range = sweepValues(s.sweep.form);
      if ('error' in range) {
        act(setSweep, { error: range.error });
        return;
      }
      const catalog = currentCatalog(s);
      const plan = sweepPlan(catalog, s.config, s.sweep.form.axis, range.values, s.device.caps);
      const opts = s.runOptions;
      const sent = plan.filter((p) => !p.problems.length);
      const est = estimateSweep(
        sent.map((p) => workOf(catalog, p.config)),
        env.guard.rateOf(s, s.config.kernel, s.config.arm),
        {
          targetMs: opts.targetMs,
          batches: opts.batches,
          passes: s.generated?.passes.length ?? 1,
          software: env.guard.software(s),
        },
      );
      if (!env.guard.allow({ ...est, action: 'sweep' }, confirmed)) return;
      let r = newSweep(deviceId, s.config, s.sweep.form.axis, plan, new Date().toISOString());
      cancelled = false;
      act(setSweep, { current: r, error: undefined });
      void (async () => {
        for (let i = 0; i < r.points.length && !cancelled; i++) {
          if (r.points[i]!.status !== 'pending') continue;
          show((r = withPoint(r, i, { ...r.points[i]!, status: 'running' })));
          r = withPoint(r, i, await runPoint(r, i));
          show(r);
          await save(r);
        }
        show((r = endSweep(r, cancelled ? 'cancelled' : 'complete')));
        await save(r);
        await refresh();
      })();
    },
    cancel() {
      cancelled = true;
      if (inFlight !== undefined) client.cancel(inFlight);
    },
    show(key) {
      const r = getApp().sweep.stored.find((x) => x.key === key);
      if (r && getApp().sweep.current?.status !== 'running') show(r);
    },
    remove(key) {
      void (async () => {
        try {
          await (await store()).deleteSweep(key);
        } catch (e) {
          failed(e);
        }
        await refresh();
      })();
    },
    refresh,
  };
}
