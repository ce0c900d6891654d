// `window.__mmq`: a read-mostly hook for the e2e tests, so they can assert on numbers (hashes and
// summaries of the computed ownership and error buffers) instead of pixels, and drive the editor through
// the same model-edit path typing uses. It exposes nothing the UI does not already show. Installed only
// by test builds (vite build --mode e2e): the production build does not contain it (e2e/bundle.spec.ts).
import type { OwnershipPhase } from '../kernels/family';
import type { RunOutcome } from '../workers/protocol';
import type { Controller } from './controller';
import { mountedEditor, type EditorHandle } from './editor/editorHandle';
import { getApp, isCurrentResult } from './store';
import {
  badByOwner,
  badMask,
  errorBins,
  errorField,
  errorSplit,
  fnv1a,
  ownershipDiff,
  ownershipFlags,
} from './views/analysis';
import { analyseRun } from './views/useRunAnalysis';

export interface OwnershipSummary {
  hash: string;
  never: number;
  twice: number;
  workgroups: number;
  planes: number;
  lanes: number;
}

export interface RunSummary {
  kernel: string;
  rows: number;
  cols: number;
  pass: boolean;
  gate: string;
  mismatches: number;
  edited: boolean;
  outputHash: string;
  oracleHash: string;
  errorBinsHash: string;
  bad: number;
  badSentence: string;
  badLanes: number[];
  recorded?: OwnershipSummary;
  analytic: Partial<Record<OwnershipPhase, OwnershipSummary & { diffFromRecorded: number }>>;
  tile?: { tileRows: number; tileCols: number; paddedRows: number; paddedCols: number };
  errorSplit?: { quantization: number; kernel: number; total: number };
}

function ownershipSummary(o: NonNullable<RunOutcome['ownership']>): OwnershipSummary {
  const f = ownershipFlags(o);
  return {
    hash: fnv1a([o.count, o.workgroup, o.plane, o.lane]),
    never: f.never,
    twice: f.twice,
    workgroups: new Set(o.workgroup).size,
    planes: new Set(o.plane).size,
    lanes: new Set(o.lane).size,
  };
}

/** Numeric summary of the current run (what the views draw), or undefined before a result. */
export function runSummary(): RunSummary | undefined {
  const o = getApp().outcome;
  if (!o) return undefined;
  const err = errorField(o.output, o.oracle);
  const mask = badMask(o.output, o.oracle, err, o.verdict.gate);
  const own = o.ownership;
  const bad = badByOwner(mask, own);
  const analytic: RunSummary['analytic'] = {};
  for (const [phase, map] of Object.entries(o.analyticOwnership ?? {}) as [
    OwnershipPhase,
    NonNullable<RunOutcome['ownership']>,
  ][]) {
    analytic[phase] = { ...ownershipSummary(map), diffFromRecorded: own ? ownershipDiff(own, map) : -1 };
  }
  const summary: RunSummary = {
    kernel: o.config.kernel,
    rows: o.rows,
    cols: o.cols,
    pass: o.verdict.pass,
    gate: o.verdict.gate.kind === 'bit-exact' ? 'bit-exact' : `rel-to-max ${o.verdict.gate.tol}`,
    mismatches: o.verdict.mismatches,
    edited: o.edited,
    outputHash: fnv1a([o.output]),
    oracleHash: fnv1a([o.oracle]),
    errorBinsHash: fnv1a([errorBins(err)]),
    bad: bad.bad,
    badSentence: bad.sentence,
    badLanes: bad.byLane.map(([lane]) => lane).sort((a, b) => a - b),
    analytic,
  };
  if (own) summary.recorded = ownershipSummary(own);
  summary.tile = analyseRun(o).geometry;
  if (o.fullPrecision) summary.errorSplit = errorSplit(o.output, o.oracle, o.fullPrecision);
  return summary;
}

export interface MmqTestHook {
  summary: typeof runSummary;
  /** The store's headline state. */
  status(): {
    device: string;
    run: string;
    runId: number;
    stage?: string | undefined;
    kernel: string;
    linkError?: string | undefined;
    edited: boolean;
    /** The last outcome's timing, as the results show it. */
    timing?:
      | { ms: number; runs: number; batches: number; resolutionNs: number; coarse: boolean; passes: number }
      | undefined;
    throughputUnit?: string | undefined;
    cancelMs?: number | undefined;
    params: Record<string, number | string>;
    /** The result shown is of the current config (not of the one before an edit). */
    current: boolean;
    /** Times the GPU worker was replaced after a cancel it could not answer in time. */
    restarts: number;
  };
  tuner(): {
    status: string;
    entries: number;
    stored: boolean;
    runs: { key: string; status: string; entries: number }[];
  };
  editor(): EditorHandle | undefined;
  kernels(): string[];
  /** The controller (runs with a choice, e.g. untimed). */
  controller: Controller;
}

declare global {
  interface Window {
    __mmq?: MmqTestHook;
  }
}

/** Install `window.__mmq` (test builds only). */
export function installTestHook(target: Window, controller: Controller): void {
  target.__mmq = {
    summary: runSummary,
    status() {
      const s = getApp();
      const b = s.buffers[s.config.kernel];
      const gen = s.generated?.passes[s.generated.mainPass]?.wgsl;
      const t = s.outcome?.timing;
      return {
        device: s.device.status,
        run: s.run.status,
        runId: s.run.id ?? 0,
        stage: s.run.stage,
        kernel: s.config.kernel,
        linkError: s.linkError,
        edited: !!b && gen !== undefined && b.text !== gen,
        timing: t && {
          ms: t.ms,
          runs: t.runs,
          batches: t.samples.length,
          resolutionNs: t.resolutionNs,
          coarse: t.coarse,
          passes: t.passes?.length ?? 1,
        },
        throughputUnit: s.outcome?.throughput?.unit,
        cancelMs: s.run.cancelMs,
        params: { ...s.config.params },
        current: !!s.outcome && isCurrentResult(s, s.outcome.config),
        restarts: s.device.restarts ?? 0,
      };
    },
    tuner() {
      const t = getApp().tuner;
      return {
        status: t.hunt?.status ?? 'idle',
        entries: t.hunt?.entries.length ?? 0,
        stored: t.hunt?.stored ?? false,
        runs: (t.runs ?? []).map((r) => ({ key: r.key, status: r.status, entries: r.report.entries.length })),
      };
    },
    editor: mountedEditor,
    kernels: () => getApp().catalogs.map((f) => f.id),
    controller,
  };
}
