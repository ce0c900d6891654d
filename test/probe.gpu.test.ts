// The peaks probe on Dawn (SwiftShader): every probe kernel compiles, runs through the one runner, and
// gives a positive figure with its batches' spread, inside the time the issue allows a CPU adapter.
import { describe, expect, it } from 'vitest';
import { runProbe } from '../src/kernels/perf/probe.run';
import { probeKernels } from '../src/kernels/perf/probe';
import { useTestGpu } from './gpu';

describe('peaks probe on SwiftShader', () => {
  const gpu = useTestGpu();
  it('measures bandwidth and every offered compute roof in under 20 s', async () => {
    const { device, caps } = gpu();
    const r = await runProbe(device, caps);
    console.log(
      JSON.stringify({
        durationMs: r.durationMs,
        peaks: r.peaks,
        sizes: r.measurements.map((m) => [m.kind, m.size, m.runsPerBatch, m.spread]),
      }),
    );
    expect(r.durationMs).toBeLessThan(20_000);
    expect(r.peaks.bandwidthGBs).toBeGreaterThan(0);
    const kinds = probeKernels(caps).kernels.map((k) => k.kind);
    expect(r.measurements.map((m) => m.kind)).toEqual(kinds);
    for (const m of r.measurements) {
      expect(m.value).toBeGreaterThan(0);
      expect(m.spread.n).toBeGreaterThanOrEqual(5);
      expect(m.spread.min).toBeLessThanOrEqual(m.spread.median);
    }
    expect(r.peaks.ops['int8-scalar']).toBeGreaterThan(0);
  }, 60_000);
});
