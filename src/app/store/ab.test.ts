// The A/B state: a pinned A, the next runs as B, a swap, the permalink fields and what a link restores.
import { describe, expect, it } from 'vitest';
import type { RunConfig } from '../../kernels/family';
import type { RunOutcome } from '../../workers/protocol';
import { abAfterRun, abFromLink, abLinkOf, abPin, abSwap, type AbSide } from './ab';

const config = (arm: RunConfig['arm']): RunConfig => ({
  kernel: 'mmq-q8-naive',
  arm,
  data: { source: 'reference', seed: 0 },
  params: { m: 16, n: 16, k: 64 },
});
const side = (arm: RunConfig['arm'], edited = false): AbSide => ({
  config: config(arm),
  wgsl: edited ? '// edited' : '// generated',
  edited,
  outcome: { runWallMs: 1 } as RunOutcome,
});

describe('A/B state', () => {
  it('ignores runs until A is pinned, then every run is B', () => {
    expect(abAfterRun({}, side('scalar'))).toEqual({});
    const pinned = abPin(side('scalar'));
    const one = abAfterRun(pinned, side('dp4a'));
    expect(one.b?.config.arm).toBe('dp4a');
    expect(abAfterRun(one, side('subgroup-matrix')).b?.config.arm).toBe('subgroup-matrix');
    expect(abAfterRun(one, side('subgroup-matrix')).a?.config.arm).toBe('scalar');
  });

  it('a loaded linked A is filled by the next run, and B waits again', () => {
    const ab = abAfterRun({ a: { config: config('scalar'), edited: false }, next: 'a' }, side('scalar'));
    expect(ab.a?.outcome).toBeDefined();
    expect(ab.next).toBe('b');
  });

  it('swap makes B the baseline', () => {
    const ab = abSwap(abAfterRun(abPin(side('scalar')), side('dp4a')));
    expect([ab.a?.config.arm, ab.b?.config.arm]).toEqual(['dp4a', 'scalar']);
  });

  it('links carry configs and only edited WGSL, and restore sides without runs', () => {
    const ab = abAfterRun(abPin(side('scalar', true)), side('dp4a'));
    const link = abLinkOf(ab)!;
    expect(link).toEqual({
      a: { config: config('scalar'), wgsl: '// edited' },
      b: { config: config('dp4a') },
    });
    expect(abLinkOf({})).toBeUndefined();
    const back = abFromLink(link);
    expect(back.a).toEqual({ config: config('scalar'), wgsl: '// edited', edited: true });
    expect(back.b).toEqual({ config: config('dp4a'), wgsl: undefined, edited: false });
    expect(back.next).toBeUndefined(); // the link's own run does not replace a linked side
    expect(abAfterRun(back, side('subgroup-matrix'))).toBe(back);
    expect(abFromLink(undefined)).toEqual({});
  });
});
