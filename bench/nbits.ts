// Inputs for ONNX Runtime's MatMulNBits (4-bit, block 32) and the CPU reference the ORT rows are checked
// against: the operator's own dequantization, (q - zero_point) * scale with zero point 8 when none is given,
// nibble 2j of a byte in its low half (onnxruntime docs/ContribOperators.md, com.microsoft.MatMulNBits).
//
// The activations are chosen so that every quantizer ORT may apply to them is exact: each is an integer in
// [-127, 127] times 2^-7, and every 32-wide block along K holds a +-127. Symmetric int8 quantization of a block
// of 32, 64, ... (or of a whole row) then finds the scale 2^-7 and codes the values without rounding, so the
// accuracy_level 4 (DP4A) path computes the same sum as the f64 reference up to f32 rounding; and the values
// are exact in f16, so the f16 path differs from it only by its own accumulation and output rounding.
import { f16BitsToF32, f32ToF16Bits, roundToF16 } from '../src/kernels/quant/f16';
import { fastWords } from '../src/kernels/quant/synthetic';
import { nbitsShapes, type MatMulNBitsSpec } from './onnx';

/** One weight bank: B's packed nibbles, the scales (f16-exact values), and the packed zero points. */
export interface NBitsWeights {
  /** [N, K/block, block/2]: byte j of a block holds elements 2j (low nibble) and 2j + 1 (high nibble). */
  b: Uint8Array;
  /** [N * K/block], every value exact in f16 (so the f16 and f32 models read the same numbers). */
  scales: Float32Array;
  /** [N * ceil(blocks/2)] packed 4-bit zero points, or undefined (zero point 8). */
  zeroPoints?: Uint8Array;
}

/** The activations' quantum: every activation is an integer times this (see the header). */
export const ACT_STEP = 2 ** -7;

/**
 * Activations [m, k]: integers in [-127, 127] times ACT_STEP, each 32-wide block holding a +-127 at a
 * pseudo-random position (deterministic in `seed`). Exact in f16; exactly re-quantized by a symmetric
 * int8 quantizer over any multiple of 32 elements of a row.
 * @example const a = nbitsActivations(32, 256, 1); a.length === 32 * 256
 */
export function nbitsActivations(m: number, k: number, seed: number): Float32Array {
  if (k % 32) throw new RangeError(`K=${k} is not a multiple of 32`);
  const w = fastWords(m * k, seed);
  const a = new Float32Array(m * k);
  for (let i = 0; i < a.length; i++) a[i] = ((w[i]! % 255) - 127) * ACT_STEP;
  for (let blk = 0; blk < a.length / 32; blk++) {
    const pick = w[blk * 32]! >>> 8;
    a[blk * 32 + (pick % 32)] = (pick & 64 ? 127 : -127) * ACT_STEP;
  }
  return a;
}

/**
 * A weight bank for `spec`: random nibbles, scales in [0.002, 0.022) rounded to f16, and random zero points
 * when `spec.zeroPoints` (deterministic in `seed`).
 * @example const w = nbitsWeights({ k: 256, n: 64, float: 'f16' }, 1); w.b.length === 64 * 256 / 2
 */
export function nbitsWeights(spec: MatMulNBitsSpec, seed: number): NBitsWeights {
  const sh = nbitsShapes(spec);
  const bytes = sh.b.reduce((p, d) => p * d, 1);
  const b = new Uint8Array(fastWords(Math.ceil(bytes / 4), seed).buffer, 0, bytes);
  const sw = fastWords(sh.scales[0]!, seed + 1);
  const scales = Float32Array.from(sw, (v) => roundToF16(0.002 + (v / 4294967296) * 0.02));
  if (!spec.zeroPoints) return { b, scales };
  const zn = sh.zeroPoints[0]!;
  const zeroPoints = new Uint8Array(fastWords(Math.ceil(zn / 4), seed + 2).buffer, 0, zn);
  return { b, scales, zeroPoints };
}

/** The 4-bit code of weight (row, col): nibble `col` of row `row` in B's packed layout. */
function codeAt(b: Uint8Array, k: number, row: number, col: number): number {
  const byte = b[row * (k / 2) + (col >> 1)]!;
  return col & 1 ? byte >> 4 : byte & 15;
}

/**
 * Dequantized weight W[row, col] = (q - zero point) * scale, exactly as MatMulNBits defines it (no rounding:
 * the scales are f16-exact and the codes small integers).
 * @example nbitsWeightAt(spec, w, 0, 0)
 */
export function nbitsWeightAt(spec: MatMulNBitsSpec, w: NBitsWeights, row: number, col: number): number {
  const block = spec.blockSize ?? 32;
  const blocks = spec.k / block;
  const blk = Math.floor(col / block);
  let zp = 8;
  if (w.zeroPoints) {
    const byte = w.zeroPoints[row * Math.ceil(blocks / 2) + (blk >> 1)]!;
    zp = blk & 1 ? byte >> 4 : byte & 15;
  }
  return (codeAt(w.b, spec.k, row, col) - zp) * w.scales[row * blocks + blk]!;
}

/**
 * Y[i, j] = sum_l A[i, l] * W[j, l] in f64: the reference an ORT row is checked against at sampled (i, j).
 * @example nbitsRefAt(spec, a, w, 0, 0)
 */
export function nbitsRefAt(
  spec: MatMulNBitsSpec,
  a: Float32Array,
  w: NBitsWeights,
  i: number,
  j: number,
): number {
  let s = 0;
  for (let l = 0; l < spec.k; l++) s += a[i * spec.k + l]! * nbitsWeightAt(spec, w, j, l);
  return s;
}

/**
 * A Float32Array as the 16-bit words of an ORT 'float16' tensor (Node 20 has no Float16Array).
 * @example toF16Words(Float32Array.of(1)) // Uint16Array [0x3c00]
 */
export function toF16Words(x: Float32Array): Uint16Array {
  return Uint16Array.from(x, (v) => f32ToF16Bits(v));
}

/**
 * The numbers of a CPU tensor's data: f16 words decoded, f32 as they are.
 * @example fromF16Words(Uint16Array.of(0x3c00)) // Float32Array [1]
 */
export function fromF16Words(words: Uint16Array): Float32Array {
  return Float32Array.from(words, (v) => f16BitsToF32(v));
}
