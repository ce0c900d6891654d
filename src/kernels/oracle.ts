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

/**
 * Rows `rows` of a [*, cols] row-major output (all of it when `rows` is undefined): an oracle's sampled
 * rows, for a gate that checks a sample of a large output.
 * @example selectRows(full, [0, 17], n) // [2, n]
 */
export function selectRows<T extends Float32Array | Int32Array>(
  full: T,
  rows: readonly number[] | undefined,
  cols: number,
): T {
  if (!rows) return full;
  const out = new (full.constructor as new (n: number) => T)(rows.length * cols);
  rows.forEach((r, i) => out.set(full.subarray(r * cols, (r + 1) * cols), i * cols));
  return out;
}

const f = Math.fround;

/**
 * Plain f32 GEMM out[i,j] = sum_l x[i,l] * w[r,l] (W stored row-major [rows, k]), accumulated in f32 in
 * ascending l, with weight row r = j, or r = rowExpert[i]*n + j for an expert-indexed problem.
 * The full-precision side of the error split: run it on dequantized (or unquantized) operands.
 * @example gemmF32(dequantizeActivation(xq, xs, m, k), dequantizeQ4K(w, n, k), m, n, k)
 */
export function gemmF32(
  x: Float32Array,
  w: Float32Array,
  m: number,
  n: number,
  k: number,
  rowExpert?: ArrayLike<number>,
): Float32Array {
  const out = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    const wbase = rowExpert ? rowExpert[i]! * n : 0;
    for (let j = 0; j < n; j++) {
      let acc = 0;
      const xo = i * k;
      const wo = (wbase + j) * k;
      for (let l = 0; l < k; l++) acc = f(acc + f(x[xo + l]! * w[wo + l]!));
      out[i * n + j] = acc;
    }
  }
  return out;
}
