// The tuner's state lives in the store, not in a component: a hunt keeps running and reporting while
// other tabs are shown, its form keeps what was typed, and after a reload the last stored run (complete
// or interrupted) is shown again. Pure actions over AppState['tuner'] (the controller persists).
import type {
  DataChoice,
  FamilyCatalog,
  FamilyParams,
  KernelId,
  ParamValue,
  RunConfig,
} from '../../kernels/family';
import {
  DEFAULT_EVO,
  type EvolutionParams,
  type TuneRecordEntry,
  type TuneReport,
  type WorkerResponse,
} from '../../workers/protocol';

export { DEFAULT_EVO };
import type { TuneRun } from '../persistence/tuneRuns';
import type { ImportSummary } from '../tuner/importSummary';
import { bestPerGenerationOf } from '../tuner/tunerData';

/** The hunt form: a tunable family's problem (its params besides what the search sets, and data) and the search. */
export interface TunerForm {
  kernel: KernelId;
  params: FamilyParams;
  data: DataChoice;
  evo: EvolutionParams;
}

export type HuntStatus = 'running' | 'complete' | 'interrupted' | 'error';

/** A hunt on display: the one running, the last one, or a stored one. */
export interface HuntState {
  /** Stored-run key (deviceId|op|problem). */
  key: string;
  /** Worker request id while running. */
  id?: number | undefined;
  base: RunConfig;
  evo: EvolutionParams;
  op: string;
  deviceId: string;
  problem: string;
  status: HuntStatus;
  stage?: string | undefined;
  generation: number;
  evaluated: number;
  bestMs: number;
  entries: TuneRecordEntry[];
  /** Entries measured before an interruption and replayed by this (resumed) hunt. */
  resumed: number;
  report?: TuneReport | undefined;
  fromCache?: boolean | undefined;
  error?: string | undefined;
  startedAt: string;
  /** The run is saved in IndexedDB as shown. */
  stored: boolean;
}

export type AutokernelResult = Omit<Extract<WorkerResponse, { type: 'autokernel-result' }>, 'type' | 'id'>;

export interface TunerState {
  form: TunerForm;
  hunt?: HuntState | undefined;
  /** Stored runs, newest first (undefined until IndexedDB answered). */
  runs?: TuneRun[] | undefined;
  storeError?: string | undefined;
  auto?: { status: 'running' | 'done' | 'error'; result?: AutokernelResult; error?: string } | undefined;
  importNote?: string | undefined;
  importError?: string | undefined;
  /** What the last import read (runs, configs, what had no timing or was skipped, and why). */
  importRead?: ImportSummary | undefined;
}

/** The families that declare a tuning search. */
export const tunable = (catalogs: readonly FamilyCatalog[]) => catalogs.filter((c) => c.tuning);

/** The form for a family: its defaults, or the given config's params and data when it is that family's. */
export function formFor(catalog: FamilyCatalog, config?: RunConfig, evo = DEFAULT_EVO): TunerForm {
  const own = config?.kernel === catalog.id;
  return {
    kernel: catalog.id,
    params: own ? { ...config.params } : { ...catalog.defaults },
    data: own ? { ...config.data } : { source: 'reference', seed: 0 },
    evo,
  };
}

export function initialTuner(catalogs: readonly FamilyCatalog[], config: RunConfig): TunerState {
  const list = tunable(catalogs);
  const catalog = list.find((c) => c.id === config.kernel) ?? list[0];
  const form: TunerForm = catalog
    ? formFor(catalog, config)
    : { kernel: config.kernel, params: {}, data: { source: 'reference', seed: 0 }, evo: DEFAULT_EVO };
  return { form };
}

/** The base config a hunt of the form tunes (the search sets tile, staging and arm). */
export function formBase(form: TunerForm, catalog: FamilyCatalog): RunConfig {
  return {
    kernel: form.kernel,
    arm: catalog.arms[0]?.arm ?? 'scalar',
    data: form.data,
    params: { ...catalog.defaults, ...form.params },
  };
}

/**
 * The report of a hunt that has not finished (what is stored entry by entry, status 'interrupted').
 * @example store.put(partialReport(hunt, kernel, performance.now() - t0))
 */
export function partialReport(hunt: HuntState, kernel: KernelId, durationMs: number): TuneReport {
  const measured = hunt.entries.filter((e) => e.verdict === 'measured');
  return {
    op: hunt.op,
    kernel,
    deviceId: hunt.deviceId,
    problem: hunt.problem,
    base: hunt.base,
    winner: '',
    bestMs: measured.reduce((b, e) => Math.min(b, e.ms), Infinity),
    entries: hunt.entries,
    bestPerGeneration: bestPerGenerationOf(hunt.entries),
    evo: hunt.evo,
    startedAt: hunt.startedAt,
    durationMs: Math.max(0, durationMs),
    status: 'interrupted',
  };
}

/** A stored run as the dashboard shows it. */
export function huntOfRun(run: TuneRun): HuntState {
  const r = run.report;
  return {
    key: run.key,
    base: r.base,
    evo: r.evo,
    op: r.op,
    deviceId: r.deviceId,
    problem: r.problem,
    status: r.status,
    generation: r.bestPerGeneration.length - 1,
    evaluated: r.entries.length,
    bestMs: r.bestMs,
    entries: r.entries,
    resumed: 0,
    ...(r.status === 'complete' ? { report: r } : {}),
    startedAt: r.startedAt,
    stored: true,
  };
}

// ---------------------------------------------------------------------------------------------- actions
interface WithTuner {
  tuner: TunerState;
}
const patch = (s: WithTuner, p: Partial<TunerState>): Partial<WithTuner> => ({ tuner: { ...s.tuner, ...p } });

export function setTunerForm(s: WithTuner, form: TunerForm): Partial<WithTuner> {
  return patch(s, { form });
}

export function setTunerParam(s: WithTuner, key: string, value: ParamValue): Partial<WithTuner> {
  return patch(s, { form: { ...s.tuner.form, params: { ...s.tuner.form.params, [key]: value } } });
}

export function setTunerEvo(s: WithTuner, key: keyof EvolutionParams, value: number): Partial<WithTuner> {
  return patch(s, { form: { ...s.tuner.form, evo: { ...s.tuner.form.evo, [key]: value } } });
}

export function setTunerData(s: WithTuner, data: DataChoice): Partial<WithTuner> {
  return patch(s, { form: { ...s.tuner.form, data } });
}

export function huntStarted(s: WithTuner, hunt: HuntState): Partial<WithTuner> {
  return patch(s, { hunt, auto: undefined });
}

/** A 'tune-progress' of the running hunt: its stage, counters and the config just measured. */
export function huntProgress(
  s: WithTuner,
  id: number,
  msg: Extract<WorkerResponse, { type: 'tune-progress' }>,
): Partial<WithTuner> {
  const h = s.tuner.hunt;
  if (!h || h.id !== id || h.status !== 'running') return {};
  return patch(s, {
    hunt: {
      ...h,
      stage: msg.stage ?? h.stage,
      generation: msg.generation,
      evaluated: msg.evaluated,
      bestMs: msg.bestMs,
      entries: msg.entry ? [...h.entries, msg.entry] : h.entries,
    },
  });
}

export function huntDone(
  s: WithTuner,
  id: number,
  report: TuneReport,
  fromCache: boolean,
): Partial<WithTuner> {
  const h = s.tuner.hunt;
  if (!h || h.id !== id) return {};
  return patch(s, {
    hunt: {
      ...h,
      id: undefined,
      status: 'complete',
      stage: undefined,
      report,
      fromCache,
      entries: report.entries,
      bestMs: report.bestMs,
      stored: fromCache,
    },
  });
}

/** The hunt ended early: cancelled ('interrupted', resumable) or failed. */
export function huntEnded(
  s: WithTuner,
  id: number,
  status: 'interrupted' | 'error',
  error?: string,
): Partial<WithTuner> {
  const h = s.tuner.hunt;
  if (!h || h.id !== id) return {};
  return patch(s, { hunt: { ...h, id: undefined, status, stage: undefined, error } });
}

export function huntStored(s: WithTuner, key: string): Partial<WithTuner> {
  const h = s.tuner.hunt;
  if (!h || h.key !== key || h.stored) return {};
  return patch(s, { hunt: { ...h, stored: true } });
}

export function runsLoaded(s: WithTuner, runs: TuneRun[]): Partial<WithTuner> {
  return patch(s, { runs });
}

export function tuneStoreFailed(s: WithTuner, message: string): Partial<WithTuner> {
  return patch(s, { storeError: message, runs: s.tuner.runs ?? [] });
}

/** Show a stored run (a hunt in flight stays the one shown). */
export function showRun(s: WithTuner, run: TuneRun): Partial<WithTuner> {
  if (s.tuner.hunt?.status === 'running') return {};
  return patch(s, { hunt: huntOfRun(run) });
}

export function autoStarted(s: WithTuner): Partial<WithTuner> {
  return patch(s, { auto: { status: 'running' } });
}

export function autoFinished(s: WithTuner, result: AutokernelResult | { error: string }): Partial<WithTuner> {
  return patch(s, {
    auto: 'error' in result ? { status: 'error', error: result.error } : { status: 'done', result },
  });
}

/** What an import read, or undefined while a new one starts (or when the file could not be read). */
export function importRead(s: WithTuner, summary: ImportSummary | undefined): Partial<WithTuner> {
  return patch(s, { importRead: summary });
}

export function importFinished(
  s: WithTuner,
  note: string | undefined,
  error: string | undefined,
): Partial<WithTuner> {
  return patch(s, { importNote: note, importError: error });
}
