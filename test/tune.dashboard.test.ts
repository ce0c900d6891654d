// The dashboard's view-model (sorting, chart series) and its server-rendered markup: the stable
// data-testids the e2e tests rely on, rejected configs listed with reasons, the winner marked.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ConfigTable } from '../src/app/tuner/ConfigTable';
import { RunHistory } from '../src/app/tuner/RunHistory';
import { ConfigScatter, ConvergenceChart } from '../src/app/tuner/TunerCharts';
import { formProblems, DEFAULT_TUNE_EVO } from '../src/app/tuner/TunerDashboard';
import {
  bestPerGenerationOf,
  convergenceSeries,
  formatCount,
  formatMs,
  log4Ticks,
  scatterModel,
  sortRows,
  speedup,
} from '../src/app/tuner/tunerData';
import type { TuneRecordEntry } from '../src/workers/protocol';

const entry = (
  config: string,
  verdict: TuneRecordEntry['verdict'],
  ms: number,
  generation: number,
  bm: number,
  bn: number,
  reason?: string,
): TuneRecordEntry => ({
  config,
  tile: { wm: 1, wn: 1, rm: bm / 16, rn: bn / 16 },
  generation,
  verdict,
  ms,
  bm,
  bn,
  ...(reason ? { reason } : {}),
  ...(verdict !== 'rejected' ? { worstRel: verdict === 'measured' ? 1e-7 : 0.3 } : {}),
});

const entries: TuneRecordEntry[] = [
  entry('A', 'measured', 0.5, 0, 16, 16),
  entry('B', 'rejected', Infinity, 0, 64, 128, 'workgroup storage 40 KiB > 32 KiB adapter limit'),
  entry('C', 'measured', 0.2, 1, 32, 32),
  entry('D', 'failed-gate', Infinity, 1, 16, 32, 'rel_to_max 3.0e-1 > 1e-3 gate'),
  entry('E', 'measured', 0.3, 2, 16, 64),
];

describe('tuner view-model', () => {
  it('sorts by ms with unmeasured configs last (gate failures before rejections), both directions', () => {
    expect(sortRows(entries, 'ms', 'asc').map((r) => r.entry.config)).toEqual(['C', 'E', 'A', 'D', 'B']);
    expect(sortRows(entries, 'ms', 'desc').map((r) => r.entry.config)).toEqual(['A', 'E', 'C', 'D', 'B']);
    expect(sortRows(entries, 'order', 'desc').map((r) => r.order)).toEqual([4, 3, 2, 1, 0]);
    expect(sortRows(entries, 'area', 'asc').map((r) => r.entry.config)).toEqual(['A', 'D', 'C', 'E', 'B']); // C and E tie at 1024: evaluation order;
  });

  it('builds the convergence series, live and from a report', () => {
    expect(bestPerGenerationOf(entries)).toEqual([0.5, 0.2, 0.2]);
    expect(bestPerGenerationOf([entries[1]!])).toEqual([Infinity]);
    expect(convergenceSeries({ bestPerGeneration: [Infinity, 0.4, 0.2] })).toEqual([
      { generation: 0, best: null },
      { generation: 1, best: 0.4 },
      { generation: 2, best: 0.2 },
    ]);
  });

  it('puts unmeasured configs on a row above every measured one and singles out the winner', () => {
    const m = scatterModel(entries, 'C');
    expect(m.winner?.config).toBe('C');
    expect(m.measured.map((p) => p.config)).toEqual(['A', 'E']);
    expect(m.rejected.map((p) => p.config)).toEqual(['B']);
    expect(m.failedGate.map((p) => p.config)).toEqual(['D']);
    expect(m.dividerY).toBeGreaterThan(0.5);
    expect(m.unmeasuredY).toBeGreaterThan(m.dividerY);
    expect(m.yMax).toBeGreaterThan(m.unmeasuredY);
    expect(m.rejected[0]!.area).toBe(64 * 128);
    expect(m.xDomain[0]).toBeLessThan(256);
  });

  it('log-axis ticks cover the areas present', () => {
    expect(log4Ticks(256, 8192)).toEqual([256, 1024, 4096, 16384]);
    expect(log4Ticks(1024, 1024)).toEqual([1024]);
    expect(formatCount(16384)).toBe('16k');
  });

  it('formats', () => {
    expect(formatMs(0)).toBe('0');
    expect(formatMs(Infinity)).toBe('--');
    expect(formatMs(0.0123)).toBe('12.3 us');
    expect(formatMs(1.5)).toBe('1.500 ms');
    expect(speedup({ bestMs: 0.2, incumbentMs: 0.5 })).toBe('2.50x');
    expect(speedup({ bestMs: 0.2 })).toBeUndefined();
  });

  it('checks the form before a hunt', () => {
    expect(formProblems({ m: 16, n: 16, k: 256 }, DEFAULT_TUNE_EVO)).toEqual([]);
    expect(formProblems({ m: 16, n: 16, k: 300 }, DEFAULT_TUNE_EVO)).toEqual([
      'k = 300 must be a multiple of 256 (the Q4_K super-block)',
    ]);
    expect(formProblems({ m: 0, n: 16, k: 256 }, { ...DEFAULT_TUNE_EVO, population: NaN })).toEqual([
      'm must be a positive integer',
      'population must be a positive integer',
    ]);
  });
});

describe('tuner components (server-rendered)', () => {
  it('the table lists every config with verdicts and reasons, winner first, with stable test ids', () => {
    const html = renderToStaticMarkup(createElement(ConfigTable, { entries, winner: 'C', onPick: () => {} }));
    expect(html).toContain('data-testid="tuner-table"');
    const rows = [
      ...html.matchAll(/data-testid="tuner-row" data-config="(\w)" data-verdict="([\w-]+)"/g),
    ].map((m) => `${m[1]}:${m[2]}`);
    expect(rows).toEqual(['C:measured', 'E:measured', 'A:measured', 'D:failed-gate', 'B:rejected']);
    expect(html).toContain('workgroup storage 40 KiB &gt; 32 KiB adapter limit');
    expect(html).toContain('tuner-winner');
    expect(html).toContain('data-testid="tuner-sort-ms"');
  });

  it('the charts carry their test ids and counts', () => {
    const scatter = renderToStaticMarkup(createElement(ConfigScatter, { entries, winner: 'C' }));
    expect(scatter).toContain('data-testid="tuner-scatter"');
    expect(scatter).toContain('data-measured="3"');
    expect(scatter).toContain('data-rejected="1"');
    expect(scatter).toContain('data-failed="1"');
    const conv = renderToStaticMarkup(
      createElement(ConvergenceChart, { bestPerGeneration: [0.5, 0.2, 0.2] }),
    );
    expect(conv).toContain('data-testid="tuner-convergence"');
    expect(conv).toContain('data-points="3"');
    expect(conv).not.toContain('data-winner-retimed');
    // With finalists the winner's re-timing is drawn too (it can sit above the search's best).
    const retimed = renderToStaticMarkup(
      createElement(ConvergenceChart, { bestPerGeneration: [0.5, 0.2, 0.2], winnerRetimedMs: 0.25 }),
    );
    expect(retimed).toContain('data-winner-retimed="0.25"');
  });

  it('the history lists stored runs and marks other devices', () => {
    const run = (deviceId: string, k: number) => ({
      deviceId,
      op: 'mmq_q4k_tile' as const,
      m: 16,
      n: 16,
      k,
      winner: 'WM=1,WN=1,RM=1,RN=1',
      bestMs: 0.2,
      date: '2025-01-02T03:04:05.000Z',
      report: {} as never,
    });
    const html = renderToStaticMarkup(
      createElement(RunHistory, {
        runs: [run('here#plane4', 256), run('there#plane32', 512)],
        deviceId: 'here#plane4',
        selected: 'here#plane4|mmq_q4k_tile|16|16|256',
        onShow: () => {},
        onDelete: () => {},
        onExport: () => {},
        onImport: () => {},
        importError: 'runs[0].m: expected a positive integer, got 0',
        importNote: undefined,
      }),
    );
    expect(html).toContain('data-testid="tuner-history" data-count="2"');
    expect(html.match(/data-testid="tuner-history-row"/g)).toHaveLength(2);
    expect(html).toContain('tuner-selected');
    expect(html).toContain('other device: there#plane32');
    expect(html).toContain('data-testid="tuner-import-error"');
  });
});
