// The pick across families for one GEMM (a weight format, n, k, an expert bank or not, and the rows it
// multiplies): the candidates are the families whose catalog `takes` that format and kind and whose
// validation accepts the shape here; each offers its own pick (its stored tuned winner for that problem on
// this device, else its incumbent, else its defaults); the worker gates every candidate on its family's own
// gate and times it through the one runner (src/workers/tune/pick.ts), and settlePick names the fastest
// and its margin over the next family. Nothing is picked unmeasured, except by guessPick, which says it
// is a guess (the roofs of this adapter's measured peaks, or a cautious default rate). Pure and light: the
// app's main thread computes the problem keys its stored winners are filed under with it.
import { knobLabel, type DataChoice, type FamilyCatalog, type KernelId, type RunConfig } from '../family';
import { defaultArm } from '../arms';
import type { AdapterCaps, Arm } from '../gpu/caps';
import { isSoftwareAdapter } from '../gpu/caps';
import { shapeParams, TAKEN_FORMATS } from '../tensors';
import {
  CPU_MACS_PER_MS,
  DEFAULT_RATES,
  estimate,
  formatMs,
  workOf,
  type Estimate,
  type Rate,
} from '../perf/estimate';
import { peakOpsOf, roofOf, type Peaks } from '../perf/roofline';
import { gateRows } from './gate';
import { tuneProblemKey } from './problem';

/** A GEMM to pick a family for: the weight (format, n, k, bank) and the rows it multiplies. */
export interface PickGemm {
  /** The weight's ggml type ('Q4_K', 'Q8_0', ...). */
  type: string;
  n: number;
  k: number;
  /** Experts of a bank (absent or 1: one matrix) and each token's top-k. */
  experts?: number;
  topk?: number;
  /** Activation rows (tokens; a bank routes each to top-k experts). */
  rows: number;
}

/**
 * The data every pick runs on: fast synthetic codes (a GEMM's time does not depend on the weight's
 * values, and a model's tensors need not be read); `mmq tune` hunts on it by default, so its winners are
 * filed under the same problem keys.
 */
export const PICK_DATA: DataChoice = { source: 'synthetic', seed: 0 };

/** What became of a candidate. */
export type PickVerdict = 'measured' | 'failed-gate' | 'refused' | 'failed' | 'guessed';

/** One family's offer for a GEMM and what became of it. */
export interface PickCandidate {
  kernel: KernelId;
  title: string;
  /** What the family offered: its stored winner's config name, 'incumbent', or 'defaults' (no tuning). */
  served: string;
  /** Why a stored winner that was offered did not serve. */
  fallback?: string;
  /** The config that ran (absent when the family refused the shape before one was made). */
  config?: RunConfig;
  /** Its knobs as tables print them (knobLabel). */
  knobs?: string;
  /** Its arithmetic (the route: int8 dot products or f16). */
  arithmetic?: 'int8' | 'f16';
  verdict: PickVerdict;
  /** Why it was refused, failed its gate or failed to run. */
  reason?: string;
  /** Its gate in words and the worst relative error it showed. */
  gate?: string;
  relToMax?: number;
  /** The runner's figure (the fastest batch, ms per run), and every batch's ms per run. */
  ms?: number;
  samples?: number[];
  timing?: 'timestamp' | 'wall';
  /** Operations of one run (2 x multiply-adds) and the bytes its plan moves: its roofline point. */
  ops?: number;
  bytes?: number;
}

/** The pick for one GEMM: every candidate, and the winner with its margin over the next family. */
export interface PickResult {
  gemm: PickGemm;
  candidates: PickCandidate[];
  /** The fastest family, and the next one. */
  winner?: KernelId;
  runnerUp?: KernelId;
  /** Runner-up ms / winner ms (> 1). */
  margin?: number;
  /** The winner's slowest batch beat the runner-up's fastest: the margin is more than noise. */
  clear?: boolean;
  /** False: a guess from estimates, nothing was run. */
  measured: boolean;
  /** Why nothing won (no family takes the weight, every family refused it). */
  note?: string;
}

/**
 * The families that take a GEMM's weight: its format, and a bank where a bank is taken (else a matrix).
 * @example pickCatalogs(CATALOG.families, { type: 'Q4_K', n: 4096, k: 4096, rows: 1 }).map((f) => f.id)
 */
export function pickCatalogs<F extends Pick<FamilyCatalog, 'takes'>>(
  catalogs: readonly F[],
  gemm: Pick<PickGemm, 'type'> & Partial<PickGemm>,
): F[] {
  const bank = (gemm.experts ?? 1) > 1;
  return catalogs.filter((f) => f.takes && f.takes.format === gemm.type && f.takes.bank === bank);
}

/**
 * A family's config for a GEMM: its defaults with the GEMM's shape set (n, k, its rows param, a bank's
 * experts and top-k), the pick's data, and the fastest arm it runs here (its portable arm without caps).
 * The family's tuning problem for the GEMM is this config's (tuneProblemKey).
 * @example pickBase(CATALOG.get('mmq-q4k-tile'), { type: 'Q4_K', n: 4096, k: 4096, rows: 512 }, caps)
 */
export function pickBase(
  catalog: Pick<FamilyCatalog, 'id' | 'takes' | 'defaults' | 'arms'>,
  gemm: PickGemm,
  caps?: AdapterCaps,
): RunConfig {
  const params = shapeParams(catalog, catalog.defaults, {
    n: gemm.n,
    k: gemm.k,
    rows: gemm.rows,
    ...((gemm.experts ?? 1) > 1 ? { experts: gemm.experts!, ...(gemm.topk ? { topk: gemm.topk } : {}) } : {}),
  });
  return { kernel: catalog.id, arm: defaultArm(catalog, caps, params), data: { ...PICK_DATA }, params };
}

/**
 * The problem key a family's hunt of this GEMM is stored under (its stored winner's key).
 * @example pickProblem(CATALOG.get('mmq-q4k-tile'), gemm) // 'm=512,n=4096,k=4096,data=synthetic#0'
 */
export function pickProblem(
  catalog: Pick<FamilyCatalog, 'id' | 'takes' | 'defaults' | 'arms' | 'controls'>,
  gemm: PickGemm,
): string {
  return tuneProblemKey(catalog, pickBase(catalog, gemm));
}

/** A stored hunt as storedPickOf reads it (a TuneReport, or the run a Kernel Tuner cache holds). */
export interface StoredHunt {
  winner?: string;
  bestMs?: number;
  incumbentMs?: number;
  claim?: { verdict: string };
  entries?: readonly { config: string; generation: number }[];
}

/**
 * The winner a stored hunt may serve: none when it found none, or when its pick was not shown faster
 * than the incumbent (a hunt from before a pick had to beat the incumbent measurably: the incumbent
 * serves instead, as the app's autokernel does).
 * @example storedPickOf({ winner: 'B', claim: { verdict: 'no measurable difference' }, entries: [{ config: 'A', generation: 0 }] }) // undefined
 */
export function storedPickOf(h: StoredHunt): string | undefined {
  if (!h.winner) return undefined;
  const first = h.entries?.[0];
  if (first?.generation === 0 && first.config === h.winner) return h.winner;
  if (h.claim) return h.claim.verdict === 'faster' ? h.winner : undefined;
  const inc = h.incumbentMs;
  if (inc === undefined || !Number.isFinite(inc)) return h.winner;
  return h.bestMs !== undefined && h.bestMs < inc ? h.winner : undefined;
}

const usable = (c: PickCandidate) =>
  (c.verdict === 'measured' || c.verdict === 'guessed') && c.ms !== undefined && Number.isFinite(c.ms);

/**
 * The pick from its candidates: the fastest that passed (by the runner's figure), the next family, the
 * margin between them, and whether their batches do not overlap; a note when nothing won.
 * @example settlePick(gemm, [a, b], true).margin // b.ms / a.ms when a is faster
 */
export function settlePick(gemm: PickGemm, candidates: PickCandidate[], measured: boolean): PickResult {
  const ranked = candidates.filter(usable).sort((a, b) => a.ms! - b.ms!);
  const [win, next] = ranked;
  const out: PickResult = { gemm, candidates, measured };
  if (!win) {
    out.note = candidates.length
      ? `no family ran it: ${candidates.map((c) => `${c.kernel} ${c.verdict}${c.reason ? ` (${c.reason})` : ''}`).join('; ')}`
      : `no kernel here takes ${gemm.type}${(gemm.experts ?? 1) > 1 ? ' expert banks' : ' matrices'} (they take ${TAKEN_FORMATS.join(', ')})`;
    return out;
  }
  out.winner = win.kernel;
  if (next) {
    out.runnerUp = next.kernel;
    out.margin = next.ms! / win.ms!;
    if (measured && win.samples?.length && next.samples?.length)
      out.clear = Math.max(...win.samples) < Math.min(...next.samples);
  }
  return out;
}

/**
 * A guess, nothing run: each family that takes the GEMM and accepts its shape here, at its defaults on its
 * fastest arm, timed at the roof it runs against -- this adapter's measured peaks where given, else a
 * cautious default rate per arm -- so the guess favours the faster units and knows nothing of how well a
 * kernel uses them. Its result says measured: false; callers say it is a guess.
 * @example guessPick(CATALOG.families, { type: 'Q4_K', n: 4096, k: 4096, rows: 512 }, caps, peaks).winner
 */
export function guessPick(
  catalogs: readonly FamilyCatalog[],
  gemm: PickGemm,
  caps: AdapterCaps,
  peaks?: Peaks,
): PickResult {
  const software = isSoftwareAdapter(caps);
  const candidates = pickCatalogs(catalogs, gemm).map((f): PickCandidate => {
    const config = pickBase(f, gemm, caps);
    const base = {
      kernel: f.id,
      title: f.title,
      served: 'defaults',
      config,
      knobs: knobLabel(f, config.params),
    };
    const problems = f.validate(config, caps);
    if (problems.length) return { ...base, verdict: 'refused', reason: problems.join('; ') };
    const work = workOf(f, config);
    const roof = roofOf(f.arithmetic, config.arm);
    const peakOps = peaks && peakOpsOf(peaks, roof);
    const ms =
      peaks && peakOps
        ? Math.max((2 * work.macs) / peakOps, work.bytes / (peaks.bandwidthGBs * 1e9)) * 1e3
        : Math.max(
            work.macs / DEFAULT_RATES[software ? 'software' : 'hardware'][config.arm].macsPerMs,
            work.bytes / DEFAULT_RATES[software ? 'software' : 'hardware'][config.arm].bytesPerMs,
          );
    return {
      ...base,
      arithmetic: f.arithmetic,
      verdict: 'guessed',
      ms,
      ops: 2 * work.macs,
      bytes: work.bytes,
      reason: peakOps
        ? `at the ${roof} roof and the bandwidth this adapter measured`
        : `at a cautious default rate for the ${config.arm} arm (no measured peaks)`,
    };
  });
  return settlePick(gemm, candidates, false);
}

/**
 * What measuring one candidate costs: compiling it, its data and its oracle on the rows the gate samples
 * (the CPU's part), one correctness run and its timing at `rate`.
 * @example estimatePick(workOf(f, config), 512, rate, { targetMs: 25, batches: 6, software: false }).ms
 */
export function estimatePick(
  work: { macs: number; bytes: number },
  rows: number,
  rate: Rate,
  run: { targetMs: number; batches: number; software: boolean },
): Estimate {
  const e = estimate(work, rate, { timed: true, instrument: false, passes: 1, ...run });
  // estimate() counts the whole oracle; the pick's gate checks the rows gateRows samples.
  const sampled = gateRows(rows, work.macs)?.length ?? rows;
  const cpuMs = (2 * ((work.macs * sampled) / Math.max(1, rows))) / CPU_MACS_PER_MS;
  const less = (2 * work.macs) / CPU_MACS_PER_MS - cpuMs;
  return { ...e, ms: e.ms - less, untimedMs: e.untimedMs - less };
}

/**
 * The families of a GEMM a run would measure here (those that take it and accept its base shape), each
 * with its estimate; the sum is what the guard weighs.
 * @example estimatePicks(CATALOG.families, gemms, caps, (kernel, arm) => rateFor([], kernel, arm, false), timing)
 */
export function estimatePicks(
  catalogs: readonly FamilyCatalog[],
  gemms: readonly PickGemm[],
  caps: AdapterCaps,
  rateOf: (kernel: KernelId, arm: Arm) => Rate,
  run: { targetMs: number; batches: number },
): Estimate {
  const software = isSoftwareAdapter(caps);
  const each: Estimate[] = [];
  for (const g of gemms)
    for (const f of pickCatalogs(catalogs, g)) {
      const config = pickBase(f, g, caps);
      if (f.validate(config, caps).length) continue;
      each.push(estimatePick(workOf(f, config), g.rows, rateOf(f.id, config.arm), { ...run, software }));
    }
  const sum = (pick: (e: Estimate) => number) => each.reduce((a, e) => a + pick(e), 0);
  const kernelMs = Math.max(0, ...each.map((e) => e.kernelMs));
  return {
    ms: sum((e) => e.ms),
    untimedMs: sum((e) => e.untimedMs),
    compileMs: sum((e) => e.compileMs),
    kernelMs,
    basis: `${each.length} candidate configs over ${gemms.length} GEMMs, each compiled, checked on the rows its gate samples and timed in ${run.batches} batches of ${run.targetMs} ms; the longest run about ${formatMs(kernelMs)}`,
  };
}
