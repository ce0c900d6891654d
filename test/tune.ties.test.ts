// Ties in the GA (src/kernels/tune/evolution.ts): configs that time the same are ranked by when they were
// evaluated, so a search's winner does not hang on sort stability or on which of equals came last; and
// finalists that re-time the same leave the winner with the one the search ranked first.
import { describe, expect, it } from 'vitest';
import { Evolution, PASS, Space, type Config, type Evaluator } from '../src/kernels/tune';

const space = new Space().param('A', [0, 1, 2, 3, 4, 5, 6, 7]).param('B', [0, 1, 2, 3]);
const options = {
  population: 4,
  generations: 2,
  elitism: 1,
  tournament: 2,
  crossoverRate: 0.5,
  mutationRate: 0.5,
  measureMs: 1,
  finalists: 0,
  finalMs: 0,
  finalRounds: 1,
};

/** Every config takes `ms(c)`. */
const timed = (ms: (c: Config) => number): Evaluator => ({
  staticCheck: () => PASS,
  measure: async (c) => ({ ms: ms(c), worstRel: 0 }),
});

describe('ties', () => {
  it('among equal search timings, the first evaluated wins', async () => {
    for (const seed of [1, 2, 3]) {
      const r = await new Evolution(options).run(
        space,
        timed(() => 1),
        seed,
      );
      expect(r.evaluated).toBeGreaterThan(4);
      expect(r.winner).toBe(r.entries[0]!.config);
      expect(r.bestMs).toBe(1);
    }
  });

  it('the elite carried on is the first evaluated of the equally fastest', async () => {
    const seeds: Config[] = [
      [7, 3],
      [0, 0],
      [1, 1],
      [2, 2],
    ];
    // The seeds all tie; the elite kept into generation 1 is the first seed, and is not evaluated again.
    const r = await new Evolution({ ...options, generations: 3 }).run(
      space,
      timed(() => 2),
      1,
      { seeds },
    );
    expect(r.winner).toBe(space.name([7, 3]));
    expect(r.entries.filter((e) => e.config === space.name([7, 3]))).toHaveLength(1);
  });

  it('finalists that re-time the same: the one the search ranked first wins', async () => {
    // The search (1 ms batches) sees config [3, 0] fastest; every re-timing (4 ms batches) reads 5 ms.
    const ev: Evaluator = {
      staticCheck: () => PASS,
      measure: async (c, batchMs) => ({
        ms: batchMs === 1 ? (c[0] === 3 && c[1] === 0 ? 1 : 2 + c[0]! + c[1]!) : 5,
        worstRel: 0,
      }),
    };
    const r = await new Evolution({ ...options, finalists: 3, finalRounds: 1 }).run(space, ev, 2, {
      seeds: [[3, 0]],
    });
    expect(r.finals.map((f) => f.ms)).toEqual(r.finals.map(() => 5));
    expect(r.finals.length).toBeGreaterThan(1);
    expect(r.finals[0]!.config).toBe(space.name([3, 0]));
    expect(r.winner).toBe(space.name([3, 0]));
  });
});
