// Q8_0 (weight) and q8_1 (activation) blocks, byte-identical to ggml:
//   block_q8_0 { ggml_half d; int8_t qs[32]; }                 34 bytes
//   block_q8_1 { ggml_half d; ggml_half s; int8_t qs[32]; }    36 bytes, s = d * sum(qs)
// The kernels read a split (structure-of-arrays) layout: int8 codes packed 4 to a u32 and f32 scales.
import { f16BitsToF32, f32ToF16Bits } from './f16';

export const QK8 = 32;
export const Q8_0_BLOCK_BYTES = 34;
export const Q8_1_BLOCK_BYTES = 36;

/** Split layout the MMQ kernels consume for a Q8_0 weight [rows, k]. */
export interface Q8Weight {
  /** int8 codes [rows, k], row-major (packed 4 per u32 on upload). */
  q: Int8Array;
  /** f32 block scale [rows, k/32] (the f16 d decoded). */
  d: Float32Array;
}

/** Split layout of a q8_1 activation [rows, k]. */
export interface Q8_1Activation {
  q: Int8Array;
  /** d per 32-block, f32. */
  d: Float32Array;
  /** s = d * sum(q) per 32-block: the dequantized block sum the affine (Q4_K) epilogue subtracts. */
  s: Float32Array;
}

function assertBlocks(k: number): void {
  if (!Number.isInteger(k) || k <= 0 || k % QK8 !== 0) {
    throw new RangeError(`k = ${k} is not a positive multiple of the 32-wide q8 block`);
  }
}

/**
 * f16 bits of x86's default NaN (0xffc00000, what an invalid operation such as 0 * inf yields on the
 * x86-64 that ggml's reference outputs come from) through GGML_FP32_TO_FP16, which keeps the sign.
 */
export const X86_DEFAULT_NAN_F16 = 0xfe00;
/** f16 bits of a positive quiet NaN (what fabsf(NaN) and a NaN operand carried through keep). */
const POSITIVE_NAN_F16 = 0x7e00;

/**
 * amax/127 symmetric block quantization shared by Q8_0 and q8_1 (quantize_row_q8_0_ref), with the C
 * semantics spelled out where a NaN or an inf makes JS differ:
 * - `amax = MAX(amax, fabsf(v))` is `a > b ? a : b`: a NaN element sets amax to NaN and the next element
 *   replaces it (NaN > x is false), so only a NaN in the last position leaves amax NaN. Math.max would keep it.
 * - that NaN came from fabsf, so it is positive: d's f16 is 0x7e00 whatever sign V8 gives a NaN.
 * - `id = d ? 1/d : 0` tests d != 0, which a NaN passes (JS's `d ? :` does not).
 * - `qs = roundf(x*id)` stored to int8: a NaN or inf converts through cvttss2si to 0x80000000, low byte 0;
 *   a finite value keeps its low byte, as Int8Array's modular store does.
 */
function quantizeBlock(
  x: Float32Array,
  off: number,
  q: Int8Array,
): { d: number; dBits: number; sum: number } {
  let amax = 0;
  for (let j = 0; j < QK8; j++) {
    const ax = Math.abs(x[off + j]!);
    amax = amax > ax ? amax : ax;
  }
  const d = Math.fround(amax / 127);
  const dBits = Number.isNaN(d) ? POSITIVE_NAN_F16 : f32ToF16Bits(d);
  const id = d !== 0 ? Math.fround(1 / d) : 0;
  let sum = 0;
  for (let j = 0; j < QK8; j++) {
    const x0 = Math.fround(x[off + j]! * id);
    // roundf: half away from zero; NaN and +-inf store as 0 (see above), which Int8Array also does.
    q[off + j] = Number.isFinite(x0) ? Math.sign(x0) * Math.round(Math.abs(x0)) : 0;
    // Sum what was stored, as ggml does (`sum += y[i].qs[j]`).
    sum += q[off + j]!;
  }
  return { d, dBits, sum };
}

/**
 * f16 bits of q8_1's `s = sum * d` (an int times a float) with x86's NaN rules: a NaN d is carried
 * through (positive, see quantizeBlock); 0 * inf is an invalid operation and gives the default NaN.
 */
function sumTimesDBits(sum: number, d: number): number {
  if (Number.isNaN(d)) return POSITIVE_NAN_F16;
  const s = Math.fround(sum * d);
  return Number.isNaN(s) ? X86_DEFAULT_NAN_F16 : f32ToF16Bits(s);
}

/**
 * Quantize f32 rows to ggml Q8_0 blocks. Returns the raw ggml bytes and the kernels' split layout.
 * @example const { bytes, split } = quantizeQ8_0(weights, n, k); // bytes.length === n*k/32*34
 */
export function quantizeQ8_0(
  x: Float32Array,
  rows: number,
  k: number,
): { bytes: Uint8Array; split: Q8Weight } {
  assertBlocks(k);
  const nb = (rows * k) / QK8;
  const bytes = new Uint8Array(nb * Q8_0_BLOCK_BYTES);
  const dv = new DataView(bytes.buffer);
  const q = new Int8Array(rows * k);
  const d = new Float32Array(nb);
  for (let b = 0; b < nb; b++) {
    const r = quantizeBlock(x, b * QK8, q);
    const h = r.dBits;
    dv.setUint16(b * Q8_0_BLOCK_BYTES, h, true);
    for (let j = 0; j < QK8; j++) dv.setInt8(b * Q8_0_BLOCK_BYTES + 2 + j, q[b * QK8 + j]!);
    d[b] = f16BitsToF32(h);
  }
  return { bytes, split: { q, d } };
}

/**
 * Quantize an f32 activation to ggml q8_1 (the llama MMQ activation format): d and s = d*sum(q) as f16.
 * @example const { split } = quantizeQ8_1(x, m, k); // split.s[b] ~= split.d[b] * sum(split.q[32b..32b+31])
 */
export function quantizeQ8_1(
  x: Float32Array,
  rows: number,
  k: number,
): { bytes: Uint8Array; split: Q8_1Activation } {
  assertBlocks(k);
  const nb = (rows * k) / QK8;
  const bytes = new Uint8Array(nb * Q8_1_BLOCK_BYTES);
  const dv = new DataView(bytes.buffer);
  const q = new Int8Array(rows * k);
  const d = new Float32Array(nb);
  const s = new Float32Array(nb);
  for (let b = 0; b < nb; b++) {
    const r = quantizeBlock(x, b * QK8, q);
    const hd = r.dBits;
    const hs = sumTimesDBits(r.sum, r.d);
    dv.setUint16(b * Q8_1_BLOCK_BYTES, hd, true);
    dv.setUint16(b * Q8_1_BLOCK_BYTES + 2, hs, true);
    for (let j = 0; j < QK8; j++) dv.setInt8(b * Q8_1_BLOCK_BYTES + 4 + j, q[b * QK8 + j]!);
    d[b] = f16BitsToF32(hd);
    s[b] = f16BitsToF32(hs);
  }
  return { bytes, split: { q, d, s } };
}

/** Parse ggml Q8_0 bytes (e.g. a GGUF tensor) into the split layout. */
export function splitQ8_0(bytes: Uint8Array, rows: number, k: number): Q8Weight {
  assertBlocks(k);
  const nb = (rows * k) / QK8;
  if (bytes.length !== nb * Q8_0_BLOCK_BYTES) {
    throw new RangeError(`Q8_0 [${rows}x${k}] needs ${nb * Q8_0_BLOCK_BYTES} bytes, got ${bytes.length}`);
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const q = new Int8Array(rows * k);
  const d = new Float32Array(nb);
  for (let b = 0; b < nb; b++) {
    d[b] = f16BitsToF32(dv.getUint16(b * Q8_0_BLOCK_BYTES, true));
    for (let j = 0; j < QK8; j++) q[b * QK8 + j] = dv.getInt8(b * Q8_0_BLOCK_BYTES + 2 + j);
  }
  return { q, d };
}

/** Dequantize Q8_0 split weights to f32 (w = d * q). */
export function dequantizeQ8_0(w: Q8Weight, rows: number, k: number): Float32Array {
  const out = new Float32Array(rows * k);
  for (let i = 0; i < rows * k; i++) out[i] = Math.fround(w.d[Math.floor(i / QK8)]! * w.q[i]!);
  return out;
}

/** Pack int8 values 4 to a little-endian u32 word: the byte layout the WGSL reads through array<u32>. */
export function packI8(q: Int8Array): Uint32Array {
  if (q.length % 4 !== 0) throw new RangeError('int8 length must be a multiple of 4 to pack into u32');
  return new Uint32Array(q.buffer.slice(q.byteOffset, q.byteOffset + q.byteLength));
}
