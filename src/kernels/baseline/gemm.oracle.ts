// Oracles of the f32 baseline GEMM: the full product (small problems) and sampled elements (prefill
// shapes, where the full CPU product is minutes of work). Accumulated in f64: the GPU's f32 FMA order
// differs from any CPU order, so the gate is scale-relative, not bit-exact.
import { gemmF64, rowDotF64 } from '../oracle';

/**
 * out[i, j] = sum_l x[i, l] * w[j, l] for the whole m x n output, f64 accumulation rounded to f32.
 * @example gemmF32Ref(new Float32Array([1, 2]), new Float32Array([3, 4]), 1, 1, 2) // Float32Array [11]
 */
export function gemmF32Ref(x: Float32Array, w: Float32Array, m: number, n: number, k: number): Float32Array {
  return Float32Array.from(gemmF64(x, w, m, n, k));
}

/**
 * The same product at sampled flat indices only (index = row * n + col).
 * @example gemmF32RefAt(x, w, 4096, 4096, [0, 4095, 4096 * 4096 - 1])
 */
export function gemmF32RefAt(
  x: Float32Array,
  w: Float32Array,
  n: number,
  k: number,
  indices: ArrayLike<number>,
): Float32Array {
  return Float32Array.from(indices, (v) => rowDotF64(x, w, Math.floor(v / n), v % n, k));
}
