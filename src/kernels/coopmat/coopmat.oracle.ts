// CPU oracles and data for the f16-dequant coopmat Q4_K GEMM (the seed's mmq_q4k_coopmat_tile):
//   out[m, n] = sum_k x[m, k] * w[n, k],   w = d*sc*q - dmin*m  (Q4_K decoded in f32)
// mmqQ4kF16Ref is the seed's full-precision f32 reference (mmq_q4k_f16_ref), which the kernel matches
// to an f16 tolerance (rel_to_max < 5e-2). mmqQ4kF16RoundedRef emulates the kernel's normative arm
// exactly: both operands rounded to f16, each 32-block summed in f32 in K order, then added to the
// f32 accumulator -- so the scalar arm can be gated far tighter than the seed's tolerance.
import type { DataSource } from '../family';
import { fastActivation, fastQ4kData } from '../quant/synthetic';
import {
  dataStreamSeed,
  f16BitsToF32,
  f32ToF16Bits,
  gaussianStream,
  GEN_F16_ACT_SEED,
  GEN_MMQ_Q4K_SEED,
  genF16Activation,
  genMmqQ4k,
  q4kMin,
  q4kScale,
  quantizeQ4K,
  QK_K,
  XorShift64,
  type Q4KWeight,
} from '../quant';

const f = Math.fround;

/**
 * How the kernel's weight decode d*sc*q - dmin*m rounds: 'separate' rounds the product to f32 and then
 * the difference (what WGSL's + and * say); 'fused' rounds once, as when a compiler contracts the two
 * into an fma (NVIDIA's does). They agree whenever d*sc*q is exact in f32 -- always for real Q4_K, whose
 * d is an f16 (11 bits x 6-bit sc x 4-bit q) -- and differ by an ulp for the seed generator's f32 d.
 */
export type DecodeRounding = 'separate' | 'fused';

const f32Bits = new Float32Array(1);
const u32Bits = new Uint32Array(f32Bits.buffer);

/** The f32 next to `r` (an f32) in the direction of `dir` (+1 up, -1 down). */
function f32Step(r: number, dir: number): number {
  if (r === 0) return dir > 0 ? 2 ** -149 : -(2 ** -149);
  f32Bits[0] = r;
  u32Bits[0] = u32Bits[0]! + (r > 0 === dir > 0 ? 1 : -1);
  return f32Bits[0]!;
}

/**
 * fma in f32: a*b + c rounded once to f32 (a, b, c are f32). a*b is exact in a double; the sum's
 * rounding error comes from Knuth's two-sum, and settles the one case double rounding gets wrong --
 * the double sum landing exactly halfway between two f32 values.
 * @example fmaF32(1 + 2 ** -23, 1 - 2 ** -23, -1) === -(2 ** -46)
 */
export function fmaF32(a: number, b: number, c: number): number {
  const p = a * b;
  const s = p + c;
  const bb = s - p;
  const err = p - (s - bb) + (c - bb);
  const r = f(s);
  if (err === 0 || r === s) return r;
  const other = f32Step(r, s > r ? 1 : -1); // the f32 on the other side of s
  if (Math.abs(s - r) !== Math.abs(other - s)) return r; // not a tie: the double's side decides
  return err > 0 === other > r ? other : r; // a tie in the double: the error decides
}

/** Every f16 bit pattern's value: rounding through f16 becomes a table look-up in the oracles' inner loops. */
let f16Values: Float32Array | undefined;
/** x rounded to f16 (round-to-nearest-even, subnormals), as an f32. */
function toF16(x: number): number {
  f16Values ??= Float32Array.from({ length: 65536 }, (_, b) => f16BitsToF32(b));
  return f16Values[f32ToF16Bits(x)]!;
}

/**
 * Row j of a Q4_K weight [n, k] decoded as the kernel stages it, into `out` (k values): w = d*sc*q - dmin*m
 * with ds = f32(d*sc) and ms = f32(dmin*m), then f32(f32(ds*q) - ms) ('separate') or fma(ds, q, -ms)
 * ('fused'); rounded to f16 too when `f16` (what the GEMM multiplies).
 */
function decodeQ4kRow(
  w: Q4KWeight,
  j: number,
  k: number,
  decode: DecodeRounding,
  f16: boolean,
  out: Float32Array,
) {
  const nsb = k / QK_K;
  for (let b = 0; b < k / 32; b++) {
    const is = b % 8;
    const blk = j * nsb + Math.floor(b / 8);
    const dd = f(w.d[blk]! * q4kScale(w.scales, blk * 3, is));
    const mm = f(w.dmin[blk]! * q4kMin(w.scales, blk * 3, is));
    // Sub-block is = 2g + s: nibble s of qs bytes 32g .. 32g + 31 (q4kNibble's map), a word at a time.
    const base = blk * 32 + (is >> 1) * 8;
    const shift = 4 * (is & 1);
    for (let qi = 0; qi < 32; qi++) {
      const q = (w.qs[base + (qi >> 2)]! >>> (8 * (qi & 3) + shift)) & 15;
      const v = decode === 'fused' ? fmaF32(dd, q, -mm) : f(f(dd * q) - mm);
      out[b * 32 + qi] = f16 ? toF16(v) : v;
    }
  }
}

/**
 * The Q4_K weight [n, k] decoded as the kernel stages it (decodeQ4kRow, before any f16 rounding).
 * @example dequantQ4kRows(w, 64, 256).length === 64 * 256
 */
export function dequantQ4kRows(
  w: Q4KWeight,
  n: number,
  k: number,
  decode: DecodeRounding = 'separate',
): Float32Array {
  const out = new Float32Array(n * k);
  for (let j = 0; j < n; j++) decodeQ4kRow(w, j, k, decode, false, out.subarray(j * k, (j + 1) * k));
  return out;
}

function checkShape(x: Float32Array, w: Q4KWeight, m: number, n: number, k: number): void {
  if (!Number.isInteger(k) || k <= 0 || k % QK_K !== 0)
    throw new RangeError(`k = ${k} is not a positive multiple of 256`);
  if (x.length !== m * k)
    throw new RangeError(`activation has ${x.length} values, [${m} x ${k}] needs ${m * k}`);
  if (w.d.length !== (n * k) / QK_K)
    throw new RangeError(`weight has ${w.d.length} super-blocks, [${n} x ${k}] needs ${(n * k) / QK_K}`);
}

/**
 * The seed's mmq_q4k_f16_ref: out[m,n] = sum_k x*(d*sc*q - dmin*m), one f32 accumulator in K order.
 * @example const want = mmqQ4kF16Ref(x, w, 16, 16, 256);
 */
export function mmqQ4kF16Ref(x: Float32Array, w: Q4KWeight, m: number, n: number, k: number): Float32Array {
  checkShape(x, w, m, n, k);
  const wf = dequantQ4kRows(w, n, k);
  const out = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let l = 0; l < k; l++) acc = f(acc + f(x[i * k + l]! * wf[j * k + l]!));
      out[i * n + j] = acc;
    }
  }
  return out;
}

/**
 * Exact emulation of the kernel's normative (scalar) arm: x and w rounded to f16, each 32-block's
 * products summed in f32 in K order (a product of two f16 values is exact in f32), then added to the
 * f32 accumulator block by block. `decode` picks how the weight decode rounds (see DecodeRounding).
 * With split-K, each of `ksplit` K parts has its own accumulator, and the parts are added in order.
 * @example relToMax(gpu, mmqQ4kF16RoundedRef(x, w, m, n, k)) // 0 for the scalar arm on SwiftShader
 */
export function mmqQ4kF16RoundedRef(
  x: Float32Array,
  w: Q4KWeight,
  m: number,
  n: number,
  k: number,
  decode: DecodeRounding = 'separate',
  ksplit = 1,
): Float32Array {
  checkShape(x, w, m, n, k);
  const xh = x.map(toF16);
  // One weight row at a time (decoded, rounded to f16) against every activation row: memory O(k) and
  // work O(n k (m + 1)), so a gate's few sampled rows cost a decode of the weight, not more.
  const wh = new Float32Array(k);
  const out = new Float32Array(m * n);
  const part = k / ksplit;
  for (let j = 0; j < n; j++) {
    decodeQ4kRow(w, j, k, decode, true, wh);
    for (let i = 0; i < m; i++) {
      let total = 0;
      for (let z = 0; z < ksplit; z++) {
        let acc = 0;
        for (let b = z * part; b < (z + 1) * part; b += 32) {
          let s = 0;
          for (let l = b; l < b + 32; l++) s = f(s + xh[i * k + l]! * wh[l]!);
          acc = f(acc + s);
        }
        total = z === 0 ? acc : f(total + acc);
      }
      out[i * n + j] = total;
    }
  }
  return out;
}

export interface CoopmatData {
  /** Activation [m, k], f32 (the kernel rounds it to f16). */
  x: Float32Array;
  /** Q4_K weight [n, k] in the split layout. */
  w: Q4KWeight;
}

/**
 * Inputs for the coopmat twin. 'reference': the reference module's own test data -- weights from gen_mmq_q4k(m, n, k)
 * (random nibbles and 6-bit scales; the draw order makes them depend on m, as in the seed) and the
 * activation (s % 2000)/1000 - 1 from 0x123456789ABCDEF0. 'random': a realistic weight -- N(0, 1)
 * values quantized by ggml's Q4_K quantizer -- and a uniform [-1, 1) activation from another stream.
 * 'synthetic': random nibbles and scales and a uniform activation, fast at prefill shapes.
 * @example const { x, w } = coopmatData(16, 16, 256, 'reference', 0);
 */
export function coopmatData(
  m: number,
  n: number,
  k: number,
  source: DataSource,
  dataSeed: number,
): CoopmatData {
  if (source === 'reference') {
    const wSeed = dataStreamSeed('reference', dataSeed, GEN_MMQ_Q4K_SEED);
    // A user seed drives both generators; the activation's stream is offset so the two never coincide.
    const xSeed = dataSeed === 0 ? GEN_F16_ACT_SEED : wSeed ^ GEN_F16_ACT_SEED;
    return { x: genF16Activation(m, k, xSeed), w: genMmqQ4k(m, n, k, wSeed).w };
  }
  if (source === 'synthetic')
    return { x: fastActivation(m, k, dataSeed), w: fastQ4kData(1, n, k, 2 * dataSeed + 1).w };
  const r = new XorShift64(dataStreamSeed('random', dataSeed, 0n));
  const g = gaussianStream(r, n * k);
  const x = genF16Activation(m, k, r.next().state() || 1n);
  return { x, w: quantizeQ4K(g, n, k).split };
}
