// The GA's random stream: the seed's xorshift64, its state derived from the user's seed through
// splitmix64 so small or similar seeds (1, 2, 3) still start far apart, and 0 is not the fixed point.
import { XorShift64 } from '../quant/xorshift';

const M64 = (1n << 64n) - 1n;

/** splitmix64 finalizer of `seed` (never 0: xorshift64's only fixed point). */
export function mixSeed(seed: number | bigint): bigint {
  let z = (BigInt.asUintN(64, BigInt(seed)) + 0x9e3779b97f4a7c15n) & M64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
  z ^= z >> 31n;
  return z === 0n ? 0x9e3779b97f4a7c15n : z;
}

/**
 * A seeded, deterministic random source for the tuner.
 * @example const r = new TuneRng(7); r.int(10); r.chance(0.5);
 */
export class TuneRng {
  private readonly x: XorShift64;

  constructor(seed: number | bigint) {
    if (typeof seed === 'number' && !Number.isSafeInteger(seed))
      throw new RangeError(`seed ${seed} is not an integer`);
    this.x = new XorShift64(mixSeed(seed));
  }

  /** Uniform integer in [0, n), n >= 1. */
  int(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n >= 1 << 26) throw new RangeError(`int(${n}): need 1 <= n < 2^26`);
    return this.x.nextMod(n);
  }

  /** Uniform in [0, 1) with 24-bit resolution. */
  float(): number {
    return this.x.nextMod(1 << 24) / (1 << 24);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.float() < p;
  }
}
