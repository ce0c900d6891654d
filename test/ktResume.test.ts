// Kernel Tuner's own meaning of a cache file (kernel_tuner/util.py, cache handling): a resumed run cuts
// the file's last "}\n}" and appends its entries (so `cache` must be the last key), `time` is the mean of
// `times`, `tune_params` lists the space's values, and a file Kernel Tuner wrote alone imports onto a
// family, what does not map listed with the reason, a 0 time or a failure string never a 0 ms winner.
import { describe, expect, it } from 'vitest';
import { mmqQ4kTileCatalog } from '../src/kernels/mmq/catalog';
import {
  ktCacheText,
  readKtCache,
  searchSpaceValues,
  toKtCache,
  tuningKeys,
  type KtFamily,
  type KtSourceRun,
} from '../src/kernels/perf/ktCache';
import { tileParams64 } from './tileReport';

const tile = tileParams64;
const RUN = {
  kernel: 'mmq-q4k-tile',
  deviceId: 'swiftshader',
  startedAt: '2026-12-05T18:00:00.000Z',
  base: { params: tile(2, 4) },
  entries: [
    {
      config: 'WM=2,WN=4,RM=1,RN=1,ARM=0',
      params: tile(2, 4),
      arm: 'dp4a',
      generation: 0,
      verdict: 'measured',
      ms: 2,
      samples: [2, 3, 4],
    },
  ],
} satisfies KtSourceRun;
const keys = tuningKeys(mmqQ4kTileCatalog.controls);

/**
 * Kernel Tuner resuming a closed cache file and appending one entry, as kernel_tuner/util.py does it:
 * correct_open_cache (a file ending in "}\n}" is cut by 3 characters and gets a ","), store_cache
 * ("\n" + json.dumps({key: entry})[1:-1] + ","), then close_cache (the last "," becomes "}\n}").
 */
function resumeAndAppend(text: string, key: string, entry: object): string {
  let file = text.trim();
  expect(['}\n}', '}}}']).toContain(file.slice(-3));
  file = file.slice(0, -3) + ',';
  file += '\n' + JSON.stringify({ [key]: entry }).slice(1, -1) + ',';
  return file.slice(0, -1) + '}\n}';
}

describe("Kernel Tuner's cache file, as Kernel Tuner reads and writes it", () => {
  it('writes cache last, so entries a resumed Kernel Tuner run appends land in cache', () => {
    const text = ktCacheText(toKtCache(RUN, { keys }));
    const added = { wm: 1, wn: 1, rm: 1, rn: 1, arm: 'dp4a', time: 1.5, times: [1.5] };
    const resumed = JSON.parse(resumeAndAppend(text, '1,1,1,1,subtile,dp4a', added)) as {
      cache: Record<string, unknown>;
      mmq_run: Record<string, unknown>;
    };
    expect(Object.keys(resumed.cache)).toEqual(['2,4,1,1,subtile,dp4a', '1,1,1,1,subtile,dp4a']);
    expect(resumed.mmq_run).not.toHaveProperty('1,1,1,1,subtile,dp4a');
    // And the object itself keeps cache last, whatever JSON.stringify is handed.
    expect(Object.keys(toKtCache(RUN, { keys })).at(-1)).toBe('cache');
  });

  it('time is the mean of times; the runner figure (the fastest batch) rides in mmq_time and reads back', () => {
    const e = toKtCache(RUN, { keys }).cache['2,4,1,1,subtile,dp4a']!;
    expect(e.time).toBe(3);
    expect(e.mmq_time).toBe(2);
    expect(readKtCache(JSON.parse(ktCacheText(toKtCache(RUN, { keys })))).run.entries[0]!.ms).toBe(2);
  });

  it('tune_params lists the tuning space, not only the values visited', () => {
    const space = searchSpaceValues(
      [
        { params: tile(1, 1), arm: 'dp4a' },
        { params: tile(4, 2), arm: 'subgroup-matrix' },
      ],
      keys,
    );
    expect(space).toEqual({
      wm: [1, 4],
      wn: [1, 2],
      rm: [1],
      rn: [1],
      schedule: ['subtile'],
      arm: ['dp4a', 'subgroup-matrix'],
    });
    const file = toKtCache(RUN, { keys, space });
    expect(file.tune_params).toEqual({
      wm: [1, 2, 4],
      wn: [1, 2, 4],
      rm: [1],
      rn: [1],
      schedule: ['subtile'],
      arm: ['dp4a', 'subgroup-matrix'],
    });
  });
});

describe('a cache file Kernel Tuner wrote alone, imported onto a family', () => {
  const entry = (wm: number, time: number | string, extra: object = {}) => ({
    wm,
    wn: 2,
    arm: 'dp4a',
    time,
    times: typeof time === 'number' ? [time] : [],
    compile_time: 1,
    verification_time: 0,
    benchmark_time: 1,
    strategy_time: 0,
    framework_time: 0,
    timestamp: '2026-01-01T00:00:00Z',
    ...extra,
  });
  const plain = (cache: Record<string, object>, tuneKeys = ['wm', 'wn', 'arm']) => ({
    schema_version: '1.1.0',
    device_name: 'A100',
    kernel_name: 'mmq_q4k_tile',
    problem_size: [64, 128, 512],
    tune_params_keys: tuneKeys,
    tune_params: { wm: [1, 2, 4, 32], wn: [2], arm: ['dp4a'] },
    objective: 'time',
    cache,
  });

  it('maps each entry onto the family (defaults, the problem size, the tuned values) and says what it skipped', () => {
    const r = readKtCache(
      plain({
        '1,2,dp4a': entry(1, 1.25),
        '4,2,dp4a': entry(4, 'CompilationFailedConfig'),
        '2,2,dp4a': entry(2, 'RuntimeFailedConfig'),
        '32,2,dp4a': entry(32, 0.5),
        '2,2,tensor': entry(2, 0.7, { arm: 'tensor' }),
        x: entry(2, 'slow'),
      }),
      mmqQ4kTileCatalog,
    );
    expect(r).toMatchObject({ total: 6, read: 3, measured: 1, rejected: 2, fromMmq: false, unknownKeys: [] });
    expect(r.skipped).toEqual([
      { key: '32,2,dp4a', reason: 'wm = 32 is not a whole number from 1 to 16' },
      {
        key: '2,2,tensor',
        reason: `arm "tensor" is not one of mmq-q4k-tile's (scalar, dp4a, subgroup-matrix)`,
      },
      {
        key: 'x',
        reason:
          'time "slow" is neither a number nor one of InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig',
      },
    ]);
    const [measured, compileFailed, runtimeFailed] = r.run.entries;
    expect(measured).toMatchObject({ verdict: 'measured', ms: 1.25, arm: 'dp4a' });
    // The family's defaults (rm, rn), the file's problem size (m, n, k), the tuned wm and wn.
    expect(measured!.params).toEqual({
      m: 64,
      n: 128,
      k: 512,
      wm: 1,
      wn: 2,
      rm: 1,
      rn: 1,
      schedule: 'subtile',
    });
    expect(compileFailed).toMatchObject({
      verdict: 'rejected',
      ms: Infinity,
      reason: 'CompilationFailedConfig',
    });
    expect(runtimeFailed).toMatchObject({
      verdict: 'failed-gate',
      ms: Infinity,
      reason: 'RuntimeFailedConfig',
    });
  });

  it('a time of 0 is a rejection, never a 0 ms winner (even when the file says measured)', () => {
    const r = readKtCache(
      plain({ '1,2,dp4a': entry(1, 0), '2,2,dp4a': entry(2, 0, { mmq_verdict: 'measured' }) }),
      mmqQ4kTileCatalog,
    );
    expect(r.measured).toBe(0);
    expect(r.run.entries.map((e) => [e.verdict, e.ms, e.reason])).toEqual([
      ['rejected', Infinity, 'time 0: no measurement, read as a rejection'],
      ['rejected', Infinity, 'time 0: no measurement, read as a rejection'],
    ]);
  });

  it('a tuned key the family does not have skips every entry, saying which key', () => {
    const r = readKtCache(
      plain({ '16,1': { block_size_x: 16, wm: 1, time: 1 } }, ['block_size_x', 'wm']),
      mmqQ4kTileCatalog,
    );
    expect(r.unknownKeys).toEqual(['block_size_x']);
    expect(r.skipped).toEqual([{ key: '16,1', reason: 'block_size_x: not a param of mmq-q4k-tile' }]);
    expect(r.read).toBe(0);
  });

  it("a file that does not tune the arm gets the family's last declared arm, and says so", () => {
    const r = readKtCache(
      plain({ '1,2': { wm: 1, wn: 2, time: 2, times: [2] } }, ['wm', 'wn']),
      mmqQ4kTileCatalog,
    );
    expect(r.assumedArm).toBe('subgroup-matrix');
    expect(r.run.entries[0]).toMatchObject({ arm: 'subgroup-matrix', verdict: 'measured', ms: 2 });
  });
});

describe('reading a cache file: what is refused, skipped and assumed', () => {
  const header = {
    schema_version: '1.1.0',
    device_name: 'A100',
    kernel_name: 'mmq_q4k_tile',
    problem_size: [32, 256, 1024],
    tune_params_keys: ['wm', 'wn', 'arm'],
    tune_params: {},
    objective: 'time',
  };
  const file = (cache: Record<string, unknown>, extra: object = {}) => ({ ...header, cache, ...extra });
  const timed = (wm: number, extra: object = {}) => ({ wm, wn: 2, arm: 'dp4a', time: 1, ...extra });

  it('refuses a file whose header is not a cache, saying which field', () => {
    const bad = (extra: object) => () => readKtCache(file({}, extra));
    expect(() => readKtCache('{}')).toThrow('not a JSON object');
    expect(() => readKtCache(null)).toThrow('not a JSON object');
    expect(bad({ device_name: 1 })).toThrow('device_name: expected a string');
    expect(bad({ kernel_name: undefined })).toThrow('kernel_name: expected a string');
    expect(bad({ objective: null })).toThrow('objective: expected a string');
    expect(bad({ tune_params_keys: 'wm' })).toThrow('tune_params_keys: expected an array of strings');
    expect(bad({ tune_params_keys: ['wm', 2] })).toThrow('tune_params_keys: expected an array of strings');
    expect(bad({ tune_params: [] })).toThrow('tune_params: expected an object');
    expect(bad({ tune_params: null })).toThrow('tune_params: expected an object');
  });

  it("checks each value against the family's control: whole numbers in range, a choice's options", () => {
    const r = readKtCache(
      file(
        {
          a: timed(16, { schedule: 'microtile' }),
          b: timed(0, { schedule: 'subtile' }),
          c: timed(1.5, { schedule: 'subtile' }),
          d: timed(2, { wm: '2', schedule: 'subtile' }),
          e: timed(1, { schedule: 'tiled' }),
          f: { wm: 1, arm: 'dp4a', schedule: 'subtile', time: 1 },
        },
        { tune_params_keys: ['wm', 'wn', 'schedule', 'arm'] },
      ),
      mmqQ4kTileCatalog,
    );
    expect(r.run.entries.map((e) => [e.params.wm, e.params.schedule])).toEqual([[16, 'microtile']]);
    expect(r.skipped).toEqual([
      { key: 'b', reason: 'wm = 0 is not a whole number from 1 to 16' },
      { key: 'c', reason: 'wm = 1.5 is not a whole number from 1 to 16' },
      { key: 'd', reason: 'wm = "2" is not a whole number from 1 to 16' },
      { key: 'e', reason: 'schedule = "tiled" is not one of subtile, microtile' },
      { key: 'f', reason: 'no value for wn' },
    ]);
  });

  it('skips an entry that is not an object or has no time, and names every unknown key', () => {
    const r = readKtCache(file({ a: 3, b: null, c: { wm: 1, wn: 2, arm: 'dp4a' } }), mmqQ4kTileCatalog);
    expect(r.skipped).toEqual([
      { key: 'a', reason: 'not an object' },
      { key: 'b', reason: 'not an object' },
      { key: 'c', reason: 'no time' },
    ]);
    const unknown = readKtCache(
      file({ a: { x: 1, y: 2, time: 1 } }, { tune_params_keys: ['x', 'y'] }),
      mmqQ4kTileCatalog,
    );
    expect(unknown.skipped).toEqual([{ key: 'a', reason: 'x, y: not a param of mmq-q4k-tile' }]);
  });

  it("a file's params stand on its problem size where it gives m, n and k, else on the family's defaults", () => {
    const paramsOf = (problem_size: unknown) =>
      readKtCache(file({ a: timed(1) }, { problem_size }), mmqQ4kTileCatalog).run.entries[0]!.params;
    expect(paramsOf([32, 256, 1024])).toMatchObject({ m: 32, n: 256, k: 1024, wm: 1, wn: 2 });
    expect(paramsOf([32, 256])).toMatchObject({ m: 64, n: 128, k: 512 });
    expect(paramsOf([32, '256', 1024])).toMatchObject({ m: 64, n: 128, k: 512 });
    expect(paramsOf('m=32')).toMatchObject({ m: 64, n: 128, k: 512 });
    const r = readKtCache(file({ a: timed(1) }), mmqQ4kTileCatalog);
    // The run's base: the family's defaults on the problem size (the tuned values are the entries').
    expect(r.run.base).toEqual({
      kernel: 'mmq-q4k-tile',
      params: { ...mmqQ4kTileCatalog.defaults, m: 32, n: 256, k: 1024 },
    });
    // A family without m, n and k takes none from the problem size.
    const toy: KtFamily = {
      id: 'toy',
      controls: [
        { key: 'wm', kind: 'int', min: 1, max: 4 },
        { key: 'wn', kind: 'int', min: 1, max: 4 },
      ],
      arms: [],
      defaults: { tokens: 8 },
    };
    const t = readKtCache(file({ a: timed(1) }, { tune_params_keys: ['wm', 'wn'] }), toy);
    expect(t.run.entries[0]!.params).toEqual({ tokens: 8, wm: 1, wn: 2 });
    // No arm to assume where the family declares none.
    expect(t).not.toHaveProperty('assumedArm');
    expect(t.run.entries[0]!.arm).toBe('dp4a');
  });

  it('without a family: no base, no arm assumed, the params as the file tunes them', () => {
    const r = readKtCache(file({ a: { wm: 1, time: 2 } }, { tune_params_keys: ['wm'] }));
    expect(r).not.toHaveProperty('assumedArm');
    expect(r.run).not.toHaveProperty('base');
    expect(r.run.entries).toStrictEqual([
      {
        config: 'a',
        params: { wm: 1 },
        arm: '',
        generation: 0,
        verdict: 'measured',
        ms: 2,
        phases: { compileMs: 0, verifyMs: 0, benchmarkMs: 0 },
      },
    ]);
    // A file that tunes the arm assumes none.
    expect(readKtCache(file({ a: timed(1) }), mmqQ4kTileCatalog)).not.toHaveProperty('assumedArm');
  });

  it("the verdict: this project's where it is one, a rejection without a positive finite time", () => {
    const r = readKtCache(
      file({
        a: timed(1, { mmq_verdict: 'rejected' }),
        b: timed(2, { mmq_verdict: 'failed-gate' }),
        c: timed(3, { mmq_verdict: 'bogus' }),
        d: timed(4, { time: 0, mmq_verdict: 'failed-gate' }),
        e: timed(5, { time: Infinity }),
        f: timed(6, { time: -1 }),
        g: timed(7, { time: 2, mmq_verdict: 'measured', mmq_time: 1.5 }),
      }),
      mmqQ4kTileCatalog,
    );
    expect(r.run.entries.map((e) => [e.config, e.verdict, e.ms])).toEqual([
      ['a', 'rejected', Infinity],
      ['b', 'failed-gate', Infinity],
      ['c', 'measured', 1],
      ['d', 'failed-gate', Infinity],
      ['e', 'rejected', Infinity],
      ['f', 'rejected', Infinity],
      ['g', 'measured', 1.5],
    ]);
    expect(r.measured).toBe(2);
    expect(r.rejected).toBe(5);
  });

  it('the runner figure only where it is a positive number; times only where all are finite numbers', () => {
    const r = readKtCache(
      file({
        a: timed(1, { mmq_time: 0, times: ['x'] }),
        b: timed(2, { mmq_time: '0.5', times: 'abc' }),
        c: timed(3, { times: [1, null] }),
        d: timed(4, { times: [1, NaN] }),
        e: timed(5, { times: [1, 2], compile_time: 3, verification_time: 4, benchmark_time: 5 }),
      }),
      mmqQ4kTileCatalog,
    );
    expect(r.run.entries.map((e) => e.ms)).toEqual([1, 1, 1, 1, 1]);
    expect(r.run.entries.map((e) => e.samples)).toEqual([undefined, undefined, undefined, undefined, [1, 2]]);
    expect(r.run.entries.map((e) => 'samples' in e)).toEqual([false, false, false, false, true]);
    expect(r.run.entries[4]!.phases).toEqual({ compileMs: 3, verifyMs: 4, benchmarkMs: 5 });
    expect(r.run.entries[0]!.phases).toEqual({ compileMs: 0, verifyMs: 0, benchmarkMs: 0 });
  });
});
