// A stored tuning run exported as a Kernel Tuner cache file re-imports as the same run (the app's
// "KT cache" export and its import button); a Kernel Tuner file without the run's block is refused
// saying why; the dashboard's speedup says what the interleaved claim says.
import { describe, expect, it } from 'vitest';
import { parseTuneRunsJson, runOf, TuneImportError } from '../src/app/persistence/tuneRuns';
import { ktExport, speedup } from '../src/app/tuner/tunerData';
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

  it('refuses a Kernel Tuner file that does not say which problem it tuned', () => {
    const foreign = JSON.parse(ktExport(REPORT, 'json')) as Record<string, unknown>;
    delete foreign.mmq_run;
    expect(() => parseTuneRunsJson(JSON.stringify(foreign))).toThrow(TuneImportError);
    expect(() => parseTuneRunsJson(JSON.stringify(foreign))).toThrow(/without an mmq_run block/);
    expect(() => parseTuneRunsJson(JSON.stringify({ ...foreign, schema_version: '2.0.0' }))).toThrow(
      /Kernel Tuner cache: schema_version/,
    );
  });

  it('the speedup shown is the claim: a ratio only when the rounds do not overlap', () => {
    expect(speedup(REPORT)).toBe('1.25x, interleaved rounds do not overlap');
    expect(speedup({ ...REPORT, claim: { ...REPORT.claim!, verdict: 'no measurable difference' } })).toBe(
      'no measurable difference over 3 interleaved rounds',
    );
  });
});
