// The A/B comparison's state: a run pinned as A, and the runs after it as B (another config, arm, or an
// edited kernel), so the A/B tab can put time, error, ownership and WGSL side by side. Pure functions
// over AppState['ab'] (state.ts feeds finished runs in, the permalink carries the sides' configs and
// edited WGSL). A side restored from a link has no run until it is loaded and run here.
import type { RunConfig } from '../../kernels/family';
import type { RunOutcome } from '../../workers/protocol';
import type { AbLink, AbLinkSide } from '../permalink/codec';

export type AbSideName = 'a' | 'b';

export interface AbSide {
  config: RunConfig;
  /** The main pass's text that ran (the edit, or the generated kernel); absent when not known yet. */
  wgsl?: string | undefined;
  /** The text was the user's edit (a link carries only edited text: generated text is regenerated). */
  edited: boolean;
  /** The run; absent for a side restored from a link and not run here yet. */
  outcome?: RunOutcome | undefined;
}

export interface AbState {
  a?: AbSide | undefined;
  b?: AbSide | undefined;
  /** The side the next finished run fills (undefined: nothing is pinned, runs are not compared). */
  next?: AbSideName | undefined;
}

/**
 * A finished run enters the comparison: it fills the side waiting for a run (B once A is pinned; A when
 * a linked A was loaded), and B waits for the next one. Nothing is pinned: nothing changes.
 * @example abAfterRun({ a, next: 'b' }, side) // { a, b: side, next: 'b' }
 */
export function abAfterRun(ab: AbState, side: AbSide): AbState {
  if (!ab.next) return ab;
  return { ...ab, [ab.next]: side, next: 'b' };
}

/** Pin a side as A: B is cleared and waits for the next run. */
export function abPin(side: AbSide): AbState {
  return { a: side, next: 'b' };
}

/** B becomes A (the new baseline) and the next run is compared with it. */
export function abSwap(ab: AbState): AbState {
  return ab.b ? { a: ab.b, b: ab.a, next: 'b' } : ab;
}

const linkSide = (s: AbSide): AbLinkSide => ({
  config: s.config,
  ...(s.edited && s.wgsl !== undefined ? { wgsl: s.wgsl } : {}),
});

/** The permalink fields of the comparison (undefined when nothing is pinned). */
export function abLinkOf(ab: AbState): AbLink | undefined {
  if (!ab.a) return undefined;
  return { a: linkSide(ab.a), ...(ab.b ? { b: linkSide(ab.b) } : {}) };
}

const fromLinkSide = (l: AbLinkSide): AbSide => ({
  config: l.config,
  wgsl: l.wgsl,
  edited: l.wgsl !== undefined,
});

/**
 * The comparison a link restores: its sides' configs and edited WGSL, without runs. No side waits for a
 * run (the link's own config runs without replacing a linked side): a side is filled when the user
 * loads it (loadAbSide).
 * @example abFromLink(link.ab) // {} when the link pins nothing
 */
export function abFromLink(link: AbLink | undefined): AbState {
  if (!link) return {};
  return { a: fromLinkSide(link.a), ...(link.b ? { b: fromLinkSide(link.b) } : {}) };
}
