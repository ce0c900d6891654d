// ggml's nearest_int, bit for bit: `val = fval + 12582912.f; memcpy(&i, &val, 4); return (i & 0x007fffff) -
// 0x00400000;`. Inside |fval| <= 4194303 that is round-half-to-even of an f32; outside it (inf, huge values)
// ggml returns whatever the mantissa bits say, and its quantizers clamp THAT, so we must return it too.
const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);

/**
 * The int ggml's nearest_int returns for `fval` (taken as an f32).
 * @example nearestInt(2.5) === 2; nearestInt(3.5) === 4; nearestInt(-0.5) === 0; nearestInt(Infinity) === -4194304
 */
export function nearestInt(fval: number): number {
  // The f64 sum of two f32 values, stored as f32, is the f32 sum (double rounding is harmless here).
  f32[0] = Math.fround(fval) + 12582912;
  return (i32[0]! & 0x007fffff) - 0x00400000;
}
