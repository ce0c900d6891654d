// The tuner's last word on a winner: incumbent and winner re-timed interleaved (A B A B ...) in several
// rounds, so a clock dip or a noisy batch lands on both, and a speedup is claimed only when the rounds do
// not overlap (../perf/spread.ts compareRounds); the challenger is picked over the incumbent only then
// (settleWinner). Pure: it takes an Evaluator.
import { checkCancelled } from '../cancel';
import { compareRounds, spreadOf, type Comparison } from '../perf';
import type { Evaluator, Measurement } from './evaluator';
import type { Config } from '../space';

/** How many interleaved rounds a claim rests on. */
export const CLAIM_ROUNDS = 3;

/**
 * A measurement's figure for a round: its batches' median (the fastest batch when it has no samples).
 * @example measurementMs({ ms: 1, worstRel: 0, samples: [1, 3, 2] }) // 2
 */
export const measurementMs = (m: Measurement): number =>
  m.samples?.length ? spreadOf(m.samples).median : m.ms;

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
      into.push(measurementMs(m));
    }
  }
  return { ...compareRounds(incumbentMs, winnerMs), rounds: { incumbentMs, winnerMs } };
}

/** A hunt's pick and the figures of the measurement that decided it. */
export interface SettledWinner {
  winner: string;
  /** The winner's figure, ms per run. */
  ms: number;
  /** The incumbent's figure on the same measurement; absent when the incumbent was not measured. */
  incumbentMs?: number;
}

/**
 * Who wins a hunt: the best verified challenger against the incumbent. With their interleaved claim the
 * challenger wins only when it is measurably faster ('faster'), with the claim's medians as figures;
 * without one (the incumbent was not measured, or one of them stopped passing its gate while re-timed)
 * only when its finalist figure is below the incumbent's. So the autokernel never serves a pick that was
 * slower than the incumbent, or not measurably faster, on the measurement that decided it
 * (docs/decisions/0017-finalists-by-median.md).
 * @example settleWinner({ name: 'B', ms: 40 }, { name: 'A', ms: 25 }, claim).winner // 'A' unless claim says faster
 */
export function settleWinner(
  challenger: { name: string; ms: number },
  incumbent: { name: string; ms?: number | undefined },
  claim?: Comparison,
): SettledWinner {
  if (challenger.name === incumbent.name)
    return { winner: incumbent.name, ms: challenger.ms, incumbentMs: challenger.ms };
  if (claim)
    return claim.verdict === 'faster'
      ? { winner: challenger.name, ms: claim.b.median, incumbentMs: claim.a.median }
      : { winner: incumbent.name, ms: claim.a.median, incumbentMs: claim.a.median };
  if (incumbent.ms === undefined || !Number.isFinite(incumbent.ms))
    return { winner: challenger.name, ms: challenger.ms };
  return challenger.ms < incumbent.ms
    ? { winner: challenger.name, ms: challenger.ms, incumbentMs: incumbent.ms }
    : { winner: incumbent.name, ms: incumbent.ms, incumbentMs: incumbent.ms };
}
