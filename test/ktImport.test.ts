// A stored tuning run exported as a Kernel Tuner cache file re-imports as the same run (the app's
// "KT cache" export and its import button); a Kernel Tuner file without the run's block is refused
// saying why; the dashboard's speedup says what the interleaved claim says.
import { describe, expect, it } from 'vitest';
import { parseTuneRunsImport, parseTuneRunsJson, runOf } from '../src/app/persistence/tuneRuns';
import { importSummaryText, readImport } from '../src/app/tuner/importSummary';
import { CATALOG } from '../src/kernels/catalog';
import { fakeCaps } from '../src/kernels/gpu/testCaps';
import { knobSearch } from '../src/kernels/tune/knobs';
import { ktExport } from '../src/app/tuner/ktExport';
import { speedup } from '../src/app/tuner/tunerData';
import type { TuneReport } from '../src/workers/protocol';

const params = (wm: number) => ({ m: 16, n: 16, k: 256, wm, wn: 4, rm: 1, rn: 1, schedule: 'subtile' });
const REPORT: TuneReport = {
  op: 'mmq_q4k_tile',
  kernel: 'mmq-q4k-tile',
  deviceId: 'google/swiftshader/SwiftShader#plane4',
  problem: 'm=16,n=16,k=256,data=synthetic#0',
  base: { kernel: 'mmq-q4k-tile', arm: 'dp4a', data: { source: 'synthetic', seed: 0 }, params: params(2) },
  winner: 'WM=1,WN=4,RM=1,RN=1,ARM=0',
  winnerConfig: {
    kernel: 'mmq-q4k-tile',
    arm: 'dp4a',
    data: { source: 'synthetic', seed: 0 },
    params: params(1),
  },
  bestMs: 1.2,
  incumbentMs: 1.5,
  entries: [
    {
      config: 'WM=2,WN=4,RM=1,RN=1,ARM=0',
      label: 'wm=2,wn=4,rm=1,rn=1,schedule=subtile,arm=dp4a',
      params: params(2),
      arm: 'dp4a',
      generation: 0,
      verdict: 'measured',
      ms: 1.5,
      samples: [1.5, 1.6],
      phases: { compileMs: 10, verifyMs: 1, benchmarkMs: 5 },
      at: '2026-12-05T19:00:00.000Z',
    },
    {
      config: 'WM=1,WN=4,RM=1,RN=1,ARM=0',
      params: params(1),
      arm: 'dp4a',
      generation: 1,
      verdict: 'measured',
      ms: 1.2,
    },
    {
      config: 'WM=4,WN=4,RM=1,RN=1,ARM=0',
      params: params(4),
      arm: 'dp4a',
      generation: 1,
      verdict: 'rejected',
      ms: Infinity,
      reason: 'too big',
    },
  ],
  bestPerGeneration: [1.5, 1.2],
  evo: { population: 2, generations: 2, seed: 1, measureMs: 1, batches: 2, banks: 1 },
  startedAt: '2026-12-05T19:00:00.000Z',
  durationMs: 1000,
  status: 'complete',
  ops: 2 * 16 * 16 * 256,
  claim: {
    verdict: 'faster',
    ratio: 1.25,
    a: { n: 3, min: 1.45, median: 1.5, p90: 1.55, max: 1.55 },
    b: { n: 3, min: 1.18, median: 1.2, p90: 1.22, max: 1.22 },
    rounds: { incumbentMs: [1.45, 1.5, 1.55], winnerMs: [1.18, 1.2, 1.22] },
  },
};

describe('Kernel Tuner cache in the app', () => {
  it('exports a stored run and imports it back as the same run', () => {
    const text = ktExport(REPORT, 'json');
    expect(Object.keys((JSON.parse(text) as { cache: object }).cache)).toEqual([
      '2,4,1,1,subtile,dp4a',
      '1,4,1,1,subtile,dp4a',
      '4,4,1,1,subtile,dp4a',
    ]);
    const [run] = parseTuneRunsJson(text);
    const { label: _label, ...first } = REPORT.entries[0]!;
    expect(run).toEqual(
      runOf({
        ...REPORT,
        entries: [first, ...REPORT.entries.slice(1)].map((e) => ({
          ...e,
          phases: e.phases ?? { compileMs: 0, verifyMs: 0, benchmarkMs: 0 },
          at: e.at ?? REPORT.startedAt,
          samples: e.samples ?? (e.verdict === 'measured' ? [e.ms] : []),
        })),
      }),
    );
    // time: Kernel Tuner's mean of the batches (1.5, 1.6); the run's own 1.5 rides in mmq_time.
    expect(ktExport(REPORT, 'csv').split('\n')[1]).toMatch(/^2,4,1,1,subtile,dp4a,1.55,1.5 1.6,10,1,5,/);
  });

  it("reads a Kernel Tuner file without this app's fields against the family kernel_name names", () => {
    const file = JSON.parse(ktExport(REPORT, 'json')) as Record<string, unknown> & {
      cache: Record<string, Record<string, unknown>>;
    };
    // What Kernel Tuner alone would have: no mmq_run, no mmq_* per entry; one entry of another kernel.
    delete file.mmq_run;
    for (const e of Object.values(file.cache))
      for (const k of Object.keys(e)) if (k.startsWith('mmq_')) delete e[k];
    file.cache['x,4,1,1,subtile,dp4a'] = { ...file.cache['1,4,1,1,subtile,dp4a']!, wm: 'x', time: 0.5 };
    const text = JSON.stringify(file);
    const { runs, skipped } = parseTuneRunsImport(text);
    expect(runs).toHaveLength(1);
    const r = runs[0]!.report;
    expect([r.kernel, r.op, r.deviceId]).toEqual(['mmq-q4k-tile', 'mmq_q4k_tile', REPORT.deviceId]);
    // The problem from problem_size (m, n, k), the tile knobs from each entry, the fastest the winner.
    expect(r.problem).toBe('m=16,n=16,k=256');
    expect(r.entries.map((e) => [e.config, e.verdict, e.params.wm])).toEqual([
      ['2,4,1,1,subtile,dp4a', 'measured', 2],
      ['1,4,1,1,subtile,dp4a', 'measured', 1],
      ['4,4,1,1,subtile,dp4a', 'rejected', 4],
    ]);
    expect(r.winner).toBe('1,4,1,1,subtile,dp4a');
    expect(r.bestMs).toBe(1.2);
    expect(r.winnerConfig?.params).toMatchObject({ m: 16, n: 16, k: 256, wm: 1 });
    expect(skipped).toEqual([{ what: 'cache entry', why: expect.stringMatching(/wm/) as string }]);
    expect(importSummaryText(readImport('kt.json', text)!)).toMatch(
      /^read kt\.json \(Kernel Tuner cache\): 1 run, 3 configs, 2 measured; .*skipped: 1 cache entry \(.*wm/,
    );
    // A kernel_name none of the families is, or a file that is no cache, is refused saying so.
    expect(() => parseTuneRunsJson(JSON.stringify({ ...file, kernel_name: 'matmul_kernel' }))).toThrow(
      /kernel_name "matmul_kernel" is none of the kernels tuned here \(.*mmq-q4k-tile/,
    );
    expect(() => parseTuneRunsJson(JSON.stringify({ ...file, schema_version: '2.0.0' }))).toThrow(
      /Kernel Tuner cache: schema_version/,
    );
    expect(readImport('x.json', JSON.stringify({ ...file, kernel_name: 'matmul_kernel' }))).toBeUndefined();
  });

  it("lists the family's search space on this adapter in tune_params, not only the values visited", () => {
    const visited = JSON.parse(ktExport(REPORT, 'json')) as { tune_params: Record<string, unknown[]> };
    expect(visited.tune_params.wm).toEqual([1, 2, 4]);
    const caps = fakeCaps({ dot4I8Packed: true });
    const space = JSON.parse(ktExport(REPORT, 'json', caps)) as { tune_params: Record<string, unknown[]> };
    const search = knobSearch(CATALOG.get('mmq-q4k-tile'), REPORT.base, caps);
    const all = search.space.enumerate().map((c) => search.apply(c));
    expect(space.tune_params.wm).toEqual(
      [...new Set(all.map((c) => c.params.wm))].sort((a, b) => Number(a) - Number(b)),
    );
    // The hunt visited only 'subtile'; the space has the other schedules too.
    expect(visited.tune_params.schedule).toEqual(['subtile']);
    expect(space.tune_params.schedule).toEqual([...new Set(all.map((c) => c.params.schedule))].sort());
    expect(space.tune_params.schedule!.length).toBeGreaterThan(1);
  });

  it('the speedup shown is the claim: a ratio only when the rounds do not overlap', () => {
    expect(speedup(REPORT)).toBe('1.25x, interleaved rounds do not overlap');
    expect(speedup({ ...REPORT, claim: { ...REPORT.claim!, verdict: 'no measurable difference' } })).toBe(
      'no measurable difference over 3 interleaved rounds',
    );
  });
});
