// Tuning hunts in IndexedDB (database "mmq-playground-tune", store "hunts").
//
// What is stored: one record per (device id, tuning op, problem) -- the latest hunt for that key --
// holding its status ('complete', or 'interrupted': a hunt that was cancelled, or cut short by a reload
// or a closed tab), the winner's config name and ms, the dates, and the FULL TuneReport (the problem's
// base config, every evaluated config with its params, verdict, ms, reason and error; best ms per
// generation; the search parameters). A running hunt is written entry by entry as each config is
// measured, marked 'interrupted' until its report arrives, so a reload keeps everything measured.
// Why: a hunt costs seconds to hours of GPU time and its winner is only valid on the device that ran it
// (the device id includes the plane width). Keeping it lets the playground replay the winner (the
// reference's `cached_winner` / autokernel), resume an interrupted hunt without measuring again, show a
// run's evidence after a reload, and export runs as JSON and import them elsewhere. Nothing else is
// stored here.
//
// Store "sweeps" (version 3) keeps the shape sweeps (store/sweep.ts SweepRecord: the config swept, the
// param and every point's timing, throughput, verdict or reason, and its bytes, ops, arithmetic and arm
// for the roofline), one record per sweep, so a sweep's curve survives a reload beside the hunts of the
// same device. The roofline fields are optional: records from before them load and show their times.
//
// Version 2 keys hunts by the family's problem key (tuneProblemKey) instead of (m, n, k): version-1 runs
// (from before kernel families declared their knobs) cannot be replayed and are dropped on upgrade.
//
// This is the only module that imports `idb` (lint enforces it).
import { CATALOG } from '../../kernels/catalog';
import { readKtCache, type KtFamily, type KtImport } from '../../kernels/perf/ktCache';
import { tuneProblemKey } from '../../kernels/tune/problem';
import type { Spread } from '../../kernels/perf/spread';
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { ARMS } from '../../kernels/gpu/caps';
import { DATA_SOURCES, type RunConfig } from '../../kernels/family';
import {
  DEFAULT_EVO,
  type EvolutionParams,
  type TuneRecordEntry,
  type TuneReport,
  type TuneVerdict,
} from '../../workers/protocol';
import type { SweepRecord } from '../store/sweep';

export const TUNE_RUNS_DB = 'mmq-playground-tune';
const DB_VERSION = 3;
export const TUNE_RUNS_FORMAT = 'mmq-playground/tune-runs';
export const TUNE_RUNS_FORMAT_VERSION = 2;

const VERDICTS: readonly TuneVerdict[] = ['measured', 'rejected', 'failed-gate'];

/** One stored hunt. */
export interface TuneRun {
  /** `${deviceId}|${op}|${problem}` (runKey). */
  key: string;
  deviceId: string;
  op: string;
  kernel: string;
  problem: string;
  status: TuneReport['status'];
  /** The winning config name ('' when none passed, or the hunt did not finish). */
  winner: string;
  bestMs: number;
  /** ISO date the hunt started. */
  date: string;
  report: TuneReport;
}

interface TuneRunsSchema extends DBSchema {
  hunts: { key: string; value: TuneRun; indexes: { byDate: string } };
  sweeps: { key: string; value: SweepRecord; indexes: { byDate: string } };
}

/** A file that is not a valid tune-runs export; the message says where and what. */
export class TuneImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TuneImportError';
  }
}

/** The store API the tuner uses. */
export interface TuneRunStore {
  /** Store a report (complete or interrupted) as the run of its key, replacing an older one. */
  put(report: TuneReport): Promise<TuneRun>;
  get(key: string): Promise<TuneRun | undefined>;
  /** Every run, newest first. */
  list(): Promise<TuneRun[]>;
  delete(key: string): Promise<void>;
  /** The complete report of a key, if a finished hunt found a winner (the worker's cache replays it). */
  cachedReport(key: string): Promise<TuneReport | undefined>;
  /** All runs as a JSON document (see parseTuneRunsJson). */
  exportJson(): Promise<string>;
  /** Validate a JSON export, then store every run in it (all or nothing). Throws TuneImportError. */
  importJson(text: string): Promise<{ imported: number }>;
  clear(): Promise<void>;
  /** Store a shape sweep (replacing the record of its key: a running sweep is saved point by point). */
  putSweep(sweep: SweepRecord): Promise<void>;
  /** Every stored sweep, newest first. */
  listSweeps(): Promise<SweepRecord[]>;
  deleteSweep(key: string): Promise<void>;
  close(): void;
}

/**
 * The key a hunt is stored under.
 * @example runKey({ deviceId: 'google/swiftshader#plane4', op: 'mmq_q4k_tile', problem: 'm=16,n=16,k=256' })
 */
export function runKey(r: Pick<TuneReport, 'deviceId' | 'op' | 'problem'>): string {
  return `${r.deviceId}|${r.op}|${r.problem}`;
}

/** A run record from a report. */
export function runOf(report: TuneReport): TuneRun {
  const { deviceId, op, kernel, problem, winner, bestMs, startedAt, status } = report;
  return {
    key: runKey(report),
    deviceId,
    op,
    kernel,
    problem,
    status,
    winner,
    bestMs,
    date: startedAt,
    report,
  };
}

/**
 * Open (creating on first use, upgrading a version-1 database) the tune-runs database.
 * @example
 * const runs = await openTuneRuns();
 * await runs.put(report);
 * (await runs.cachedReport(runKey(report)))?.winner; // 'WM=1,WN=1,RM=1,RN=1,ARM=0'
 */
export async function openTuneRuns(name = TUNE_RUNS_DB): Promise<TuneRunStore> {
  const db: IDBPDatabase<TuneRunsSchema> = await openDB<TuneRunsSchema>(name, DB_VERSION, {
    upgrade(database) {
      // Version 1's "runs" store (keyed by m, n, k) holds reports of another shape: dropped.
      const names = [...database.objectStoreNames] as string[];
      if (names.includes('runs')) (database as unknown as IDBDatabase).deleteObjectStore('runs');
      if (!names.includes('hunts')) {
        const store = database.createObjectStore('hunts', { keyPath: 'key' });
        store.createIndex('byDate', 'date');
      }
      if (!names.includes('sweeps')) {
        const sweeps = database.createObjectStore('sweeps', { keyPath: 'key' });
        sweeps.createIndex('byDate', 'startedAt');
      }
    },
  });
  const store: TuneRunStore = {
    async put(report) {
      const run = runOf(validateReport(report, 'report'));
      await db.put('hunts', run);
      return run;
    },
    get: (key) => db.get('hunts', key),
    async list() {
      const all = await db.getAllFromIndex('hunts', 'byDate');
      return all.reverse();
    },
    delete: (key) => db.delete('hunts', key),
    async cachedReport(key) {
      const run = await db.get('hunts', key);
      return run && run.status === 'complete' && run.winner !== '' && Number.isFinite(run.bestMs)
        ? run.report
        : undefined;
    },
    async exportJson() {
      return serializeTuneRuns(await store.list());
    },
    async importJson(text) {
      const runs = parseTuneRunsJson(text);
      const tx = db.transaction('hunts', 'readwrite');
      await Promise.all([...runs.map((r) => tx.store.put(r)), tx.done]);
      return { imported: runs.length };
    },
    clear: () => db.clear('hunts'),
    async putSweep(sweep) {
      await db.put('sweeps', sweep);
    },
    async listSweeps() {
      return (await db.getAllFromIndex('sweeps', 'byDate')).reverse();
    },
    deleteSweep: (key) => db.delete('sweeps', key),
    close: () => db.close(),
  };
  return store;
}

/** The JSON export of runs. Infinity (unmeasured configs' ms) is written as the string "Infinity". */
export function serializeTuneRuns(runs: readonly TuneRun[], exportedAt = new Date()): string {
  const doc = {
    format: TUNE_RUNS_FORMAT,
    version: TUNE_RUNS_FORMAT_VERSION,
    exportedAt: exportedAt.toISOString(),
    runs,
  };
  return JSON.stringify(
    doc,
    (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v),
    2,
  );
}

/** What an import read: its runs, and what the parser left out (each with why). */
export interface TuneRunsImport {
  runs: TuneRun[];
  skipped: { what: string; why: string }[];
}

/**
 * A Kernel Tuner 1.1.0 cache file as a stored run. One this app (or `mmq tune --kt-cache`) wrote carries
 * the run's own fields in `mmq_run`. One without them (Kernel Tuner's own, or a file it resumed) is read
 * against the family its `kernel_name` names: each entry a config of that family at the file's
 * problem_size (the others left out, each with why), the fastest measured one the winner.
 */
function ktCacheRun(root: Record<string, unknown>): TuneRunsImport {
  // The reader's own refusal (not a cache at all), as the import's.
  const read = (family?: KtFamily): KtImport => {
    try {
      return readKtCache(root, family);
    } catch (e) {
      throw new TuneImportError(`Kernel Tuner cache: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  if ('mmq_run' in root) return { runs: [runOf(validateReport(read().run, 'kt-cache'))], skipped: [] };
  const catalog = typeof root.kernel_name === 'string' ? CATALOG.find(root.kernel_name) : undefined;
  if (!catalog?.tuning)
    throw new TuneImportError(
      `Kernel Tuner cache: kernel_name ${show(root.kernel_name)} is none of the kernels tuned here (${CATALOG.families
        .filter((f) => f.tuning)
        .map((f) => f.id)
        .join(', ')}), and the file has no mmq_run block saying which it is`,
    );
  const imp = read(catalog);
  const skipped = imp.skipped.map((s) => ({ what: 'cache entry', why: s.reason }));
  const entries = imp.run.entries;
  if (!entries.length)
    throw new TuneImportError(
      `Kernel Tuner cache: none of its ${imp.total} entries is a ${catalog.id} config${skipped[0] ? ` (${skipped[0].why})` : ''}`,
    );
  const best = entries
    .filter((e) => e.verdict === 'measured')
    .reduce<(typeof entries)[number] | undefined>((a, e) => (a && a.ms <= e.ms ? a : e), undefined);
  const { params } = imp.run.base as { params: RunConfig['params'] };
  const base: RunConfig = {
    kernel: catalog.id,
    arm: (best ?? entries[0]!).arm as RunConfig['arm'],
    data: { source: 'reference', seed: 0 },
    params,
  };
  const dates = entries.flatMap((e) => (e.at ? [e.at] : [])).sort();
  const startedAt = dates[0] ?? new Date().toISOString();
  const report = validateReport(
    {
      op: catalog.tuning.op,
      kernel: catalog.id,
      deviceId: root.device_name,
      problem: tuneProblemKey(catalog, base),
      base,
      winner: best?.config ?? '',
      ...(best ? { winnerConfig: { ...base, arm: best.arm, params: best.params } } : {}),
      bestMs: best?.ms ?? Infinity,
      entries: entries.map((e) => ({ ...e, at: e.at ?? startedAt })),
      bestPerGeneration: [best?.ms ?? Infinity],
      evo: DEFAULT_EVO,
      startedAt,
      durationMs: 0,
      status: 'complete',
    },
    'kt-cache',
  );
  return { runs: [runOf(report)], skipped };
}

/**
 * Parse and validate a tune-runs export (or a Kernel Tuner 1.1.0 cache file of one run), with what was
 * left out. Every field is checked; the first problem is reported with its path, e.g.
 * `runs[2].report.entries[7].verdict: expected one of measured, rejected, failed-gate`.
 */
export function parseTuneRunsImport(text: string): TuneRunsImport {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new TuneImportError(`not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const root = obj(doc, '(file)');
  if ('schema_version' in root && 'cache' in root) return ktCacheRun(root);
  if (root.format !== TUNE_RUNS_FORMAT) {
    throw new TuneImportError(
      `format: expected "${TUNE_RUNS_FORMAT}", got ${show(root.format)} -- not an MMQ Playground tune-runs export`,
    );
  }
  if (root.version !== TUNE_RUNS_FORMAT_VERSION) {
    throw new TuneImportError(
      `version: expected ${TUNE_RUNS_FORMAT_VERSION}, got ${show(root.version)}${root.version === 1 ? ' (version-1 exports predate the per-family tuning problems and cannot be replayed)' : ''}`,
    );
  }
  if (!Array.isArray(root.runs)) throw new TuneImportError(`runs: expected an array, got ${show(root.runs)}`);
  const runs = root.runs.map((r, i) => validateRun(r, `runs[${i}]`));
  const seen = new Set<string>();
  runs.forEach((r, i) => {
    if (seen.has(r.key)) throw new TuneImportError(`runs[${i}]: a second run for ${r.key}`);
    seen.add(r.key);
  });
  return { runs, skipped: [] };
}

/** parseTuneRunsImport's runs. */
export const parseTuneRunsJson = (text: string): TuneRun[] => parseTuneRunsImport(text).runs;

// ------------------------------------------------------------------ validation
type Obj = Record<string, unknown>;

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 40 ? `${s.slice(0, 40)}...` : s;
}

function fail(path: string, what: string, v: unknown): never {
  throw new TuneImportError(`${path}: expected ${what}, got ${show(v)}`);
}

function obj(v: unknown, path: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, 'an object', v);
  return v as Obj;
}

function str(v: unknown, path: string, nonEmpty = false): string {
  if (typeof v !== 'string' || (nonEmpty && v === ''))
    fail(path, nonEmpty ? 'a non-empty string' : 'a string', v);
  return v;
}

/** A number, or Infinity written as the string "Infinity" (JSON has no Infinity). */
function num(v: unknown, path: string, allowInfinity = false): number {
  if (allowInfinity && (v === 'Infinity' || v === Infinity)) return Infinity;
  if (typeof v !== 'number' || !Number.isFinite(v))
    fail(path, allowInfinity ? 'a number or "Infinity"' : 'a finite number', v);
  return v;
}

function nonNeg(v: unknown, path: string, allowInfinity = false): number {
  const x = num(v, path, allowInfinity);
  if (x < 0) fail(path, 'a number >= 0', v);
  return x;
}

function posInt(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) fail(path, 'a positive integer', v);
  return v;
}

function int(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) fail(path, 'an integer >= 0', v);
  return v;
}

function oneOf<T extends string>(v: unknown, values: readonly T[], path: string): T {
  if (!values.includes(v as T)) fail(path, `one of ${values.join(', ')}`, v);
  return v as T;
}

function isoDate(v: unknown, path: string): string {
  const s = str(v, path);
  if (Number.isNaN(Date.parse(s))) fail(path, 'an ISO date', v);
  return s;
}

function optional<T>(
  o: Obj,
  key: string,
  read: (v: unknown, path: string) => T,
  path: string,
): { [k: string]: T } {
  return o[key] === undefined ? {} : { [key]: read(o[key], `${path}.${key}`) };
}

/** Family params: numbers and strings by key. */
function params(v: unknown, path: string): Record<string, number | string> {
  const o = obj(v, path);
  for (const [k, x] of Object.entries(o))
    if (typeof x !== 'string' && (typeof x !== 'number' || !Number.isFinite(x)))
      fail(`${path}.${k}`, 'a number or a string', x);
  return o as Record<string, number | string>;
}

function runConfig(v: unknown, path: string): RunConfig {
  const c = obj(v, path);
  const d = obj(c.data, `${path}.data`);
  const config: RunConfig = {
    kernel: str(c.kernel, `${path}.kernel`, true),
    arm: oneOf(c.arm, ARMS, `${path}.arm`),
    data: {
      source: oneOf(d.source, DATA_SOURCES, `${path}.data.source`),
      seed: int(d.seed, `${path}.data.seed`),
    },
    params: params(c.params, `${path}.params`),
  };
  if (c.plane !== undefined) config.plane = posInt(c.plane, `${path}.plane`);
  if (d.tensor !== undefined) {
    const t = obj(d.tensor, `${path}.data.tensor`);
    const f = obj(t.file, `${path}.data.tensor.file`);
    config.data.tensor = {
      file: {
        name: str(f.name, `${path}.data.tensor.file.name`),
        size: int(f.size, `${path}.data.tensor.file.size`),
        headerHash: str(f.headerHash, `${path}.data.tensor.file.headerHash`, true),
      },
      tensor: str(t.tensor, `${path}.data.tensor.tensor`, true),
      activation: oneOf(t.activation, ['normal', 'outliers'] as const, `${path}.data.tensor.activation`),
    };
  }
  return config;
}

function times(v: unknown, path: string): number[] {
  if (!Array.isArray(v)) fail(path, 'an array of ms', v);
  return v.map((x, i) => nonNeg(x, `${path}[${i}]`));
}

function phases(v: unknown, path: string): NonNullable<TuneRecordEntry['phases']> {
  const p = obj(v, path);
  return {
    compileMs: nonNeg(p.compileMs, `${path}.compileMs`),
    verifyMs: nonNeg(p.verifyMs, `${path}.verifyMs`),
    benchmarkMs: nonNeg(p.benchmarkMs, `${path}.benchmarkMs`),
  };
}

function spread(v: unknown, path: string): Spread {
  const s = obj(v, path);
  return {
    n: posInt(s.n, `${path}.n`),
    min: nonNeg(s.min, `${path}.min`),
    median: nonNeg(s.median, `${path}.median`),
    p90: nonNeg(s.p90, `${path}.p90`),
    max: nonNeg(s.max, `${path}.max`),
  };
}

function validateClaim(v: unknown, path: string): NonNullable<TuneReport['claim']> {
  const c = obj(v, path);
  const rounds = obj(c.rounds, `${path}.rounds`);
  return {
    verdict: oneOf(c.verdict, ['faster', 'slower', 'no measurable difference'] as const, `${path}.verdict`),
    ratio: nonNeg(c.ratio, `${path}.ratio`),
    a: spread(c.a, `${path}.a`),
    b: spread(c.b, `${path}.b`),
    rounds: {
      incumbentMs: times(rounds.incumbentMs, `${path}.rounds.incumbentMs`),
      winnerMs: times(rounds.winnerMs, `${path}.rounds.winnerMs`),
    },
  };
}

function validateEntry(v: unknown, path: string): TuneRecordEntry {
  const e = obj(v, path);
  const verdict = oneOf(e.verdict, VERDICTS, `${path}.verdict`);
  const ms = nonNeg(e.ms, `${path}.ms`, true);
  if (verdict === 'measured' && !Number.isFinite(ms))
    fail(`${path}.ms`, 'a finite time for a measured config', e.ms);
  return {
    config: str(e.config, `${path}.config`, true),
    params: params(e.params, `${path}.params`),
    arm: oneOf(e.arm, ARMS, `${path}.arm`),
    generation: int(e.generation, `${path}.generation`),
    verdict,
    ms,
    ...(optional(e, 'reason', str, path) as { reason?: string }),
    ...(optional(e, 'worstRel', (x, p) => nonNeg(x, p, true), path) as { worstRel?: number }),
    ...(optional(e, 'bm', posInt, path) as { bm?: number }),
    ...(optional(e, 'bn', posInt, path) as { bn?: number }),
    ...(optional(e, 'label', str, path) as { label?: string }),
    ...(optional(e, 'samples', times, path) as { samples?: number[] }),
    ...(optional(e, 'phases', phases, path) as Pick<TuneRecordEntry, 'phases'>),
    ...(optional(e, 'at', isoDate, path) as { at?: string }),
    ...(optional(e, 'bytes', nonNeg, path) as { bytes?: number }),
  };
}

function validateFinals(v: unknown, path: string): NonNullable<TuneReport['finals']> {
  if (!Array.isArray(v)) fail(path, 'an array', v);
  return v.map((x, i) => {
    const f = obj(x, `${path}[${i}]`);
    return {
      config: str(f.config, `${path}[${i}].config`, true),
      ms: nonNeg(f.ms, `${path}[${i}].ms`, true),
      searchMs: nonNeg(f.searchMs, `${path}[${i}].searchMs`, true),
      ...(f.wallMs === undefined ? {} : { wallMs: nonNeg(f.wallMs, `${path}[${i}].wallMs`) }),
    };
  });
}

function validateEvo(v: unknown, path: string): EvolutionParams {
  const e = obj(v, path);
  return {
    population: posInt(e.population, `${path}.population`),
    generations: posInt(e.generations, `${path}.generations`),
    seed: int(e.seed, `${path}.seed`),
    measureMs: nonNeg(e.measureMs, `${path}.measureMs`),
    batches: posInt(e.batches, `${path}.batches`),
    banks: posInt(e.banks, `${path}.banks`),
  };
}

function validateVerdict(v: unknown, path: string): NonNullable<TuneReport['winnerVerdict']> {
  const w = obj(v, path);
  if (typeof w.pass !== 'boolean') fail(`${path}.pass`, 'a boolean', w.pass);
  return {
    pass: w.pass,
    gate: str(w.gate, `${path}.gate`),
    relToMax: nonNeg(w.relToMax, `${path}.relToMax`, true),
    mismatches: int(w.mismatches, `${path}.mismatches`),
  };
}

/** Validate a TuneReport's shape (used on import and before every put). */
export function validateReport(v: unknown, path: string): TuneReport {
  const r = obj(v, path);
  if (!Array.isArray(r.entries)) fail(`${path}.entries`, 'an array', r.entries);
  if (!Array.isArray(r.bestPerGeneration)) fail(`${path}.bestPerGeneration`, 'an array', r.bestPerGeneration);
  const report: TuneReport = {
    op: str(r.op, `${path}.op`, true),
    kernel: str(r.kernel, `${path}.kernel`, true),
    deviceId: str(r.deviceId, `${path}.deviceId`, true),
    problem: str(r.problem, `${path}.problem`),
    base: runConfig(r.base, `${path}.base`),
    winner: str(r.winner, `${path}.winner`),
    bestMs: nonNeg(r.bestMs, `${path}.bestMs`, true),
    entries: r.entries.map((e, i) => validateEntry(e, `${path}.entries[${i}]`)),
    bestPerGeneration: r.bestPerGeneration.map((x, i) => nonNeg(x, `${path}.bestPerGeneration[${i}]`, true)),
    evo: validateEvo(r.evo, `${path}.evo`),
    startedAt: isoDate(r.startedAt, `${path}.startedAt`),
    durationMs: nonNeg(r.durationMs, `${path}.durationMs`),
    status: oneOf(r.status, ['complete', 'interrupted'] as const, `${path}.status`),
    ...(optional(r, 'winnerConfig', runConfig, path) as { winnerConfig?: RunConfig }),
    ...(optional(r, 'incumbentMs', (x, p) => nonNeg(x, p, true), path) as { incumbentMs?: number }),
    ...(optional(r, 'timing', (x, p) => oneOf(x, ['timestamp', 'wall'] as const, p), path) as {
      timing?: 'timestamp' | 'wall';
    }),
    ...(optional(r, 'worstRel', (x, p) => nonNeg(x, p, true), path) as { worstRel?: number }),
    ...(optional(r, 'gatedRows', posInt, path) as { gatedRows?: number }),
    ...(optional(r, 'winnerVerdict', validateVerdict, path) as {
      winnerVerdict?: NonNullable<TuneReport['winnerVerdict']>;
    }),
    ...(optional(r, 'finals', validateFinals, path) as { finals?: NonNullable<TuneReport['finals']> }),
    ...(optional(r, 'ops', nonNeg, path) as { ops?: number }),
    ...(optional(r, 'claim', validateClaim, path) as Pick<TuneReport, 'claim'>),
  };
  const measured = new Set(report.entries.filter((e) => e.verdict === 'measured').map((e) => e.config));
  if (report.winner !== '' && !measured.has(report.winner))
    fail(`${path}.winner`, 'the name of a measured entry (or "")', r.winner);
  for (const [i, f] of (report.finals ?? []).entries())
    if (!measured.has(f.config))
      fail(`${path}.finals[${i}].config`, 'the name of a measured entry', f.config);
  return report;
}

function validateRun(v: unknown, path: string): TuneRun {
  const r = obj(v, path);
  const report = validateReport(r.report, `${path}.report`);
  const run = runOf(report);
  for (const key of ['key', 'deviceId', 'op', 'problem', 'winner', 'status'] as const) {
    if (r[key] !== run[key]) fail(`${path}.${key}`, `the report's ${key} ${show(run[key])}`, r[key]);
  }
  return run;
}
