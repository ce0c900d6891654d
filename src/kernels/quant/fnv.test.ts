import { describe, expect, it } from 'vitest';
import { fnv1a64 } from './fnv';

/** The definition, in BigInt: h = (h ^ byte) * prime mod 2^64. */
function fnvBig(bytes: Uint8Array): string {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

describe('fnv1a64', () => {
  it('gives the published FNV-1a 64 test vectors', () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(fnv1a64(enc(''))).toBe('cbf29ce484222325');
    expect(fnv1a64(enc('a'))).toBe('af63dc4c8601ec8c');
    expect(fnv1a64(enc('foobar'))).toBe('85944171f73967e8');
  });

  it('equals the BigInt definition on 300 bytes of every value', () => {
    const b = new Uint8Array(300).map((_, i) => (i * 97 + 13) & 255);
    for (const n of [1, 2, 7, 64, 255, 300]) expect(fnv1a64(b.subarray(0, n))).toBe(fnvBig(b.subarray(0, n)));
  });
});
