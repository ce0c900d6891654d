// CPU oracles of the MMQ kernels: the seed's mmq_q8_ref / mmq_q4k_ref, with f32 arithmetic emulated by
// Math.fround in EXACTLY the seed's (and the generated kernel's) order, so a kernel that accumulates one
// 32-block at a time, ascending, can match bit for bit. Plus the f32 GEMM on dequantized operands that
// splits quantization error from kernel error.
import type { ElementPartials, KBlockPartial } from '../partials';
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
  let acc = 0;
  for (let b = 0; b < k / 32; b++) acc = f(acc + q8BlockTerm(d, xrow, wrow, k, b));
  return acc;
}

/** The exact int8 dot of 32 codes of `a` at `ao` and of `b` at `bo`. */
function dot32(a: ArrayLike<number>, ao: number, b: ArrayLike<number>, bo: number): number {
  let isum = 0;
  for (let l = 0; l < 32; l++) isum += a[ao + l]! * b[bo + l]!;
  return isum;
}

/** The integer dot of k-block `b` of a Q8_0 element's operands. */
const q8BlockDot = (d: MmqQ8Data, xrow: number, wrow: number, k: number, b: number) =>
  dot32(d.xq, xrow * k + b * 32, d.wq, wrow * k + b * 32);

/** What k-block `b` adds to a Q8_0 element: fround((isum * xs) * wd). */
function q8BlockTerm(d: MmqQ8Data, xrow: number, wrow: number, k: number, b: number): number {
  const kb = k / 32;
  return f(f(q8BlockDot(d, xrow, wrow, k, b) * d.xs[xrow * kb + b]!) * d.wd[wrow * kb + b]!);
}

/** The running f32 sum of per-block terms, as the oracles accumulate them (ascending k-blocks). */
function accumulate(blocks: Omit<KBlockPartial, 'cumulative'>[]): KBlockPartial[] {
  let acc = 0;
  return blocks.map((b) => ({ ...b, cumulative: (acc = f(acc + b.contribution)) }));
}

const codes = (a: ArrayLike<number>, at: number) => Array.from({ length: 32 }, (_, l) => a[at + l]!);

/**
 * The k-block breakdown of one Q8_0 x q8_1 output element (activation row `xrow`, weight row `wrow`):
 * each block's codes, scales, integer dot and contribution, with the oracle's running sum, whose last
 * value is mmqQ8Element's.
 * @example mmqQ8Partials(d, i, j, k).value === mmqQ8Element(d, i, j, k)
 */
export function mmqQ8Partials(d: MmqQ8Data, xrow: number, wrow: number, k: number): ElementPartials {
  const kb = k / 32;
  const blocks = accumulate(
    Array.from({ length: kb }, (_, b) => {
      const isum = q8BlockDot(d, xrow, wrow, k, b);
      const term = q8BlockTerm(d, xrow, wrow, k, b);
      const xs = d.xs[xrow * kb + b]!;
      const wd = d.wd[wrow * kb + b]!;
      return {
        block: b,
        k0: b * 32,
        terms: { isum, 'isum·xs': f(isum * xs) },
        contribution: term,
        activation: { format: 'q8_1', q: codes(d.xq, xrow * k + b * 32), scales: { d: xs } },
        weight: { format: 'Q8_0', q: codes(d.wq, wrow * k + b * 32), scales: { d: wd } },
      };
    }),
  );
  return {
    row: xrow,
    col: wrow,
    blockK: 32,
    formula: 'contribution = (isum × xs) × wd, isum = Σ xq·wq over the 32 codes',
    source: 'oracle',
    blocks,
    value: blocks.at(-1)?.cumulative ?? 0,
  };
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
  let acc = 0;
  for (let b = 0; b < k / 32; b++) acc = f(acc + q4kBlockTerm(d, nib, xrow, wrow, k, b));
  return acc;
}

/** The intermediate values of a Q4_K k-block's term (the drill-down shows them). */
interface Q4kTerms {
  blk: number;
  sc: number;
  m: number;
  dd: number;
  mm: number;
  xs: number;
  xsum: number;
  isum: number;
  scaled: number;
  offset: number;
}

/**
 * What k-block `b` (sub-block b & 7 of super-block b >> 3) adds to a Q4_K element; its intermediate
 * values go to `into` when given (the oracle's hot loop allocates nothing).
 */
function q4kBlockTerm(
  d: MmqQ4kData,
  nib: Int8Array,
  xrow: number,
  wrow: number,
  k: number,
  b: number,
  into?: Q4kTerms,
): number {
  const kb = k / 32;
  const is = b & 7;
  const blk = wrow * (k / QK_K) + (b >> 3);
  const isum = dot32(d.xq, xrow * k + b * 32, nib, wrow * k + b * 32);
  const sc = q4kScale(d.w.scales, blk * 3, is);
  const m = q4kMin(d.w.scales, blk * 3, is);
  const dd = f(d.w.d[blk]! * sc);
  const mm = f(d.w.dmin[blk]! * m);
  const xs = d.xs[xrow * kb + b]!;
  const xsum = d.xsum[xrow * kb + b]!;
  const scaled = f(f(xs * dd) * isum);
  const offset = f(mm * xsum);
  // Field by field: an object literal here (Object.assign) made the oracle 1.5x slower in V8.
  if (into) {
    into.blk = blk;
    into.sc = sc;
    into.m = m;
    into.dd = dd;
    into.mm = mm;
    into.xs = xs;
    into.xsum = xsum;
    into.isum = isum;
    into.scaled = scaled;
    into.offset = offset;
  }
  return f(scaled - offset);
}

/**
 * The k-block breakdown of one Q4_K x q8_1 output element (activation row `xrow`, weight row `wrow`):
 * each 32-wide sub-block's codes, d, dmin, 6-bit scale and min, the activation's d and s, and the
 * affine contribution, with the oracle's running sum (its last value is mmqQ4kElement's).
 * @example mmqQ4kPartials(d, i, j, k).value === mmqQ4kRef(d, m, n, k)[i * n + j]
 */
export function mmqQ4kPartials(d: MmqQ4kData, xrow: number, wrow: number, k: number): ElementPartials {
  // The weight row alone, so its nibbles are decoded for this row only.
  const one = { ...d, w: q4kRows(d.w, wrow, 1, k) };
  const nib = q4kNibbles(one.w, 1, k);
  const blocks = accumulate(
    Array.from({ length: k / 32 }, (_, b) => {
      const t = {} as Q4kTerms;
      const term = q4kBlockTerm(one, nib, xrow, 0, k, b, t);
      return {
        block: b,
        k0: b * 32,
        terms: { isum: t.isum, 'xs·D·isum': t.scaled, 'M·xsum': t.offset, D: t.dd, M: t.mm },
        contribution: term,
        activation: { format: 'q8_1', q: codes(d.xq, xrow * k + b * 32), scales: { d: t.xs, s: t.xsum } },
        weight: {
          format: 'Q4_K',
          q: codes(nib, b * 32),
          scales: { d: one.w.d[t.blk]!, dmin: one.w.dmin[t.blk]!, sc: t.sc, m: t.m },
        },
      };
    }),
  );
  return {
    row: xrow,
    col: wrow,
    blockK: 32,
    formula: 'contribution = (xs × D) × isum − M × s, D = d·sc, M = dmin·m, isum = Σ xq·q4',
    source: 'oracle',
    blocks,
    value: blocks.at(-1)?.cumulative ?? 0,
  };
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
