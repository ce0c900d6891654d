// What the run bar and the results say while nothing can run: pure, so the wording is unit-tested. A link
// waiting for approval is named as such (it is no problem of the config, and the results have no run).
import { LINK_NOT_ACCEPTED } from '../store';

/** Where a waiting link is approved (the link preview banner's buttons). */
export const LINK_WAITING =
  'This config came from a link and waits for your approval: "Run this linked kernel" in the banner above runs it, "Keep my own" goes back to yours.';

/**
 * The run bar's reason, in a few words, from runBlockers' list and the number of fields holding drafts;
 * '' when a run can start.
 * @example blockerText([LINK_NOT_ACCEPTED], 0) // 'this config came from a link and waits for your approval ...'
 */
export function blockerText(blockers: readonly string[], drafts: number): string {
  if (!blockers.length) return '';
  if (blockers[0]!.startsWith('WebGPU is not available')) return blockers[0]!;
  const others = blockers.filter((b) => b !== LINK_NOT_ACCEPTED).length - drafts;
  if (blockers.includes(LINK_NOT_ACCEPTED)) {
    const also =
      others > 0
        ? `; it also has ${others === 1 ? 'a problem' : `${others} problems`} (listed under Results)`
        : '';
    return `this config came from a link and waits for your approval ("Run this linked kernel" above)${also}`;
  }
  if (drafts)
    return `a field holds an invalid value (${drafts === 1 ? 'marked below it' : `${drafts} fields, marked`})`;
  return `the config has ${blockers.length === 1 ? 'a problem' : `${blockers.length} problems`} (listed under Results)`;
}
