// The peaks probe, GPU half: each probe kernel (./probe.ts) is grown until one run takes probeRunMs,
// then timed by the one runner in batches like any plan; the figure is the batches' median. Run on
// demand (the worker's 'probe' request, `mmq probe`); the app caches the result per adapter.
import { checkCancelled } from '../cancel';
import type { AdapterCaps } from '../gpu/caps';
import { preparePlan } from '../gpu/runner';
import { clockWarmMs } from '../gpu/timing';
import { probeAdapterKey, probeKernels, probeRunMs, probeShouldGrow, type ProbeKind } from './probe';
import type { Peaks } from './roofline';
import { spreadOf, type Spread } from './spread';

/** One probe kernel's measurement, with its method. */
export interface ProbeMeasurement {
  kind: ProbeKind;
  what: string;
  /** The size it was timed at, in words. */
  size: string;
  /** Bytes moved and operations of one run. */
  bytesPerRun: number;
  opsPerRun: number;
  /** Back-to-back runs per timed batch, and each batch's ms per run. */
  runsPerBatch: number;
  samples: number[];
  spread: Spread;
  method: 'timestamp' | 'wall';
  /** From the median batch: GB/s for bandwidth, ops/s for a compute roof. */
  value: number;
}

/** What the probe found on an adapter. */
export interface ProbeResult {
  /** probeAdapterKey: the cache key. */
  adapterKey: string;
  adapter: string;
  /** ISO time it ran. */
  at: string;
  /** Wall time of the whole probe, ms (compiles included). */
  durationMs: number;
  peaks: Peaks;
  measurements: ProbeMeasurement[];
  skipped: { kind: ProbeKind; why: string }[];
}

export interface ProbeOptions {
  /** Timed batches per kernel (default 5). */
  batches?: number;
  cancelled?: () => boolean;
  onProgress?: (stage: string, fraction: number) => void;
}

/**
 * Measure this device's peaks: bandwidth by a streaming copy, and every compute roof the adapter offers.
 * @example const r = await runProbe(device, caps); r.peaks.bandwidthGBs
 */
export async function runProbe(
  device: GPUDevice,
  caps: AdapterCaps,
  opts: ProbeOptions = {},
): Promise<ProbeResult> {
  const t0 = performance.now();
  const { kernels, skipped } = probeKernels(caps);
  const minMs = probeRunMs(caps);
  const batches = opts.batches ?? 5;
  const measurements: ProbeMeasurement[] = [];
  const peaks: Peaks = { bandwidthGBs: 0, ops: {} };
  for (const [i, k] of kernels.entries()) {
    opts.onProgress?.(`probing ${k.kind}`, i / kernels.length);
    let size = k.first;
    for (;;) {
      checkCancelled(opts.cancelled);
      const p = await preparePlan(device, k.plan(size));
      try {
        const one = await p.time({ targetMs: 0, batches: 1, maxRuns: 1 });
        const next = k.grow(size);
        if (next && probeShouldGrow(one, minMs)) {
          size = next;
          continue;
        }
        const t = await p.time({
          targetMs: Math.max(4 * minMs, 10),
          batches,
          warmMs: clockWarmMs(caps),
          ...(opts.cancelled ? { cancelled: opts.cancelled } : {}),
        });
        const work = k.work(size);
        const spread = spreadOf(t.samples);
        const seconds = spread.median / 1e3;
        const value = k.kind === 'bandwidth' ? work.bytes / seconds / 1e9 : work.ops / seconds;
        if (k.kind === 'bandwidth') peaks.bandwidthGBs = value;
        else peaks.ops[k.kind] = value;
        measurements.push({
          kind: k.kind,
          what: k.what,
          size: k.describe(size),
          bytesPerRun: work.bytes,
          opsPerRun: work.ops,
          runsPerBatch: t.runs,
          samples: t.samples,
          spread,
          method: t.method,
          value,
        });
        break;
      } finally {
        p.destroy();
      }
    }
  }
  opts.onProgress?.('probe done', 1);
  return {
    adapterKey: probeAdapterKey(caps),
    adapter:
      [caps.vendor, caps.architecture, caps.description].filter(Boolean).join(' / ') || 'unknown adapter',
    at: new Date().toISOString(),
    durationMs: performance.now() - t0,
    peaks,
    measurements,
    skipped,
  };
}
