// Tune runs in IndexedDB (fake-indexeddb in Node): one record per (device, op, problem), newest-first
// history, the cached report of a complete hunt (never of an interrupted one), entry-by-entry saves of a
// hunt in flight, a version-1 database upgraded, JSON export/import with Infinity preserved, and clear
// errors for bad files.
import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { afterEach, describe, expect, it } from 'vitest';
import {
  openTuneRuns,
  parseTuneRunsJson,
  runKey,
  runOf,
  serializeTuneRuns,
  TuneImportError,
  type TuneRunStore,
} from '../src/app/persistence/tuneRuns';
import type { TuneRecordEntry, TuneReport } from '../src/workers/protocol';

const entry = (
  config: string,
  verdict: TuneRecordEntry['verdict'],
  ms: number,
  generation = 0,
): TuneRecordEntry => ({
  config,
  params: { m: 16, n: 16, k: 256, wm: 1, wn: 1, rm: 1, rn: 1 },
  arm: 'scalar',
  generation,
  verdict,
  ms,
  ...(verdict === 'rejected'
    ? { reason: 'workgroup storage 2.1 MiB > 32 KiB adapter limit' }
    : { worstRel: 1e-7 }),
  bm: 16,
  bn: 16,
});

function report(over: Partial<TuneReport> = {}): TuneReport {
  return {
    op: 'mmq_q4k_tile',
    kernel: 'mmq-q4k-tile',
    deviceId: 'SwiftShader#plane4',
    problem: 'm=16,n=16,k=256',
    base: {
      kernel: 'mmq-q4k-tile',
      arm: 'scalar',
      data: { source: 'reference', seed: 0 },
      params: { m: 16, n: 16, k: 256 },
    },
    winner: 'WM=1,WN=1,RM=1,RN=1,ARM=0',
    winnerConfig: {
      kernel: 'mmq-q4k-tile',
      arm: 'scalar',
      data: { source: 'reference', seed: 0 },
      params: { m: 16, n: 16, k: 256, wm: 1, wn: 1, rm: 1, rn: 1 },
    },
    bestMs: 0.25,
    incumbentMs: 0.4,
    entries: [
      entry('WM=2,WN=4,RM=1,RN=1,ARM=0', 'measured', 0.4),
      entry('WM=1,WN=1,RM=1,RN=1,ARM=0', 'measured', 0.25),
      entry('WM=4,WN=4,RM=4,RN=8,ARM=0', 'rejected', Infinity, 1),
    ],
    bestPerGeneration: [0.25, 0.25],
    evo: { population: 8, generations: 2, seed: 12648430, measureMs: 1, batches: 1, banks: 2 },
    startedAt: '2025-01-02T03:04:05.000Z',
    durationMs: 1234,
    status: 'complete',
    winnerVerdict: { pass: true, gate: 'bit-exact', relToMax: 0, mismatches: 0 },
    ...over,
  };
}

let stores: TuneRunStore[] = [];
let dbCounter = 0;
async function fresh(name = `tune-test-${++dbCounter}`): Promise<TuneRunStore> {
  const s = await openTuneRuns(name);
  stores.push(s);
  return s;
}

afterEach(() => {
  stores.forEach((s) => s.close());
  stores = [];
});

describe('tune runs in IndexedDB', () => {
  it('stores a run per (device, op, problem), replaces on the same key, lists newest first', async () => {
    const db = await fresh();
    await db.put(report());
    await db.put(report({ problem: 'm=16,n=16,k=512', startedAt: '2025-01-03T00:00:00.000Z' }));
    await db.put(report({ op: 'mmq_q4k_coopmat', startedAt: '2025-01-01T00:00:00.000Z' }));
    expect((await db.list()).map((r) => [r.op, r.problem])).toEqual([
      ['mmq_q4k_tile', 'm=16,n=16,k=512'],
      ['mmq_q4k_tile', 'm=16,n=16,k=256'],
      ['mmq_q4k_coopmat', 'm=16,n=16,k=256'],
    ]);
    await db.put(
      report({ winner: 'WM=2,WN=4,RM=1,RN=1,ARM=0', bestMs: 0.4, startedAt: '2025-02-01T00:00:00.000Z' }),
    );
    const runs = await db.list();
    expect(runs).toHaveLength(3);
    expect(runs[0]!.winner).toBe('WM=2,WN=4,RM=1,RN=1,ARM=0');
    const got = await db.get(runKey(report()));
    expect(got?.key).toBe('SwiftShader#plane4|mmq_q4k_tile|m=16,n=16,k=256');
    expect(got?.report.entries[2]!.ms).toBe(Infinity); // structured clone keeps Infinity
    expect(got?.date).toBe('2025-02-01T00:00:00.000Z');
  });

  it('replays only a complete hunt with a winner; an interrupted one is kept entry by entry, not replayed', async () => {
    const db = await fresh();
    const key = runKey(report());
    // A hunt in flight is saved after each measured config, as interrupted (a reload keeps it).
    const partial = (n: number): TuneReport =>
      report({
        status: 'interrupted',
        winner: '',
        bestMs: 0.25,
        entries: report().entries.slice(0, n),
        finals: [],
      });
    await db.put(partial(1));
    await db.put(partial(2));
    expect(await db.get(key)).toMatchObject({ status: 'interrupted', winner: '' });
    expect((await db.get(key))!.report.entries).toHaveLength(2);
    expect(await db.cachedReport(key)).toBeUndefined();
    await db.put(report());
    expect((await db.cachedReport(key))?.winner).toBe('WM=1,WN=1,RM=1,RN=1,ARM=0');
    expect(await db.cachedReport(runKey(report({ deviceId: 'NVIDIA#plane32' })))).toBeUndefined();
    await db.put(report({ problem: 'p2', winner: '', bestMs: Infinity, entries: [report().entries[2]!] }));
    expect(await db.cachedReport(runKey(report({ problem: 'p2' })))).toBeUndefined();
    await db.delete(key);
    expect(await db.cachedReport(key)).toBeUndefined();
    expect(await db.list()).toHaveLength(1);
  });

  it('persists across connections (a reload), and upgrades a version-1 database by dropping its runs', async () => {
    const name = `tune-reload-${++dbCounter}`;
    const old = await openDB(name, 1, {
      upgrade(db) {
        db.createObjectStore('runs', { keyPath: ['deviceId', 'op', 'm', 'n', 'k'] });
      },
    });
    await old.put('runs', { deviceId: 'd', op: 'mmq_q4k_tile', m: 1, n: 1, k: 256 });
    old.close();
    const a = await openTuneRuns(name);
    expect(await a.list()).toEqual([]);
    await a.put(report());
    a.close();
    const b = await fresh(name);
    expect((await b.cachedReport(runKey(report())))?.winner).toBe('WM=1,WN=1,RM=1,RN=1,ARM=0');
  });

  it('exports and imports runs as JSON, Infinity and interrupted hunts included', async () => {
    const a = await fresh();
    await a.put(report());
    const finals = [
      { config: 'WM=1,WN=1,RM=1,RN=1,ARM=0', ms: 0.26, searchMs: 0.25, wallMs: 340 },
      { config: 'WM=2,WN=4,RM=1,RN=1,ARM=0', ms: Infinity, searchMs: 0.4 },
    ];
    await a.put(report({ op: 'mmq_q4k_coopmat', bestMs: 0.26, finals }));
    await a.put(report({ problem: 'p3', status: 'interrupted', winner: '' }));
    const json = await a.exportJson();
    expect(json).toContain('"Infinity"');
    const b = await fresh();
    expect(await b.importJson(json)).toEqual({ imported: 3 });
    const runs = await b.list();
    expect(runs).toEqual(await a.list());
    expect(runs[0]!.report.entries[2]!.ms).toBe(Infinity);
    expect(runs.find((r) => r.report.op === 'mmq_q4k_coopmat')!.report.finals).toEqual(finals);
    expect(runs.find((r) => r.problem === 'p3')!.status).toBe('interrupted');
  });

  it('rejects bad files with a clear message and stores nothing', async () => {
    const db = await fresh();
    const good = JSON.parse(serializeTuneRuns([runOf(report())])) as { runs: Record<string, unknown>[] };
    const cases: [string, RegExp][] = [
      ['not json {', /^not JSON/],
      ['[]', /\(file\): expected an object/],
      [
        JSON.stringify({ format: 'other', version: 2, runs: [] }),
        /format: expected "mmq-playground\/tune-runs"/,
      ],
      [JSON.stringify({ ...good, version: 1 }), /version: expected 2, got 1 \(version-1 exports predate/],
      [JSON.stringify({ ...good, runs: {} }), /runs: expected an array/],
      [
        JSON.stringify({ ...good, runs: [{ ...good.runs[0], problem: 'other' }] }),
        /runs\[0\]\.problem: expected the report's problem/,
      ],
      [JSON.stringify({ ...good, runs: [{ ...good.runs[0], status: 'done' }] }), /runs\[0\]\.status/],
      [JSON.stringify({ ...good, runs: [{ ...good.runs[0], winner: 'WM=9' }] }), /runs\[0\]\.winner/],
      [JSON.stringify({ ...good, runs: [good.runs[0], good.runs[0]] }), /runs\[1\]: a second run/],
    ];
    const edit = (
      f: (
        r: Record<string, unknown> & { entries: Record<string, unknown>[]; base: Record<string, unknown> },
      ) => void,
    ) => {
      const doc = structuredClone(good) as {
        runs: {
          report: Record<string, unknown> & {
            entries: Record<string, unknown>[];
            base: Record<string, unknown>;
          };
        }[];
      };
      f(doc.runs[0]!.report);
      return JSON.stringify(doc);
    };
    cases.push([
      edit((r) => (r.entries[1]!.verdict = 'fast')),
      /runs\[0\]\.report\.entries\[1\]\.verdict: expected one of measured, rejected, failed-gate, got "fast"/,
    ]);
    cases.push([
      edit((r) => (r.entries[0]!.ms = null)),
      /entries\[0\]\.ms: expected a number or "Infinity", got null/,
    ]);
    cases.push([
      edit((r) => (r.entries[0]!.arm = 'gpu')),
      /entries\[0\]\.arm: expected one of scalar, dp4a, subgroup-matrix/,
    ]);
    cases.push([edit((r) => (r.base.data = { source: 'disk', seed: 0 })), /report\.base\.data\.source/]);
    cases.push([
      edit((r) => (r.evo = { population: 8 })),
      /report\.evo\.generations: expected a positive integer/,
    ]);
    for (const [text, want] of cases) {
      await expect(db.importJson(text), text.slice(0, 60)).rejects.toThrow(want);
      await expect(db.importJson(text)).rejects.toBeInstanceOf(TuneImportError);
    }
    expect(await db.list()).toEqual([]);
    expect(parseTuneRunsJson(JSON.stringify(good))).toHaveLength(1);
  });

  it('put validates the report it stores', async () => {
    const db = await fresh();
    await expect(db.put(report({ winner: 'WM=4,WN=4,RM=4,RN=8,ARM=0' }))).rejects.toThrow(
      /report\.winner: expected the name of a measured entry/,
    );
    await expect(
      db.put(report({ finals: [{ config: 'WM=4,WN=4,RM=4,RN=8,ARM=0', ms: 1, searchMs: Infinity }] })),
    ).rejects.toThrow(/report\.finals\[0\]\.config: expected the name of a measured entry/);
    await expect(
      db.put(report({ finals: [{ config: 'WM=1,WN=1,RM=1,RN=1,ARM=0', ms: -1, searchMs: 0.25 }] })),
    ).rejects.toThrow(/report\.finals\[0\]\.ms/);
    await expect(db.put(report({ durationMs: -5 }))).rejects.toThrow(/report\.durationMs/);
  });
});
