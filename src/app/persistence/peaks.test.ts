// The peaks store on fake-indexeddb: a probe is kept per adapter key and replaced by the next one.
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { ProbeResult } from '../../kernels/perf/probe.run';
import { openPeaks } from './peaks';

const probe = (key: string, gbs: number): ProbeResult => ({
  adapterKey: key,
  adapter: key,
  at: '2026-12-05T19:00:00.000Z',
  durationMs: 1000,
  peaks: { bandwidthGBs: gbs, ops: { 'int8-dot4': 1e12 } },
  measurements: [],
  skipped: [],
});

describe('peaks store', () => {
  it('keeps the latest probe per adapter', async () => {
    const store = await openPeaks('peaks-test');
    expect(await store.get('a')).toBeUndefined();
    await store.put(probe('a', 1));
    await store.put(probe('b', 2));
    await store.put(probe('a', 3));
    expect((await store.get('a'))?.peaks.bandwidthGBs).toBe(3);
    expect((await store.get('b'))?.peaks.bandwidthGBs).toBe(2);
    await expect(store.put(probe('c', 0))).rejects.toThrow(/bandwidth/);
  });
});
