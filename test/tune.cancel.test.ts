// A cancel in the tuner's last steps (src/kernels/tune): it stops the interleaved claim between two of
// its re-timings and the finalists between two of theirs, measuring nothing more, and a cancel that
// comes after the last measurement changes nothing.
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../src/kernels/cancel';
import { Evolution, PASS, Space, type Config, type Evaluator } from '../src/kernels/tune';
import { interleavedClaim } from '../src/kernels/tune/rounds';

/** An evaluator that logs each measurement and says cancel after the `after`th. */
function cancelling(after: number) {
  const measured: Config[] = [];
  const evaluator: Evaluator = {
    staticCheck: () => PASS,
    measure: async (c) => {
      measured.push(c);
      return { ms: 1 + c[0]!, worstRel: 0 };
    },
  };
  return { evaluator, measured, cancelled: () => measured.length >= after };
}

describe('a cancel', () => {
  it('stops the interleaved claim before its next re-timing, and one after the last changes nothing', async () => {
    for (const after of [1, 2, 3, 5]) {
      const c = cancelling(after);
      await expect(
        interleavedClaim(c.evaluator, [0], [1], { batchMs: 1, cancelled: c.cancelled }),
      ).rejects.toBeInstanceOf(CancelledError);
      expect(c.measured).toHaveLength(after);
    }
    const late = cancelling(6);
    const claim = await interleavedClaim(late.evaluator, [0], [1], { batchMs: 1, cancelled: late.cancelled });
    expect(late.measured).toHaveLength(6);
    expect(claim?.rounds).toEqual({ incumbentMs: [1, 1, 1], winnerMs: [2, 2, 2] });
  });

  it("stops the finalists' re-timings before the next one", async () => {
    const space = new Space().param('T', [0, 1, 2, 3]);
    const options = {
      population: 4,
      generations: 1,
      elitism: 1,
      tournament: 2,
      crossoverRate: 0,
      mutationRate: 0,
      measureMs: 1,
      finalists: 3,
      finalMs: 0,
      finalRounds: 2,
    };
    // The search measures 4 configs; the finalists then take 3 x 2 re-timings.
    const whole = cancelling(Infinity);
    const r = await new Evolution(options).run(space, whole.evaluator, 1, { cancelled: whole.cancelled });
    expect(whole.measured).toHaveLength(4 + 6);
    expect(r.finals).toHaveLength(3);
    for (const after of [5, 9]) {
      const c = cancelling(after);
      await expect(
        new Evolution(options).run(space, c.evaluator, 1, { cancelled: c.cancelled }),
      ).rejects.toBeInstanceOf(CancelledError);
      expect(c.measured).toHaveLength(after);
    }
  });
});
