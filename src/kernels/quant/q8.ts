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

/** amax/127 symmetric block quantization shared by Q8_0 and q8_1 (quantize_row_q8_0_ref). */
function quantizeBlock(x: Float32Array, off: number, q: Int8Array): { d: number; sum: number } {
  let amax = 0;
  for (let j = 0; j < QK8; j++) amax = Math.max(amax, Math.abs(x[off + j]!));
  const d = Math.fround(amax / 127);
  const id = d ? Math.fround(1 / d) : 0;
  let sum = 0;
  for (let j = 0; j < QK8; j++) {
    const v = Math.round(Math.abs(Math.fround(x[off + j]! * id))) * Math.sign(x[off + j]! * id); // roundf: half away from 0
    q[off + j] = v;
    // Sum what was stored, as ggml does: when 1/d overflows to inf, v is inf or NaN but the int8 is 0.
    sum += q[off + j]!;
  }
  return { d, sum };
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
    const h = f32ToF16Bits(r.d);
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
    const hd = f32ToF16Bits(r.d);
    const hs = f32ToF16Bits(Math.fround(r.sum * r.d));
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
