// Measured peaks in IndexedDB (database "mmq-playground-peaks", store "probes").
//
// What is stored: the last peaks probe of each adapter (kernels/perf/probe.run.ts ProbeResult), keyed by
// its adapter key (vendor, architecture, description and the roofs it offers): the bandwidth and compute
// figures, and for each probe kernel its method (what it does, the size, runs per batch, the batches'
// ms and spread). Why: a probe costs seconds of GPU time and its figures hold for the adapter, so the
// roofline and the "% of peak" of every run reuse them after a reload; the user re-measures on demand.
// Nothing else is stored here.
import { openDB, type DBSchema } from 'idb';
import type { ProbeResult } from '../../kernels/perf/probe.run';

export const PEAKS_DB = 'mmq-playground-peaks';

interface PeaksSchema extends DBSchema {
  probes: { key: string; value: ProbeResult };
}

/** The stored probes: the one of an adapter key, and a put that replaces it. */
export interface PeaksStore {
  get(adapterKey: string): Promise<ProbeResult | undefined>;
  put(result: ProbeResult): Promise<void>;
}

/**
 * Open the peaks store.
 * @example const peaks = await openPeaks(); await peaks.get(probeAdapterKey(caps));
 */
export async function openPeaks(name = PEAKS_DB): Promise<PeaksStore> {
  const db = await openDB<PeaksSchema>(name, 1, {
    upgrade(database) {
      database.createObjectStore('probes', { keyPath: 'adapterKey' });
    },
  });
  return {
    get: (key) => db.get('probes', key),
    async put(result) {
      if (!(result.peaks.bandwidthGBs > 0))
        throw new RangeError('a probe without a bandwidth figure is not kept');
      await db.put('probes', result);
    },
  };
}
