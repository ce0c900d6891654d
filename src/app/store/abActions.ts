// The A/B and shape-sweep tabs' actions: pin the current run as A, swap, clear, and load a side (a
// link's, say) into the playground so its next run fills that side; the sweep's form and record, and the
// measured peaks the sweep shares with the run's performance panel. Pure functions of the state, as in
// ./state.ts.
import { abPin, abSwap, type AbSideName } from './ab';
import { currentBuffer, generatedMain, loadConfig, type AppState } from './state';
import type { PeaksState } from './peaks';
import type { SweepForm, SweepState } from './sweep';

/** Pin the current run as A; B waits for the next run. Nothing to pin without a finished run. */
export function pinCurrentRun(state: AppState): Partial<AppState> {
  const o = state.outcome;
  if (!o) return {};
  const wgsl = o.edited ? currentBuffer(state)?.text : generatedMain(state);
  return { ab: abPin({ config: o.config, wgsl, edited: o.edited, outcome: o }) };
}

export function swapAb(state: AppState): Partial<AppState> {
  return { ab: abSwap(state.ab) };
}

export function clearAb(): Partial<AppState> {
  return { ab: {} };
}

/**
 * Load a side into the playground (its config, and its edited WGSL into the editor) so that its next
 * run fills that side: what a side restored from a link needs before it can be compared. The user asks
 * for it by a click, after seeing the side's WGSL in the diff.
 */
export function loadAbSide(state: AppState, name: AbSideName): Partial<AppState> {
  const side = state.ab[name];
  if (!side) return {};
  const patch = loadConfig(state, side.config);
  const kernel = side.config.kernel;
  const buffers = { ...state.buffers };
  const local = buffers[kernel];
  // A local edit the side replaces is set aside (restorable), never lost.
  const stash =
    local && local.text !== local.base && local.text !== side.wgsl ? { kernel, buffer: local } : state.stash;
  if (side.edited && side.wgsl !== undefined)
    buffers[kernel] = { text: side.wgsl, base: '' }; // '' = edited until the kernel is generated
  else delete buffers[kernel]; // the generated kernel, as the side ran it
  return { ...patch, buffers, stash, ab: { ...state.ab, next: name } };
}

/** Change the sweep's slice (the controller's progress, the stored list). */
export function setSweep(state: AppState, patch: Partial<SweepState>): Partial<AppState> {
  return { sweep: { ...state.sweep, ...patch } };
}

/** Edit the sweep form. */
export function setSweepForm(state: AppState, patch: Partial<SweepForm>): Partial<AppState> {
  return { sweep: { ...state.sweep, form: { ...state.sweep.form, ...patch }, error: undefined } };
}

/** Change the peaks slice (looked up, measuring, measured, failed). */
export function setPeaks(state: AppState, patch: Partial<PeaksState>): Partial<AppState> {
  return { peaks: { ...state.peaks, ...patch } };
}
