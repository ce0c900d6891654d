// Kernel Tuner cache files (schema 1.1.0, kernel_tuner/schema/cache/1.1.0/schema.json in
// github.com/KernelTuner/kernel_tuner): a tuning run written so KTdashboard and Kernel Tuner's own tools
// read it, and read back. A cache entry is keyed by its parameter values joined with ',' and holds each
// parameter, the objective `time` -- Kernel Tuner's meaning: the mean of `times` -- or Kernel Tuner's
// failure string, `times` (ms per run of each timed batch), the phase times and GFLOP/s. `tune_params`
// lists every value of the tuning space (as Kernel Tuner writes its tune_params), not only those visited.
// What Kernel Tuner has no field for (the runner's figure -- the fastest batch --, the search's own config
// name, generation, verdict, the run's base config) rides in `mmq_*` fields, which the schema allows, so
// a file round-trips.
//
// `cache` is written LAST: Kernel Tuner resumes a cache file by cutting its final `}\n}` and appending
// entries (kernel_tuner/util.py correct_open_cache / store_cache), so a key after `cache` would swallow
// them. Pure and light.

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
  /** The runner's figure for a measured config (the fastest batch, ms per run); `time` is the mean. */
  mmq_time?: number;
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
    ? // Stryker disable next-line StringLiteral: no stand-in for a missing reason names WGSL or compiling
      /WGSL|compil/i.test(e.reason ?? '')
      ? 'CompilationFailedConfig'
      : 'InvalidConfig'
    : 'RuntimeFailedConfig';

/**
 * Each tuning key's values over a tuning space's configs (a family's search, every feasible choice
 * applied): what `tune_params` lists. `arm` is the config's arm.
 * @example searchSpaceValues(search.space.enumerate().map((c) => search.apply(c)), keys).wm // [1, 2, 4]
 */
export function searchSpaceValues(
  configs: readonly { params: Readonly<Record<string, number | string>>; arm: string }[],
  keys: readonly string[],
): Record<string, (number | string)[]> {
  return Object.fromEntries(
    keys.map((k) => [k, sortedValues(configs.map((c) => (k === 'arm' ? c.arm : (c.params[k] ?? ''))))]),
  );
}

/** Distinct values, numbers ascending, else as sorted strings. */
function sortedValues(values: readonly (number | string)[]): (number | string)[] {
  const seen = [...new Set(values)];
  return seen.every((v) => typeof v === 'number')
    ? (seen as number[]).sort((a, b) => a - b)
    : seen.map(String).sort();
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * A tuning run as a Kernel Tuner 1.1.0 cache file. `keys` are the tuned params (tuningKeys); `space`
 * the tuning space's values per key (searchSpaceValues; without it, the values the run visited). `time`
 * is the mean of `times`; the run's own figure (the fastest batch) is `mmq_time`. The run's other fields
 * go to `mmq_run` so fromKtCache can rebuild it; `cache` comes last (see the header).
 * @example ktCacheText(toKtCache(report, { keys: tuningKeys(family.controls), space, deviceName: 'SwiftShader' }))
 */
export function toKtCache(
  run: KtSourceRun,
  opts: {
    keys: readonly string[];
    deviceName?: string;
    space?: Readonly<Record<string, readonly (number | string)[]>>;
  },
): KtCacheFile {
  const { keys } = opts;
  const tune_params: Record<string, (number | string)[]> = {};
  for (const k of keys)
    tune_params[k] = sortedValues([...(opts.space?.[k] ?? []), ...run.entries.map((e) => valueOf(e, k))]);
  const cache: Record<string, KtCacheEntry> = {};
  for (const e of run.entries) {
    const measured = e.verdict === 'measured' && Number.isFinite(e.ms) && e.ms > 0;
    const times = e.samples ?? (measured ? [e.ms] : []);
    const time = measured && times.length ? mean(times) : e.ms;
    const entry: KtCacheEntry = {
      ...Object.fromEntries(keys.map((k) => [k, valueOf(e, k)])),
      time: measured ? time : failureOf(e),
      times,
      compile_time: e.phases?.compileMs ?? 0,
      verification_time: e.phases?.verifyMs ?? 0,
      benchmark_time: e.phases?.benchmarkMs ?? 0,
      strategy_time: 0,
      framework_time: 0,
      timestamp: e.at ?? run.startedAt,
      ...(measured && run.ops ? { 'GFLOP/s': run.ops / (time * 1e6) } : {}),
      ...(measured ? { mmq_time: e.ms } : {}),
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
    mmq_run: JSON.parse(
      JSON.stringify(rest, (_k, v: unknown) => (v === Infinity ? 'Infinity' : v)),
    ) as unknown,
    cache,
  };
}

/**
 * A cache file as text, `cache` its last key whatever order the object has, ending `}\n}` as Kernel
 * Tuner expects of a closed cache file it may resume.
 * @example await writeFile('run.kt.json', ktCacheText(toKtCache(report, { keys })))
 */
export function ktCacheText(file: KtCacheFile): string {
  const { cache, ...rest } = file;
  return JSON.stringify({ ...rest, cache }, null, 2) + '\n';
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

/** A family as the importer maps entries onto it (a FamilyCatalog fits). */
export interface KtFamily {
  id: string;
  controls: readonly (
    | { key: string; kind: 'int'; min: number; max: number }
    | { key: string; kind: 'choice'; options: readonly { value: string }[] }
  )[];
  arms: readonly { arm: string }[];
  defaults: Readonly<Record<string, number | string>>;
}

/** What an import read, and what it left out and why: for the one line that answers an import. */
export interface KtImport {
  /** The tuning run rebuilt: the file's mmq_run block (where it has one) with `entries` from `cache`. */
  run: Record<string, unknown> & { entries: KtSourceEntry[] };
  /** Cache entries in the file. */
  total: number;
  /** Entries read into the run, measured or not. */
  read: number;
  measured: number;
  /** Entries read as rejections: a failure string, or a time of 0 (never a 0 ms winner). */
  rejected: number;
  /** Entries left out, each with why (no config of the family, or not a Kernel Tuner entry). */
  skipped: { key: string; reason: string }[];
  /** The file has this project's run block (mmq_run): written by `mmq tune` or the app. */
  fromMmq: boolean;
  /** tune_params_keys the family has no param for (every entry is then skipped). */
  unknownKeys: string[];
  /** The arm given to every entry when the file does not tune `arm` (the family's last, fastest-declared). */
  assumedArm?: string;
}

/** Why a value is not one of `family`'s for `key`, or undefined when it is. */
function valueProblem(family: KtFamily, key: string, v: unknown): string | undefined {
  if (key === 'arm') {
    const arms = family.arms.map((a) => a.arm);
    return arms.includes(String(v))
      ? undefined
      : `arm ${JSON.stringify(v)} is not one of ${family.id}'s (${arms.join(', ')})`;
  }
  const c = family.controls.find((x) => x.key === key);
  // Unreachable from readKtCache, which skips every entry when a tuned key is not a control (unknownKeys).
  // Stryker disable next-line ConditionalExpression,StringLiteral: no key without a control gets here
  if (!c) return `${key} is not a param of ${family.id}`;
  if (c.kind === 'int')
    return (
      // Stryker disable next-line ConditionalExpression: Number.isInteger rejects non-numbers; typeof only narrows
      typeof v === 'number' &&
        // One bound a line, so the line above holds only the type check.
        Number.isInteger(v) &&
        v >= c.min &&
        v <= c.max
        ? undefined
        : `${key} = ${JSON.stringify(v)} is not a whole number from ${c.min} to ${c.max}`
    );
  return c.options.some((o) => o.value === v)
    ? undefined
    : `${key} = ${JSON.stringify(v)} is not one of ${c.options.map((o) => o.value).join(', ')}`;
}

/**
 * Read a Kernel Tuner cache file (1.1.0), one this project wrote (mmq_* fields) or one Kernel Tuner wrote
 * alone, into a tuning run, and say what was read and what was not. With `family`, each entry must be one
 * of its configs (every tuned key a param it has, each value valid, the arm one of its arms); an entry
 * that is not is skipped with the reason, and the others' params are the family's defaults (the
 * problem_size's m, n, k where it has them) with the tuned values over them. A `time` of 0, or Kernel
 * Tuner's failure strings, read as rejections; `time` is Kernel Tuner's mean, the runner's own figure
 * (mmq_time) where the file has it. Throws KtCacheError only for a file that is not a cache at all.
 * @example const { run, read, skipped } = readKtCache(JSON.parse(text), CATALOG.get('mmq-q4k-tile'));
 */
export function readKtCache(json: unknown, family?: KtFamily): KtImport {
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
  const fromMmq = isObject(json.mmq_run);
  const run = fromMmq ? (json.mmq_run as Record<string, unknown>) : {};
  const unknownKeys = family
    ? keys.filter((k) => k !== 'arm' && !family.controls.some((c) => c.key === k))
    : [];
  // The params an entry without its own (a file Kernel Tuner wrote) stands on.
  const size = json.problem_size;
  const sizeParams =
    family && Array.isArray(size) && size.length === 3 && size.every((v) => typeof v === 'number')
      ? Object.fromEntries(
          ['m', 'n', 'k']
            .map((k, i) => [k, size[i] as number] as const)
            .filter(([k]) => family.controls.some((c) => c.key === k)),
        )
      : {};
  const baseParams = family ? { ...family.defaults, ...sizeParams } : {};
  const assumedArm = family && !keys.includes('arm') ? family.arms.at(-1)?.arm : undefined;
  const skipped: { key: string; reason: string }[] = [];
  const entries: KtSourceEntry[] = [];
  let rejected = 0;
  for (const [key, raw] of Object.entries(json.cache)) {
    const skip = (reason: string) => void skipped.push({ key, reason });
    if (!isObject(raw)) {
      skip('not an object');
      continue;
    }
    const time = raw.time;
    if (typeof time === 'string' && !FAILURES.includes(time)) {
      skip(`time ${JSON.stringify(time)} is neither a number nor one of ${FAILURES.join(', ')}`);
      continue;
    }
    if (typeof time !== 'number' && typeof time !== 'string') {
      skip('no time');
      continue;
    }
    if (unknownKeys.length) {
      skip(`${unknownKeys.join(', ')}: not a param of ${family!.id}`);
      continue;
    }
    const tuned = keys.filter((k) => k !== 'arm').map((k) => [k, raw[k]] as const);
    const why = family
      ? [...keys.map((k) => (k in raw ? valueProblem(family, k, raw[k]) : `no value for ${k}`))].find(Boolean)
      : undefined;
    if (why) {
      skip(why);
      continue;
    }
    const params = isObject(raw.mmq_params)
      ? (raw.mmq_params as Record<string, number | string>)
      : { ...baseParams, ...(Object.fromEntries(tuned) as Record<string, number | string>) };
    // A time that is no measurement (0, negative, not finite) is a rejection, whatever the file says.
    // Stryker disable next-line ConditionalExpression: Number.isFinite rejects non-numbers; typeof only narrows
    const timed = typeof time === 'number' && Number.isFinite(time) && time > 0;
    const said =
      // Stryker disable next-line ConditionalExpression,StringLiteral: a timed entry said 'measured' or nothing is measured
      raw.mmq_verdict === 'measured' ||
      // One verdict a line, so the line above holds only 'measured'.
      raw.mmq_verdict === 'rejected' ||
      raw.mmq_verdict === 'failed-gate'
        ? raw.mmq_verdict
        : undefined;
    const verdict = timed
      ? (said ?? 'measured')
      : said === 'failed-gate' || time === 'RuntimeFailedConfig'
        ? 'failed-gate'
        : 'rejected';
    if (verdict !== 'measured') rejected++;
    const reason =
      typeof raw.mmq_reason === 'string'
        ? raw.mmq_reason
        : typeof time === 'string'
          ? time
          : timed
            ? undefined
            : `time ${time}: no measurement, read as a rejection`;
    const times = raw.times;
    const samples =
      Array.isArray(times) &&
      // Stryker disable next-line ConditionalExpression: Number.isFinite rejects non-numbers; typeof only narrows
      times.every((t) => typeof t === 'number' && Number.isFinite(t))
        ? (times as number[])
        : undefined;
    const num = (v: unknown) => (typeof v === 'number' ? v : 0);
    entries.push({
      config: typeof raw.mmq_config === 'string' ? raw.mmq_config : key,
      params,
      arm: String(raw.arm ?? assumedArm ?? ''),
      generation: typeof raw.mmq_generation === 'number' ? raw.mmq_generation : 0,
      verdict,
      ms:
        verdict === 'measured'
          ? typeof raw.mmq_time === 'number' && raw.mmq_time > 0
            ? raw.mmq_time
            : (time as number)
          : Infinity,
      ...(reason !== undefined ? { reason } : {}),
      ...(typeof raw.mmq_worst_rel === 'number' ? { worstRel: raw.mmq_worst_rel } : {}),
      ...(typeof raw.mmq_bm === 'number' ? { bm: raw.mmq_bm } : {}),
      ...(typeof raw.mmq_bn === 'number' ? { bn: raw.mmq_bn } : {}),
      ...(samples ? { samples } : {}),
      phases: {
        compileMs: num(raw.compile_time),
        verifyMs: num(raw.verification_time),
        benchmarkMs: num(raw.benchmark_time),
      },
      ...(typeof raw.timestamp === 'string' ? { at: raw.timestamp } : {}),
    });
  }
  const revive = (v: unknown): unknown =>
    v === 'Infinity'
      ? Infinity
      : Array.isArray(v)
        ? v.map(revive)
        : isObject(v)
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]))
          : v;
  return {
    run: {
      kernel: json.kernel_name,
      deviceId: json.device_name,
      ...(family && !fromMmq ? { base: { kernel: family.id, params: baseParams } } : {}),
      ...(revive(run) as Record<string, unknown>),
      entries,
    },
    total: Object.keys(json.cache).length,
    read: entries.length,
    measured: entries.length - rejected,
    rejected,
    skipped,
    fromMmq,
    unknownKeys,
    ...(assumedArm !== undefined ? { assumedArm } : {}),
  };
}

/**
 * Read a Kernel Tuner cache file (1.1.0) back into a tuning run (readKtCache without a family: every
 * entry read, its params from the tuned keys). Throws KtCacheError for a file that is not a cache.
 * @example const run = fromKtCache(JSON.parse(text)); validateReport(run, 'kt')
 */
export function fromKtCache(json: unknown): Record<string, unknown> & { entries: KtSourceEntry[] } {
  return readKtCache(json).run;
}

const csvCell = (v: unknown): string => {
  const s =
    typeof v === 'number' || typeof v === 'string'
      ? String(v)
      : // Stryker disable next-line ConditionalExpression: JSON.stringify(undefined) is undefined, which join() writes as ''
        v === undefined
        ? ''
        : JSON.stringify(v);
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
