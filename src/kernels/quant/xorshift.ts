// The seed's xorshift64 (s ^= s<<13; s ^= s>>7; s ^= s<<17), on two u32 halves so the generators stay
// fast at prefill sizes. A BigInt twin in the tests pins it bit for bit.

const TWO32 = 4294967296;

/** A xorshift64 stream; `next()` advances and exposes the new state as (hi, lo). */
export class XorShift64 {
  hi: number;
  lo: number;

  constructor(seed: bigint) {
    this.hi = Number((seed >> 32n) & 0xffffffffn);
    this.lo = Number(seed & 0xffffffffn);
  }

  /** Advance once (the seed's `next()`). */
  next(): this {
    let hi = this.hi;
    let lo = this.lo;
    // s ^= s << 13
    hi = (hi ^ ((hi << 13) | (lo >>> 19))) >>> 0;
    lo = (lo ^ (lo << 13)) >>> 0;
    // s ^= s >> 7
    lo = (lo ^ ((lo >>> 7) | (hi << 25))) >>> 0;
    hi = (hi ^ (hi >>> 7)) >>> 0;
    // s ^= s << 17
    hi = (hi ^ ((hi << 17) | (lo >>> 15))) >>> 0;
    lo = (lo ^ (lo << 17)) >>> 0;
    this.hi = hi;
    this.lo = lo;
    return this;
  }

  /** `next() % d` for d < 2^26, exact: (hi*2^32 + lo) mod d without BigInt. */
  nextMod(d: number): number {
    this.next();
    return ((this.hi % d) * (TWO32 % d) + (this.lo % d)) % d;
  }

  /** `next() as u32`. */
  nextU32(): number {
    return this.next().lo;
  }

  /** The state as a BigInt (for tests and permalinks). */
  state(): bigint {
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }
}
