// CPU oracles and test data for the two int8 matrix-core hello kernels (the seed's STAGE 1a / 1b):
//   hello-wmma: out[16,16] = A[16,16] @ B[16,16]^T   (wmma_hello_i8 / hello_i8_ref)
//   hello-mma:  out[16,8]  = A[16,32] @ B[32,8]      (mma_hello_i8  / mma_hello_ref), B row-major [K, N]
// int8 products summed in i32 are exact, so every arm must match these bit for bit.
import type { DataSource } from '../family';
import { fastInt8 } from '../quant/synthetic';
import { HELLO_SHAPES, type HelloKernelId } from './catalog';
import { gemmF64 } from '../oracle';
import { dataStreamSeed, GEN_MMQ_SEED, int8Stream, XorShift64 } from '../quant';

/**
 * out = A @ B^T over int8, exact i32 (hello_i8_ref): A [16,16], B [16,16] with B row n = B[n, k].
 * @example helloI8Ref(a, b)[0] === sum_k a[k] * b[k]
 */
export function helloI8Ref(a: Int8Array, b: Int8Array): Int32Array {
  return Int32Array.from(gemmF64(a, b, 16, 16, 16, 'nk'));
}

/**
 * out[16,8] = A[16,32] @ B[32,8] over int8, exact i32 (mma_hello_ref); B is row-major [K, N].
 * @example mmaHelloRef(a, b)[0] === sum_l a[l] * b[l * 8]
 */
export function mmaHelloRef(a: Int8Array, b: Int8Array): Int32Array {
  return Int32Array.from(gemmF64(a, b, 16, 8, 32, 'kn'));
}

/** The oracle of a hello kernel. */
export function helloRef(kernel: HelloKernelId, a: Int8Array, b: Int8Array): Int32Array {
  return kernel === 'hello-wmma' ? helloI8Ref(a, b) : mmaHelloRef(a, b);
}

/**
 * Deterministic int8 inputs in [-127, 127] for a hello kernel: ((next() % 255) - 127), A then B,
 * the draw the reference's gen_mmq uses.
 * @example const { a, b } = helloData('hello-mma', 'reference', 0); // a: 16*32, b: 32*8
 */
export function helloData(
  kernel: HelloKernelId,
  source: DataSource,
  dataSeed: number,
): { a: Int8Array; b: Int8Array } {
  const { m, n, k } = HELLO_SHAPES[kernel];
  if (source === 'synthetic')
    return { a: fastInt8(m * k, 2 * dataSeed + 1), b: fastInt8(n * k, 2 * dataSeed + 2) };
  const r = new XorShift64(dataStreamSeed(source, dataSeed, GEN_MMQ_SEED));
  const a = int8Stream(r, m * k);
  const b = int8Stream(r, n * k);
  return { a, b };
}
