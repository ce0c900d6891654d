// Sampled oracles: the full CPU reference of a 2048x4096x4096 MMQ is ~69 G multiply-adds of JS (many
// minutes), so the bench checks every benched config at a fixed sample of output elements -- the four
// corners, the first/last rows and columns around each tile edge, and random interior points -- and,
// separately, that the whole output was written (no NaN survives the poisoned buffer). Each element is
// computed exactly as the full oracle does (same f32 order for the MMQ kernels).
import type { MmqQ4kData, MmqQ8Data } from '../src/kernels/quant/gen';
import { q4kMin, q4kNibble, q4kScale } from '../src/kernels/quant/q4k';
import { roundToF16 } from '../src/kernels/quant/f16';
import { fastWords } from './data';

const f = Math.fround;

/**
 * Flat output indices to check for a rows x cols output: corners, edges of 16/32/64/128-wide tiles near
 * both ends, and `random` uniformly drawn interior points (deterministic).
 * @example sampleIndices(2048, 4096, 128).length // ~ 200 distinct indices
 */
export function sampleIndices(rows: number, cols: number, random = 128): Uint32Array {
  const pick = (size: number) => {
    const s = new Set<number>([0, 1, size - 1, size - 2, Math.floor(size / 2)]);
    for (const t of [15, 16, 31, 32, 63, 64, 127, 128]) {
      if (t < size) s.add(t);
      if (size - 1 - t >= 0) s.add(size - 1 - t);
    }
    return [...s].filter((v) => v >= 0 && v < size);
  };
  const rs = pick(rows);
  const cs = pick(cols);
  const out = new Set<number>();
  for (const r of rs.slice(0, 8)) for (const c of cs) out.add(r * cols + c);
  for (const c of cs.slice(0, 8)) for (const r of rs) out.add(r * cols + c);
  const w = fastWords(2 * random, rows * 31 + cols);
  for (let i = 0; i < random; i++) out.add((w[2 * i]! % rows) * cols + (w[2 * i + 1]! % cols));
  return Uint32Array.from([...out].sort((a, b) => a - b));
}

/** The Q8_0 MMQ oracle (mmqQ8Ref's f32 order) at output (i, j) of activation row `xrow`, weight row `wrow`. */
export function q8Element(d: MmqQ8Data, xrow: number, wrow: number, k: number): number {
  const kb = k / 32;
  let acc = 0;
  for (let b = 0; b < kb; b++) {
    let isum = 0;
    const xo = xrow * k + b * 32;
    const wo = wrow * k + b * 32;
    for (let l = 0; l < 32; l++) isum += d.xq[xo + l]! * d.wq[wo + l]!;
    acc = f(acc + f(f(isum * d.xs[xrow * kb + b]!) * d.wd[wrow * kb + b]!));
  }
  return acc;
}

/** The affine Q4_K MMQ oracle (mmqQ4kRef's f32 order) at activation row `xrow`, weight row `wrow`. */
export function q4kElement(d: MmqQ4kData, xrow: number, wrow: number, k: number): number {
  const kb = k / 32;
  const nsb = k / 256;
  let acc = 0;
  for (let b = 0; b < kb; b++) {
    const is = b & 7;
    const blk = wrow * nsb + (b >> 3);
    let isum = 0;
    const xo = xrow * k + b * 32;
    for (let l = 0; l < 32; l++) isum += d.xq[xo + l]! * q4kNibble(d.w.qs, blk, is, l);
    const dd = f(d.w.d[blk]! * q4kScale(d.w.scales, blk * 3, is));
    const mm = f(d.w.dmin[blk]! * q4kMin(d.w.scales, blk * 3, is));
    acc = f(acc + f(f(f(d.xs[xrow * kb + b]! * dd) * isum) - f(mm * d.xsum[xrow * kb + b]!)));
  }
  return acc;
}

/** Dequantized Q4_K weight value (row, col) in f32: d*sc*q - dmin*m. */
export function q4kWeightAt(d: MmqQ4kData, row: number, col: number, k: number): number {
  const nsb = k / 256;
  const b = col >> 5;
  const blk = row * nsb + (b >> 3);
  const is = b & 7;
  const dd = f(d.w.d[blk]! * q4kScale(d.w.scales, blk * 3, is));
  const mm = f(d.w.dmin[blk]! * q4kMin(d.w.scales, blk * 3, is));
  return f(f(dd * q4kNibble(d.w.qs, blk, is, col & 31)) - mm);
}

/**
 * The f16 coopmat twin's math at (xrow, wrow): both operands rounded to f16 (the activation x and the
 * scale-folded weight), products summed in f64. The kernel sums in f32, so gate scale-relatively.
 */
export function f16Element(x: Float32Array, d: MmqQ4kData, xrow: number, wrow: number, k: number): number {
  let s = 0;
  for (let l = 0; l < k; l++) s += roundToF16(x[xrow * k + l]!) * roundToF16(q4kWeightAt(d, wrow, l, k));
  return s;
}

/** f64 dot of two f32 rows (the f32 baseline's reference). */
export function f32Element(x: Float32Array, w: Float32Array, xrow: number, wrow: number, k: number): number {
  let s = 0;
  for (let l = 0; l < k; l++) s += x[xrow * k + l]! * w[wrow * k + l]!;
  return s;
}
