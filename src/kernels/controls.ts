// Control declarations the families share (see family.ts): the shape fields and their valid steps.
import type { FamilyParams, IntControl } from './family';

/** The largest m, n or k a control accepts: beyond it every buffer is over any adapter's limits anyway. */
export const MAX_DIM = 1 << 20;

/**
 * An integer shape field from `min` (default 1) to MAX_DIM whose ArrowUp/Down step is `step(params)`.
 * @example shapeControl('k', 'k', { min: 256, step: () => 256, hint: 'a multiple of the Q4_K super-block' })
 */
export function shapeControl(
  key: string,
  label: string,
  opts: {
    min?: number;
    max?: number;
    step?: (p: FamilyParams) => number;
    hint?: string;
    group?: IntControl['group'];
  } = {},
): IntControl {
  return {
    kind: 'int',
    key,
    label,
    group: opts.group ?? 'shape',
    min: opts.min ?? 1,
    max: opts.max ?? MAX_DIM,
    step: opts.step ?? (() => 1),
    ...(opts.hint ? { hint: opts.hint } : {}),
  };
}

/**
 * `${label} = v is not a multiple of step (why)` when v is a whole number off the step; else nothing.
 * @example multipleProblem('k', 300, 256, 'the Q4_K super-block') // ['k = 300 is not a multiple of 256 (the Q4_K super-block)']
 */
export function multipleProblem(label: string, v: unknown, step: number, why: string): string[] {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v % step !== 0
    ? [`${label} = ${v} is not a multiple of ${step} (${why})`]
    : [];
}
