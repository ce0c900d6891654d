// The seed's deterministic test-data generators, reproduced bit for bit (same seeds, same draw order,
// same f32 arithmetic). `seed` overrides the seed's constant so the playground can offer other streams.
import type { DataSource } from '../family';
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

/** `len` int8 values in [-127, 127] drawn as (next() % 255) - 127: the seed's gen_mmq draw. */
export function int8Stream(r: XorShift64, len: number): Int8Array {
  const out = new Int8Array(len);
  for (let i = 0; i < len; i++) out[i] = r.nextMod(255) - 127;
  return out;
}

/**
 * `len` N(0, sigma^2) values, Box-Muller on two 24-bit uniforms per pair, each rounded to f32.
 * @example quantizeQ4K(gaussianStream(new XorShift64(seed), n * k), n, k) // a realistic Q4_K weight
 */
export function gaussianStream(r: XorShift64, len: number, sigma = 1): Float32Array {
  const out = new Float32Array(len);
  for (let i = 0; i < len; i += 2) {
    const u1 = (r.nextMod(1 << 24) + 1) / (1 << 24);
    const u2 = r.nextMod(1 << 24) / (1 << 24);
    const rad = Math.sqrt(-2 * Math.log(u1)) * sigma;
    out[i] = Math.fround(rad * Math.cos(2 * Math.PI * u2));
    if (i + 1 < len) out[i + 1] = Math.fround(rad * Math.sin(2 * Math.PI * u2));
  }
  return out;
}

/**
 * The activation a real tensor multiplies: `rows` x `k` values N(0, 1), or the same with outlier
 * channels (every 64th column, and at least one, scaled by 20: the few large-magnitude features LLM
 * activations carry, which stress a per-32-block activation scale).
 * @example const x = modelActivation(32, 4096, 'outliers', 7);
 */
export function modelActivation(
  rows: number,
  k: number,
  kind: 'normal' | 'outliers',
  seed: number,
): Float32Array {
  const x = gaussianStream(new XorShift64(mixSeed(BigInt(seed) ^ 0x5a17n)), rows * k);
  if (kind === 'outliers') {
    const channels = new Set([k > 1 ? 1 : 0]);
    for (let c = 37 % 64; c < k; c += 64) channels.add(c);
    for (let r = 0; r < rows; r++) for (const c of channels) x[r * k + c] = Math.fround(x[r * k + c]! * 20);
  }
  return x;
}

function scaleStream(r: XorShift64, len: number, div: number, add: number): Float32Array {
  const out = new Float32Array(len);
  const addF = Math.fround(add);
  for (let i = 0; i < len; i++) out[i] = Math.fround(Math.fround(r.nextMod(1000) / div) + addF);
  return out;
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

/** dataSeed 0 = the seed's constant `fallback`; anything else = BigInt(dataSeed). */
export function streamSeed(dataSeed: number, fallback: bigint): bigint {
  return dataSeed === 0 ? fallback : BigInt(dataSeed);
}

/**
 * The xorshift state a data source starts from (shared by the families). 'reference' with dataSeed 0
 * is the reference generator's own constant `seedConstant`; 'reference' with another dataSeed uses that number as
 * the state; 'random' mixes dataSeed first, so every dataSeed (0 included) gives a well-spread stream
 * unrelated to the seed's.
 * @example dataStreamSeed('reference', 0, GEN_MMQ_SEED) === GEN_MMQ_SEED
 */
export function dataStreamSeed(source: DataSource, dataSeed: number, seedConstant: bigint): bigint {
  if (!Number.isSafeInteger(dataSeed) || dataSeed < 0)
    throw new RangeError(`dataSeed ${dataSeed} must be a non-negative integer`);
  if (source === 'reference') return streamSeed(dataSeed, seedConstant);
  return mixSeed(BigInt(dataSeed));
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
