// CPU oracles of the MMQ kernels: the seed's mmq_q8_ref / mmq_q4k_ref, with f32 arithmetic emulated by
// Math.fround in EXACTLY the seed's (and the generated kernel's) order, so a kernel that accumulates one
// 32-block at a time, ascending, can match bit for bit. Plus the f32 GEMM on dequantized operands that
// splits quantization error from kernel error.
import type { MmqQ4kData, MmqQ8Data } from '../quant/gen';
import { q4kMin, q4kNibble, q4kRows, q4kScale, QK_K, type Q4KWeight } from '../quant/q4k';

const f = Math.fround;

/**
 * Q8_0 x q8_1 MMQ: out[i,j] = sum_kb (isum * xs) * wd, f32, ascending kb (the seed's mmq_q8_ref).
 * @example const want = mmqQ8Ref(genMmq(16, 16, 64), 16, 16, 64);
 */
export function mmqQ8Ref(d: MmqQ8Data, m: number, n: number, k: number): Float32Array {
  const out = new Float32Array(m * n);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) out[i * n + j] = mmqQ8Element(d, i, j, k);
  return out;
}

/**
 * One Q8_0 MMQ output element: activation row `xrow`, weight row `wrow` (mmq_q8_ref's inner loops).
 * @example mmqQ8Element(d, i, j, k) === mmqQ8Ref(d, m, n, k)[i * n + j]
 */
export function mmqQ8Element(d: MmqQ8Data, xrow: number, wrow: number, k: number): number {
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

/** Q4_K weight nibbles decoded to one int8 per weight [rows, k] (q4kNibble's mapping), for the oracles' inner loop. */
export function q4kNibbles(w: Q4KWeight, rows: number, k: number): Int8Array {
  const nsb = k / QK_K;
  const out = new Int8Array(rows * k);
  for (let r = 0; r < rows; r++) {
    for (let kb = 0; kb < k / 32; kb++) {
      const blk = r * nsb + (kb >> 3);
      for (let qi = 0; qi < 32; qi++) out[r * k + kb * 32 + qi] = q4kNibble(w.qs, blk, kb & 7, qi);
    }
  }
  return out;
}

/**
 * One affine Q4_K MMQ output element: activation row `xrow`, weight row `wrow` (the seed's inner loops),
 * `nib` = q4kNibbles of the weight. acc = fround(acc + fround(fround(fround(xs*dd)*isum) - fround(mm*xsum))),
 * dd = fround(d*sc), mm = fround(dmin*m).
 * @example mmqQ4kElement(d, q4kNibbles(d.w, n, k), i, j, k) === mmqQ4kRef(d, m, n, k)[i * n + j]
 */
export function mmqQ4kElement(d: MmqQ4kData, nib: Int8Array, xrow: number, wrow: number, k: number): number {
  const kb = k / 32;
  const nsb = k / QK_K;
  let acc = 0;
  for (let b = 0; b < kb; b++) {
    const is = b & 7;
    const blk = wrow * nsb + (b >> 3);
    let isum = 0;
    const xo = xrow * k + b * 32;
    const wo = wrow * k + b * 32;
    for (let l = 0; l < 32; l++) isum += d.xq[xo + l]! * nib[wo + l]!;
    const dd = f(d.w.d[blk]! * q4kScale(d.w.scales, blk * 3, is));
    const mm = f(d.w.dmin[blk]! * q4kMin(d.w.scales, blk * 3, is));
    const xs = d.xs[xrow * kb + b]!;
    const xsum = d.xsum[xrow * kb + b]!;
    acc = f(acc + f(f(f(xs * dd) * isum) - f(mm * xsum)));
  }
  return acc;
}

/**
 * Q4_K x q8_1 affine MMQ (the seed's mmq_q4k_ref): out[i,j] = sum_kb xs*(D*isum) - M*xsum, f32.
 * @example const want = mmqQ4kRef(genMmqQ4k(32, 64, 256), 32, 64, 256);
 */
export function mmqQ4kRef(d: MmqQ4kData, m: number, n: number, k: number): Float32Array {
  const nib = q4kNibbles(d.w, n, k);
  const out = new Float32Array(m * n);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) out[i * n + j] = mmqQ4kElement(d, nib, i, j, k);
  return out;
}

/**
 * The slots to compute (`rows`, default all) grouped by their expert, in order: an indexed oracle decodes
 * only the experts its rows use, so a gate's sample costs work proportional to the sample.
 */
function slotsByExpert(ids: ArrayLike<number>, nslots: number, rows?: readonly number[]) {
  const byExpert = new Map<number, { at: number[]; slots: number[] }>();
  (rows ?? Array.from({ length: nslots }, (_, s) => s)).forEach((s, at) => {
    const e = ids[s]!;
    const g = byExpert.get(e) ?? { at: [], slots: [] };
    g.at.push(at);
    g.slots.push(s);
    byExpert.set(e, g);
  });
  return byExpert;
}

/**
 * Expert-indexed Q4_K MMQ (the seed's mmq_q4k_id_ref): slot s multiplies by expert ids[s]'s weight rows
 * [ids[s]*n, ids[s]*n + n) of the [E*n, k] bank. `rows`: only these slots (a gate's sample), in that
 * order; only their experts' nibbles are decoded.
 * @example mmqQ4kIdRef(genMmqQ4k(12, 5 * 64, 256), ids, 12, 64, 256)
 */
export function mmqQ4kIdRef(
  d: MmqQ4kData,
  ids: ArrayLike<number>,
  nslots: number,
  n: number,
  k: number,
  rows?: readonly number[],
): Float32Array {
  const out = new Float32Array((rows?.length ?? nslots) * n);
  for (const [e, g] of slotsByExpert(ids, nslots, rows)) {
    // This expert's weight alone, so its rows are 0..n-1 of `w` and of the nibbles.
    const w = q4kRows(d.w, e * n, n, k);
    const nib = q4kNibbles(w, n, k);
    const one = { ...d, w };
    g.slots.forEach((s, i) => {
      for (let j = 0; j < n; j++) out[g.at[i]! * n + j] = mmqQ4kElement(one, nib, s, j, k);
    });
  }
  return out;
}

/**
 * Expert-indexed Q8_0 MMQ: mmqQ8Ref per slot with weight rows of expert ids[s] (the generator's indexed q8
 * variant). `rows`: only these slots, in that order.
 * @example mmqQ8IdRef(genMmq(8, 2 * 64, 64), ids, 8, 64, 64)
 */
export function mmqQ8IdRef(
  d: MmqQ8Data,
  ids: ArrayLike<number>,
  nslots: number,
  n: number,
  k: number,
  rows?: readonly number[],
): Float32Array {
  const list = rows ?? Array.from({ length: nslots }, (_, s) => s);
  const out = new Float32Array(list.length * n);
  list.forEach((s, i) => {
    const wbase = ids[s]! * n;
    for (let j = 0; j < n; j++) out[i * n + j] = mmqQ8Element(d, s, wbase + j, k);
  });
  return out;
}

/**
 * Dequantize a q8_1 activation: x = xs * xq per 32-block, f32.
 * @example dequantizeActivation(d.xq, d.xs, m, k)
 */
export function dequantizeActivation(xq: Int8Array, xs: Float32Array, rows: number, k: number): Float32Array {
  const out = new Float32Array(rows * k);
  for (let i = 0; i < rows * k; i++) out[i] = f(xs[Math.floor(i / 32)]! * xq[i]!);
  return out;
}

// The f32 GEMM moved to ../oracle.ts (the coopmat twin uses it too); re-exported for the MMQ callers.
export { gemmF32 } from '../oracle';
