// The hunt estimate: the parts a tuning hunt is made of, each counted once, so `mmq tune` (and the app)
// can refuse or ask before a search that would run for minutes.
import { describe, expect, it } from 'vitest';
import { CONFIRM_MS, estimate, estimateHunt } from './estimate';

const rate = { macsPerMs: 1e5, bytesPerMs: 1e9, basis: 'test' };
const hunt = { configs: 10, batches: 3, measureMs: 10, finalists: 4, claimRounds: 3 };

describe('estimateHunt', () => {
  it('adds the oracle twice, each config compiled, checked and timed, the finalists and the claim rounds', () => {
    // 1e6 MACs: one run 10 ms at 1e5 MACs/ms; the oracle 2e6 / 2e5 = 10 ms, done twice.
    const e = estimateHunt({ macs: 1e6, bytes: 0 }, rate, hunt);
    expect(e.kernelMs).toBe(10);
    const measurement = 3 * 10; // batches x max(measureMs, one run)
    const untimed = 2 * 10 + 10 * (300 + 10) + 10;
    expect(e.untimedMs).toBe(untimed);
    expect(e.ms).toBe(untimed + (10 + 4 + 2 * 3) * measurement);
    expect(e.basis).toMatch(/^10 configs, each compiled, checked and timed in 3 batches/);
  });

  it('a batch is never shorter than one kernel run: a slow kernel costs its runs', () => {
    const slow = estimateHunt({ macs: 1e8, bytes: 0 }, rate, hunt); // one run 1 s
    expect(slow.kernelMs).toBe(1000);
    expect(slow.ms - slow.untimedMs).toBe((10 + 4 + 6) * 3 * 1000);
  });

  it('grows with the configs; a tiny hunt (10 configs of a 16 x 16 x 256 GEMM) stays under the guard', () => {
    const small = estimateHunt({ macs: 16 * 16 * 256, bytes: 0 }, rate, hunt);
    expect(small.ms).toBeLessThan(CONFIRM_MS);
    const more = estimateHunt({ macs: 16 * 16 * 256, bytes: 0 }, rate, { ...hunt, configs: 40 });
    expect(more.ms).toBeGreaterThan(small.ms);
    // A hunt costs more than the one run of its base config it stands on.
    const one = estimate({ macs: 1e6, bytes: 0 }, rate, {
      timed: true,
      instrument: false,
      targetMs: 10,
      batches: 3,
      passes: 1,
    });
    expect(estimateHunt({ macs: 1e6, bytes: 0 }, rate, hunt).ms).toBeGreaterThan(one.ms);
  });
});
