// IEEE-754 binary16 <-> binary32, bit-exact with F16C / ggml's GGML_FP32_TO_FP16:
// round-to-nearest-even, subnormals kept, overflow to +-Inf, and every NaN to ggml's one quiet NaN
// (0x7e00 with its sign: ggml_compute_fp32_to_fp16 drops the payload).

const f32buf = new Float32Array(1);
const u32buf = new Uint32Array(f32buf.buffer);

/**
 * Round an f32 (or any JS number, first rounded to f32) to the nearest f16 and return its 16 bits.
 * @example f32ToF16Bits(1.0) === 0x3c00; f32ToF16Bits(65520) === 0x7c00 // rounds up to Inf
 */
export function f32ToF16Bits(value: number): number {
  f32buf[0] = value;
  const x = u32buf[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | (mant ? 0x7e00 : 0x7c00); // NaN (payload dropped, as ggml) / Inf
  const e = exp - 127 + 15; // re-biased exponent
  if (e >= 0x1f) return sign | 0x7c00; // overflow
  if (e <= 0) {
    // Subnormal f16 (or zero): shift the full 24-bit significand right, round to nearest even.
    if (e < -10) return sign; // below half of the smallest subnormal: rounds to zero
    const sig = mant | 0x800000;
    const shift = 14 - e; // 14..24
    const half = 1 << (shift - 1);
    const rem = sig & ((1 << shift) - 1);
    let r = sig >>> shift;
    if (rem > half || (rem === half && (r & 1) === 1)) r += 1;
    return sign | r; // a carry into bit 10 correctly yields the smallest normal
  }
  let r = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (r & 1) === 1)) r += 1; // may carry into the exponent: still right
  return sign | r;
}

/**
 * Decode 16 f16 bits to the exact f32 value.
 * @example f16BitsToF32(0x0001) === 2 ** -24
 */
export function f16BitsToF32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** Round a number through f16 and back: what an f16 operand holds. */
export function roundToF16(value: number): number {
  return f16BitsToF32(f32ToF16Bits(value));
}
