import { describe, expect, it } from 'vitest';
import { f16BitsToF32, f32ToF16Bits, roundToF16 } from './f16';
import { XorShift64 } from './xorshift';

// An independent f16 reference: the 31744 non-negative finite f16 values, sorted, and a nearest-value
// search in exact double arithmetic. Every f32 and every midpoint of two f16 values is exact in a double,
// and x - lo / hi - x are exact (Sterbenz), so ties are detected exactly and broken to the even code.
const POS_VALUES = (() => {
  const v = new Float64Array(0x7c00);
  for (let b = 0; b < 0x7c00; b++) {
    const e = b >> 10;
    const m = b & 0x3ff;
    v[b] = e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15);
  }
  return v;
})();
const OVERFLOW = 65520; // 65504 + half an ulp (16): from here on round-to-nearest-even gives Inf

function refF16Bits(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= OVERFLOW) return sign | 0x7c00;
  let lo = 0;
  let hi = 0x7bff;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (POS_VALUES[mid]! <= a) lo = mid;
    else hi = mid - 1;
  }
  if (lo === 0x7bff) return sign | 0x7bff; // a in [65504, 65520)
  const dLo = a - POS_VALUES[lo]!;
  const dHi = POS_VALUES[lo + 1]! - a;
  const b = dLo < dHi ? lo : dHi < dLo ? lo + 1 : lo % 2 === 0 ? lo : lo + 1;
  return sign | b;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function fromBits(bits: number): number {
  u32[0] = bits >>> 0;
  return f32[0]!;
}
function bitsOf(x: number): number {
  f32[0] = x;
  return u32[0]!;
}

describe('f16: f32ToF16Bits / f16BitsToF32', () => {
  it('round-trips all 65536 f16 bit patterns (a NaN decodes to JS NaN and re-encodes as a NaN)', () => {
    let bad = 0;
    for (let b = 0; b < 0x10000; b++) {
      const got = f32ToF16Bits(f16BitsToF32(b));
      const isNaN = (b & 0x7c00) === 0x7c00 && (b & 0x3ff) !== 0;
      // A JS number carries no NaN payload or sign, so only "still a NaN" is checkable there.
      const ok = isNaN ? (got & 0x7c00) === 0x7c00 && (got & 0x3ff) !== 0 : got === b;
      if (!ok) bad++;
    }
    expect(bad).toBe(0);
  });

  it('decodes exactly: subnormal, normal boundary, max, inf, -0', () => {
    expect(f16BitsToF32(0x0001)).toBe(2 ** -24);
    expect(f16BitsToF32(0x03ff)).toBe(1023 * 2 ** -24);
    expect(f16BitsToF32(0x0400)).toBe(2 ** -14);
    expect(f16BitsToF32(0x3c00)).toBe(1);
    expect(f16BitsToF32(0x7bff)).toBe(65504);
    expect(f16BitsToF32(0x7c00)).toBe(Infinity);
    expect(f16BitsToF32(0xfc00)).toBe(-Infinity);
    expect(Object.is(f16BitsToF32(0x8000), -0)).toBe(true);
    expect(f16BitsToF32(0x7e00)).toBeNaN();
  });

  it('rounds to nearest even at every halfway point between adjacent f16 values (and just off it)', () => {
    let bad = 0;
    for (let b = 0; b < 0x7bff; b++) {
      const lo = POS_VALUES[b]!;
      const hi = POS_VALUES[b + 1]!;
      const mid = (lo + hi) / 2; // exact in f32: needs 12 significand bits
      expect(Math.fround(mid)).toBe(mid);
      const even = b % 2 === 0 ? b : b + 1;
      if (f32ToF16Bits(mid) !== even) bad++;
      if (f32ToF16Bits(-mid) !== (0x8000 | even)) bad++;
      // One f32 ulp either side of the midpoint decides the direction.
      const mb = bitsOf(mid);
      if (f32ToF16Bits(fromBits(mb - 1)) !== b) bad++;
      if (f32ToF16Bits(fromBits(mb + 1)) !== b + 1) bad++;
    }
    expect(bad).toBe(0);
  });

  it('handles subnormals, the 2^-14 boundary and rounding up into the normal range', () => {
    expect(f32ToF16Bits(2 ** -24)).toBe(0x0001);
    expect(f32ToF16Bits(2 ** -25)).toBe(0x0000); // exact tie between 0 and 2^-24 -> even (0)
    expect(f32ToF16Bits(Math.fround(2 ** -25 * 1.0000001))).toBe(0x0001);
    expect(f32ToF16Bits(2 ** -26)).toBe(0x0000);
    expect(f32ToF16Bits(3 * 2 ** -25)).toBe(0x0002); // tie between 1 and 2 -> even (2)
    expect(f32ToF16Bits(5 * 2 ** -25)).toBe(0x0002); // tie between 2 and 3 -> even (2)
    expect(f32ToF16Bits(2 ** -14)).toBe(0x0400);
    expect(f32ToF16Bits(1023 * 2 ** -24)).toBe(0x03ff);
    expect(f32ToF16Bits(1023.5 * 2 ** -24)).toBe(0x0400); // tie, rounds up into the smallest normal
    expect(f32ToF16Bits(1023.75 * 2 ** -24)).toBe(0x0400);
    expect(f32ToF16Bits(1023.25 * 2 ** -24)).toBe(0x03ff);
    expect(f32ToF16Bits(-(2 ** -24))).toBe(0x8001);
    expect(f32ToF16Bits(1e-10)).toBe(0x0000);
    expect(f32ToF16Bits(-1e-10)).toBe(0x8000); // underflow keeps the sign
  });

  it('overflows to Inf at 65520, keeps 65504 up to it, and handles Inf/NaN/-0', () => {
    expect(f32ToF16Bits(65504)).toBe(0x7bff);
    expect(f32ToF16Bits(Math.fround(65519.996))).toBe(0x7bff);
    expect(f32ToF16Bits(65520)).toBe(0x7c00);
    expect(f32ToF16Bits(-65520)).toBe(0xfc00);
    expect(f32ToF16Bits(1e9)).toBe(0x7c00);
    expect(f32ToF16Bits(Infinity)).toBe(0x7c00);
    expect(f32ToF16Bits(-Infinity)).toBe(0xfc00);
    expect(f32ToF16Bits(NaN) & 0x7e00).toBe(0x7e00);
    // NaN payloads are dropped as ggml_compute_fp32_to_fp16 does: 0x7e00 with the sign.
    const f32OfBits = (bits: number) => {
      const dv = new DataView(new ArrayBuffer(4));
      dv.setUint32(0, bits, true);
      return dv.getFloat32(0, true);
    };
    expect(f32ToF16Bits(f32OfBits(0x7fa00000))).toBe(0x7e00);
    expect(f32ToF16Bits(f32OfBits(0xffa00000))).toBe(0xfe00);
    expect(f32ToF16Bits(f32OfBits(0x7f800001))).toBe(0x7e00);
    expect(f32ToF16Bits(-0)).toBe(0x8000);
    expect(f32ToF16Bits(0)).toBe(0x0000);
    expect(f32ToF16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie -> even
    expect(f32ToF16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie -> even (up)
    expect(roundToF16(0.1)).toBe(0.0999755859375);
  });

  it('matches the exact reference on 300k random f32 bit patterns (all exponents and the f16 range)', () => {
    const r = new XorShift64(0x9e3779b97f4a7c15n);
    let bad = 0;
    let firstBad = -1;
    for (let i = 0; i < 300_000; i++) {
      let bits = r.nextU32();
      // Two thirds of the draws: force the exponent into [2^-26, 2^17) where f16 rounding is interesting.
      if (i % 3 !== 0) bits = (bits & 0x807fffff) | ((101 + (r.nextU32() % 43)) << 23);
      const x = fromBits(bits);
      const got = f32ToF16Bits(x);
      const want = refF16Bits(x);
      const ok = Number.isNaN(x)
        ? (got & 0x7c00) === 0x7c00 && (got & 0x3ff) !== 0 && got >>> 15 === bits >>> 31
        : got === want;
      if (!ok) {
        bad++;
        if (firstBad < 0) firstBad = bits;
      }
    }
    expect({ bad, firstBad: firstBad.toString(16) }).toEqual({ bad: 0, firstBad: '-1' });
  });
});
