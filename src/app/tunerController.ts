// The tuner's wiring: hunts, resumes and autokernel dispatches go to the worker; their state goes to the
// store (so a hunt keeps reporting while other tabs are shown) and every measured config to IndexedDB
// as it arrives (so a reload keeps it, listed as interrupted and resumable).
import { estimateHunt, huntShape, workOf } from '../kernels/perf/estimate';
import { tuneProblemKey } from '../kernels/tune/problem';
import type { Guard } from './guard';
import { huntSummary } from './tuner/tunerData';
import type { RunConfig } from '../kernels/family';
import type { TuneRecordEntry, TuneReport, WorkerResponse } from '../workers/protocol';
import { runKey, type TuneRun, type TuneRunStore } from './persistence/tuneRuns';
import {
  act,
  autoFinished,
  autoStarted,
  catalogIn,
  draftProblems,
  formBase,
  getApp,
  huntDone,
  huntEnded,
  huntProgress,
  huntStarted,
  huntStored,
  importFinished,
  loadConfig,
  partialReport,
  runsLoaded,
  setTab,
  showRun,
  tuneStoreFailed,
  type AppState,
  type HuntState,
} from './store';
import type { WorkerClient } from './worker/client';

export interface TunerController {
  /** Load the stored runs (and show the newest). */
  start(): void;
  /**
   * Hunt the form's problem (replaying a stored winner unless `force`); a hunt estimated past the
   * guard's limit asks first unless `confirmed`.
   */
  hunt(force: boolean, confirmed?: boolean): void;
  /** Resume the interrupted hunt on display: what it measured is replayed, not measured again. */
  resume(confirmed?: boolean): void;
  cancel(): void;
  autokernel(): void;
  /** Load a config (a winner, a table row) into the playground. */
  load(config: RunConfig): void;
  show(run: TuneRun): void;
  remove(run: TuneRun): void;
  exportJson(): Promise<string>;
  importJson(file: File): void;
}

/** Why the form cannot hunt now (inline under the buttons), first reason first. */
export function tunerBlockers(s: AppState): string[] {
  const out: string[] = [];
  if (s.device.status !== 'ready')
    out.push(
      s.device.status === 'starting'
        ? 'the GPU device is starting'
        : `no GPU device${s.device.message ? ` (${s.device.message})` : ''}`,
    );
  out.push(...draftProblems(s.drafts, ['tuner']));
  const catalog = catalogIn(s, s.tuner.form.kernel);
  if (!catalog?.tuning) out.push(`${s.tuner.form.kernel} has no tuning search`);
  else out.push(...catalog.validate(formBase(s.tuner.form, catalog), s.device.caps));
  return [...new Set(out)];
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function createTunerController(env: {
  client: WorkerClient;
  openStore: () => Promise<TuneRunStore>;
  now: () => number;
  guard: Guard;
}): TunerController {
  const { client, now } = env;
  let storeP: Promise<TuneRunStore> | undefined;
  let writes: Promise<unknown> = Promise.resolve();
  let t0 = 0;

  const store = () => (storeP ??= env.openStore());

  /** The guard on a hunt: its configs (less those a resume replays) at the base config's work. */
  const guardHunt = (
    s: AppState,
    base: RunConfig,
    evo: HuntState['evo'],
    replayed: number,
    what: { force?: boolean; resume?: boolean },
    confirmed: boolean,
  ) => {
    const catalog = catalogIn(s, base.kernel);
    if (!catalog) return true;
    // The main thread has the catalog, not the search: the configs are an upper bound, less the replayed.
    const shape = huntShape(evo, { software: env.guard.software(s) });
    const est = estimateHunt(workOf(catalog, base), env.guard.rateOf(s, base.kernel, base.arm), {
      ...shape,
      configs: Math.max(1, shape.configs - replayed),
    });
    return env.guard.allow({ ...est, action: 'hunt', ...what }, confirmed);
  };

  const refresh = async () => {
    try {
      act(runsLoaded, await (await store()).list());
    } catch (e) {
      act(tuneStoreFailed, `run history unavailable (IndexedDB): ${message(e)}`);
    }
  };

  /** Store a report; writes are kept in order (each measured config after the one before). */
  const persist = (report: TuneReport, then?: () => void) => {
    writes = writes
      .then(async () => {
        await (await store()).put(report);
        then?.();
      })
      .catch((e: unknown) => act(tuneStoreFailed, `could not save the hunt (IndexedDB): ${message(e)}`));
    return writes;
  };

  /** What is stored for a hunt in flight: its entries, and those of the run it resumes not replayed yet. */
  const partialOf = (h: HuntState, kernel: string, older: readonly TuneRecordEntry[]) => {
    const seen = new Set(h.entries.map((e) => e.config));
    const merged = { ...h, entries: [...h.entries, ...older.filter((e) => !seen.has(e.config))] };
    return partialReport(merged, kernel, now() - t0);
  };

  const start = (
    base: RunConfig,
    evo: HuntState['evo'],
    older: readonly TuneRecordEntry[],
    force: boolean,
  ) => {
    const s = getApp();
    const catalog = catalogIn(s, base.kernel);
    const deviceId = s.device.deviceId;
    if (!catalog?.tuning || !deviceId) return;
    const op = catalog.tuning.op;
    const problem = tuneProblemKey(catalog, base);
    const key = runKey({ deviceId, op, problem });
    void (async () => {
      let cached: TuneReport | undefined;
      if (!force && !older.length) {
        try {
          cached = await (await store()).cachedReport(key);
        } catch {
          cached = undefined;
        }
      }
      t0 = now();
      const { id, done } = client.request(
        {
          type: 'tune',
          base,
          evo,
          ...(older.length ? { resume: older } : {}),
          ...(cached ? { cached } : {}),
        },
        (msg: WorkerResponse) => {
          if (msg.type !== 'tune-progress') return;
          act(huntProgress, id, msg);
          const h = getApp().tuner.hunt;
          if (msg.entry && h?.id === id) void persist(partialOf(h, catalog.id, older));
        },
      );
      act(huntStarted, {
        key,
        id,
        base,
        evo,
        op,
        deviceId,
        problem,
        status: 'running',
        stage: cached ? 'replaying the stored winner' : 'starting',
        generation: 0,
        evaluated: 0,
        bestMs: Infinity,
        entries: [],
        resumed: older.length,
        startedAt: new Date().toISOString(),
        stored: false,
      });
      // Listed as interrupted from the start: a reload before the first measurement still shows it.
      if (!cached) void persist(partialOf(getApp().tuner.hunt!, catalog.id, older)).then(refresh);
      const msg = await done;
      if (msg.type === 'tune-done') {
        act(huntDone, id, msg.report, msg.fromCache);
        if (!msg.fromCache) await persist(msg.report, () => act(huntStored, key));
        await refresh();
      } else if (msg.type === 'cancelled') {
        act(huntEnded, id, 'interrupted');
        await writes;
        await refresh();
      } else {
        act(huntEnded, id, 'error', msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}`);
        await refresh();
      }
    })();
  };

  return {
    start() {
      void refresh().then(() => {
        const s = getApp();
        const newest = s.tuner.runs?.[0];
        if (newest && !s.tuner.hunt) act(showRun, newest);
      });
    },
    hunt(force, confirmed = false) {
      const s = getApp();
      if (tunerBlockers(s).length || s.tuner.hunt?.status === 'running') return;
      const catalog = catalogIn(s, s.tuner.form.kernel)!;
      const base = formBase(s.tuner.form, catalog);
      if (!guardHunt(s, base, s.tuner.form.evo, 0, { force }, confirmed)) return;
      start(base, s.tuner.form.evo, [], force);
    },
    resume(confirmed = false) {
      const s = getApp();
      const h = s.tuner.hunt;
      if (!h || h.status !== 'interrupted' || s.device.status !== 'ready') return;
      if (!guardHunt(s, h.base, h.evo, h.entries.length, { resume: true }, confirmed)) return;
      start(h.base, h.evo, h.entries, true);
    },
    cancel() {
      const id = getApp().tuner.hunt?.id;
      if (id !== undefined) client.cancel(id);
    },
    autokernel() {
      const s = getApp();
      if (tunerBlockers(s).length) return;
      const catalog = catalogIn(s, s.tuner.form.kernel)!;
      const base = formBase(s.tuner.form, catalog);
      const key = runKey({
        deviceId: s.device.deviceId!,
        op: catalog.tuning!.op,
        problem: tuneProblemKey(catalog, base),
      });
      act(autoStarted);
      void (async () => {
        let cachedWinner: string | undefined;
        try {
          const cached = await (await store()).cachedReport(key);
          // A stored pick the incumbent was not measurably slower than is not served (runs hunted
          // before a pick had to beat the incumbent): the incumbent is.
          cachedWinner = cached && huntSummary(cached).kind !== 'unproven' ? cached.winner : undefined;
        } catch {
          cachedWinner = undefined;
        }
        const msg = await client.request({
          type: 'autokernel',
          base,
          ...(cachedWinner ? { cachedWinner } : {}),
        }).done;
        if (msg.type === 'autokernel-result') {
          const { type: _t, id: _i, ...result } = msg;
          act(autoFinished, result);
        } else
          act(autoFinished, { error: msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}` });
      })();
    },
    load(config) {
      act(loadConfig, config);
      act(setTab, 'ownership');
    },
    show(run) {
      act(showRun, run);
    },
    remove(run) {
      void (async () => {
        try {
          await (await store()).delete(run.key);
        } catch (e) {
          act(tuneStoreFailed, message(e));
        }
        await refresh();
      })();
    },
    async exportJson() {
      return (await store()).exportJson();
    },
    importJson(file) {
      act(importFinished, undefined, undefined);
      void (async () => {
        try {
          const { imported } = await (await store()).importJson(await file.text());
          act(
            importFinished,
            `imported ${imported} run${imported === 1 ? '' : 's'} from ${file.name}`,
            undefined,
          );
          await refresh();
        } catch (e) {
          act(importFinished, undefined, message(e));
        }
      })();
    },
  };
}
