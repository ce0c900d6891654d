// Sampled oracles: the full CPU reference of a 2048x4096x4096 MMQ is ~69 G multiply-adds of JS (many
// minutes), so the bench checks every benched config at a fixed sample of output elements -- the four
// corners, the first/last rows and columns around each tile edge, and random interior points -- and,
// separately, that the whole output was written (no NaN survives the poisoned buffer). Each element is
// computed exactly as the full oracle does (same f32 order for the MMQ kernels).
import { mmqQ4kElement, q4kNibbles } from '../src/kernels/mmq';
import type { MmqQ4kData } from '../src/kernels/quant/gen';
import { q4kMin, q4kNibble, q4kRows, q4kScale } from '../src/kernels/quant/q4k';
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

/**
 * The affine Q4_K MMQ oracle (mmqQ4kRef's f32 order) at activation row `xrow`, weight row `wrow`: the
 * kernel oracle's element on that one weight row, so only its k nibbles are decoded.
 */
export function q4kElement(d: MmqQ4kData, xrow: number, wrow: number, k: number): number {
  const w = q4kRows(d.w, wrow, 1, k);
  return mmqQ4kElement({ ...d, w }, q4kNibbles(w, 1, k), xrow, 0, k);
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
