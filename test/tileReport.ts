// A stored hunt of mmq-q4k-tile at 16x16x256 for the tests of the tuner's import and export (unit and
// e2e): entries by tile width, verdict and ms, the report around them.
import type { TuneRecordEntry, TuneReport } from '../src/workers/protocol';

/** The tile's params at width `wm` (the rest of the tile fixed). */
export const tileParams = (wm: number) => ({ m: 16, n: 16, k: 256, wm, wn: 4, rm: 1, rn: 1 });

/** One evaluated config of the hunt. */
export const tileEntry = (
  wm: number,
  verdict: TuneRecordEntry['verdict'],
  ms: number,
  reason?: string,
): TuneRecordEntry => ({
  config: `WM=${wm},WN=4,RM=1,RN=1,ARM=0`,
  params: tileParams(wm),
  arm: 'dp4a',
  generation: 0,
  verdict,
  ms,
  ...(reason ? { reason } : {}),
});

/**
 * The hunt over `entries` (the fastest measured one its winner) on `deviceId`.
 * @example tileReport([tileEntry(1, 'measured', 1.2)], 'elsewhere#plane32').winner // 'WM=1,WN=4,RM=1,RN=1,ARM=0'
 */
export function tileReport(entries: TuneRecordEntry[], deviceId: string): TuneReport {
  const best = entries
    .filter((e) => e.verdict === 'measured')
    .reduce<TuneRecordEntry | undefined>((a, e) => (a && a.ms <= e.ms ? a : e), undefined);
  return {
    op: 'mmq_q4k_tile',
    kernel: 'mmq-q4k-tile',
    deviceId,
    problem: 'm=16,n=16,k=256',
    base: {
      kernel: 'mmq-q4k-tile',
      arm: 'dp4a',
      data: { source: 'reference', seed: 0 },
      params: tileParams(2),
    },
    winner: best?.config ?? '',
    bestMs: best?.ms ?? Infinity,
    entries,
    bestPerGeneration: [best?.ms ?? Infinity],
    evo: { population: entries.length, generations: 1, seed: 1, measureMs: 1, batches: 1, banks: 1 },
    startedAt: '2026-12-05T19:00:00.000Z',
    durationMs: 1000,
    status: 'complete',
  };
}

/** The tile's params at 64x128x512 (the Kernel Tuner file tests' problem), `wm` x `wn` planes. */
export const tileParams64 = (wm: number, wn: number) => ({
  m: 64,
  n: 128,
  k: 512,
  wm,
  wn,
  rm: 1,
  rn: 1,
  schedule: 'subtile',
});
