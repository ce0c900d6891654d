// The model view's state: which model (a built-in preset, or an opened GGUF), the phases to run (prefill
// of M tokens, decode), the run on display (running, finished, or a guess) and runs of other adapters
// imported beside it, the run's progress, the go-ahead it waits for, and what failed. Pure actions; the
// model-run controller (../modelRunController.ts) drives the worker. Nothing here is stored: a run is
// exported as JSON (kernels/models/modelRun.ts); the hunts of "tune all" are stored like every hunt.
import { ggufPass, presetPass, type ForwardPass, type PassFormat } from '../../kernels/models/forward';
import type { ModelRun } from '../../kernels/models/modelRun';
import { MODEL_PRESETS } from '../../kernels/models/presets';
import type { PickResult } from '../../kernels/tune/pick';
import type { OpenedModel } from '../../workers/protocol';

export interface ModelRunForm {
  /** 'preset:<id>' or 'file:<modelFileKey>' ('' = the first preset). */
  source: string;
  /** A preset's weights (a file's tensors have their own types). */
  format: PassFormat;
  /** Prefill rows (tokens), and which phases run. */
  m: number;
  prefill: boolean;
  decode: boolean;
}

export interface ModelRunState {
  form: ModelRunForm;
  /** The run on display. */
  current?: ModelRun | undefined;
  /** Runs of other adapters (imported JSON), shown beside it. */
  imported: ModelRun[];
  /** What the run or the hunts are doing now. */
  busy?: { what: 'run' | 'tune'; stage: string; fraction: number } | undefined;
  /** A run or a tune-all estimated past the guard, waiting for the go-ahead. */
  confirm?: { what: 'run' | 'tune'; ms: number; basis: string } | undefined;
  error?: string | undefined;
}

export const INITIAL_MODEL_RUN: ModelRunState = {
  form: { source: '', format: 'Q4_K', m: 512, prefill: true, decode: true },
  imported: [],
};

/** The most prefill rows the form takes (a 128k-token prompt). */
export const MODEL_RUN_MAX_M = 131_072;

/** What the model view's actions read and write of the app state (AppState has it). */
export interface WithModelRun {
  modelRun?: ModelRunState | undefined;
}
type Patch = { modelRun: ModelRunState } | Record<string, never>;

/** The model view's state (its initial state until the view first changes it). */
export const modelRunOf = (s: WithModelRun): ModelRunState => s.modelRun ?? INITIAL_MODEL_RUN;

/** Patch the model view's state. */
export function setModelRun(state: WithModelRun, patch: Partial<ModelRunState>): Patch {
  return { modelRun: { ...modelRunOf(state), ...patch } };
}

/**
 * Patch the form. Another model (or a preset's other format) takes the run of the last one off the
 * screen, unless it is still running: its table would stand under the wrong name.
 */
export function setModelRunForm(state: WithModelRun, patch: Partial<ModelRunForm>): Patch {
  const r = modelRunOf(state);
  const form = { ...r.form, ...patch };
  const other = form.source !== r.form.source || form.format !== r.form.format;
  return { modelRun: { ...r, form, ...(other && !r.busy ? { current: undefined } : {}) } };
}

/** A key for an opened file in the form's source ('file:<headerHash>:<size>'). */
export const fileSource = (m: Pick<OpenedModel, 'file'>): string =>
  `file:${m.file.headerHash}:${m.file.size}`;

/** What the form's source names: the forward pass and the run's model fields, or why there is none. */
export function chosenPass(
  form: ModelRunForm,
  files: readonly OpenedModel[],
): { pass: ForwardPass; model: ModelRun['model'] } | { problem: string } {
  if (form.source.startsWith('file:')) {
    const f = files.find((x) => fileSource(x) === form.source);
    if (!f) return { problem: 'the file is not open any more: open it again, or pick a preset' };
    const pass = ggufPass(f.preset?.name ?? f.file.name, f.tensors, f.preset);
    if (!pass.gemms.length) return { problem: `${pass.name}: ${pass.notes.join('; ')}` };
    return { pass, model: { name: pass.name, source: 'gguf', file: f.file } };
  }
  const id = form.source.startsWith('preset:') ? form.source.slice('preset:'.length) : MODEL_PRESETS[0]!.id;
  const p = MODEL_PRESETS.find((x) => x.id === id) ?? MODEL_PRESETS[0]!;
  return {
    pass: presetPass(p, form.format),
    model: { name: p.name, source: 'preset', id: p.id, format: form.format },
  };
}

/** The phases the form asks for. */
export function formPhases(form: ModelRunForm): { phase: 'prefill' | 'decode'; m: number }[] {
  return [
    ...(form.prefill ? [{ phase: 'prefill' as const, m: form.m }] : []),
    ...(form.decode ? [{ phase: 'decode' as const, m: 1 }] : []),
  ];
}

/** A run starts: it is shown at once, every pick empty. */
export function modelRunStarted(state: WithModelRun, run: ModelRun, what: 'run' | 'tune' = 'run'): Patch {
  return setModelRun(state, {
    current: run,
    busy: { what, stage: 'starting', fraction: 0 },
    confirm: undefined,
    error: undefined,
  });
}

/** Where the run or the hunts have got to (never lower than before). */
export function modelRunProgress(state: WithModelRun, stage: string, fraction: number): Patch {
  const r = modelRunOf(state);
  if (!r.busy) return {};
  return setModelRun(state, { busy: { ...r.busy, stage, fraction: Math.max(r.busy.fraction, fraction) } });
}

/** One GEMM of one phase picked. */
export function modelRunPicked(state: WithModelRun, phase: number, gemm: number, pick: PickResult): Patch {
  const r = modelRunOf(state);
  const cur = r.current;
  if (!cur || !cur.phases[phase]) return {};
  return setModelRun(state, {
    current: {
      ...cur,
      phases: cur.phases.map((p, i) =>
        i === phase ? { ...p, picks: p.picks.map((x, j) => (j === gemm ? pick : x)) } : p,
      ),
    },
  });
}

/** The run (or the hunts) ended: complete, cancelled, or failed with `error`. */
export function modelRunEnded(
  state: WithModelRun,
  status: 'complete' | 'cancelled',
  durationMs: number,
  error?: string,
): Patch {
  const r = modelRunOf(state);
  return setModelRun(state, {
    busy: undefined,
    ...(r.current && r.current.status === 'running' ? { current: { ...r.current, status, durationMs } } : {}),
    ...(error !== undefined ? { error } : {}),
  });
}
