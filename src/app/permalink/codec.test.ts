import { compressToEncodedURIComponent } from 'lz-string';
import { describe, expect, it } from 'vitest';
import type { KernelId, ProblemConfig } from '../../kernels/family';
import { decodePermalink, encodePermalink, type PermalinkState } from './codec';

const KERNELS: KernelId[] = ['mmq-q8-tiled', 'mmq-q4k-tile', 'moe-q4k-id'];

const config: ProblemConfig = {
  kernel: 'mmq-q4k-tile',
  m: 48,
  n: 80,
  k: 256,
  experts: 4,
  topk: 2,
  ytiles: 1,
  tile: { wm: 2, wn: 2, rm: 1, rn: 2 },
  arm: 'dp4a',
  plane: 16,
  dataSource: 'random',
  dataSeed: 1234,
};

const raw = (body: unknown, v = 1) => `#v=${v}&s=${compressToEncodedURIComponent(JSON.stringify(body))}`;

describe('permalink codec', () => {
  it('round-trips the full state, edited WGSL included', () => {
    const state: PermalinkState = {
      config,
      wgsl: '@compute @workgroup_size(4) fn main() {}\n// ünïcode ✓',
      tab: 'errors',
    };
    const hash = encodePermalink(state);
    expect(hash).toMatch(/^#v=1&s=[A-Za-z0-9+\-$]+$/);
    expect(decodePermalink(hash, KERNELS)).toEqual({ ok: true, state });
  });

  it('carries the coopmat staging; a link without one runs the arm default', () => {
    const coop: ProblemConfig = { ...config, kernel: 'coopmat-f16', arm: 'scalar', staging: 'fused-prepass' };
    const kernels: KernelId[] = [...KERNELS, 'coopmat-f16'];
    const r = decodePermalink(encodePermalink({ config: coop, tab: 'ownership' }), kernels);
    expect(r.ok && r.state.config.staging).toBe('fused-prepass');
    const { staging: _s, ...older } = coop;
    const r2 = decodePermalink(raw({ c: older, t: 'ownership' }), kernels);
    expect(r2.ok && r2.state.config).not.toHaveProperty('staging');
  });

  it('omits the WGSL when the kernel is not edited', () => {
    const r = decodePermalink(encodePermalink({ config, tab: 'ownership' }), KERNELS);
    expect(r.ok && r.state.wgsl).toBe(undefined);
  });

  it('compresses: a 10 kB kernel makes a much shorter link', () => {
    const wgsl = Array.from({ length: 300 }, (_, i) => `  acc[${i % 8}] += f32(x[${i}]) * w[${i}];`).join(
      '\n',
    );
    const hash = encodePermalink({ config, wgsl, tab: 'ownership' });
    expect(hash.length).toBeLessThan(wgsl.length / 3);
  });

  it('rejects an old or future version with a clear message', () => {
    const r = decodePermalink(raw({ c: config }, 0), KERNELS);
    expect(r).toEqual({ ok: false, error: expect.stringContaining('format v=0; this build reads v=1') });
  });

  it('rejects a hash that is not a playground link', () => {
    expect(decodePermalink('#section-2', KERNELS).ok).toBe(false);
    expect(decodePermalink('', KERNELS).ok).toBe(false);
  });

  it('rejects corrupt compression and corrupt JSON', () => {
    const garbled = encodePermalink({ config, tab: 'ownership' }).slice(0, 30) + '!!';
    const r1 = decodePermalink(garbled, KERNELS);
    expect(r1.ok).toBe(false);
    expect(!r1.ok && r1.error).toMatch(/corrupt/);
    const r2 = decodePermalink(`#v=1&s=${compressToEncodedURIComponent('{"c": [1,')}`, KERNELS);
    expect(!r2.ok && r2.error).toMatch(/not valid JSON/);
  });

  it.each([
    ['unknown kernel', { ...config, kernel: 'mmq-q9' }, /config.kernel must be one of/],
    ['zero m', { ...config, m: 0 }, /config.m must be an integer in 1..16384/],
    ['fractional k', { ...config, k: 31.5 }, /config.k must be an integer/],
    ['huge n', { ...config, n: 1 << 20 }, /config.n/],
    ['topk above experts', { ...config, topk: 5 }, /config.topk must be an integer in 1..4/],
    ['bad arm', { ...config, arm: 'tensor' }, /config.arm must be one of scalar, dp4a, subgroup-matrix/],
    ['bad plane', { ...config, plane: 12 }, /config.plane must be one of 0, 4, 8, 16, 32, 64/],
    ['bad data source', { ...config, dataSource: 'gguf' }, /config.dataSource/],
    ['negative seed', { ...config, dataSeed: -1 }, /config.dataSeed/],
    ['tile missing', { ...config, tile: undefined }, /config.tile must be an object/],
    ['tile field', { ...config, tile: { ...config.tile, rn: 'two' } }, /config.tile.rn/],
    ['bad staging', { ...config, staging: 'two-pass' }, /config.staging must be one of one-pass, prepass/],
    ['string m', { ...config, m: '48' }, /config.m/],
  ])('rejects %s', (_name, c, pattern) => {
    const r = decodePermalink(raw({ c, t: 'ownership' }), KERNELS);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(pattern);
    expect(!r.ok && r.error).toMatch(/Showing the default config instead/);
  });

  it('rejects a bad tab and non-string WGSL', () => {
    expect(decodePermalink(raw({ c: config, t: 'settings' }), KERNELS).ok).toBe(false);
    expect(decodePermalink(raw({ c: config, w: 42 }), KERNELS).ok).toBe(false);
  });

  it('drops unknown extra fields instead of carrying them into the state', () => {
    const r = decodePermalink(raw({ c: { ...config, evil: true }, t: 'config' }), KERNELS);
    expect(r.ok && Object.keys(r.state.config)).not.toContain('evil');
  });
});
