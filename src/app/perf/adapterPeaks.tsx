// The adapter's measured peaks for any view that holds work to them (the run's performance panel, the
// shape sweep): looked up once per adapter in IndexedDB, measured on demand by the worker's probe, and
// kept in the store's peaks slice so a probe started from one view shows in the other.
import { useEffect } from 'react';
import { probeAdapterKey } from '../../kernels/perf/probe';
import type { ProbeResult } from '../../kernels/perf/probe.run';
import { useServices } from '../appContext';
import { openPeaks } from '../persistence/peaks';
import { act, getApp, setPeaks, useApp } from '../store';

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export interface AdapterPeaks {
  /** This adapter's last probe, when one has run. */
  probe?: ProbeResult | undefined;
  measuring: boolean;
  /** Why the stored peaks could not be read, or why the probe failed. */
  error?: string | undefined;
  /** A device is there to probe. */
  canMeasure: boolean;
  /** Run the probe in the worker, show it and keep it for this adapter. */
  measure(): void;
}

/**
 * The current adapter's peaks, and the probe action.
 * @example const { probe, measure } = useAdapterPeaks(); probe?.peaks.bandwidthGBs
 */
export function useAdapterPeaks(): AdapterPeaks {
  const { controller } = useServices();
  const caps = useApp((s) => s.device.caps);
  const key = caps ? probeAdapterKey(caps) : undefined;
  const peaks = useApp((s) => s.peaks);
  useEffect(() => {
    // The first view to mount on a new adapter looks its probe up; the others find the key already set.
    if (!key || getApp().peaks.adapterKey === key) return;
    act(setPeaks, { adapterKey: key, probe: undefined, error: undefined });
    const stillThisAdapter = () => getApp().peaks.adapterKey === key;
    openPeaks()
      .then((store) => store.get(key))
      .then((hit) => {
        // A probe measured while the lookup ran is newer than the stored one.
        if (stillThisAdapter() && !getApp().peaks.probe) act(setPeaks, { probe: hit });
      })
      .catch((e: unknown) => {
        if (stillThisAdapter()) act(setPeaks, { error: `stored peaks unreadable: ${message(e)}` });
      });
  }, [key]);
  const measure = () => {
    if (!key || getApp().peaks.measuring) return;
    act(setPeaks, { measuring: true, error: undefined });
    void (async () => {
      try {
        const r = await controller.probe();
        act(setPeaks, { adapterKey: key, probe: r, measuring: false });
        await (await openPeaks()).put(r);
      } catch (e) {
        act(setPeaks, { measuring: false, error: message(e) });
      }
    })();
  };
  return {
    probe: peaks.adapterKey === key ? peaks.probe : undefined,
    measuring: peaks.measuring,
    error: peaks.error,
    canMeasure: key !== undefined,
    measure,
  };
}

/** The probe action: "measure peaks", "re-measure peaks" once measured, disabled while one runs. */
export function MeasurePeaksButton({ peaks, testId }: { peaks: AdapterPeaks; testId: string }) {
  return (
    <button
      type="button"
      data-testid={testId}
      disabled={peaks.measuring || !peaks.canMeasure}
      onClick={peaks.measure}
    >
      {peaks.measuring ? 'measuring peaks…' : peaks.probe ? 're-measure peaks' : 'measure peaks'}
    </button>
  );
}
