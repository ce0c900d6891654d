// Kernel Tuner cache 1.1.0: an exported tuning run validates against the published schema (vendored in
// test/fixtures/kernel_tuner with its source), reads back to the same run, and exports as CSV.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mmqQ4kTileCatalog } from '../src/kernels/mmq/catalog';
import { schemaErrors, type JsonSchema } from './jsonSchema';
import {
  fromKtCache,
  KtCacheError,
  ktCacheCsv,
  ktCacheText,
  readableConfig,
  searchSpaceValues,
  toKtCache,
  tuningKeys,
  type KtCacheEntry,
  type KtSourceEntry,
  type KtSourceRun,
} from '../src/kernels/perf/ktCache';
import { tileParams64 } from './tileReport';

const schema = JSON.parse(
  readFileSync(new URL('./fixtures/kernel_tuner/cache-1.1.0.schema.json', import.meta.url), 'utf8'),
) as JsonSchema;

const tile = tileParams64;
const BASE = {
  kernel: 'mmq-q4k-tile',
  arm: 'dp4a',
  data: { source: 'synthetic', seed: 1 },
  params: tile(2, 4),
};
const RUN = {
  op: 'mmq_q4k_tile',
  kernel: 'mmq-q4k-tile',
  deviceId: 'google/swiftshader/SwiftShader#plane4',
  problem: 'm=64,n=128,k=512,data=synthetic:1',
  base: BASE,
  startedAt: '2026-12-05T18:00:00.000Z',
  ops: 2 * 64 * 128 * 512,
  winner: 'WM=1,WN=2,RM=1,RN=1,ARM=0',
  bestMs: 1.5,
  incumbentMs: Infinity,
  entries: [
    {
      config: 'WM=2,WN=4,RM=1,RN=1,ARM=0',
      params: tile(2, 4),
      arm: 'dp4a',
      generation: 0,
      verdict: 'measured',
      ms: 2,
      samples: [2, 2.1, 2.4],
      phases: { compileMs: 30, verifyMs: 5, benchmarkMs: 40 },
      at: '2026-12-05T18:00:01.000Z',
      worstRel: 0,
      bm: 32,
      bn: 64,
    },
    {
      config: 'WM=1,WN=2,RM=1,RN=1,ARM=0',
      params: tile(1, 2),
      arm: 'dp4a',
      generation: 1,
      verdict: 'measured',
      ms: 1.5,
    },
    {
      config: 'WM=4,WN=4,RM=1,RN=1,ARM=0',
      params: tile(4, 4),
      arm: 'dp4a',
      generation: 1,
      verdict: 'rejected',
      ms: Infinity,
      reason: '1024 invocations > 256',
    },
    {
      config: 'WM=1,WN=1,RM=1,RN=1,ARM=0',
      params: tile(1, 1),
      arm: 'dp4a',
      generation: 1,
      verdict: 'failed-gate',
      ms: Infinity,
      reason: 'rel_to_max 1e-1',
    },
  ],
} satisfies KtSourceRun & Record<string, unknown>;

describe('Kernel Tuner cache 1.1.0', () => {
  const keys = tuningKeys(mmqQ4kTileCatalog.controls);
  // Built in each test, not once here: a mutant is active only while a test runs (StrykerJS), so work done
  // while the describe block is collected would be checked against unmutated code.
  const exported = () => toKtCache(RUN, { keys, deviceName: 'SwiftShader' });

  it('keys the tuned params readably, the arm by name', () => {
    const file = exported();
    expect(keys).toEqual(['wm', 'wn', 'rm', 'rn', 'schedule', 'arm']);
    expect(readableConfig(RUN.entries[0]!, keys)).toBe('wm=2,wn=4,rm=1,rn=1,schedule=subtile,arm=dp4a');
    expect(Object.keys(file.cache)).toEqual([
      '2,4,1,1,subtile,dp4a',
      '1,2,1,1,subtile,dp4a',
      '4,4,1,1,subtile,dp4a',
      '1,1,1,1,subtile,dp4a',
    ]);
    expect(file.tune_params).toEqual({
      wm: [1, 2, 4],
      wn: [1, 2, 4],
      rm: [1],
      rn: [1],
      schedule: ['subtile'],
      arm: ['dp4a'],
    });
  });

  it('validates against the published schema', () => {
    const file = exported();
    const json = JSON.parse(JSON.stringify(file)) as unknown;
    expect(schemaErrors(schema, json)).toEqual([]);
    expect(file.problem_size).toEqual([64, 128, 512]);
    const e = file.cache['2,4,1,1,subtile,dp4a']!;
    // time is Kernel Tuner's: the mean of times; the runner's figure (the fastest batch) is mmq_time.
    expect(e.time).toBeCloseTo((2 + 2.1 + 2.4) / 3, 12);
    expect(e).toMatchObject({
      mmq_time: 2,
      times: [2, 2.1, 2.4],
      compile_time: 30,
      verification_time: 5,
      benchmark_time: 40,
    });
    expect(e['GFLOP/s']).toBeCloseTo((2 * 64 * 128 * 512) / (((2 + 2.1 + 2.4) / 3) * 1e6));
    expect(file.cache['4,4,1,1,subtile,dp4a']!.time).toBe('InvalidConfig');
    expect(file.cache['1,1,1,1,subtile,dp4a']!.time).toBe('RuntimeFailedConfig');
  });

  it('the schema check catches a broken file', () => {
    const file = exported();
    const json = JSON.parse(JSON.stringify(file)) as { cache: Record<string, Record<string, unknown>> };
    delete json.cache['2,4,1,1,subtile,dp4a']!.timestamp;
    json.cache['1,2,1,1,subtile,dp4a']!.time = 'slow';
    expect(schemaErrors(schema, json)).toEqual([
      '$.cache["2,4,1,1,subtile,dp4a"]: missing timestamp',
      '$.cache["1,2,1,1,subtile,dp4a"].time: matches none of anyOf',
    ]);
  });

  it('reads back to the same run (round trip through JSON text)', () => {
    const file = exported();
    const back = fromKtCache(JSON.parse(JSON.stringify(file)));
    expect(back.entries.map((e) => [e.config, e.verdict, e.ms, e.params, e.arm, e.generation])).toEqual(
      RUN.entries.map((e) => [e.config, e.verdict, e.ms, e.params, e.arm, e.generation]),
    );
    expect(back.entries[0]).toMatchObject({
      samples: [2, 2.1, 2.4],
      worstRel: 0,
      bm: 32,
      bn: 64,
      at: '2026-12-05T18:00:01.000Z',
    });
    expect(back).toMatchObject({
      op: 'mmq_q4k_tile',
      kernel: 'mmq-q4k-tile',
      winner: RUN.winner,
      incumbentMs: Infinity,
      base: RUN.base,
    });
  });

  it('reads a file Kernel Tuner wrote (no mmq_* fields)', () => {
    const back = fromKtCache({
      schema_version: '1.1.0',
      device_name: 'A100',
      kernel_name: 'mmq-q4k-tile',
      problem_size: [64, 128, 512],
      tune_params_keys: ['wm', 'arm'],
      tune_params: { wm: [1, 2], arm: ['dp4a'] },
      objective: 'time',
      cache: {
        '1,dp4a': {
          wm: 1,
          arm: 'dp4a',
          time: 1.25,
          times: [1.25],
          compile_time: 1,
          verification_time: 0,
          benchmark_time: 2,
          strategy_time: 0,
          framework_time: 0,
          timestamp: '2026-01-01T00:00:00Z',
        },
        '2,dp4a': {
          wm: 2,
          arm: 'dp4a',
          time: 'CompilationFailedConfig',
          compile_time: 1,
          verification_time: 0,
          benchmark_time: 0,
          strategy_time: 0,
          framework_time: 0,
          timestamp: '2026-01-01T00:00:00Z',
        },
      },
    });
    expect(back.entries.map((e) => [e.config, e.params, e.arm, e.verdict, e.ms])).toEqual([
      ['1,dp4a', { wm: 1 }, 'dp4a', 'measured', 1.25],
      ['2,dp4a', { wm: 2 }, 'dp4a', 'rejected', Infinity],
    ]);
  });

  it('says what is wrong with a file that is not a 1.1.0 cache', () => {
    const file = exported();
    expect(() => fromKtCache({ ...file, schema_version: '1.0.0' })).toThrow(KtCacheError);
    expect(() => fromKtCache({ ...file, schema_version: '1.0.0' })).toThrow(
      /schema_version: expected "1.1.0"/,
    );
    expect(() => fromKtCache({ ...file, cache: 3 })).toThrow(/cache: expected an object/);
    expect(() => fromKtCache([])).toThrow(/not a JSON object/);
  });

  it('exports CSV: a header and one row per config', () => {
    const file = exported();
    const lines = ktCacheCsv(file).trim().split('\n');
    expect(lines[0]).toBe(
      'wm,wn,rm,rn,schedule,arm,time,times,compile_time,verification_time,benchmark_time,GFLOP/s,timestamp',
    );
    expect(lines[1]).toMatch(
      /^2,4,1,1,subtile,dp4a,2.1666\d*,2 2.1 2.4,30,5,40,[\d.]+,2026-12-05T18:00:01.000Z$/,
    );
    expect(lines[3]).toBe('4,4,1,1,subtile,dp4a,InvalidConfig,,0,0,0,,2026-12-05T18:00:00.000Z');
    expect(lines).toHaveLength(5);
  });
});

describe('Kernel Tuner cache: what each entry holds', () => {
  const at = '2026-12-05T18:00:00.000Z';
  const entry = (
    config: string,
    params: Record<string, number>,
    verdict: 'measured' | 'rejected' | 'failed-gate',
    ms: number,
    extra: Partial<KtSourceEntry> = {},
  ): KtSourceEntry => ({ config, params, arm: 'scalar', generation: 2, verdict, ms, ...extra });
  const run: KtSourceRun = {
    kernel: 'toy',
    deviceId: 'dev',
    startedAt: at,
    base: { params: { tokens: 4 } },
    ops: 1e6,
    problem: 'tokens=4',
    entries: [
      entry('A', { wm: 1 }, 'measured', 3, { samples: [] }),
      entry('B', { wm: 2 }, 'rejected', Infinity, {
        reason: 'WGSL: parse error',
        phases: { compileMs: Infinity, verifyMs: 1, benchmarkMs: 2 },
      }),
      entry('C', { wm: 4 }, 'rejected', 5, { at: 'noon, "UTC"' }),
      // A measurement of 0 ms is none: a runtime failure, not a winner.
      entry('D', {}, 'measured', 0),
    ],
  };
  const exported = () => toKtCache(run, { keys: ['wm', 'arm'] });
  const common = {
    arm: 'scalar',
    compile_time: 0,
    verification_time: 0,
    benchmark_time: 0,
    strategy_time: 0,
    framework_time: 0,
    timestamp: at,
    mmq_generation: 2,
  };

  it('only the fields an entry has; the failure string from its verdict and reason', () => {
    const { cache } = exported();
    expect(Object.keys(cache)).toEqual(['1,scalar', '2,scalar', '4,scalar', ',scalar']);
    // A measured entry whose batches are not given: its time is its figure.
    expect(cache['1,scalar']).toStrictEqual({
      ...common,
      wm: 1,
      time: 3,
      times: [],
      'GFLOP/s': 1e6 / (3 * 1e6),
      mmq_time: 3,
      mmq_config: 'A',
      mmq_verdict: 'measured',
      mmq_params: { wm: 1 },
    });
    expect(cache['2,scalar']).toStrictEqual({
      ...common,
      wm: 2,
      time: 'CompilationFailedConfig',
      times: [],
      compile_time: Infinity,
      verification_time: 1,
      benchmark_time: 2,
      mmq_config: 'B',
      mmq_verdict: 'rejected',
      mmq_reason: 'WGSL: parse error',
      mmq_params: { wm: 2 },
    });
    // A rejection with a finite time is still a rejection.
    expect(cache['4,scalar']).toStrictEqual({
      ...common,
      wm: 4,
      time: 'InvalidConfig',
      times: [],
      timestamp: 'noon, "UTC"',
      mmq_config: 'C',
      mmq_verdict: 'rejected',
      mmq_params: { wm: 4 },
    });
    expect(cache[',scalar']).toStrictEqual({
      ...common,
      wm: '',
      time: 'RuntimeFailedConfig',
      times: [],
      mmq_config: 'D',
      mmq_verdict: 'measured',
      mmq_params: {},
    });
  });

  it('tune_params: mixed values sort as text; a problem without m, n, k is named by its key', () => {
    const file = exported();
    expect(file.tune_params).toEqual({ wm: ['', '1', '2', '4'], arm: ['scalar'] });
    expect(file.problem_size).toBe('tokens=4');
    expect(file.objective).toBe('time');
    const { problem: _problem, ...unnamed } = run;
    expect(toKtCache(unnamed, { keys: ['wm', 'arm'] }).problem_size).toBe('');
    // m alone is no m, n, k.
    expect(toKtCache({ ...run, base: { params: { m: 4 } } }, { keys: ['wm', 'arm'] }).problem_size).toBe(
      'tokens=4',
    );
    expect(
      searchSpaceValues(
        [
          { params: {}, arm: 'scalar' },
          { params: { wm: 2 }, arm: 'dp4a' },
          { params: { wm: 10 }, arm: 'dp4a' },
        ],
        ['wm', 'arm'],
      ),
    ).toEqual({ wm: ['', '10', '2'], arm: ['dp4a', 'scalar'] });
  });

  it('the text ends as Kernel Tuner closes a cache file', () => {
    expect(ktCacheText(exported()).endsWith('\n  }\n}\n')).toBe(true);
  });

  it('CSV: numbers as written, text quoted where it holds a comma or a quote, no times as empty', () => {
    const file = exported();
    const { times: _times, ...untimed } = file.cache['1,scalar']!;
    // A value that is neither a number nor text (a file from elsewhere) is written as JSON.
    const csv = ktCacheCsv({
      ...file,
      cache: { ...file.cache, x: { ...untimed, wm: [1, 2] } as KtCacheEntry },
    });
    expect(csv.endsWith('\n')).toBe(true);
    expect(csv.split('\n')).toEqual([
      'wm,arm,time,times,compile_time,verification_time,benchmark_time,GFLOP/s,timestamp',
      `1,scalar,3,,0,0,0,${1 / 3},${at}`,
      `2,scalar,CompilationFailedConfig,,Infinity,1,2,,${at}`,
      '4,scalar,InvalidConfig,,0,0,0,,"noon, ""UTC"""',
      `,scalar,RuntimeFailedConfig,,0,0,0,,${at}`,
      `"[1,2]",scalar,3,,0,0,0,${1 / 3},${at}`,
      '',
    ]);
  });

  it('an error says it is a Kernel Tuner cache error', () => {
    let error: unknown;
    try {
      fromKtCache('not json');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KtCacheError);
    expect((error as Error).name).toBe('KtCacheError');
    expect((error as Error).message).toBe('not a JSON object');
  });
});
