import { describe, expect, it } from 'vitest';
import { nearestInt } from './nearestInt';

describe("nearestInt (ggml's nearest_int: fval + 1.5*2^23 in f32, mantissa bits minus 2^22)", () => {
  it('rounds half to even inside ggml range |x| <= 4194303', () => {
    expect([2.5, 3.5, -0.5, -1.5, 0.49999997, 7.5, -7.5].map(nearestInt)).toEqual([2, 4, 0, -2, 0, 8, -8]);
    expect(nearestInt(4194303)).toBe(4194303);
    expect(nearestInt(-4194303)).toBe(-4194303);
    expect(Object.is(nearestInt(-0.25), 0)).toBe(true);
  });

  it('outside that range returns what the bit trick returns, not the rounded value', () => {
    // 1e7 + 12582912 = 22582912 (exact in f32, exponent 24): mantissa (22582912 - 2^24) / 2 = 2902848.
    expect(nearestInt(1e7)).toBe(2902848 - 4194304);
    // 2^22 + 1.5*2^23 = 2^24: mantissa 0.
    expect(nearestInt(4194304)).toBe(-4194304);
    // +-inf: mantissa 0, so -2^22 (ggml's Q4_K clamp then makes it 0, not 15); a quiet NaN: mantissa 2^22.
    expect(nearestInt(Infinity)).toBe(-4194304);
    expect(nearestInt(-Infinity)).toBe(-4194304);
    expect(nearestInt(NaN)).toBe(0);
  });
});
