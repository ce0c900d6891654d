// The fitness contract the GA searches against (the seed's `tune::Evaluator`): a free static tier
// that rejects configs the device cannot run well (limits, occupancy, register budget) before any
// dispatch, and a measured tier whose correctness gate is folded into fitness -- a config that
// diverges from the oracle is infinitely slow, so it can never win.
import type { Config } from '../space';

/** Outcome of the static tier. */
export type StaticVerdict = { kind: 'pass' } | { kind: 'reject'; reason: string };

/** Outcome of the measured tier. */
export interface Measurement {
  /** Milliseconds per run of the config's plan (the fastest batch); Infinity when the gate failed. */
  ms: number;
  /** Scale-relative divergence from the oracle of this config (rel_to_max). */
  worstRel: number;
  /** Why `ms` is Infinity (e.g. "rel_to_max 3.1e-2 > 1e-3 gate"). */
  reason?: string;
  /** How it was timed. */
  timing?: 'timestamp' | 'wall';
  /** ms per run of each timed batch (`ms` is their fastest). */
  samples?: number[];
  /** Where the measurement's wall time went, ms: preparing (compiles), the gate's run, the timing. */
  phases?: { compileMs: number; verifyMs: number; benchmarkMs: number };
}

/** A fitness over a Space. `measure` may throw; the GA records that config as rejected with the message. */
export interface Evaluator {
  staticCheck(cfg: Config): StaticVerdict;
  /** Gate, then time in batches of about `batchMs` of GPU time each (the fastest batch counts). */
  measure(cfg: Config, batchMs: number): Promise<Measurement>;
}

/** The static verdict that lets a config through. */
export const PASS: StaticVerdict = { kind: 'pass' };

/** A static rejection with its reason. */
export function reject(reason: string): StaticVerdict {
  return { kind: 'reject', reason };
}
