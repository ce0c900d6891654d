// Q4_K, byte-identical to ggml's block_q4_K (QK_K = 256):
//   { ggml_half d; ggml_half dmin; uint8_t scales[12]; uint8_t qs[128]; }   144 bytes
// w = d*sc[j]*q - dmin*m[j] for sub-block j (32 weights); sc/m are 6-bit, packed by get_scale_min_k4.
// Sub-block j lives in qs byte (j/2)*32 + i, low nibble for even j, high nibble for odd j.
// The kernels take a split layout: qs as 32 u32 per super-block, scales as 3 u32, d/dmin as f32.
import { f16BitsToF32, f32ToF16Bits } from './f16';
import { nearestInt } from './nearestInt';

export const QK_K = 256;
export const Q4K_BLOCK_BYTES = 144;

/** Split layout the Q4_K MMQ kernels consume for a weight [rows, k] (rows*k/256 super-blocks). */
export interface Q4KWeight {
  /** 128 qs bytes per super-block, as 32 little-endian u32. */
  qs: Uint32Array;
  /** 12 packed scale bytes per super-block, as 3 u32. */
  scales: Uint32Array;
  /** d per super-block (f16 decoded). */
  d: Float32Array;
  /** dmin per super-block (f16 decoded). */
  dmin: Float32Array;
}

export function assertSuperBlocks(k: number): void {
  if (!Number.isInteger(k) || k <= 0 || k % QK_K !== 0) {
    throw new RangeError(`k = ${k} is not a positive multiple of the 256-wide Q4_K super-block`);
  }
}

/**
 * Rows [start, start + count) of a split Q4_K weight [rows, k], as views (no copy).
 * @example q4kRows(bank, e * n, n, k) // expert e's [n, k] slice of an [E*n, k] bank
 */
export function q4kRows(w: Q4KWeight, start: number, count: number, k: number): Q4KWeight {
  const sb = k / QK_K;
  const [a, b] = [start * sb, (start + count) * sb];
  return {
    qs: w.qs.subarray(a * 32, b * 32),
    scales: w.scales.subarray(a * 3, b * 3),
    d: w.d.subarray(a, b),
    dmin: w.dmin.subarray(a, b),
  };
}

/** Byte `i` of a little-endian u32 array starting at word `base` (the kernels' q4k_byte). */
export function q4kByte(a: Uint32Array, base: number, i: number): number {
  return (a[base + (i >> 2)]! >>> (8 * (i & 3))) & 255;
}

/** 6-bit scale of sub-block j from the 12 packed bytes at word `scbase` (get_scale_min_k4, scale half). */
export function q4kScale(wsc: Uint32Array, scbase: number, j: number): number {
  if (j < 4) return q4kByte(wsc, scbase, j) & 63;
  return (q4kByte(wsc, scbase, j + 4) & 15) | ((q4kByte(wsc, scbase, j - 4) >> 6) << 4);
}

/** 6-bit min of sub-block j (get_scale_min_k4, min half). */
export function q4kMin(wsc: Uint32Array, scbase: number, j: number): number {
  if (j < 4) return q4kByte(wsc, scbase, j + 4) & 63;
  return (q4kByte(wsc, scbase, j + 4) >> 4) | ((q4kByte(wsc, scbase, j) >> 6) << 4);
}

/** The 4-bit code of weight `qi` (0..31) of sub-block `is` (0..7) in super-block `blk`. */
export function q4kNibble(qs: Uint32Array, blk: number, is: number, qi: number): number {
  return (q4kByte(qs, blk * 32, (is >> 1) * 32 + qi) >> (4 * (is & 1))) & 15;
}

// make_qkx2_quants(n=32, nmax=15, rmin=-1, rdelta=0.1, nstep=20, use_mad=false), in f32 like ggml.
function makeQkx2Quants(x: Float32Array, off: number, weights: Float32Array, L: Uint8Array, loff: number) {
  const f = Math.fround;
  const n = 32;
  const nmax = 15;
  const Laux = new Uint8Array(n);
  let min = x[off]!;
  let max = x[off]!;
  let sumW = weights[0]!;
  let sumX = f(sumW * x[off]!);
  for (let i = 1; i < n; i++) {
    const xi = x[off + i]!;
    if (xi < min) min = xi;
    if (xi > max) max = xi;
    const w = weights[i]!;
    sumW = f(sumW + w);
    sumX = f(sumX + f(w * xi));
  }
  if (min > 0) min = 0;
  if (max === min) {
    for (let i = 0; i < n; i++) L[loff + i] = 0;
    return { scale: 0, theMin: -min };
  }
  let iscale = f(nmax / f(max - min));
  let scale = f(1 / iscale);
  let bestError = 0;
  for (let i = 0; i < n; i++) {
    const l = nearestInt(f(iscale * f(x[off + i]! - min)));
    L[loff + i] = Math.max(0, Math.min(nmax, l));
    let diff = f(f(f(scale * L[loff + i]!) + min) - x[off + i]!);
    diff = f(diff * diff);
    bestError = f(bestError + f(weights[i]! * diff));
  }
  for (let is = 0; is <= 20; is++) {
    iscale = f(f(f(-1 + f(f(0.1) * is)) + nmax) / f(max - min));
    let sumL = 0;
    let sumL2 = 0;
    let sumXL = 0;
    for (let i = 0; i < n; i++) {
      let l = nearestInt(f(iscale * f(x[off + i]! - min)));
      l = Math.max(0, Math.min(nmax, l));
      Laux[i] = l;
      const w = weights[i]!;
      sumL = f(sumL + f(w * l));
      sumL2 = f(sumL2 + f(f(w * l) * l));
      sumXL = f(sumXL + f(f(w * l) * x[off + i]!));
    }
    const D = f(f(sumW * sumL2) - f(sumL * sumL));
    if (D > 0) {
      let thisScale = f(f(f(sumW * sumXL) - f(sumX * sumL)) / D);
      let thisMin = f(f(f(sumL2 * sumX) - f(sumL * sumXL)) / D);
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = f(sumXL / sumL2);
      }
      let curError = 0;
      for (let i = 0; i < n; i++) {
        let diff = f(f(f(thisScale * Laux[i]!) + thisMin) - x[off + i]!);
        diff = f(diff * diff);
        curError = f(curError + f(weights[i]! * diff));
      }
      if (curError < bestError) {
        for (let i = 0; i < n; i++) L[loff + i] = Laux[i]!;
        bestError = curError;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  return { scale, theMin: -min };
}

/**
 * Quantize f32 rows to ggml Q4_K (quantize_row_q4_K_ref). Returns ggml bytes and the kernels' split layout.
 * @example const { bytes, split } = quantizeQ4K(w, n, 4096); // bytes.length === n*16*144
 */
export function quantizeQ4K(
  x: Float32Array,
  rows: number,
  k: number,
): { bytes: Uint8Array; split: Q4KWeight } {
  assertSuperBlocks(k);
  const f = Math.fround;
  const nb = (rows * k) / QK_K;
  const bytes = new Uint8Array(nb * Q4K_BLOCK_BYTES);
  const L = new Uint8Array(QK_K);
  const weights = new Float32Array(32);
  const scales = new Float32Array(8);
  const mins = new Float32Array(8);
  for (let i = 0; i < nb; i++) {
    const off = i * QK_K;
    const blk = bytes.subarray(i * Q4K_BLOCK_BYTES, (i + 1) * Q4K_BLOCK_BYTES);
    let maxScale = 0;
    let maxMin = 0;
    for (let j = 0; j < 8; j++) {
      let sumX2 = 0;
      for (let l = 0; l < 32; l++) sumX2 = f(sumX2 + f(x[off + 32 * j + l]! * x[off + 32 * j + l]!));
      const avX = f(Math.sqrt(f(sumX2 / 32)));
      for (let l = 0; l < 32; l++) weights[l] = f(avX + Math.abs(x[off + 32 * j + l]!));
      const r = makeQkx2Quants(x, off + 32 * j, weights, L, 32 * j);
      scales[j] = r.scale;
      mins[j] = r.theMin;
      if (r.scale > maxScale) maxScale = r.scale;
      if (r.theMin > maxMin) maxMin = r.theMin;
    }
    const invScale = maxScale > 0 ? f(63 / maxScale) : 0;
    const invMin = maxMin > 0 ? f(63 / maxMin) : 0;
    const sc = blk.subarray(4, 16);
    for (let j = 0; j < 8; j++) {
      const ls = Math.min(63, nearestInt(f(invScale * scales[j]!)) & 255);
      const lm = Math.min(63, nearestInt(f(invMin * mins[j]!)) & 255);
      if (j < 4) {
        sc[j] = ls;
        sc[j + 4] = lm;
      } else {
        sc[j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
        sc[j - 4]! |= (ls >> 4) << 6;
        sc[j]! |= (lm >> 4) << 6;
      }
    }
    const hd = f32ToF16Bits(f(maxScale / 63));
    const hm = f32ToF16Bits(f(maxMin / 63));
    blk[0] = hd & 255;
    blk[1] = hd >> 8;
    blk[2] = hm & 255;
    blk[3] = hm >> 8;
    const scw = new Uint32Array(sc.slice().buffer);
    for (let j = 0; j < 8; j++) {
      const d = f(f16BitsToF32(hd) * q4kScale(scw, 0, j));
      // C's `if (!d) continue;` skips only d == 0: when d overflowed f16 to inf and the 6-bit scale is 0,
      // d = inf * 0 = NaN, which C does not skip (its codes become nearest_int(NaN) = 0); JS's !NaN would.
      if (d === 0) continue;
      const dm = f(f16BitsToF32(hm) * q4kMin(scw, 0, j));
      for (let ii = 0; ii < 32; ii++) {
        const l = nearestInt(f(f(x[off + 32 * j + ii]! + dm) / d));
        L[32 * j + ii] = Math.max(0, Math.min(15, l));
      }
    }
    const q = blk.subarray(16);
    for (let j = 0; j < QK_K; j += 64) {
      for (let l = 0; l < 32; l++) q[(j >> 1) + l] = L[j + l]! | (L[j + l + 32]! << 4);
    }
  }
  return { bytes, split: splitQ4K(bytes, rows, k) };
}

/** Parse ggml Q4_K bytes (e.g. a GGUF tensor) into the kernels' split layout. */
export function splitQ4K(bytes: Uint8Array, rows: number, k: number): Q4KWeight {
  assertSuperBlocks(k);
  const nb = (rows * k) / QK_K;
  if (bytes.length !== nb * Q4K_BLOCK_BYTES) {
    throw new RangeError(`Q4_K [${rows}x${k}] needs ${nb * Q4K_BLOCK_BYTES} bytes, got ${bytes.length}`);
  }
  const qs = new Uint32Array(nb * 32);
  const scales = new Uint32Array(nb * 3);
  const d = new Float32Array(nb);
  const dmin = new Float32Array(nb);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < nb; b++) {
    const o = b * Q4K_BLOCK_BYTES;
    d[b] = f16BitsToF32(dv.getUint16(o, true));
    dmin[b] = f16BitsToF32(dv.getUint16(o + 2, true));
    for (let w = 0; w < 3; w++) scales[b * 3 + w] = dv.getUint32(o + 4 + 4 * w, true);
    for (let w = 0; w < 32; w++) qs[b * 32 + w] = dv.getUint32(o + 16 + 4 * w, true);
  }
  return { qs, scales, d, dmin };
}

/** Re-assemble ggml Q4_K bytes from the split layout (d/dmin re-rounded to f16). */
export function joinQ4K(w: Q4KWeight): Uint8Array {
  const nb = w.d.length;
  const bytes = new Uint8Array(nb * Q4K_BLOCK_BYTES);
  const dv = new DataView(bytes.buffer);
  for (let b = 0; b < nb; b++) {
    const o = b * Q4K_BLOCK_BYTES;
    dv.setUint16(o, f32ToF16Bits(w.d[b]!), true);
    dv.setUint16(o + 2, f32ToF16Bits(w.dmin[b]!), true);
    for (let i = 0; i < 3; i++) dv.setUint32(o + 4 + 4 * i, w.scales[b * 3 + i]!, true);
    for (let i = 0; i < 32; i++) dv.setUint32(o + 16 + 4 * i, w.qs[b * 32 + i]!, true);
  }
  return bytes;
}

/**
 * Dequantize split Q4_K to f32 (dequantize_row_q4_K): w = (d*sc)*q - (dmin*m), f32 ops as in ggml.
 * @example dequantizeQ4K(split, n, k).length === n * k
 */
export function dequantizeQ4K(w: Q4KWeight, rows: number, k: number): Float32Array {
  assertSuperBlocks(k);
  const f = Math.fround;
  const nsb = k / QK_K;
  const out = new Float32Array(rows * k);
  for (let r = 0; r < rows; r++) {
    for (let sb = 0; sb < nsb; sb++) {
      const blk = r * nsb + sb;
      for (let is = 0; is < 8; is++) {
        const dd = f(w.d[blk]! * q4kScale(w.scales, blk * 3, is));
        const mm = f(w.dmin[blk]! * q4kMin(w.scales, blk * 3, is));
        for (let qi = 0; qi < 32; qi++) {
          out[r * k + sb * QK_K + is * 32 + qi] = f(f(dd * q4kNibble(w.qs, blk, is, qi)) - mm);
        }
      }
    }
  }
  return out;
}
