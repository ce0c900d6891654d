// Number fields that never lose what the user is typing. A field shows its draft text (what was typed)
// while that differs from the committed value; a draft that reads as a whole number in range is
// committed at once, one that does not stays on screen with the reason, and nothing runs while any
// field of the playground (or of the tuner, for a hunt) holds an invalid draft. Pure.

/** What a number field accepts. */
export interface NumberSpec {
  label: string;
  min: number;
  max: number;
}

export type DraftParse = { ok: true; value: number } | { ok: false; problem: string };

const DIGITS = /^[+-]?\d+$/;
const NUMBER_LIKE = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * Read a typed text as a field's value: a whole number in digits within [min, max], or the one reason
 * it is not (empty, not a number, a fraction, exponent notation, out of range).
 * @example parseDraft('3.5', { label: 'wm', min: 1, max: 16 }) // { ok: false, problem: 'wm = 3.5 must be a whole number' }
 */
export function parseDraft(text: string, spec: NumberSpec): DraftParse {
  const t = text.trim();
  const { label, min, max } = spec;
  if (t === '') return { ok: false, problem: `${label} is empty: type a whole number from ${min} to ${max}` };
  if (!DIGITS.test(t)) {
    if (NUMBER_LIKE.test(t) && /e/i.test(t))
      return { ok: false, problem: `${label} = ${t}: write the number in digits (no exponent)` };
    if (NUMBER_LIKE.test(t)) return { ok: false, problem: `${label} = ${t} must be a whole number` };
    return { ok: false, problem: `${label} '${t}' is not a number` };
  }
  const value = Number(t);
  if (!Number.isSafeInteger(value)) return { ok: false, problem: `${label} = ${t} is too large` };
  if (value < min) return { ok: false, problem: `${label} = ${value} must be at least ${min}` };
  if (value > max) return { ok: false, problem: `${label} = ${value} must be at most ${max}` };
  return { ok: true, value };
}

/**
 * The value ArrowUp (+1) or ArrowDown (-1) moves to: the next multiple of `step` above or below, kept
 * within [min, max] (k steps by the quant block, m and n by the tile where the kernel needs it).
 * @example stepValue(300, 256, +1, { label: 'k', min: 256, max: 1 << 20 }) // 512
 */
export function stepValue(value: number, step: number, dir: 1 | -1, spec: NumberSpec): number {
  const s = Math.max(1, Math.floor(step));
  const next = dir > 0 ? Math.floor(value / s) * s + s : Math.ceil(value / s) * s - s;
  return Math.min(Math.max(next, spec.min), spec.max);
}

/** A field's draft: the text typed, and why it is not a value (undefined when it is one). */
export interface Draft {
  text: string;
  problem?: string | undefined;
}

/** Draft ids are "<scope>:<name>"; the playground's scopes block its runs, the tuner's its hunts. */
export const PLAYGROUND_SCOPES = ['param', 'data', 'run', 'model'] as const;

/** The problems of the invalid drafts in some scopes, in field order. */
export function draftProblems(
  drafts: Readonly<Record<string, Draft>>,
  scopes: readonly string[] = PLAYGROUND_SCOPES,
): string[] {
  return Object.entries(drafts)
    .filter(([id, d]) => d.problem !== undefined && scopes.includes(id.split(':')[0]!))
    .map(([, d]) => d.problem!);
}

/** The drafts without those of some scopes (a config replaced wholesale drops its fields' drafts). */
export function dropDrafts(
  drafts: Readonly<Record<string, Draft>>,
  scopes: readonly string[],
): Record<string, Draft> {
  return Object.fromEntries(Object.entries(drafts).filter(([id]) => !scopes.includes(id.split(':')[0]!)));
}
