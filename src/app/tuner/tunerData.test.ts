// The tuner's summary line never contradicts itself: a winner that is the incumbent is said to be so,
// without a ratio; a pick slower than the incumbent, or not measurably faster, is not called a winner.
import { describe, expect, it } from 'vitest';
import type { TuneRecordEntry, TuneReport } from '../../workers/protocol';
import { huntSummary, incumbentOf } from './tunerData';

const entry = (config: string, generation: number, ms: number): TuneRecordEntry => ({
  config,
  params: {},
  arm: 'dp4a',
  generation,
  verdict: 'measured',
  ms,
});
/** The incumbent INC first (as the worker seeds generation 0), then two challengers. */
const entries = [entry('INC', 0, 25), entry('B', 0, 10.7), entry('C', 1, 30)];
const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, min: s[0]!, median: s[1]!, p90: s[2]!, max: s[2]! };
};
const claim = (a: number[], b: number[]): NonNullable<TuneReport['claim']> => {
  const [sa, sb] = [spread(a), spread(b)];
  return {
    verdict: sb.max < sa.min ? 'faster' : sa.max < sb.min ? 'slower' : 'no measurable difference',
    ratio: sa.median / sb.median,
    a: sa,
    b: sb,
    rounds: { incumbentMs: a, winnerMs: b },
  };
};

describe('huntSummary', () => {
  it('finds the incumbent as the first entry of generation 0', () => {
    expect(incumbentOf({ entries })).toBe('INC');
    expect(incumbentOf({ entries: [] })).toBeUndefined();
  });

  it('says the winner is the incumbent, without a ratio (it read "(1.00x)")', () => {
    const s = huntSummary({ winner: 'INC', bestMs: 24.9, incumbentMs: 24.9, entries });
    expect(s).toEqual({
      kind: 'incumbent',
      label: 'winner: the incumbent',
      versus: 'no config was faster than it',
    });
    expect(JSON.stringify(s)).not.toMatch(/\dx/);
    // Kept after a claim: the challenger was not measurably faster.
    const kept = huntSummary({
      winner: 'INC',
      bestMs: 24.9,
      incumbentMs: 24.9,
      entries,
      claim: claim([24.8, 24.9, 25], [30, 40.4, 41]),
    });
    expect(kept.kind).toBe('incumbent');
    expect(kept.versus).toBe(
      "no finalist was measurably faster (the best, 40.4 ms [30.0 ms–41.0 ms], against the incumbent's 24.9 ms [24.8 ms–25.0 ms] over 3 interleaved rounds)",
    );
  });

  it('calls a challenger the winner only when it beat the incumbent', () => {
    const won = huntSummary({
      winner: 'B',
      bestMs: 20,
      incumbentMs: 25,
      entries,
      claim: claim([24, 25, 26], [19, 20, 21]),
    });
    expect(won).toEqual({
      kind: 'challenger',
      label: 'winner',
      versus: 'incumbent 25.0 ms: 1.25x, interleaved rounds do not overlap',
    });
    // The stored run that read "winner 40.4 ms, incumbent 24.9 ms (no measurable difference)".
    const overlapping = claim([24.5, 24.9, 42], [12, 40.4, 41]);
    expect(overlapping.verdict).toBe('no measurable difference');
    const old = huntSummary({ winner: 'B', bestMs: 40.4, incumbentMs: 24.9, entries, claim: overlapping });
    expect(old.kind).toBe('unproven');
    expect(old.label).toBe('pick');
    expect(old.versus).toMatch(/^not measurably faster than the incumbent \(40\.4 ms .* against 24\.9 ms/);
    // Without a claim, the finalists' medians decide; slower is no winner either.
    expect(huntSummary({ winner: 'B', bestMs: 20, incumbentMs: 25, entries }).versus).toBe(
      "incumbent 25.0 ms: 1.25x faster by the finalists' median re-timings",
    );
    expect(huntSummary({ winner: 'C', bestMs: 30, incumbentMs: 25, entries }).kind).toBe('unproven');
    expect(huntSummary({ winner: 'B', bestMs: 20, entries }).versus).toBe('the incumbent was not measured');
    expect(huntSummary({ winner: '', bestMs: Infinity, entries }).kind).toBe('none');
  });
});
