// The reference GEMM loops the oracles share: products summed in f64 in ascending k, so int8 operands
// give the exact integer result (their sums stay far below 2^53) and f32 operands a result whose only
// rounding is the final store. B is [N, K] (out = A @ B^T) or [K, N] (out = A @ B).

/**
 * f64 dot of row `i` of `a` [*, k] and row `j` of `b` [*, k], both k-contiguous.
 * @example rowDotF64(new Float32Array([1, 2]), new Float32Array([3, 4]), 0, 0, 2) // 11
 */
export function rowDotF64(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  i: number,
  j: number,
  k: number,
): number {
  let s = 0;
  for (let l = 0; l < k; l++) s += a[i * k + l]! * b[j * k + l]!;
  return s;
}

/**
 * out[i*n + j] = sum_l a[i, l] * B[l, j] in f64 for an m x n output, A [m, k] row-major; `bLayout`
 * 'nk' reads B^T stored [n, k] (out = A @ B^T), 'kn' reads B stored [k, n] row-major (out = A @ B).
 * @example Int32Array.from(gemmF64(a, b, 16, 8, 32, 'kn')) // mma_hello_ref
 */
export function gemmF64(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  m: number,
  n: number,
  k: number,
  bLayout: 'nk' | 'kn' = 'nk',
): Float64Array {
  const [colStride, kStride] = bLayout === 'nk' ? [k, 1] : [1, n];
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let l = 0; l < k; l++) s += a[i * k + l]! * b[j * colStride + l * kStride]!;
      out[i * n + j] = s;
    }
  }
  return out;
}
