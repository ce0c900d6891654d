// The seed's deterministic test-data generators, reproduced bit for bit (same seeds, same draw order,
// same f32 arithmetic). `seed` overrides the seed's constant so the playground can offer other streams.
import { XorShift64 } from './xorshift';
import { assertSuperBlocks, QK_K, type Q4KWeight } from './q4k';

export const GEN_MMQ_SEED = 0xd1b54a32d192ed03n;
export const GEN_MMQ_Q4K_SEED = 0x243f6a8885a308d3n;
export const GEN_F16_ACT_SEED = 0x123456789abcdef0n;

/** Q8_0 x q8_1 MMQ inputs in the kernels' split layout. */
export interface MmqQ8Data {
  xq: Int8Array; // [m, k]
  xs: Float32Array; // [m, k/32]
  wq: Int8Array; // [n, k]
  wd: Float32Array; // [n, k/32]
}

/** Q4_K x q8_1 MMQ inputs: activation (xq, xs, xsum) and packed Q4_K weight. */
export interface MmqQ4kData {
  xq: Int8Array; // [m, k]
  xs: Float32Array; // [m, k/32]
  xsum: Float32Array; // [m, k/32] = xs * sum(xq) over the block
  w: Q4KWeight;
}

function int8Stream(r: XorShift64, len: number): Int8Array {
  const out = new Int8Array(len);
  for (let i = 0; i < len; i++) out[i] = r.nextMod(255) - 127;
  return out;
}

function scaleStream(r: XorShift64, len: number, div: number, add: number): Float32Array {
  const out = new Float32Array(len);
  const addF = Math.fround(add);
  for (let i = 0; i < len; i++) out[i] = Math.fround(Math.fround(r.nextMod(1000) / div) + addF);
  return out;
}

/**
 * gen_mmq: random int8 X/W in [-127,127] and positive f32 block scales.
 * @example const d = genMmq(16, 16, 64); d.xq.length === 1024
 */
export function genMmq(m: number, n: number, k: number, seed: bigint = GEN_MMQ_SEED): MmqQ8Data {
  const kb = k / 32;
  const r = new XorShift64(seed);
  const xq = int8Stream(r, m * k);
  const wq = int8Stream(r, n * k);
  const xs = scaleStream(r, m * kb, 50000, 0.002);
  const wd = scaleStream(r, n * kb, 50000, 0.002);
  return { xq, xs, wq, wd };
}

/** xsum = xs * sum(xq) per 32-block, the dequantized block sum (f32 as in the seed). */
export function blockSums(xq: Int8Array, xs: Float32Array, m: number, k: number): Float32Array {
  const kb = k / 32;
  const xsum = new Float32Array(m * kb);
  for (let i = 0; i < m; i++) {
    for (let b = 0; b < kb; b++) {
      let acc = 0;
      for (let l = 0; l < 32; l++) acc += xq[i * k + b * 32 + l]!;
      xsum[i * kb + b] = Math.fround(xs[i * kb + b]! * acc);
    }
  }
  return xsum;
}

/**
 * gen_mmq_q4k: random activation, random nibbles and 6-bit scales, small positive d/dmin.
 * @example const d = genMmqQ4k(32, 64, 256); d.w.qs.length === 64 * 32
 */
export function genMmqQ4k(m: number, n: number, k: number, seed: bigint = GEN_MMQ_Q4K_SEED): MmqQ4kData {
  assertSuperBlocks(k);
  const kb = k / 32;
  const nsb = k / QK_K;
  const r = new XorShift64(seed);
  const xq = int8Stream(r, m * k);
  const qs = new Uint32Array(n * nsb * 32);
  for (let i = 0; i < qs.length; i++) qs[i] = r.nextU32();
  const scales = new Uint32Array(n * nsb * 3);
  for (let i = 0; i < scales.length; i++) scales[i] = r.nextU32();
  const d = scaleStream(r, n * nsb, 20000, 0.002);
  const dmin = scaleStream(r, n * nsb, 40000, 0);
  const xs = scaleStream(r, m * kb, 50000, 0.002);
  return { xq, xs, xsum: blockSums(xq, xs, m, k), w: { qs, scales, d, dmin } };
}

/** The seed's f32 activation in [-1, 1) for the f16 coopmat twin: (s % 2000)/1000 - 1. */
export function genF16Activation(rows: number, k: number, seed: bigint = GEN_F16_ACT_SEED): Float32Array {
  const r = new XorShift64(seed);
  const x = new Float32Array(rows * k);
  for (let i = 0; i < x.length; i++) x[i] = Math.fround(Math.fround(r.nextMod(2000) / 1000) - 1);
  return x;
}

/** The seed's second cold weight bank: wqs[i] ^ 0x9E3779B1 * (i+1) (wrapping u32). */
export function coldBank(qs: Uint32Array, salt = 0x9e3779b1): Uint32Array {
  const out = new Uint32Array(qs.length);
  for (let i = 0; i < qs.length; i++) out[i] = (qs[i]! ^ Math.imul(salt, i + 1)) >>> 0;
  return out;
}
