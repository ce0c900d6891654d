// The permalink's A/B fields: both sides round-trip, each side's config is validated like the link's own,
// and every WGSL text of a link together stays within the one-kernel cap.
import { compressToEncodedURIComponent } from 'lz-string';
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../kernels/catalog';
import type { RunConfig } from '../../kernels/family';
import { decodePermalink, encodePermalink, LIMITS, type PermalinkState } from './codec';

const config: RunConfig = {
  kernel: 'mmq-q8-naive',
  arm: 'scalar',
  data: { source: 'reference', seed: 0 },
  params: { ...CATALOG.get('mmq-q8-naive').defaults, m: 16, n: 16, k: 64 },
};
const decode = (hash: string) => decodePermalink(hash, CATALOG.families);
const raw = (body: unknown) => `#v=2&s=${compressToEncodedURIComponent(JSON.stringify(body))}`;

describe('permalink A/B fields', () => {
  it('round-trip a pinned A with edited WGSL and a B on another arm', () => {
    const state: PermalinkState = {
      config,
      tab: 'ab',
      ab: { a: { config, wgsl: '// edited A\n' }, b: { config: { ...config, arm: 'dp4a' } } },
    };
    expect(decode(encodePermalink(state))).toEqual({ ok: true, state });
  });

  it('reject a side whose config the family does not accept, naming the field', () => {
    const bad = raw({
      c: config,
      t: 'ab',
      ab: { a: { c: { ...config, params: { ...config.params, m: 0 } } } },
    });
    const r = decode(bad);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/^This link is invalid: m must be a whole number from 1/);
    const noA = decode(raw({ c: config, t: 'ab', ab: { b: { c: config } } }));
    expect(noA).toEqual({ ok: false, error: 'This link is invalid: ab must hold a pinned side a.' });
  });

  it("keep all of a link's WGSL within the one-kernel cap", () => {
    const half = 'x'.repeat(LIMITS.wgslChars / 2 + 1);
    const r = decode(raw({ c: config, t: 'ab', w: half, ab: { a: { c: config, w: half } } }));
    expect(r).toEqual({
      ok: false,
      error: `This link is invalid: the link's edited WGSL texts together must be at most ${LIMITS.wgslChars} characters.`,
    });
    const side = decode(raw({ c: config, t: 'ab', ab: { a: { c: config, w: 42 } } }));
    expect(side.ok).toBe(false);
  });
});
