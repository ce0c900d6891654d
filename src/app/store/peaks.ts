// The adapter's measured peaks as the app shows them: one slice, so the run's performance panel and the
// shape sweep read the same probe and either one's "measure peaks" updates both. The probe itself runs in
// the worker and is kept per adapter in IndexedDB (persistence/peaks.ts); this is only what is on screen.
import type { ProbeResult } from '../../kernels/perf/probe.run';

export interface PeaksState {
  /** probeAdapterKey of the adapter whose stored probe was looked up (undefined: not looked up yet). */
  adapterKey?: string | undefined;
  /** That adapter's probe, when one has run. */
  probe?: ProbeResult | undefined;
  /** A probe is running. */
  measuring: boolean;
  /** Why the stored peaks could not be read or the probe failed. */
  error?: string | undefined;
}

export const INITIAL_PEAKS: PeaksState = { measuring: false };
