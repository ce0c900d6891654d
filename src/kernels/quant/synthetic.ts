// The 'synthetic' data source: fast deterministic operands for prefill-size problems. The reference's
// generators draw one xorshift64 value per int8 through a 64-bit modulo, which costs seconds at
// 2048x11008; here one xorshift32 word gives four int8 codes, so a [11008 x 4096] weight takes tens of
// milliseconds. Same value ranges as the reference (codes in [-127, 127], small positive f32 scales),
// never zeros; there is no f32 tensor behind them (the error split's full-precision side is the
// dequantized activation).
import { blockSums, type MmqQ4kData, type MmqQ8Data } from './gen';

/** `len` pseudo-random u32 words from a xorshift32 stream (seed must be non-zero after mixing). */
export function fastWords(len: number, seed: number): Uint32Array {
  const out = new Uint32Array(len);
  let s = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) >>> 0 || 0x6d2b79f5;
  for (let i = 0; i < len; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = s >>> 0;
  }
  return out;
}

/** int8 codes in [-127, 127]: byte % 255 - 127 (never the asymmetric -128 a q8 quantizer cannot emit). */
export function fastInt8(len: number, seed: number): Int8Array {
  const bytes = new Uint8Array(fastWords(Math.ceil(len / 4), seed).buffer, 0, len);
  const out = new Int8Array(len);
  for (let i = 0; i < len; i++) out[i] = (bytes[i]! % 255) - 127;
  return out;
}

/** Positive f32 scales lo + u * span, u uniform in [0, 1). */
export function fastScales(len: number, seed: number, lo: number, span: number): Float32Array {
  const w = fastWords(len, seed);
  const out = new Float32Array(len);
  for (let i = 0; i < len; i++) out[i] = lo + (w[i]! / 4294967296) * span;
  return out;
}

/**
 * Q8_0 x q8_1 inputs [m, k] x [n, k] (the reference's gen_mmq ranges: scales in [0.002, 0.022)).
 * @example const d = fastQ8Data(2048, 4096, 4096, 1); d.wq.length === 4096 * 4096
 */
export function fastQ8Data(m: number, n: number, k: number, seed: number): MmqQ8Data {
  return {
    xq: fastInt8(m * k, seed * 4 + 1),
    xs: fastScales((m * k) / 32, seed * 4 + 2, 0.002, 0.02),
    wq: fastInt8(n * k, seed * 4 + 3),
    wd: fastScales((n * k) / 32, seed * 4 + 4, 0.002, 0.02),
  };
}

/**
 * Q4_K x q8_1 inputs: random nibbles and packed 6-bit scales/mins, d in [0.002, 0.052), dmin in
 * [0, 0.025) (the reference's gen_mmq_q4k ranges), xsum = xs * sum(xq) per 32-block.
 * @example const d = fastQ4kData(32, 4096, 4096, 1); d.w.qs.length === 4096 * 16 * 32
 */
export function fastQ4kData(m: number, n: number, k: number, seed: number): MmqQ4kData {
  const nsb = (n * k) / 256;
  const xq = fastInt8(m * k, seed * 8 + 1);
  const xs = fastScales((m * k) / 32, seed * 8 + 2, 0.002, 0.02);
  return {
    xq,
    xs,
    xsum: blockSums(xq, xs, m, k),
    w: {
      qs: fastWords(nsb * 32, seed * 8 + 3),
      scales: fastWords(nsb * 3, seed * 8 + 4),
      d: fastScales(nsb, seed * 8 + 5, 0.002, 0.05),
      dmin: fastScales(nsb, seed * 8 + 6, 0, 0.025),
    },
  };
}

/**
 * An f32 activation [rows, k] uniform in [-1, 1) (the coopmat twin's input; it rounds it to f16).
 * @example fastActivation(32, 4096, 1).length === 32 * 4096
 */
export function fastActivation(rows: number, k: number, seed: number): Float32Array {
  const w = fastWords(rows * k, seed * 8 + 7);
  const out = new Float32Array(rows * k);
  for (let i = 0; i < out.length; i++) out[i] = w[i]! / 2147483648 - 1;
  return out;
}
