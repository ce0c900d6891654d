// Tuning runs in IndexedDB (database "mmq-playground-tune", store "runs").
//
// What is stored: one record per (device id, op, m, n, k) -- the latest hunt for that key -- holding the
// winner's config name, its ms, the date, and the FULL TuneReport (every evaluated config with its
// verdict, ms, reason and error; best ms per generation; the GA parameters).
// Why: a hunt costs seconds to minutes of GPU time and its winner is only valid on the device that ran
// it (the device id includes the plane width). Keeping it lets the playground replay the winner (the
// seed's `cached_winner` / autokernel cache) and show the run's evidence after a reload, and lets a user
// export the runs as JSON and import them elsewhere. Nothing else is stored here.
//
// This is the only module that imports `idb` (lint enforces it).
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { COOPMAT_STAGINGS, type CoopmatStaging } from '../../kernels/family';
import type {
  EvolutionParams,
  TuneOp,
  TuneRecordEntry,
  TuneReport,
  TuneVerdict,
} from '../../workers/protocol';

export const TUNE_RUNS_DB = 'mmq-playground-tune';
const DB_VERSION = 1;
export const TUNE_RUNS_FORMAT = 'mmq-playground/tune-runs';
export const TUNE_RUNS_FORMAT_VERSION = 1;

const OPS: readonly TuneOp[] = ['mmq_q4k_tile', 'mmq_q4k_coopmat'];
const VERDICTS: readonly TuneVerdict[] = ['measured', 'rejected', 'failed-gate'];

/** One stored hunt. */
export interface TuneRun {
  deviceId: string;
  op: TuneOp;
  m: number;
  n: number;
  k: number;
  /** The winning config name ('' when no config passed the gate). */
  winner: string;
  bestMs: number;
  /** ISO date the hunt started. */
  date: string;
  report: TuneReport;
}

type RunKey = [string, TuneOp, number, number, number];

interface TuneRunsSchema extends DBSchema {
  runs: { key: RunKey; value: TuneRun; indexes: { byDate: string } };
}

/** A file that is not a valid tune-runs export; the message says where and what. */
export class TuneImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TuneImportError';
  }
}

/** The store API the dashboard uses. */
export interface TuneRunStore {
  /** Store a report as the run of its key (replacing an older one). */
  put(report: TuneReport): Promise<TuneRun>;
  get(deviceId: string, op: TuneOp, m: number, n: number, k: number): Promise<TuneRun | undefined>;
  /** Every run, newest first. */
  list(): Promise<TuneRun[]>;
  delete(deviceId: string, op: TuneOp, m: number, n: number, k: number): Promise<void>;
  /** The stored winner's config name, if a run for the key found one. */
  cachedWinner(deviceId: string, op: TuneOp, m: number, n: number, k: number): Promise<string | undefined>;
  /** All runs as a JSON document (see parseTuneRunsJson). */
  exportJson(): Promise<string>;
  /** Validate a JSON export, then store every run in it (all or nothing). Throws TuneImportError. */
  importJson(text: string): Promise<{ imported: number }>;
  clear(): Promise<void>;
  close(): void;
}

/** A run record from a report. */
export function runOf(report: TuneReport): TuneRun {
  const { deviceId, op, m, n, k, winner, bestMs, startedAt } = report;
  return { deviceId, op, m, n, k, winner, bestMs, date: startedAt, report };
}

const keyOf = (r: Pick<TuneRun, 'deviceId' | 'op' | 'm' | 'n' | 'k'>): RunKey => [
  r.deviceId,
  r.op,
  r.m,
  r.n,
  r.k,
];

/**
 * Open (creating on first use) the tune-runs database.
 * @example
 * const runs = await openTuneRuns();
 * await runs.put(report);
 * await runs.cachedWinner(deviceId, 'mmq_q4k_tile', 16, 16, 256); // 'WM=1,WN=1,RM=1,RN=1'
 */
export async function openTuneRuns(name = TUNE_RUNS_DB): Promise<TuneRunStore> {
  const db: IDBPDatabase<TuneRunsSchema> = await openDB<TuneRunsSchema>(name, DB_VERSION, {
    upgrade(database) {
      const store = database.createObjectStore('runs', { keyPath: ['deviceId', 'op', 'm', 'n', 'k'] });
      store.createIndex('byDate', 'date');
    },
  });
  const store: TuneRunStore = {
    async put(report) {
      const run = runOf(validateReport(report, 'report'));
      await db.put('runs', run);
      return run;
    },
    get: (deviceId, op, m, n, k) => db.get('runs', [deviceId, op, m, n, k]),
    async list() {
      const all = await db.getAllFromIndex('runs', 'byDate');
      return all.reverse();
    },
    delete: (deviceId, op, m, n, k) => db.delete('runs', [deviceId, op, m, n, k]),
    async cachedWinner(deviceId, op, m, n, k) {
      const run = await db.get('runs', [deviceId, op, m, n, k]);
      return run && run.winner !== '' && Number.isFinite(run.bestMs) ? run.winner : undefined;
    },
    async exportJson() {
      return serializeTuneRuns(await store.list());
    },
    async importJson(text) {
      const runs = parseTuneRunsJson(text);
      const tx = db.transaction('runs', 'readwrite');
      await Promise.all([...runs.map((r) => tx.store.put(r)), tx.done]);
      return { imported: runs.length };
    },
    clear: () => db.clear('runs'),
    close: () => db.close(),
  };
  return store;
}

/** The JSON export of runs. Infinity (rejected configs' ms) is written as the string "Infinity". */
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

/**
 * Parse and validate a tune-runs export. Every field is checked; the first problem is reported with
 * its path, e.g. `runs[2].report.entries[7].verdict: expected one of measured, rejected, failed-gate`.
 */
export function parseTuneRunsJson(text: string): TuneRun[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new TuneImportError(`not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const root = obj(doc, '(file)');
  if (root.format !== TUNE_RUNS_FORMAT) {
    throw new TuneImportError(
      `format: expected "${TUNE_RUNS_FORMAT}", got ${show(root.format)} -- not an MMQ Playground tune-runs export`,
    );
  }
  if (root.version !== TUNE_RUNS_FORMAT_VERSION) {
    throw new TuneImportError(`version: expected ${TUNE_RUNS_FORMAT_VERSION}, got ${show(root.version)}`);
  }
  if (!Array.isArray(root.runs)) throw new TuneImportError(`runs: expected an array, got ${show(root.runs)}`);
  const runs = root.runs.map((r, i) => validateRun(r, `runs[${i}]`));
  const seen = new Set<string>();
  runs.forEach((r, i) => {
    const key = JSON.stringify(keyOf(r));
    if (seen.has(key))
      throw new TuneImportError(
        `runs[${i}]: a second run for ${r.deviceId} ${r.op} m=${r.m},n=${r.n},k=${r.k}`,
      );
    seen.add(key);
  });
  return runs;
}

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

function validateEntry(v: unknown, path: string): TuneRecordEntry {
  const e = obj(v, path);
  const t = obj(e.tile, `${path}.tile`);
  const verdict = oneOf(e.verdict, VERDICTS, `${path}.verdict`);
  const ms = nonNeg(e.ms, `${path}.ms`, true);
  if (verdict === 'measured' && !Number.isFinite(ms))
    fail(`${path}.ms`, 'a finite time for a measured config', e.ms);
  return {
    config: str(e.config, `${path}.config`, true),
    tile: {
      wm: posInt(t.wm, `${path}.tile.wm`),
      wn: posInt(t.wn, `${path}.tile.wn`),
      rm: posInt(t.rm, `${path}.tile.rm`),
      rn: posInt(t.rn, `${path}.tile.rn`),
    },
    ...(optional(e, 'staging', (x, p) => oneOf(x, COOPMAT_STAGINGS, p), path) as {
      staging?: CoopmatStaging;
    }),
    generation: int(e.generation, `${path}.generation`),
    verdict,
    ms,
    ...(optional(e, 'reason', str, path) as { reason?: string }),
    ...(optional(e, 'worstRel', (x, p) => nonNeg(x, p, true), path) as { worstRel?: number }),
    bm: posInt(e.bm, `${path}.bm`),
    bn: posInt(e.bn, `${path}.bn`),
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
      // Runs stored before the re-timings were clocked have no wallMs.
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
    measureIters: posInt(e.measureIters, `${path}.measureIters`),
    repeats: posInt(e.repeats, `${path}.repeats`),
    banks: posInt(e.banks, `${path}.banks`),
  };
}

/** Validate a TuneReport's shape (used on import and before every put). */
export function validateReport(v: unknown, path: string): TuneReport {
  const r = obj(v, path);
  if (!Array.isArray(r.entries)) fail(`${path}.entries`, 'an array', r.entries);
  if (!Array.isArray(r.bestPerGeneration)) fail(`${path}.bestPerGeneration`, 'an array', r.bestPerGeneration);
  const report: TuneReport = {
    op: oneOf(r.op, OPS, `${path}.op`),
    deviceId: str(r.deviceId, `${path}.deviceId`, true),
    m: posInt(r.m, `${path}.m`),
    n: posInt(r.n, `${path}.n`),
    k: posInt(r.k, `${path}.k`),
    winner: str(r.winner, `${path}.winner`),
    bestMs: nonNeg(r.bestMs, `${path}.bestMs`, true),
    entries: r.entries.map((e, i) => validateEntry(e, `${path}.entries[${i}]`)),
    bestPerGeneration: r.bestPerGeneration.map((x, i) => nonNeg(x, `${path}.bestPerGeneration[${i}]`, true)),
    evo: validateEvo(r.evo, `${path}.evo`),
    startedAt: isoDate(r.startedAt, `${path}.startedAt`),
    durationMs: nonNeg(r.durationMs, `${path}.durationMs`),
    ...(optional(r, 'incumbentMs', (x, p) => nonNeg(x, p, true), path) as { incumbentMs?: number }),
    ...(optional(r, 'arm', str, path) as { arm?: string }),
    ...(optional(r, 'plane', posInt, path) as { plane?: number }),
    ...(optional(r, 'timing', (x, p) => oneOf(x, ['timestamp', 'wall'] as const, p), path) as {
      timing?: 'timestamp' | 'wall';
    }),
    ...(optional(r, 'worstRel', (x, p) => nonNeg(x, p, true), path) as { worstRel?: number }),
    ...(optional(r, 'gatedRows', posInt, path) as { gatedRows?: number }),
    ...(optional(r, 'finals', validateFinals, path) as { finals?: NonNullable<TuneReport['finals']> }),
  };
  if (
    report.winner !== '' &&
    !report.entries.some((e) => e.config === report.winner && e.verdict === 'measured')
  ) {
    fail(`${path}.winner`, 'the name of a measured entry (or "")', r.winner);
  }
  for (const [i, f] of (report.finals ?? []).entries())
    if (!report.entries.some((e) => e.config === f.config && e.verdict === 'measured'))
      fail(`${path}.finals[${i}].config`, 'the name of a measured entry', f.config);
  return report;
}

function validateRun(v: unknown, path: string): TuneRun {
  const r = obj(v, path);
  const report = validateReport(r.report, `${path}.report`);
  const run: TuneRun = {
    deviceId: str(r.deviceId, `${path}.deviceId`, true),
    op: oneOf(r.op, OPS, `${path}.op`),
    m: posInt(r.m, `${path}.m`),
    n: posInt(r.n, `${path}.n`),
    k: posInt(r.k, `${path}.k`),
    winner: str(r.winner, `${path}.winner`),
    bestMs: nonNeg(r.bestMs, `${path}.bestMs`, true),
    date: isoDate(r.date, `${path}.date`),
    report,
  };
  for (const key of ['deviceId', 'op', 'm', 'n', 'k', 'winner'] as const) {
    if (run[key] !== report[key])
      fail(`${path}.${key}`, `the report's ${key} ${show(report[key])}`, run[key]);
  }
  return run;
}
