// The tuner's last word on a winner: incumbent and winner re-timed interleaved (A B A B ...) in several
// rounds, so a clock dip or a noisy batch lands on both, and a speedup is claimed only when the rounds do
// not overlap (../perf/spread.ts compareRounds). Pure: it takes an Evaluator.
import { checkCancelled } from '../cancel';
import { compareRounds, spreadOf, type Comparison } from '../perf';
import type { Evaluator, Measurement } from './evaluator';
import type { Config } from './space';

/** How many interleaved rounds a claim rests on. */
export const CLAIM_ROUNDS = 3;

/** A measurement's figure for a round: its batches' median (the fastest batch when it has no samples). */
const roundMs = (m: Measurement): number => (m.samples?.length ? spreadOf(m.samples).median : m.ms);

/**
 * Time `incumbent` and `winner` alternately for `rounds` rounds (batches of about `batchMs` each) and
 * compare them; undefined when either stops passing its gate.
 * @example const claim = await interleavedClaim(ev, search.incumbent, winnerCfg, { batchMs: 40 }); claim?.verdict
 */
export async function interleavedClaim(
  evaluator: Evaluator,
  incumbent: Config,
  winner: Config,
  opts: { batchMs: number; rounds?: number; cancelled?: () => boolean },
): Promise<(Comparison & { rounds: { incumbentMs: number[]; winnerMs: number[] } }) | undefined> {
  const incumbentMs: number[] = [];
  const winnerMs: number[] = [];
  for (let r = 0; r < (opts.rounds ?? CLAIM_ROUNDS); r++) {
    for (const [cfg, into] of [
      [incumbent, incumbentMs],
      [winner, winnerMs],
    ] as const) {
      checkCancelled(opts.cancelled);
      const m = await evaluator.measure(cfg, opts.batchMs);
      if (!Number.isFinite(m.ms)) return undefined;
      into.push(roundMs(m));
    }
  }
  return { ...compareRounds(incumbentMs, winnerMs), rounds: { incumbentMs, winnerMs } };
}
