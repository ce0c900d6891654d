// The permalink codec: round trips (edited WGSL, a model tensor), v=1 links read, and one clear message
// for every kind of bad link, checked against the families' own declarations.
import { compressToEncodedURIComponent } from 'lz-string';
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../kernels/catalog';
import type { RunConfig } from '../../kernels/family';
import { clipText, decodePermalink, encodePermalink, LIMITS, type PermalinkState } from './codec';

const config: RunConfig = {
  kernel: 'mmq-q4k-tile',
  arm: 'dp4a',
  plane: 16,
  data: { source: 'random', seed: 1234 },
  params: { m: 48, n: 80, k: 256, wm: 2, wn: 2, rm: 1, rn: 2, schedule: 'microtile' },
};

const raw = (body: unknown, v = 2) => `#v=${v}&s=${compressToEncodedURIComponent(JSON.stringify(body))}`;
const decode = (hash: string) => decodePermalink(hash, CATALOG.families);

describe('permalink codec', () => {
  it('round-trips the full state, edited WGSL included', () => {
    const state: PermalinkState = {
      config,
      wgsl: '@compute @workgroup_size(4) fn main() {}\n// ünïcode ✓',
      tab: 'errors',
    };
    const hash = encodePermalink(state);
    expect(hash).toMatch(/^#v=2&s=[A-Za-z0-9+\-$]+$/);
    expect(decode(hash)).toEqual({ ok: true, state });
  });

  it('carries a choice param and a model tensor (file name, size, header hash, tensor, activation)', () => {
    const coop: RunConfig = {
      kernel: 'coopmat-f16',
      arm: 'scalar',
      data: {
        source: 'tensor',
        seed: 3,
        tensor: {
          file: { name: 'llama.gguf', size: 4_920_000_000, headerHash: '0123456789abcdef' },
          tensor: 'blk.0.ffn_down.weight',
          activation: 'outliers',
        },
      },
      params: {
        ...CATALOG.get('coopmat-f16').defaults,
        m: 16,
        n: 10,
        k: 512,
        staging: 'fused-prepass',
      },
    };
    expect(decode(encodePermalink({ config: coop, tab: 'model' }))).toEqual({
      ok: true,
      state: { config: coop, tab: 'model' },
    });
  });

  it("fills a param the link does not carry with the family's default (links older than a knob)", () => {
    const { staging: _s, ...older } = { m: 16, n: 10, k: 512, wm: 2, wn: 2, rm: 1, rn: 1, staging: 'x' };
    const r = decode(
      raw({
        c: { kernel: 'coopmat-f16', arm: 'scalar', data: { source: 'reference', seed: 0 }, params: older },
      }),
    );
    expect(r.ok && r.state.config.params.staging).toBe(CATALOG.get('coopmat-f16').defaults.staging);
  });

  it('reads v=1 links: flat fields, the tile object, the seed data source, plane 0 = the adapter', () => {
    const v1 = {
      kernel: 'moe-q4k-id',
      m: 8,
      n: 64,
      k: 256,
      experts: 4,
      topk: 2,
      ytiles: 1,
      tile: { wm: 1, wn: 1, rm: 1, rn: 1 },
      arm: 'scalar',
      plane: 0,
      dataSource: 'seed',
      dataSeed: 7,
    };
    const r = decode(raw({ c: v1, t: 'errors' }, 1));
    expect(r).toEqual({
      ok: true,
      state: {
        tab: 'errors',
        config: {
          kernel: 'moe-q4k-id',
          arm: 'scalar',
          data: { source: 'reference', seed: 7 },
          params: {
            ...CATALOG.get('moe-q4k-id').defaults,
            tokens: 8,
            n: 64,
            k: 256,
            experts: 4,
            topk: 2,
            ytiles: 1,
            wm: 1,
            wn: 1,
            rm: 1,
            rn: 1,
          },
        },
      },
    });
  });

  it('omits the WGSL when the kernel is not edited; compresses a long one', () => {
    const r = decode(encodePermalink({ config, tab: 'ownership' }));
    expect(r.ok && r.state.wgsl).toBe(undefined);
    const wgsl = Array.from({ length: 300 }, (_, i) => `  acc[${i % 8}] += f32(x[${i}]) * w[${i}];`).join(
      '\n',
    );
    expect(encodePermalink({ config, wgsl, tab: 'ownership' }).length).toBeLessThan(wgsl.length / 3);
  });

  it('rejects another version, a hash that is no link, corrupt compression and corrupt JSON', () => {
    expect(decode(raw({ c: config }, 0))).toEqual({
      ok: false,
      error: 'This link is format v=0; this build reads v=2 (and v=1).',
    });
    expect(decode('#section-2').ok).toBe(false);
    expect(decode('').ok).toBe(false);
    const garbled = encodePermalink({ config, tab: 'ownership' }).slice(0, 30) + '!!';
    const r1 = decode(garbled);
    expect(!r1.ok && r1.error).toMatch(/corrupt/);
    const r2 = decode(`#v=2&s=${compressToEncodedURIComponent('{"c": [1,')}`);
    expect(!r2.ok && r2.error).toMatch(/not valid JSON/);
  });

  const tensor = {
    file: { name: 'a.gguf', size: 10, headerHash: '0123456789abcdef' },
    tensor: 't',
    activation: 'normal',
  };
  it.each([
    ['unknown kernel', { ...config, kernel: 'mmq-q9' }, /kernel must be one of hello-wmma/],
    [
      'zero m',
      { ...config, params: { ...config.params, m: 0 } },
      /m must be a whole number from 1 to 1048576 \(got 0\)/,
    ],
    [
      'fractional k',
      { ...config, params: { ...config.params, k: 255.5 } },
      /k must be a whole number from 256/,
    ],
    ['string m', { ...config, params: { ...config.params, m: '48' } }, /m must be a whole number/],
    [
      'tile field',
      { ...config, params: { ...config.params, rn: 99 } },
      /rn must be a whole number from 1 to 16/,
    ],
    ['bad arm', { ...config, arm: 'tensor' }, /arm must be one of scalar, dp4a, subgroup-matrix/],
    ['an arm the family lacks', { ...config, kernel: 'coopmat-f16', arm: 'dp4a' }, /has no dp4a arm/],
    ['bad plane', { ...config, plane: 12 }, /plane must be one of 4, 8, 16, 32, 64/],
    [
      'bad data source',
      { ...config, data: { source: 'gguf', seed: 0 } },
      /data.source must be one of reference/,
    ],
    [
      'negative seed',
      { ...config, data: { source: 'random', seed: -1 } },
      /data.seed must be a whole number from 0/,
    ],
    [
      'a tensor without its file',
      { ...config, data: { source: 'tensor', seed: 0 } },
      /data.tensor must name a file and a tensor/,
    ],
    [
      'a bad header hash',
      {
        ...config,
        data: {
          source: 'tensor',
          seed: 0,
          tensor: { ...tensor, file: { ...tensor.file, headerHash: 'zz' } },
        },
      },
      /headerHash is not a valid name/,
    ],
    [
      'a bad activation',
      { ...config, data: { source: 'tensor', seed: 0, tensor: { ...tensor, activation: 'uniform' } } },
      /activation must be one of normal, outliers/,
    ],
    [
      'bad staging',
      { ...config, kernel: 'coopmat-f16', arm: 'scalar', params: { ...config.params, staging: 'two-pass' } },
      /staging must be one of one-pass/,
    ],
  ])('rejects %s with one message', (_name, c, pattern) => {
    const r = decode(raw({ c, t: 'ownership' }));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(pattern);
    expect(!r.ok && r.error).toMatch(/^This link is invalid: [^;]*\.$/);
  });

  it('keeps an edited WGSL that is empty: the user cleared the kernel, which is not the generated one', () => {
    const r = decode(encodePermalink({ config, wgsl: '', tab: 'ownership' }));
    expect(r).toEqual({ ok: true, state: { config, wgsl: '', tab: 'ownership' } });
    const ab = decode(encodePermalink({ config, tab: 'ab', ab: { a: { config, wgsl: '' }, b: { config } } }));
    expect(ab).toEqual({
      ok: true,
      state: { config, tab: 'ab', ab: { a: { config, wgsl: '' }, b: { config } } },
    });
  });

  it.each(['0123456789abcdef0', 'x0123456789abcdef', '0123456789ABCDEF', '0123456789abcde'])(
    'refuses the header hash %s: exactly 16 lowercase hex digits, nothing around them',
    (headerHash) => {
      const t = { file: { name: 'a.gguf', size: 10, headerHash }, tensor: 't', activation: 'normal' };
      const r = decode(raw({ c: { ...config, data: { source: 'tensor', seed: 0, tensor: t } } }));
      expect(!r.ok && r.error).toMatch(/headerHash is not a valid name/);
    },
  );

  it('reads a v=1 link whose rows param is set over its m, with a plane, and refuses a v=1 link without a config', () => {
    const v1 = { ...config, kernel: 'moe-q4k-id', m: 8, tokens: 16, n: 64, k: 256, arm: 'scalar', plane: 8 };
    const r = decode(raw({ c: { ...v1, dataSource: 'random', dataSeed: 3 } }, 1));
    expect(r.ok && r.state.config.params.tokens).toBe(16);
    expect(r.ok && r.state.config.plane).toBe(8);
    expect(r.ok && r.state.config.data).toEqual({ source: 'random', seed: 3 });
    expect(decode(raw({ c: 5 }, 1))).toEqual({
      ok: false,
      error: 'This link is invalid: config is missing.',
    });
    const unknown = decode(raw({ c: { ...v1, kernel: 'mmq-q9' } }, 1));
    expect(!unknown.ok && unknown.error).toMatch(/kernel must be one of .* \(got "mmq-q9"\)/);
  });

  it('takes a name of exactly the cap and refuses one that is not a string', () => {
    const t = (tensorName: unknown) => ({
      ...config,
      data: {
        source: 'tensor',
        seed: 0,
        tensor: {
          file: { name: 'a.gguf', size: 1, headerHash: '0123456789abcdef' },
          tensor: tensorName,
          activation: 'normal',
        },
      },
    });
    expect(decode(raw({ c: t('t'.repeat(LIMITS.nameChars)) })).ok).toBe(true);
    expect(decode(raw({ c: t(42) }))).toEqual({
      ok: false,
      error: 'This link is invalid: data.tensor.tensor is not a valid name (got 42).',
    });
  });

  it('clips a message at the cap, counting only what is cut', () => {
    expect(clipText('x'.repeat(10), 10)).toBe('x'.repeat(10));
    expect(clipText('abcdefghijkl', 10)).toBe('abcdefghij… (2 more characters)');
  });

  it('rejects a bad tab and non-string WGSL; drops unknown fields', () => {
    expect(decode(raw({ c: config, t: 'settings' })).ok).toBe(false);
    expect(decode(raw({ c: config, w: 42 })).ok).toBe(false);
    const r = decode(
      raw({ c: { ...config, evil: true, params: { ...config.params, evil: 1 } }, t: 'config' }),
    );
    expect(r.ok && Object.keys(r.state.config)).not.toContain('evil');
    expect(r.ok && Object.keys(r.state.config.params)).not.toContain('evil');
  });

  it('stops inflating a small link whose state is huge, quickly and with a short message', () => {
    // A 3 KB link that inflates to a 1 MB kernel name (LZ codes repeat ever longer entries; the issue's
    // 8 KB link made 10 MB).
    const hash = raw({ c: { ...config, kernel: 'k'.repeat(1_000_000) } });
    expect(hash.length).toBeLessThan(4_000);
    const t0 = performance.now();
    const r = decode(hash);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(!r.ok && r.error).toMatch(/too large \(its state inflates past 210,000 characters\)/);
  });

  it('caps every name a link carries and quotes untrusted values clipped, as text', () => {
    const long = { ...tensor, tensor: 't'.repeat(LIMITS.nameChars + 1) };
    const r1 = decode(raw({ c: { ...config, data: { source: 'tensor', seed: 0, tensor: long } } }));
    expect(!r1.ok && r1.error).toMatch(/data.tensor.tensor is longer than 256 characters \(257\)/);
    const r2 = decode(raw({ c: { ...config, kernel: `<b>${'x'.repeat(150_000)}\u001b[31m` } }));
    expect(!r2.ok && r2.error.length).toBeLessThan(400);
    expect(!r2.ok && r2.error).toMatch(/more characters\)\)\.$/);
    expect(clipText('ab\u001b[1mc', 10)).toBe('ab\ufffd[1mc');
    expect(decode('#v=' + '9'.repeat(5000) + '&s=x').ok).toBe(false);
    expect(JSON.stringify(decode('#v=' + '9'.repeat(5000) + '&s=x')).length).toBeLessThan(300);
  });
});
