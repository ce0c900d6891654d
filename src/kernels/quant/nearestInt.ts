// ggml's nearest_int: add 1.5*2^23 in f32 and read the mantissa -- round-half-to-even of an f32.
/** @example nearestInt(2.5) === 2; nearestInt(3.5) === 4; nearestInt(-0.5) === 0 */
export function nearestInt(fval: number): number {
  const v = Math.fround(Math.fround(fval) + 12582912);
  return v - 12582912;
}
