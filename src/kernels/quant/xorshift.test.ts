import { describe, expect, it } from 'vitest';
import { XorShift64 } from './xorshift';

const M64 = (1n << 64n) - 1n;

/** The seed's `next()` literally, on a u64 BigInt. */
function bigNext(s: bigint): bigint {
  s ^= (s << 13n) & M64;
  s ^= s >> 7n;
  s ^= (s << 17n) & M64;
  return s;
}

describe('XorShift64 vs a BigInt twin of the seed', () => {
  for (const seed of [0xd1b54a32d192ed03n, 0x243f6a8885a308d3n, 0x123456789abcdef0n, 1n, M64]) {
    it(`matches 10k draws of state, % 255, % 1000, % 2000 and as-u32 from 0x${seed.toString(16)}`, () => {
      const r = new XorShift64(seed);
      let s = seed;
      const bad: string[] = [];
      for (let i = 0; i < 10_000; i++) {
        s = bigNext(s);
        // Each draw goes through a different accessor so every path is pinned to the same stream.
        let got: number | bigint;
        let want: number | bigint;
        switch (i % 5) {
          case 0:
            got = r.next().state();
            want = s;
            break;
          case 1:
            got = r.nextMod(255);
            want = Number(s % 255n);
            break;
          case 2:
            got = r.nextMod(1000);
            want = Number(s % 1000n);
            break;
          case 3:
            got = r.nextMod(2000);
            want = Number(s % 2000n);
            break;
          default:
            got = r.nextU32();
            want = Number(s & 0xffffffffn);
        }
        if (got !== want && bad.length < 4) bad.push(`draw ${i}: ${got} != ${want}`);
      }
      expect(bad).toEqual([]);
      expect(r.state()).toBe(s);
    });
  }

  it('nextMod is exact for a modulus near its 2^26 limit', () => {
    const r = new XorShift64(0x0123456789abcdefn);
    let s = 0x0123456789abcdefn;
    const d = (1 << 26) - 5;
    for (let i = 0; i < 1000; i++) {
      s = bigNext(s);
      expect(r.nextMod(d)).toBe(Number(s % BigInt(d)));
    }
  });
});
