// The run bar's reason and the results' line while a link waits for approval: named as such, never
// "the config has a problem" when nothing is listed under Results.
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../kernels/catalog';
import type { PermalinkState } from '../permalink/codec';
import { SWIFTSHADER_CAPS } from '../store/caps.fixture';
import {
  configProblems,
  deviceReady,
  initialState,
  LINK_NOT_ACCEPTED,
  previewPermalink,
  runBlockers,
  type AppState,
} from '../store/state';
import { blockerText, LINK_WAITING } from './runBlocked';

const apply = (s: AppState, patch: Partial<AppState>): AppState => ({ ...s, ...patch });

describe('while a link waits for approval', () => {
  it('the run bar says the link waits, and how to approve it, not that the config has a problem', () => {
    let s = initialState(CATALOG.families, 'mmq-q8-naive');
    s = apply(s, deviceReady(s, SWIFTSHADER_CAPS, 'google/swiftshader#plane4', 4));
    const link: PermalinkState = {
      config: { ...s.config, params: { ...s.config.params, m: 64 } },
      tab: 'errors',
    };
    s = apply(s, previewPermalink(s, link));
    const blockers = runBlockers(s);
    expect(configProblems(s)).toEqual([]); // nothing for Results to list
    expect(blockers).toEqual([LINK_NOT_ACCEPTED]);
    const text = blockerText(blockers, 0);
    expect(text).toBe(
      'this config came from a link and waits for your approval ("Run this linked kernel" above)',
    );
    expect(text).not.toMatch(/problem/);
    expect(LINK_WAITING).toMatch(/waits for your approval: "Run this linked kernel"/);
  });

  it('still counts the problems Results lists, and the other reasons keep their words', () => {
    expect(blockerText([LINK_NOT_ACCEPTED, 'm = 8 is not a multiple of 16'], 0)).toMatch(
      /waits for your approval .*; it also has a problem \(listed under Results\)$/,
    );
    expect(blockerText(['m = 8 is not a multiple of 16'], 0)).toBe(
      'the config has a problem (listed under Results)',
    );
    expect(blockerText(['m: not a number'], 1)).toBe('a field holds an invalid value (marked below it)');
    expect(blockerText([], 0)).toBe('');
  });
});
