// Kernel Tuner cache files (schema 1.1.0, kernel_tuner/schema/cache/1.1.0/schema.json in
// github.com/KernelTuner/kernel_tuner): a tuning run written so KTdashboard and Kernel Tuner's own tools
// read it, and read back. A cache entry is keyed by its parameter values joined with ',' and holds each
// parameter, the objective `time` (ms per run of the config's plan, the runner's figure) or Kernel
// Tuner's failure string, `times` (ms per run of each timed batch), the phase times and GFLOP/s. What
// Kernel Tuner has no field for (the search's own config name, generation, verdict, the run's base
// config) rides in `mmq_*` fields, which the schema allows, so a file round-trips. Pure and light.

export const KT_SCHEMA_VERSION = '1.1.0';

/** Kernel Tuner's strings for a config that has no time. */
export type KtFailure = 'InvalidConfig' | 'CompilationFailedConfig' | 'RuntimeFailedConfig';

/** One cache entry as the schema has it (plus this project's mmq_* fields). */
export interface KtCacheEntry {
  [param: string]: unknown;
  time: number | KtFailure;
  times?: number[];
  compile_time: number;
  verification_time: number;
  benchmark_time: number;
  strategy_time: number;
  framework_time: number;
  timestamp: string;
  'GFLOP/s'?: number;
}

export interface KtCacheFile {
  schema_version: typeof KT_SCHEMA_VERSION;
  device_name: string;
  kernel_name: string;
  problem_size: number[] | number | string;
  tune_params_keys: string[];
  tune_params: Record<string, (number | string)[]>;
  objective: string;
  cache: Record<string, KtCacheEntry>;
  [extra: string]: unknown;
}

/** A tuning run's entry as the exporter needs it (the worker's TuneRecordEntry fits). */
export interface KtSourceEntry {
  /** The search space's name of the config ("WM=2,WN=4,RM=1,RN=1,ARM=1"). */
  config: string;
  params: Readonly<Record<string, number | string>>;
  arm: string;
  generation: number;
  verdict: 'measured' | 'rejected' | 'failed-gate';
  /** ms per run; Infinity unless measured. */
  ms: number;
  reason?: string;
  worstRel?: number;
  bm?: number;
  bn?: number;
  /** ms per run of each timed batch. */
  samples?: number[];
  /** Where the measurement's wall time went, ms. */
  phases?: { compileMs: number; verifyMs: number; benchmarkMs: number };
  /** ISO time the config was measured. */
  at?: string;
}

/** A tuning run as the exporter needs it (the worker's TuneReport fits). */
export interface KtSourceRun {
  kernel: string;
  deviceId: string;
  startedAt: string;
  base: { params: Readonly<Record<string, number | string>> };
  entries: readonly KtSourceEntry[];
  /** Operations of one run of the problem (2mnk): GFLOP/s = ops / time. */
  ops?: number;
  /** The problem's key, the problem size where the shape is not m, n, k. */
  problem?: string;
}

/** The readable key a config's entry goes by: the tuned params then the arm, `key=value` joined with ','. */
export const readableConfig = (e: Pick<KtSourceEntry, 'params' | 'arm'>, keys: readonly string[]): string =>
  keys.map((k) => `${k}=${k === 'arm' ? e.arm : String(e.params[k])}`).join(',');

/**
 * The keys a family's tuning varies: its controls other than the shape (tile, staging, route...), in
 * their order, then `arm`.
 * @example tuningKeys(CATALOG.get('mmq-q4k-tile').controls) // ['wm', 'wn', 'rm', 'rn', 'arm']
 */
export const tuningKeys = (controls: readonly { key: string; group: string }[]): string[] => [
  ...controls.filter((c) => c.group !== 'shape').map((c) => c.key),
  'arm',
];

const valueOf = (e: KtSourceEntry, k: string): number | string => (k === 'arm' ? e.arm : (e.params[k] ?? ''));

const failureOf = (e: KtSourceEntry): KtFailure =>
  e.verdict === 'rejected'
    ? /WGSL|compil/i.test(e.reason ?? '')
      ? 'CompilationFailedConfig'
      : 'InvalidConfig'
    : 'RuntimeFailedConfig';

/**
 * A tuning run as a Kernel Tuner 1.1.0 cache file. `keys` are the tuned params (tuningKeys); the run's
 * other fields go to `mmq_run` so fromKtCache can rebuild it.
 * @example JSON.stringify(toKtCache(report, { keys: tuningKeys(family.controls), deviceName: 'SwiftShader' }))
 */
export function toKtCache(
  run: KtSourceRun,
  opts: { keys: readonly string[]; deviceName?: string },
): KtCacheFile {
  const { keys } = opts;
  const tune_params: Record<string, (number | string)[]> = {};
  for (const k of keys) {
    const seen = [...new Set(run.entries.map((e) => valueOf(e, k)))];
    tune_params[k] = seen.every((v) => typeof v === 'number')
      ? (seen as number[]).sort((a, b) => a - b)
      : seen.map(String).sort();
  }
  const cache: Record<string, KtCacheEntry> = {};
  for (const e of run.entries) {
    const measured = e.verdict === 'measured' && Number.isFinite(e.ms);
    const entry: KtCacheEntry = {
      ...Object.fromEntries(keys.map((k) => [k, valueOf(e, k)])),
      time: measured ? e.ms : failureOf(e),
      times: e.samples ?? (measured ? [e.ms] : []),
      compile_time: e.phases?.compileMs ?? 0,
      verification_time: e.phases?.verifyMs ?? 0,
      benchmark_time: e.phases?.benchmarkMs ?? 0,
      strategy_time: 0,
      framework_time: 0,
      timestamp: e.at ?? run.startedAt,
      ...(measured && run.ops ? { 'GFLOP/s': run.ops / (e.ms * 1e6) } : {}),
      mmq_config: e.config,
      mmq_generation: e.generation,
      mmq_verdict: e.verdict,
      ...(e.reason !== undefined ? { mmq_reason: e.reason } : {}),
      ...(e.worstRel !== undefined ? { mmq_worst_rel: e.worstRel } : {}),
      ...(e.bm !== undefined ? { mmq_bm: e.bm } : {}),
      ...(e.bn !== undefined ? { mmq_bn: e.bn } : {}),
      mmq_params: e.params,
    };
    cache[keys.map((k) => String(valueOf(e, k))).join(',')] = entry;
  }
  const { entries: _entries, ...rest } = run;
  const p = run.base.params;
  const shape = ['m', 'n', 'k'].map((k) => p[k]);
  return {
    schema_version: KT_SCHEMA_VERSION,
    device_name: opts.deviceName ?? run.deviceId,
    kernel_name: run.kernel,
    problem_size: shape.every((v) => typeof v === 'number') ? (shape as number[]) : (run.problem ?? ''),
    tune_params_keys: [...keys],
    tune_params,
    objective: 'time',
    cache,
    mmq_run: JSON.parse(
      JSON.stringify(rest, (_k, v: unknown) => (v === Infinity ? 'Infinity' : v)),
    ) as unknown,
  };
}

/** A file that is not a Kernel Tuner 1.1.0 cache this project can read; the message says where. */
export class KtCacheError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KtCacheError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const FAILURES: readonly string[] = ['InvalidConfig', 'CompilationFailedConfig', 'RuntimeFailedConfig'];

/**
 * Read a Kernel Tuner cache file (1.1.0) back into a tuning run: the `mmq_run` fields with `entries`
 * rebuilt from the cache (a file Kernel Tuner wrote, without mmq_* fields, gives entries named by their
 * cache key, params from the tuned keys). Throws KtCacheError naming the first problem.
 * @example const run = fromKtCache(JSON.parse(text)); validateReport(run, 'kt')
 */
export function fromKtCache(json: unknown): Record<string, unknown> & { entries: KtSourceEntry[] } {
  if (!isObject(json)) throw new KtCacheError('not a JSON object');
  if (json.schema_version !== KT_SCHEMA_VERSION)
    throw new KtCacheError(
      `schema_version: expected "${KT_SCHEMA_VERSION}", got ${JSON.stringify(json.schema_version)}`,
    );
  for (const k of ['device_name', 'kernel_name', 'objective'])
    if (typeof json[k] !== 'string') throw new KtCacheError(`${k}: expected a string`);
  const keys = json.tune_params_keys;
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string'))
    throw new KtCacheError('tune_params_keys: expected an array of strings');
  if (!isObject(json.tune_params)) throw new KtCacheError('tune_params: expected an object');
  if (!isObject(json.cache)) throw new KtCacheError('cache: expected an object');
  const run = isObject(json.mmq_run) ? json.mmq_run : {};
  const entries: KtSourceEntry[] = Object.entries(json.cache).map(([key, raw]) => {
    const at = `cache["${key}"]`;
    if (!isObject(raw)) throw new KtCacheError(`${at}: expected an object`);
    const time = raw.time;
    if (!(typeof time === 'number' && time > 0) && !(typeof time === 'string' && FAILURES.includes(time)))
      throw new KtCacheError(`${at}.time: expected a positive number or one of ${FAILURES.join(', ')}`);
    const times = raw.times;
    if (times !== undefined && !(Array.isArray(times) && times.every((t) => typeof t === 'number')))
      throw new KtCacheError(`${at}.times: expected an array of numbers`);
    const params = isObject(raw.mmq_params)
      ? (raw.mmq_params as Record<string, number | string>)
      : Object.fromEntries(keys.filter((k) => k !== 'arm').map((k) => [k, raw[k] as number | string]));
    const verdict =
      raw.mmq_verdict === 'measured' || raw.mmq_verdict === 'rejected' || raw.mmq_verdict === 'failed-gate'
        ? raw.mmq_verdict
        : typeof time === 'number'
          ? 'measured'
          : time === 'RuntimeFailedConfig'
            ? 'failed-gate'
            : 'rejected';
    const num = (v: unknown) => (typeof v === 'number' ? v : 0);
    return {
      config: typeof raw.mmq_config === 'string' ? raw.mmq_config : key,
      params,
      arm: String(raw.arm ?? ''),
      generation: typeof raw.mmq_generation === 'number' ? raw.mmq_generation : 0,
      verdict,
      ms: typeof time === 'number' ? time : Infinity,
      ...(typeof raw.mmq_reason === 'string'
        ? { reason: raw.mmq_reason }
        : typeof time === 'string'
          ? { reason: time }
          : {}),
      ...(typeof raw.mmq_worst_rel === 'number' ? { worstRel: raw.mmq_worst_rel } : {}),
      ...(typeof raw.mmq_bm === 'number' ? { bm: raw.mmq_bm } : {}),
      ...(typeof raw.mmq_bn === 'number' ? { bn: raw.mmq_bn } : {}),
      ...(times ? { samples: times as number[] } : {}),
      phases: {
        compileMs: num(raw.compile_time),
        verifyMs: num(raw.verification_time),
        benchmarkMs: num(raw.benchmark_time),
      },
      ...(typeof raw.timestamp === 'string' ? { at: raw.timestamp } : {}),
    };
  });
  const revive = (v: unknown): unknown =>
    v === 'Infinity'
      ? Infinity
      : Array.isArray(v)
        ? v.map(revive)
        : isObject(v)
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]))
          : v;
  return {
    kernel: json.kernel_name,
    deviceId: json.device_name,
    ...(revive(run) as Record<string, unknown>),
    entries,
  };
}

const csvCell = (v: unknown): string => {
  const s =
    typeof v === 'number' || typeof v === 'string' ? String(v) : v === undefined ? '' : JSON.stringify(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/**
 * A cache file's entries as CSV: one row per config, the tuned params then time, the times' count,
 * the phase times, GFLOP/s and the timestamp.
 * @example ktCacheCsv(toKtCache(report, { keys })).split('\n')[0] // 'wm,wn,rm,rn,arm,time,...'
 */
export function ktCacheCsv(file: KtCacheFile): string {
  const cols = [
    ...file.tune_params_keys,
    'time',
    'times',
    'compile_time',
    'verification_time',
    'benchmark_time',
    'GFLOP/s',
    'timestamp',
  ];
  const rows = Object.values(file.cache).map((e) =>
    cols.map((c) => csvCell(c === 'times' ? (e.times ?? []).join(' ') : e[c])).join(','),
  );
  return [cols.join(','), ...rows].join('\n') + '\n';
}
