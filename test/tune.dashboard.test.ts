// The tuner dashboard: its view-model (sorting, chart series, formats), its server-rendered markup with
// the stable data-testids the e2e tests rely on (rejected configs listed with reasons, the winner
// marked, interrupted runs marked and resumable), and the form's blockers said inline.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { AppContext } from '../src/app/appContext';
import type { Controller } from '../src/app/controller';
import type { TuneRun } from '../src/app/persistence/tuneRuns';
import {
  createAppStore,
  deviceReady,
  huntOfRun,
  initialState,
  partialReport,
  runsLoaded,
  setDraft,
  setTunerParam,
  showRun,
  type AppState,
  type HuntState,
} from '../src/app/store';
import { SWIFTSHADER_CAPS } from '../src/app/store/caps.fixture';
import { ConfigTable } from '../src/app/tuner/ConfigTable';
import { RunHistory } from '../src/app/tuner/RunHistory';
import { ConfigScatter, ConvergenceChart } from '../src/app/tuner/TunerCharts';
import { TunerDashboard } from '../src/app/tuner/TunerDashboard';
import {
  bestPerGenerationOf,
  convergenceSeries,
  finalsWallMs,
  formatCount,
  formatMs,
  log4Ticks,
  scatterModel,
  sortRows,
  speedup,
} from '../src/app/tuner/tunerData';
import { tunerBlockers } from '../src/app/tunerController';
import { CATALOG } from '../src/kernels/catalog';
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
  params: { wm: 1, wn: 1, rm: bm / 16, rn: bn / 16 },
  arm: 'scalar',
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
    expect(sortRows(entries, 'area', 'asc').map((r) => r.entry.config)).toEqual(['A', 'D', 'C', 'E', 'B']);
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
    expect(m.unmeasuredY).toBeGreaterThan(m.dividerY);
    expect(m.rejected[0]!.area).toBe(64 * 128);
  });

  it('formats, ticks and sums', () => {
    expect(log4Ticks(256, 8192)).toEqual([256, 1024, 4096, 16384]);
    expect(formatCount(16384)).toBe('16k');
    expect(formatMs(Infinity)).toBe('--');
    expect(formatMs(0.0123)).toBe('12.3 us');
    expect(speedup({ bestMs: 0.2, incumbentMs: 0.5 })).toBe('2.50x');
    expect(finalsWallMs([{ wallMs: 1 }, { wallMs: 2 }])).toBe(3);
    expect(finalsWallMs([{ wallMs: 1 }, {}])).toBeUndefined();
  });
});

describe('tuner components (server-rendered)', () => {
  it('the table lists every config with verdicts and reasons, winner first, with stable test ids', () => {
    const html = renderToStaticMarkup(createElement(ConfigTable, { entries, winner: 'C', onPick: () => {} }));
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
    expect(scatter).toContain('data-measured="3"');
    expect(scatter).toContain('data-rejected="1"');
    expect(scatter).toContain('data-failed="1"');
    const conv = renderToStaticMarkup(
      createElement(ConvergenceChart, { bestPerGeneration: [0.5, 0.2, 0.2] }),
    );
    expect(conv).toContain('data-points="3"');
    expect(conv).not.toContain('data-winner-retimed');
    const retimed = renderToStaticMarkup(
      createElement(ConvergenceChart, { bestPerGeneration: [0.5, 0.2, 0.2], winnerRetimedMs: 0.25 }),
    );
    expect(retimed).toContain('data-winner-retimed="0.25"');
  });

  const hunt: HuntState = {
    key: 'here#plane4|mmq_q4k_tile|m=16,n=16,k=256',
    base: {
      kernel: 'mmq-q4k-tile',
      arm: 'scalar',
      data: { source: 'reference', seed: 0 },
      params: { m: 16, n: 16, k: 256 },
    },
    evo: { population: 4, generations: 2, seed: 1, measureMs: 1, batches: 1, banks: 1 },
    op: 'mmq_q4k_tile',
    deviceId: 'here#plane4',
    problem: 'm=16,n=16,k=256',
    status: 'interrupted',
    generation: 1,
    evaluated: 3,
    bestMs: 0.2,
    entries: entries.slice(0, 3),
    resumed: 0,
    startedAt: '2025-01-02T03:04:05.000Z',
    stored: true,
  };
  const stored = (h: HuntState, deviceId = h.deviceId): TuneRun => {
    const report = { ...partialReport(h, 'mmq-q4k-tile', 100), deviceId };
    return {
      key: `${deviceId}|${h.op}|${h.problem}`,
      deviceId,
      op: h.op,
      kernel: 'mmq-q4k-tile',
      problem: h.problem,
      status: 'interrupted',
      winner: '',
      bestMs: 0.2,
      date: h.startedAt,
      report,
    };
  };

  it('the history lists stored runs, marks interrupted ones and other devices', () => {
    const html = renderToStaticMarkup(
      createElement(RunHistory, {
        runs: [stored(hunt), stored(hunt, 'there#plane32')],
        deviceId: 'here#plane4',
        selected: hunt.key,
        onShow: () => {},
        onDelete: () => {},
        onExport: () => {},
        onExportRun: () => {},
        onImport: () => {},
        importError: 'runs[0].problem: expected a string, got 0',
        importNote: undefined,
      }),
    );
    expect(html).toContain('data-testid="tuner-history" data-count="2"');
    expect(html.match(/data-testid="tuner-history-row"/g)).toHaveLength(2);
    expect(html).toContain('data-status="interrupted"');
    expect(html).toContain('interrupted: 3 measured');
    expect(html).toContain('tuner-selected');
    expect(html).toContain('other device: there#plane32');
    expect(html).toContain('data-testid="tuner-import-error"');
  });

  // Server rendering reads the store's initial state: each render gets a store built from that state.
  const render = (state: AppState) => {
    createAppStore(state);
    return renderToStaticMarkup(
      createElement(
        AppContext.Provider,
        { value: { controller: {} as Controller } },
        createElement(TunerDashboard),
      ),
    );
  };
  const ready = (deviceId = 'here#plane4') => {
    const s = initialState(CATALOG.families, 'mmq-q4k-tile');
    return { ...s, ...deviceReady(s, SWIFTSHADER_CAPS, deviceId, 4) };
  };
  const with_ = (s: AppState, patch: Partial<AppState>): AppState => ({ ...s, ...patch });

  it('after a reload the last stored run shows as interrupted, with resume on its own device only', () => {
    let s = ready();
    s = with_(s, runsLoaded(s, [stored(hunt)]));
    s = with_(s, showRun(s, stored(hunt)));
    expect(s.tuner.hunt).toMatchObject(huntOfRun(stored(hunt)));
    let html = render(s);
    expect(html).toContain('data-state="interrupted"');
    expect(html).toMatch(/data-testid="tuner-resume"[^>]*>resume/);
    expect(html).not.toMatch(/data-testid="tuner-resume"[^>]*disabled/);
    expect(html.match(/data-testid="tuner-row"/g)).toHaveLength(3);
    html = render(with_(s, deviceReady(s, SWIFTSHADER_CAPS, 'elsewhere#plane4', 4)));
    expect(html).toMatch(/data-testid="tuner-resume"[^>]*disabled/);
  });

  it("the form's problems are said inline, not only in a tooltip, and block the hunt buttons", () => {
    expect(tunerBlockers(initialState(CATALOG.families, 'mmq-q4k-tile'))).toEqual([
      'the GPU device is starting',
    ]);
    let s = ready();
    expect(tunerBlockers(s)).toEqual([]);
    s = with_(s, setTunerParam(s, 'k', 300));
    s = with_(
      s,
      setDraft(s, 'tuner:evo:population', '', 'population is empty: type a whole number from 1 to 256'),
    );
    expect(tunerBlockers(s)).toEqual([
      'population is empty: type a whole number from 1 to 256',
      'k = 300 is not a multiple of 256 (the Q4_K super-block)',
    ]);
    const html = render(s);
    expect(html).toContain('data-testid="tuner-blockers"');
    expect(html).toContain('k = 300 is not a multiple of 256 (the Q4_K super-block)');
    expect(html).toMatch(/data-testid="tuner-hunt" disabled/);
  });
});
