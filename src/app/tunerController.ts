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

/** The stored runs: listed into the store, written in order, removed, exported and imported. */
function runHistory(store: () => Promise<TuneRunStore>) {
  let writes: Promise<unknown> = Promise.resolve();
  const refresh = async () => {
    try {
      act(runsLoaded, await (await store()).list());
    } catch (e) {
      act(tuneStoreFailed, `run history unavailable (IndexedDB): ${message(e)}`);
    }
  };
  return {
    refresh,
    /** Store a report; writes are kept in order (each measured config after the one before). */
    persist(report: TuneReport, then?: () => void) {
      writes = writes
        .then(async () => {
          await (await store()).put(report);
          then?.();
        })
        .catch((e: unknown) => act(tuneStoreFailed, `could not save the hunt (IndexedDB): ${message(e)}`));
      return writes;
    },
    /** Every write asked for so far, done. */
    settled: () => writes,
    async remove(run: TuneRun) {
      try {
        await (await store()).delete(run.key);
      } catch (e) {
        act(tuneStoreFailed, message(e));
      }
      await refresh();
    },
    async importJson(file: File) {
      act(importFinished, undefined, undefined);
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
    },
  };
}
type RunHistory = ReturnType<typeof runHistory>;

/** The stored report of a problem on this device, if any (a store that cannot be read has none). */
async function storedReport(store: () => Promise<TuneRunStore>, key: string) {
  try {
    return await (await store()).cachedReport(key);
  } catch {
    return undefined;
  }
}

/** The guard on a hunt: its configs (less those a resume replays) at the base config's work. */
function guardHunt(
  guard: Guard,
  s: AppState,
  hunt: { base: RunConfig; evo: HuntState['evo']; replayed: number },
  what: { force?: boolean; resume?: boolean },
  confirmed: boolean,
) {
  const catalog = catalogIn(s, hunt.base.kernel);
  if (!catalog) return true;
  // The main thread has the catalog, not the search: the configs are an upper bound, less the replayed.
  const shape = huntShape(hunt.evo, { software: guard.software(s) });
  const est = estimateHunt(workOf(catalog, hunt.base), guard.rateOf(s, hunt.base.kernel, hunt.base.arm), {
    ...shape,
    configs: Math.max(1, shape.configs - hunt.replayed),
  });
  return guard.allow({ ...est, action: 'hunt', ...what }, confirmed);
}

/** The store's state of a hunt just asked for (replaying a stored winner when `cached`). */
const newHunt = (
  h: Pick<HuntState, 'key' | 'id' | 'base' | 'evo' | 'op' | 'deviceId' | 'problem' | 'resumed'>,
  cached: boolean,
): HuntState => ({
  ...h,
  status: 'running',
  stage: cached ? 'replaying the stored winner' : 'starting',
  generation: 0,
  evaluated: 0,
  bestMs: Infinity,
  entries: [],
  startedAt: new Date().toISOString(),
  stored: false,
});

/**
 * A hunt of `base` in the worker: its progress into the store, every measured config stored as it lands
 * (merged with the entries of the run it resumes, `older`), its end into the store and the history.
 */
function huntRunner(env: {
  client: WorkerClient;
  now: () => number;
  store: () => Promise<TuneRunStore>;
  history: RunHistory;
}) {
  const { client, now, history } = env;
  return (base: RunConfig, evo: HuntState['evo'], older: readonly TuneRecordEntry[], force: boolean) => {
    const s = getApp();
    const catalog = catalogIn(s, base.kernel);
    const deviceId = s.device.deviceId;
    if (!catalog?.tuning || !deviceId) return;
    const op = catalog.tuning.op;
    const problem = tuneProblemKey(catalog, base);
    const key = runKey({ deviceId, op, problem });
    let t0 = 0;
    /** What is stored for a hunt in flight: its entries, and those of the run it resumes not replayed yet. */
    const partial = (h: HuntState) => {
      const seen = new Set(h.entries.map((e) => e.config));
      const merged = { ...h, entries: [...h.entries, ...older.filter((e) => !seen.has(e.config))] };
      return partialReport(merged, catalog.id, now() - t0);
    };
    void (async () => {
      const cached = !force && !older.length ? await storedReport(env.store, key) : undefined;
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
          if (msg.entry && h?.id === id) void history.persist(partial(h));
        },
      );
      act(
        huntStarted,
        newHunt({ key, id, base, evo, op, deviceId, problem, resumed: older.length }, !!cached),
      );
      // Listed as interrupted from the start: a reload before the first measurement still shows it.
      if (!cached) void history.persist(partial(getApp().tuner.hunt!)).then(history.refresh);
      const msg = await done;
      if (msg.type === 'tune-done') {
        act(huntDone, id, msg.report, msg.fromCache);
        if (!msg.fromCache) await history.persist(msg.report, () => act(huntStored, key));
      } else if (msg.type === 'cancelled') {
        act(huntEnded, id, 'interrupted');
        await history.settled();
      } else act(huntEnded, id, 'error', msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}`);
      await history.refresh();
    })();
  };
}

/** The autokernel's pick for `base` in the worker, serving the stored winner where it is proven. */
async function autokernelPick(
  client: WorkerClient,
  store: () => Promise<TuneRunStore>,
  base: RunConfig,
  key: string,
) {
  act(autoStarted);
  const cached = await storedReport(store, key);
  // A stored pick the incumbent was not measurably slower than is not served (runs hunted before a pick
  // had to beat the incumbent): the incumbent is.
  const cachedWinner = cached && huntSummary(cached).kind !== 'unproven' ? cached.winner : undefined;
  const msg = await client.request({ type: 'autokernel', base, ...(cachedWinner ? { cachedWinner } : {}) })
    .done;
  if (msg.type === 'autokernel-result') {
    const { type: _t, id: _i, ...result } = msg;
    act(autoFinished, result);
  } else act(autoFinished, { error: msg.type === 'error' ? msg.message : `unexpected reply ${msg.type}` });
}

/**
 * The tuner controller over the app's worker client and the tune-runs store.
 * @example const tuner = createTunerController({ client, openStore: openTuneRuns, now, guard }); tuner.start();
 */
export function createTunerController(env: {
  client: WorkerClient;
  openStore: () => Promise<TuneRunStore>;
  now: () => number;
  guard: Guard;
}): TunerController {
  const { client, guard } = env;
  let storeP: Promise<TuneRunStore> | undefined;
  const store = () => (storeP ??= env.openStore());
  const history = runHistory(store);
  const hunt = huntRunner({ client, now: env.now, store, history });
  /** The form's base config, when the form can hunt now. */
  const formReady = (s: AppState) => {
    if (tunerBlockers(s).length) return undefined;
    const catalog = catalogIn(s, s.tuner.form.kernel)!;
    return { catalog, base: formBase(s.tuner.form, catalog) };
  };

  return {
    start() {
      void history.refresh().then(() => {
        const s = getApp();
        const newest = s.tuner.runs?.[0];
        if (newest && !s.tuner.hunt) act(showRun, newest);
      });
    },
    hunt(force, confirmed = false) {
      const s = getApp();
      const form = s.tuner.hunt?.status === 'running' ? undefined : formReady(s);
      if (!form) return;
      const { evo } = s.tuner.form;
      if (!guardHunt(guard, s, { base: form.base, evo, replayed: 0 }, { force }, confirmed)) return;
      hunt(form.base, evo, [], force);
    },
    resume(confirmed = false) {
      const s = getApp();
      const h = s.tuner.hunt;
      if (!h || h.status !== 'interrupted' || s.device.status !== 'ready') return;
      const replayed = h.entries.length;
      if (!guardHunt(guard, s, { base: h.base, evo: h.evo, replayed }, { resume: true }, confirmed)) return;
      hunt(h.base, h.evo, h.entries, true);
    },
    cancel() {
      const id = getApp().tuner.hunt?.id;
      if (id !== undefined) client.cancel(id);
    },
    autokernel() {
      const s = getApp();
      const form = formReady(s);
      if (!form) return;
      const problem = tuneProblemKey(form.catalog, form.base);
      const key = runKey({ deviceId: s.device.deviceId!, op: form.catalog.tuning!.op, problem });
      void autokernelPick(client, store, form.base, key);
    },
    load(config) {
      act(loadConfig, config);
      act(setTab, 'ownership');
    },
    show(run) {
      act(showRun, run);
    },
    remove(run) {
      void history.remove(run);
    },
    async exportJson() {
      return (await store()).exportJson();
    },
    importJson(file) {
      void history.importJson(file);
    },
  };
}
