// The interleaved claim: the 1.55x "speedup" that was one noisy re-timing of the incumbent is no
// measurable difference; a real one is claimed; an order A B A B is kept.
import { describe, expect, it } from 'vitest';
import type { Evaluator, Measurement } from './evaluator';
import { interleavedClaim } from './rounds';
import type { Config } from './space';

/** An evaluator answering config [0] (incumbent) and [1] (winner) from scripted ms, in call order. */
function scripted(times: Record<number, number[]>, order: number[] = []): Evaluator {
  return {
    staticCheck: () => ({ kind: 'pass' }),
    measure: async (cfg: Config): Promise<Measurement> => {
      order.push(cfg[0]!);
      const ms = times[cfg[0]!]!.shift()!;
      return { ms, worstRel: 0, samples: [ms, ms * 1.01, ms * 1.02] };
    },
  };
}

describe('interleavedClaim', () => {
  it('one noisy incumbent round makes no speedup', async () => {
    const order: number[] = [];
    const c = await interleavedClaim(
      scripted({ 0: [1.55, 1.0, 1.0], 1: [1.0, 0.99, 1.0] }, order),
      [0],
      [1],
      {
        batchMs: 1,
      },
    );
    expect(order).toEqual([0, 1, 0, 1, 0, 1]);
    expect(c?.verdict).toBe('no measurable difference');
    expect(c?.rounds.incumbentMs).toHaveLength(3);
  });

  it('claims a speedup whose rounds do not overlap, using each round batches median', async () => {
    const c = await interleavedClaim(scripted({ 0: [2, 2.1, 2.05], 1: [1, 1.05, 1.02] }), [0], [1], {
      batchMs: 1,
    });
    expect(c?.verdict).toBe('faster');
    expect(c?.a.median).toBeCloseTo(2.05 * 1.01);
    expect(c?.ratio).toBeCloseTo(2.05 / 1.02);
  });

  it('gives no claim when a config stops passing its gate', async () => {
    const c = await interleavedClaim(scripted({ 0: [1, 1, 1], 1: [Infinity] }), [0], [1], { batchMs: 1 });
    expect(c).toBeUndefined();
  });
});
