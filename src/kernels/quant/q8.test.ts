import { describe, expect, it } from 'vitest';
import { f16BitsToF32, f32ToF16Bits } from './f16';
import {
  dequantizeQ8_0,
  packI8,
  Q8_0_BLOCK_BYTES,
  Q8_1_BLOCK_BYTES,
  quantizeQ8_0,
  quantizeQ8_1,
  splitQ8_0,
} from './q8';
import { XorShift64 } from './xorshift';

const f = Math.fround;

function uniform(len: number, seed: bigint, amp: number): Float32Array {
  const r = new XorShift64(seed);
  return new Float32Array(len).map(() => f((r.nextMod(1 << 24) / (1 << 23) - 1) * amp));
}

describe('Q8_0 (block_q8_0: f16 d, 32 x int8)', () => {
  it('quantizes the ramp j-16 by hand: d = 16/127 -> f16 0x3008 little-endian, q = round((j-16)*127/16)', () => {
    const x = new Float32Array(32).map((_, j) => j - 16);
    const { bytes, split } = quantizeQ8_0(x, 1, 32);
    expect(bytes.length).toBe(34);
    expect(Q8_0_BLOCK_BYTES).toBe(34);
    // d = 0.1259842... = 2^-3 * 1.00787 -> mantissa round(8.06) = 8 -> 0x3008.
    expect([bytes[0], bytes[1]]).toEqual([0x08, 0x30]);
    expect(split.d[0]).toBe(f16BitsToF32(0x3008));
    const id = f(1 / f(16 / 127)); // 7.9375
    const want = [...x].map((v) => Math.sign(v) * Math.round(Math.abs(f(v * id))));
    expect(want[0]).toBe(-127);
    expect(want[31]).toBe(119);
    expect([...split.q]).toEqual(want);
    expect([...new Int8Array(bytes.buffer, 2, 32)]).toEqual(want);
  });

  it('rounds half away from zero like roundf (d = 1 when amax = 127)', () => {
    const x = new Float32Array(32);
    x.set([127, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -126.5]);
    const { split } = quantizeQ8_0(x, 1, 32);
    expect(split.d[0]).toBe(1);
    expect([...split.q.subarray(0, 9)]).toEqual([127, 1, 2, 3, -1, -2, -3, 0, -127]);
  });

  it('an all-zero block has d = 0 and zero codes (no division by zero)', () => {
    const { bytes, split } = quantizeQ8_0(new Float32Array(64), 1, 64);
    expect([...bytes].every((b) => b === 0)).toBe(true);
    expect([...split.d]).toEqual([0, 0]);
  });

  it('splitQ8_0 re-reads the bytes it wrote; dequantization error <= d/2 plus the f16 rounding of d', () => {
    const [rows, k] = [8, 256];
    const x = uniform(rows * k, 0x51ed270b27cc3a4bn, 3);
    const { bytes, split } = quantizeQ8_0(x, rows, k);
    expect(bytes.length).toBe((rows * k * 34) / 32);
    const back = splitQ8_0(bytes, rows, k);
    expect([...back.q]).toEqual([...split.q]);
    expect([...back.d]).toEqual([...split.d]);
    const deq = dequantizeQ8_0(back, rows, k);
    let worst = 0;
    for (let i = 0; i < x.length; i++) {
      const b = Math.floor(i / 32);
      let amax = 0;
      for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[b * 32 + j]!));
      const d = amax / 127;
      const bound = d / 2 + 127 * Math.abs(back.d[b]! - d) + 1e-7;
      worst = Math.max(worst, Math.abs(deq[i]! - x[i]!) / bound);
    }
    expect(worst).toBeLessThanOrEqual(1);
  });

  it('rejects a byte length that does not match the shape, and a k that is not a 32-multiple', () => {
    expect(() => splitQ8_0(new Uint8Array(33), 1, 32)).toThrow(/needs 34 bytes, got 33/);
    expect(() => quantizeQ8_0(new Float32Array(48), 1, 48)).toThrow(/multiple of the 32-wide/);
  });
});

describe('q8_1 (block_q8_1: f16 d, f16 s = d * sum(q), 32 x int8)', () => {
  it('lays out 36 bytes: d at 0, s at 2 (both little-endian f16), codes at 4; s uses the f32 d', () => {
    const x = uniform(64, 0x2545f4914f6cdd1dn, 1.7);
    const { bytes, split } = quantizeQ8_1(x, 1, 64);
    expect(Q8_1_BLOCK_BYTES).toBe(36);
    expect(bytes.length).toBe(72);
    const dv = new DataView(bytes.buffer);
    for (let b = 0; b < 2; b++) {
      let amax = 0;
      for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[b * 32 + j]!));
      const d = f(amax / 127);
      const q = new Int8Array(bytes.buffer, b * 36 + 4, 32);
      const sum = q.reduce((a, v) => a + v, 0);
      expect(dv.getUint16(b * 36, true)).toBe(f32ToF16Bits(d));
      expect(dv.getUint16(b * 36 + 2, true)).toBe(f32ToF16Bits(f(sum * d)));
      expect([...q]).toEqual([...split.q.subarray(b * 32, b * 32 + 32)]);
      expect(split.s[b]).toBe(f16BitsToF32(f32ToF16Bits(f(sum * d))));
      expect(Math.abs(split.s[b]! - split.d[b]! * sum)).toBeLessThan(
        Math.abs(split.d[b]! * sum) * 2e-3 + 1e-6,
      );
    }
  });
});

describe('packI8', () => {
  it("packs int8 4 to a little-endian u32 (byte 0 in the low bits, two's complement)", () => {
    expect([...packI8(new Int8Array([1, -1, 2, -2, 0, 0, 0, -128]))]).toEqual([0xfe02ff01, 0x80000000]);
    expect(() => packI8(new Int8Array(3))).toThrow(/multiple of 4/);
  });
});

describe('q8_1 matches ggml where the float path overflows', () => {
  it('a block whose largest |x| is 1e-37: 1/d is inf, and s is d * sum of the STORED int8s (0), not NaN', () => {
    // d = 1e-37/127 is an f32 subnormal, id = 1/d overflows to inf, 0 * inf = NaN: ggml sums the int8s it
    // stored, so s = 0 (bytes 00 00 00 00 from quantize_row_q8_1_ref); summing the unrounded values gave NaN.
    const x = new Float32Array(32);
    x[0] = 1e-37;
    const { bytes, split } = quantizeQ8_1(x, 1, 32);
    expect([...bytes.subarray(0, 4)]).toEqual([0, 0, 0, 0]);
    expect(split.s[0]).toBe(0);
    expect(split.d[0]).toBe(0);
  });
});
