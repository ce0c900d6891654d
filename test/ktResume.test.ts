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
  type KtSourceRun,
} from '../src/kernels/perf/ktCache';

const tile = (wm: number, wn: number) => ({
  m: 64,
  n: 128,
  k: 512,
  wm,
  wn,
  rm: 1,
  rn: 1,
  schedule: 'subtile',
});
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
