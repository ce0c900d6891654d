// CPU oracles and test data for the two int8 matrix-core hello kernels (the seed's STAGE 1a / 1b):
//   hello-wmma: out[16,16] = A[16,16] @ B[16,16]^T   (wmma_hello_i8 / hello_i8_ref)
//   hello-mma:  out[16,8]  = A[16,32] @ B[32,8]      (mma_hello_i8  / mma_hello_ref), B row-major [K, N]
// int8 products summed in i32 are exact, so every arm must match these bit for bit.
import type { DataSource } from '../family';
import { GEN_MMQ_SEED, XorShift64 } from '../quant';

export type HelloKernelId = 'hello-wmma' | 'hello-mma';

export interface HelloShape {
  m: number;
  n: number;
  k: number;
  /** 'nk': B is [N, K] row-major (out = A @ B^T); 'kn': B is [K, N] row-major (out = A @ B). */
  bLayout: 'nk' | 'kn';
}

/** The fixed tile of each hello kernel. */
export const HELLO_SHAPES: Readonly<Record<HelloKernelId, HelloShape>> = {
  'hello-wmma': { m: 16, n: 16, k: 16, bLayout: 'nk' },
  'hello-mma': { m: 16, n: 8, k: 32, bLayout: 'kn' },
};

/**
 * out = A @ B^T over int8, exact i32 (hello_i8_ref): A [16,16], B [16,16] with B row n = B[n, k].
 * @example helloI8Ref(a, b)[0] === sum_k a[k] * b[k]
 */
export function helloI8Ref(a: Int8Array, b: Int8Array): Int32Array {
  const out = new Int32Array(256);
  for (let m = 0; m < 16; m++) {
    for (let n = 0; n < 16; n++) {
      let acc = 0;
      for (let k = 0; k < 16; k++) acc += a[m * 16 + k]! * b[n * 16 + k]!;
      out[m * 16 + n] = acc;
    }
  }
  return out;
}

/**
 * out[16,8] = A[16,32] @ B[32,8] over int8, exact i32 (mma_hello_ref); B is row-major [K, N].
 * @example mmaHelloRef(a, b)[0] === sum_l a[l] * b[l * 8]
 */
export function mmaHelloRef(a: Int8Array, b: Int8Array): Int32Array {
  const [m, n, k] = [16, 8, 32];
  const out = new Int32Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let l = 0; l < k; l++) acc += a[i * k + l]! * b[l * n + j]!;
      out[i * n + j] = acc;
    }
  }
  return out;
}

/** The oracle of a hello kernel. */
export function helloRef(kernel: HelloKernelId, a: Int8Array, b: Int8Array): Int32Array {
  return kernel === 'hello-wmma' ? helloI8Ref(a, b) : mmaHelloRef(a, b);
}

const M64 = (1n << 64n) - 1n;

/** splitmix64's finalizer: spreads a small user seed over all 64 bits (and never yields a zero state). */
function mixSeed(x: bigint): bigint {
  let z = (x + 0x9e3779b97f4a7c15n) & M64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
  z ^= z >> 31n;
  return z === 0n ? 1n : z;
}

/**
 * The xorshift state a data source starts from (shared by the families here). 'seed' with dataSeed 0
 * is the seed's own generator constant `seedConstant`; 'seed' with another dataSeed uses that number as
 * the state; 'random' mixes dataSeed first, so every dataSeed (0 included) gives a well-spread stream
 * unrelated to the seed's.
 * @example dataStreamSeed('seed', 0, GEN_MMQ_SEED) === GEN_MMQ_SEED
 */
export function dataStreamSeed(source: DataSource, dataSeed: number, seedConstant: bigint): bigint {
  if (!Number.isSafeInteger(dataSeed) || dataSeed < 0)
    throw new RangeError(`dataSeed ${dataSeed} must be a non-negative integer`);
  if (source === 'seed') return dataSeed === 0 ? seedConstant : BigInt(dataSeed);
  return mixSeed(BigInt(dataSeed));
}

/**
 * Deterministic int8 inputs in [-127, 127] for a hello kernel: ((next() % 255) - 127), A then B,
 * the draw the seed's gen_mmq uses.
 * @example const { a, b } = helloData('hello-mma', 'seed', 0); // a: 16*32, b: 32*8
 */
export function helloData(
  kernel: HelloKernelId,
  source: DataSource,
  dataSeed: number,
): { a: Int8Array; b: Int8Array } {
  const { m, n, k } = HELLO_SHAPES[kernel];
  const r = new XorShift64(dataStreamSeed(source, dataSeed, GEN_MMQ_SEED));
  const draw = (len: number) => {
    const out = new Int8Array(len);
    for (let i = 0; i < len; i++) out[i] = r.nextMod(255) - 127;
    return out;
  };
  const a = draw(m * k);
  const b = draw(n * k);
  return { a, b };
}
