import { describe, expect, it } from 'vitest';
import { CATALOG } from '../catalog';
import { knobLabel } from '../family';
import { readKtCache } from '../perf/ktCache';
import { settlePick, type PickCandidate, type PickResult } from '../tune/pick';
import {
  compareModelRuns,
  modelPreset,
  modelRunJson,
  modelRunKtCaches,
  modelRunTable,
  newModelRun,
  parseModelRun,
  phaseGemms,
  phaseTotals,
  pickPoint,
  presetPass,
  withPick,
  type ModelRun,
  type ModelRunAdapter,
} from './index';

const ADAPTER: ModelRunAdapter = {
  name: 'nvidia hopper',
  deviceId: 'nvidia/hopper/H100#plane32',
  vendor: 'nvidia',
  architecture: 'hopper',
  description: 'H100',
  plane: 32,
  software: false,
};

const llama = () =>
  newModelRun(
    presetPass(modelPreset('llama-3.1-8b')!),
    { name: 'Llama-3.1-8B', source: 'preset', id: 'llama-3.1-8b', format: 'Q4_K' },
    ADAPTER,
    [
      { phase: 'prefill', m: 512 },
      { phase: 'decode', m: 512 },
    ],
    { timing: { targetMs: 25, batches: 6 }, measured: true, startedAt: '2026-12-06T00:00:00.000Z' },
  );

/** A measured pick: `kernel` at `ms` (batches ms..1.02ms), and a slower family at 1.5x. */
function picked(run: ModelRun, phase: number, gemm: number, kernel: string, ms: number): PickResult {
  const g = phaseGemms(run, phase)[gemm]!;
  const cand = (k: string, t: number): PickCandidate => {
    const params = { ...CATALOG.get(k).defaults, m: g.rows, n: g.n, k: g.k };
    return {
      kernel: k,
      title: k,
      served: 'incumbent',
      verdict: 'measured',
      ms: t,
      samples: [t, t * 1.02],
      arithmetic: k === 'coopmat-f16' ? 'f16' : 'int8',
      config: {
        kernel: k,
        arm: 'subgroup-matrix',
        data: { source: 'synthetic', seed: 0 },
        params,
      },
      knobs: knobLabel(CATALOG.get(k), params),
      ops: 2 * g.rows * g.n * g.k,
      bytes: (g.n * g.k * 144) / 256,
    };
  };
  return settlePick(
    g,
    [cand(kernel, ms), cand(kernel === 'mmq-q4k-tile' ? 'coopmat-f16' : 'mmq-q4k-tile', ms * 1.5)],
    true,
  );
}

/** Llama at m = 512 and decode with the given per-GEMM ms (q/o, k/v, gate/up, down, head). */
function filled(prefill: number[], decode: number[]): ModelRun {
  let run = llama();
  prefill.forEach((ms, i) => (run = withPick(run, 0, i, picked(run, 0, i, 'coopmat-f16', ms))));
  decode.forEach((ms, i) => (run = withPick(run, 1, i, picked(run, 1, i, 'mmq-q4k-tile', ms))));
  return run;
}

describe('a model run', () => {
  it("each phase's GEMMs: M rows at prefill (the head one), one at decode", () => {
    const run = llama();
    expect(run.phases.map((p) => p.m)).toEqual([512, 1]);
    expect(phaseGemms(run, 0).map((g) => g.rows)).toEqual([512, 512, 512, 512, 1]);
    expect(phaseGemms(run, 1).map((g) => g.rows)).toEqual([1, 1, 1, 1, 1]);
    expect(phaseGemms(run, 0)[2]).toEqual({ type: 'Q4_K', n: 14336, k: 4096, rows: 512 });
  });

  it('totals from known per-GEMM times: launches x ms summed, prefill tokens/s = M / ms, decode 1 / ms', () => {
    // Launches: q/o 64, k/v 64, gate/up 64, down 32, head 1.
    const run = filled([0.5, 0.2, 1.5, 1.6, 3], [0.05, 0.02, 0.15, 0.16, 1.2]);
    const pre = phaseTotals(run, 0);
    expect(pre.ms).toBeCloseTo(64 * 0.5 + 64 * 0.2 + 64 * 1.5 + 32 * 1.6 + 3); // 195.0
    expect(pre.ms).toBeCloseTo(195);
    expect([pre.launches, pre.coveredLaunches, pre.missing]).toEqual([225, 225, []]);
    expect(pre.tokensPerS).toBeCloseTo((512 * 1000) / 195);
    const dec = phaseTotals(run, 1);
    expect(dec.ms).toBeCloseTo(64 * 0.05 + 64 * 0.02 + 64 * 0.15 + 32 * 0.16 + 1.2); // 20.4
    expect(dec.tokensPerS).toBeCloseTo(1000 / 20.4);
  });

  it('a GEMM without a winner is left out of the total, named, and no tokens/s is claimed', () => {
    const run = filled([0.5, 0.2, 1.5, 1.6], []);
    const t = phaseTotals(run, 0);
    expect(t.missing).toEqual(['Q4_K 128256x4096']);
    expect([t.launches, t.coveredLaunches]).toEqual([225, 224]);
    expect(t.tokensPerS).toBeUndefined();
    expect(phaseTotals(run, 1)).toMatchObject({ ms: 0, coveredLaunches: 0 });
  });

  it("the table: each GEMM's pick, its spread, % of its roof, the next family's margin, and the total", () => {
    const run = {
      ...filled([0.5, 0.2, 1.5, 1.6, 3], []),
      peaks: { bandwidthGBs: 3000, ops: { 'f16-matrix': 400e12 } },
    };
    const t = modelRunTable(run, 0);
    expect(t[0]).toEqual([
      'GEMM',
      'weight',
      'x/pass',
      'm',
      'pick',
      'ms',
      'batches ms',
      '% of roof',
      'next family',
      'ms/pass',
    ]);
    const q = t[1]!;
    expect(q.slice(0, 4)).toEqual(['attn_q x32, attn_output x32', 'Q4_K 4096x4096', '64', '512']);
    expect(q[4]).toBe('coopmat-f16 subgroup-matrix 2,2,1,1,prepass');
    expect(q.slice(5, 7)).toEqual(['0.5000', '0.5000-0.5100']);
    // 2 * 512 * 4096^2 ops in 0.5 ms = 34.4 TFLOP/s; the roof at its intensity is the f16 peak.
    expect(q[7]).toBe(`${((100 * (2 * 512 * 4096 * 4096)) / 0.5e-3 / 400e12).toFixed(1)} (compute)`);
    expect(q[8]).toBe('mmq-q4k-tile 1.50x');
    expect(q[9]).toBe('32.00');
    expect(t.at(-1)!.slice(0, 3)).toEqual(['total per prefill of 512', '', '225']);
    expect(t.at(-1)![8]).toMatch(/^2626 tokens\/s/);
    expect(modelRunTable(run, 1)[1]![4]).toBe('not run');
  });

  it('pickPoint: none without peaks or a measurement', () => {
    const run = filled([0.5], []);
    const w = run.phases[0]!.picks[0]!.candidates[0]!;
    expect(pickPoint(w, undefined)).toBeUndefined();
    const { ms: _ms, ...unmeasured } = w;
    expect(pickPoint(unmeasured, { bandwidthGBs: 1, ops: {} })).toBeUndefined();
    // Without a compute figure for its roof: memory-bound against the bandwidth.
    expect(pickPoint(w, { bandwidthGBs: 1000, ops: {} })).toMatchObject({
      bound: 'memory',
      roof: 'f16-matrix',
    });
  });

  it('runs of two adapters side by side: each GEMM with each run winner, ms and % of its own roof', () => {
    const a = {
      ...filled([0.5, 0.2, 1.5, 1.6, 3], [0.05]),
      peaks: { bandwidthGBs: 3000, ops: { 'f16-matrix': 400e12 } },
    };
    const b = { ...filled([1, 0.4], []), adapter: { ...ADAPTER, name: 'other' } };
    const rows = compareModelRuns([a, b]);
    expect(rows).toHaveLength(10);
    expect(rows[0]).toMatchObject({ phase: 'prefill', m: 512, key: 'Q4_K 4096x4096' });
    expect(rows[0]!.cells[0]).toMatchObject({ kernel: 'coopmat-f16', arm: 'subgroup-matrix', ms: 0.5 });
    expect(rows[0]!.cells[0]!.peakFraction).toBeGreaterThan(0);
    expect(rows[0]!.cells[1]).toEqual({
      kernel: 'coopmat-f16',
      arithmetic: 'f16',
      arm: 'subgroup-matrix',
      ms: 1,
    });
    expect(rows[4]!.cells).toEqual([expect.objectContaining({ ms: 3 }), undefined]);
  });
});

describe("a model run's files", () => {
  it("JSON round-trips (Infinity included), and its Kernel Tuner caches read back as each shape's config", () => {
    let run = filled([0.5], []);
    const pick = run.phases[0]!.picks[0]!;
    run = withPick(run, 0, 0, {
      ...pick,
      candidates: [
        ...pick.candidates,
        { kernel: 'mmq-q4k-rt', title: 'rt', served: 'defaults', verdict: 'failed-gate', ms: Infinity },
      ],
    });
    const caches = modelRunKtCaches(run, CATALOG.families);
    expect(Object.keys(caches).sort()).toEqual([
      'prefill-m512-Q4_K-4096x4096-coopmat-f16.kt.json',
      'prefill-m512-Q4_K-4096x4096-mmq-q4k-tile.kt.json',
    ]);
    const back = parseModelRun(modelRunJson(run, caches));
    expect(back).toEqual(run);
    const kt = readKtCache(
      JSON.parse(JSON.stringify(caches['prefill-m512-Q4_K-4096x4096-mmq-q4k-tile.kt.json'])),
      CATALOG.get('mmq-q4k-tile'),
    );
    expect(kt.measured).toBe(1);
    expect(kt.run.entries[0]).toMatchObject({ arm: 'subgroup-matrix', ms: 0.75 });
    expect(kt.run.problem).toBe('m=512,n=4096,k=4096,data=synthetic#0');
  });

  it('a file that is not a model run says what is wrong and where', () => {
    const good = JSON.parse(modelRunJson(filled([0.5], []))) as Record<string, unknown>;
    const bad = (patch: (j: Record<string, unknown>) => void) => {
      const j = structuredClone(good);
      patch(j);
      return () => parseModelRun(JSON.stringify(j));
    };
    expect(() => parseModelRun('{')).toThrow(/^not JSON/);
    expect(() => parseModelRun('[]')).toThrow('the file: not a JSON object');
    expect(bad((j) => (j.format = 'mmq-playground/tune-runs'))).toThrow(
      /^format: expected "mmq-playground\/model-run"/,
    );
    expect(bad((j) => (j.version = 2))).toThrow('version: expected 1, got 2');
    expect(bad((j) => ((j.gemms as { n: unknown }[])[1]!.n = -3))).toThrow(
      'gemms[1].n: expected a whole number > 0',
    );
    expect(bad((j) => (j.phases as { picks: unknown[] }[])[0]!.picks.pop())).toThrow(
      'phases[0].picks: expected one per GEMM (5)',
    );
    expect(
      bad((j) => ((j.phases as { picks: { winner: string }[] }[])[0]!.picks[0]!.winner = 'nobody')),
    ).toThrow('phases[0].picks[0].winner: names no candidate');
    expect(
      bad(
        (j) =>
          ((j.phases as { picks: { candidates: { ms: unknown }[] }[] }[])[0]!.picks[0]!.candidates[0]!.ms =
            'fast'),
      ),
    ).toThrow('phases[0].picks[0].candidates[0].ms: expected a time in ms > 0');
    expect(bad((j) => (j.peaks = { bandwidthGBs: 0, ops: {} }))).toThrow(/^peaks:/);
    expect(bad((j) => delete (j.adapter as Record<string, unknown>).deviceId)).toThrow(
      'adapter.deviceId: expected a string',
    );
  });
});
