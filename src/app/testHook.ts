// `window.__mmq`: a read-mostly hook for the e2e tests, so they can assert on numbers (hashes and
// summaries of the computed ownership and error buffers) instead of pixels, and drive the editor through
// the same model-edit path typing uses. It exposes nothing the UI does not already show.
import type { KernelFamily } from '../kernels/family';
import type { OwnershipPhase } from '../kernels/family';
import type { RunOutcome } from '../workers/protocol';
import { getApp } from './store';
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

export interface EditorHook {
  getValue(): string;
  /** Replace the first match of `pattern` (a RegExp source) as a user edit would. Returns false when nothing matched. */
  replace(pattern: string, replacement: string): boolean;
  /** Monaco markers of the current model. */
  markers(): { line: number; column: number; message: string; severity: number }[];
}

let editorHook: EditorHook | undefined;

/** The editor registers itself here while mounted. */
export function registerEditorHook(hook: EditorHook | undefined): void {
  editorHook = hook;
}

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
  };
  editor(): EditorHook | undefined;
  kernels(): string[];
}

declare global {
  interface Window {
    __mmq?: MmqTestHook;
  }
}

/** Install `window.__mmq`. */
export function installTestHook(target: Window, families: readonly KernelFamily[]): void {
  target.__mmq = {
    summary: runSummary,
    status() {
      const s = getApp();
      const b = s.buffers[s.config.kernel];
      return {
        device: s.device.status,
        run: s.run.status,
        runId: s.run.id ?? 0,
        stage: s.run.stage,
        kernel: s.config.kernel,
        linkError: s.linkError,
        edited: !!b && !!s.generated?.wgsl && b.text !== s.generated.wgsl,
      };
    },
    editor: () => editorHook,
    kernels: () => families.map((f) => f.id),
  };
}
