// Shape sweeps in the tune-runs database (fake-indexeddb in Node): saved point by point under one key,
// listed newest first beside the hunts, deleted; a version-2 database (hunts only) upgrades keeping its hunts.
import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { afterEach, describe, expect, it } from 'vitest';
import { openTuneRuns, type TuneRunStore } from '../src/app/persistence/tuneRuns';
import { endSweep, newSweep, withPoint, type SweepRecord } from '../src/app/store/sweep';
import type { RunConfig } from '../src/kernels/family';

const base: RunConfig = {
  kernel: 'mmq-q8-naive',
  arm: 'scalar',
  data: { source: 'reference', seed: 0 },
  params: { m: 32, n: 32, k: 64 },
};
const sweep = (startedAt: string): SweepRecord =>
  newSweep(
    'dev',
    base,
    'm',
    [
      { value: 8, problems: ['m = 8 is not a multiple of 16'] },
      { value: 16, problems: [] },
    ],
    startedAt,
  );

let store: TuneRunStore | undefined;
afterEach(() => store?.close());

describe('sweeps in the tune-runs database', () => {
  it('keeps one record per sweep, updated point by point, newest first', async () => {
    store = await openTuneRuns('sweeps-a');
    const older = sweep('2026-01-01T00:00:00.000Z');
    const newer = sweep('2026-02-01T00:00:00.000Z');
    await store.putSweep(older);
    await store.putSweep(newer);
    const done = endSweep(
      withPoint(newer, 1, { value: 16, status: 'done', ms: 0.5, medianMs: 0.6, batches: 6 }),
      'complete',
    );
    await store.putSweep(done);
    const listed = await store.listSweeps();
    expect(listed.map((r) => r.startedAt)).toEqual([newer.startedAt, older.startedAt]);
    expect(listed[0]).toEqual(done);
    expect(await store.list()).toEqual([]); // the hunts are apart
    await store.deleteSweep(older.key);
    expect((await store.listSweeps()).map((r) => r.key)).toEqual([done.key]);
  });

  it('upgrades a version-2 database (hunts only), keeping its hunts', async () => {
    const v2 = await openDB('sweeps-b', 2, {
      upgrade(db) {
        db.createObjectStore('hunts', { keyPath: 'key' }).createIndex('byDate', 'date');
      },
    });
    await v2.put('hunts', { key: 'k', date: '2026-01-01', report: {} });
    v2.close();
    store = await openTuneRuns('sweeps-b');
    expect(await store.listSweeps()).toEqual([]);
    expect((await store.list()).map((r) => r.key)).toEqual(['k']);
  });
});
