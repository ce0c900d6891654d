// The bounded LZ decoder reads what lz-string writes, and stops a link that inflates past its cap.
import { compressToEncodedURIComponent, decompressFromEncodedURIComponent } from 'lz-string';
import { describe, expect, it } from 'vitest';
import { inflateUriComponent } from './boundedLz';

describe('inflateUriComponent', () => {
  it('decodes what lz-string encodes (ASCII, repetitive, any UTF-16, empty)', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    const alphabets = ['ab', '@compute fn main() { let x = 1u; }\n', ''];
    for (let t = 0; t < 300; t++) {
      const alphabet = alphabets[t % 3] ?? '';
      let s = '';
      for (let i = rand(1500); i > 0; i--)
        s += alphabet ? alphabet.charAt(rand(alphabet.length)) : String.fromCharCode(rand(0xd000));
      expect(inflateUriComponent(compressToEncodedURIComponent(s), 1e6)).toEqual({ ok: true, text: s });
    }
  });

  it('stops at the cap instead of inflating a bomb', () => {
    const bomb = compressToEncodedURIComponent('a'.repeat(1_000_000));
    expect(inflateUriComponent(bomb, 999_999)).toEqual({ ok: false, reason: 'too-long' });
    expect(inflateUriComponent(bomb, 1_000_000)).toEqual({ ok: true, text: 'a'.repeat(1_000_000) });
  });

  it('calls garbage corrupt (lz-string returns null or an empty string for it)', () => {
    for (const bad of ['!!!', 'AAAA']) {
      expect(decompressFromEncodedURIComponent(bad) || 'nothing').toBe('nothing');
      expect(inflateUriComponent(bad, 100)).toEqual({ ok: false, reason: 'corrupt' });
    }
  });
});
