// One guard for every action that runs GPU work (a run, a sweep, a hunt): each is estimated from its
// work against the rate this adapter showed for the family and arm (this session's runs, then this
// device's stored hunts, else a cautious default), and one predicted past the limit asks first
// (the banner names the action and offers to start it anyway). The CLI asks the same estimate
// (src/kernels/perf/estimate.ts) and refuses without --yes.
import type { Arm } from '../kernels/gpu/caps';
import { isSoftwareAdapter } from '../kernels/gpu/caps';
import {
  CONFIRM_MS,
  guardedMs,
  rateFor,
  rateOfHunt,
  rateOfRun,
  workOf,
  type MeasuredRate,
  type Rate,
} from '../kernels/perf/estimate';
import type { RunOutcome } from '../workers/protocol';
import { act, askToRun, catalogIn, getApp, type AppState, type RunEstimate } from './store';

export interface Guard {
  /** The rate of `kernel` on `arm` here: this session's runs, then this device's hunts, else a default. */
  rateOf(state: AppState, kernel: string, arm: Arm): Rate;
  /** Whether the adapter is a CPU one (its timings cost more; see estimate's TIMING_COST). */
  software(state: AppState): boolean;
  /** Keep a finished run's rate (and that its kernel is compiled) for the next estimates. */
  record(o: RunOutcome, key: string): void;
  /** Whether the run of `key` (a config and its text) was compiled in this worker already. */
  compiled(key: string): boolean;
  /** A new worker compiles everything again. */
  forgetCompiled(): void;
  /**
   * True when `est`, less its compiling, is within the limit or the user already said go; else asks and
   * returns false. Compiling is the same whatever the shape (shrinking it does not help) and bounded per
   * kernel; the work the guard weighs is what grows with the shape and cannot be taken back once sent.
   */
  allow(est: RunEstimate & { compileMs?: number }, confirmed: boolean): boolean;
}

/**
 * The app's guard; `confirmMs` is the limit (tests lower it).
 * @example const guard = createGuard(); if (!guard.allow({ ...est, action: 'sweep' }, false)) return;
 */
export function createGuard(confirmMs = CONFIRM_MS): Guard {
  /** Rates measured by this session's runs, the latest per family and arm. */
  let measured: MeasuredRate[] = [];
  /** Runs (config and text) whose pipelines the current worker has compiled. */
  const compiled = new Set<string>();
  return {
    rateOf(state, kernel, arm) {
      const hunts = (state.tuner.runs ?? [])
        .filter((run) => run.deviceId === state.device.deviceId)
        .flatMap((run) => {
          const catalog = catalogIn(state, run.kernel);
          return catalog ? rateOfHunt(run.kernel, workOf(catalog, run.report.base), run.report.entries) : [];
        });
      return rateFor([...hunts, ...measured], kernel, arm, this.software(state));
    },
    software(state) {
      const caps = state.device.caps;
      return !caps || isSoftwareAdapter(caps);
    },
    record(o, key) {
      compiled.add(key);
      const catalog = catalogIn(getApp(), o.config.kernel);
      const r =
        catalog &&
        rateOfRun(
          o.config.kernel,
          o.config.arm,
          workOf(catalog, o.config),
          o.runWallMs,
          o.timing?.ms,
          o.compileMs,
        );
      if (r) measured = [...measured.filter((m) => m.kernel !== r.kernel || m.arm !== r.arm), r];
    },
    compiled: (key) => compiled.has(key),
    forgetCompiled: () => compiled.clear(),
    allow(est, confirmed) {
      if (confirmed || guardedMs({ compileMs: 0, ...est }) <= confirmMs) return true;
      act(askToRun, est);
      return false;
    },
  };
}
