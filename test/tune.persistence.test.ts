// Tune runs in IndexedDB (fake-indexeddb in Node): keyed store, newest-first history, cachedWinner,
// JSON export/import with Infinity preserved, and clear errors for bad files.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  openTuneRuns,
  parseTuneRunsJson,
  serializeTuneRuns,
  TuneImportError,
  runOf,
  type TuneRunStore,
} from '../src/app/persistence/tuneRuns';
import type { TuneOp, TuneReport } from '../src/workers/protocol';

function report(over: Partial<TuneReport> = {}): TuneReport {
  return {
    op: 'mmq_q4k_tile',
    deviceId: 'SwiftShader#plane4',
    m: 16,
    n: 16,
    k: 256,
    winner: 'WM=1,WN=1,RM=1,RN=1',
    bestMs: 0.25,
    incumbentMs: 0.4,
    entries: [
      {
        config: 'WM=2,WN=4,RM=1,RN=1',
        tile: { wm: 2, wn: 4, rm: 1, rn: 1 },
        generation: 0,
        verdict: 'measured',
        ms: 0.4,
        worstRel: 1e-7,
        bm: 32,
        bn: 64,
      },
      {
        config: 'WM=1,WN=1,RM=1,RN=1',
        tile: { wm: 1, wn: 1, rm: 1, rn: 1 },
        generation: 0,
        verdict: 'measured',
        ms: 0.25,
        worstRel: 2e-7,
        bm: 16,
        bn: 16,
      },
      {
        config: 'WM=4,WN=4,RM=4,RN=8',
        tile: { wm: 4, wn: 4, rm: 4, rn: 8 },
        generation: 1,
        verdict: 'rejected',
        ms: Infinity,
        reason: 'workgroup storage 2.1 MiB > 32 KiB adapter limit',
        bm: 256,
        bn: 512,
      },
    ],
    bestPerGeneration: [0.25, 0.25],
    evo: { population: 8, generations: 2, seed: 12648430, measureIters: 1, repeats: 1, banks: 2 },
    startedAt: '2025-01-02T03:04:05.000Z',
    durationMs: 1234,
    ...over,
  };
}

let stores: TuneRunStore[] = [];
let dbCounter = 0;
async function fresh(): Promise<TuneRunStore> {
  const s = await openTuneRuns(`tune-test-${++dbCounter}`);
  stores.push(s);
  return s;
}

afterEach(() => {
  stores.forEach((s) => s.close());
  stores = [];
});

describe('tune runs in IndexedDB', () => {
  it('stores a run per (device, op, m, n, k), replaces on the same key, lists newest first', async () => {
    const db = await fresh();
    await db.put(report());
    await db.put(report({ k: 512, startedAt: '2025-01-03T00:00:00.000Z' }));
    await db.put(report({ op: 'mmq_q4k_coopmat', startedAt: '2025-01-01T00:00:00.000Z' }));
    expect((await db.list()).map((r) => [r.op, r.k])).toEqual([
      ['mmq_q4k_tile', 512],
      ['mmq_q4k_tile', 256],
      ['mmq_q4k_coopmat', 256],
    ]);
    await db.put(
      report({ winner: 'WM=2,WN=4,RM=1,RN=1', bestMs: 0.4, startedAt: '2025-02-01T00:00:00.000Z' }),
    );
    const runs = await db.list();
    expect(runs).toHaveLength(3);
    expect(runs[0]!.winner).toBe('WM=2,WN=4,RM=1,RN=1');
    const got = await db.get('SwiftShader#plane4', 'mmq_q4k_tile', 16, 16, 256);
    expect(got?.report.entries[2]!.ms).toBe(Infinity); // structured clone keeps Infinity
    expect(got?.date).toBe('2025-02-01T00:00:00.000Z');
  });

  it('cachedWinner is per key and ignores runs without a winner', async () => {
    const db = await fresh();
    await db.put(report());
    expect(await db.cachedWinner('SwiftShader#plane4', 'mmq_q4k_tile', 16, 16, 256)).toBe(
      'WM=1,WN=1,RM=1,RN=1',
    );
    expect(await db.cachedWinner('NVIDIA#plane32', 'mmq_q4k_tile', 16, 16, 256)).toBeUndefined();
    expect(await db.cachedWinner('SwiftShader#plane4', 'mmq_q4k_coopmat', 16, 16, 256)).toBeUndefined();
    await db.put(report({ n: 32, winner: '', bestMs: Infinity, entries: [report().entries[2]!] }));
    expect(await db.cachedWinner('SwiftShader#plane4', 'mmq_q4k_tile', 16, 32, 256)).toBeUndefined();
    await db.delete('SwiftShader#plane4', 'mmq_q4k_tile', 16, 16, 256);
    expect(await db.cachedWinner('SwiftShader#plane4', 'mmq_q4k_tile', 16, 16, 256)).toBeUndefined();
    expect(await db.list()).toHaveLength(1);
  });

  it('persists across connections (a reload)', async () => {
    const name = `tune-reload-${++dbCounter}`;
    const a = await openTuneRuns(name);
    await a.put(report());
    a.close();
    const b = await openTuneRuns(name);
    stores.push(b);
    expect(await b.cachedWinner('SwiftShader#plane4', 'mmq_q4k_tile', 16, 16, 256)).toBe(
      'WM=1,WN=1,RM=1,RN=1',
    );
  });

  it('exports and imports runs as JSON, Infinity included', async () => {
    const a = await fresh();
    await a.put(report());
    // A coopmat run with its finalists' re-timings, one of which failed (Infinity); one is clocked
    // (wallMs), one is as stored before re-timings were clocked.
    const finals = [
      { config: 'WM=1,WN=1,RM=1,RN=1', ms: 0.26, searchMs: 0.25, wallMs: 340 },
      { config: 'WM=2,WN=4,RM=1,RN=1', ms: Infinity, searchMs: 0.4 },
    ];
    await a.put(report({ op: 'mmq_q4k_coopmat' as TuneOp, bestMs: 0.26, finals }));
    const json = await a.exportJson();
    expect(json).toContain('"Infinity"');
    const b = await fresh();
    expect(await b.importJson(json)).toEqual({ imported: 2 });
    const runs = await b.list();
    expect(runs).toEqual(await a.list());
    expect(runs[0]!.report.entries[2]!.ms).toBe(Infinity);
    expect(runs.find((r) => r.report.op === 'mmq_q4k_coopmat')!.report.finals).toEqual(finals);
  });

  it('rejects bad files with a clear message and stores nothing', async () => {
    const db = await fresh();
    const good = JSON.parse(serializeTuneRuns([runOf(report())])) as { runs: Record<string, unknown>[] };
    const cases: [string, RegExp][] = [
      ['not json {', /^not JSON/],
      ['[]', /\(file\): expected an object/],
      [
        JSON.stringify({ format: 'other', version: 1, runs: [] }),
        /format: expected "mmq-playground\/tune-runs"/,
      ],
      [JSON.stringify({ ...good, version: 2 }), /version: expected 1, got 2/],
      [JSON.stringify({ ...good, runs: {} }), /runs: expected an array/],
      [
        JSON.stringify({ ...good, runs: [{ ...good.runs[0], m: 0 }] }),
        /runs\[0\]\.m: expected a positive integer, got 0/,
      ],
      [
        JSON.stringify({ ...good, runs: [{ ...good.runs[0], op: 'gemm' }] }),
        /runs\[0\]\.report\.op|runs\[0\]\.op: expected one of/,
      ],
      [JSON.stringify({ ...good, runs: [{ ...good.runs[0], winner: 'WM=9' }] }), /runs\[0\]\.winner/],
      [JSON.stringify({ ...good, runs: [good.runs[0], good.runs[0]] }), /runs\[1\]: a second run/],
    ];
    const badEntry = structuredClone(good) as { runs: { report: { entries: Record<string, unknown>[] } }[] };
    badEntry.runs[0]!.report.entries[1]!.verdict = 'fast';
    cases.push([
      JSON.stringify(badEntry),
      /runs\[0\]\.report\.entries\[1\]\.verdict: expected one of measured, rejected, failed-gate, got "fast"/,
    ]);
    const badMs = structuredClone(good) as { runs: { report: { entries: Record<string, unknown>[] } }[] };
    badMs.runs[0]!.report.entries[0]!.ms = null;
    cases.push([JSON.stringify(badMs), /entries\[0\]\.ms: expected a number or "Infinity", got null/]);
    for (const [text, want] of cases) {
      await expect(db.importJson(text), text.slice(0, 60)).rejects.toThrow(want);
      await expect(db.importJson(text)).rejects.toBeInstanceOf(TuneImportError);
    }
    expect(await db.list()).toEqual([]);
    expect(parseTuneRunsJson(JSON.stringify(good))).toHaveLength(1);
  });

  it('put validates the report it stores', async () => {
    const db = await fresh();
    await expect(db.put(report({ m: -1 }))).rejects.toThrow(/report\.m: expected a positive integer/);
    await expect(db.put(report({ winner: 'WM=4,WN=4,RM=4,RN=8' }))).rejects.toThrow(
      /report\.winner: expected the name of a measured entry/,
    );
    await expect(
      db.put(report({ finals: [{ config: 'WM=4,WN=4,RM=4,RN=8', ms: 1, searchMs: Infinity }] })),
    ).rejects.toThrow(/report\.finals\[0\]\.config: expected the name of a measured entry/);
    await expect(
      db.put(report({ finals: [{ config: 'WM=1,WN=1,RM=1,RN=1', ms: -1, searchMs: 0.25 }] })),
    ).rejects.toThrow(/report\.finals\[0\]\.ms/);
    await expect(
      db.put(report({ finals: [{ config: 'WM=1,WN=1,RM=1,RN=1', ms: 1, searchMs: 0.25, wallMs: -5 }] })),
    ).rejects.toThrow(/report\.finals\[0\]\.wallMs/);
  });
});
