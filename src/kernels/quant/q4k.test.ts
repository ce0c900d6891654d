import { describe, expect, it } from 'vitest';
import { f16BitsToF32 } from './f16';
import { gaussianStream, genMmqQ4k } from './gen';
import {
  dequantizeQ4K,
  joinQ4K,
  Q4K_BLOCK_BYTES,
  q4kByte,
  q4kMin,
  q4kNibble,
  q4kScale,
  quantizeQ4K,
  splitQ4K,
} from './q4k';
import { XorShift64 } from './xorshift';

const f = Math.fround;

const gaussian = (len: number, seed: bigint, sigma: number) =>
  gaussianStream(new XorShift64(seed), len, sigma);

/** ggml's 12-byte packing of eight 6-bit (scale, min) pairs, written from quantize_row_q4_K_ref. */
function packScaleMin(ls: number[], lm: number[]): Uint8Array {
  const sc = new Uint8Array(12);
  for (let j = 0; j < 8; j++) {
    if (j < 4) {
      sc[j] = ls[j]!;
      sc[j + 4] = lm[j]!;
    } else {
      sc[j + 4] = (ls[j]! & 0xf) | ((lm[j]! & 0xf) << 4);
      sc[j - 4]! |= (ls[j]! >> 4) << 6;
      sc[j]! |= (lm[j]! >> 4) << 6;
    }
  }
  return sc;
}
const words = (b: Uint8Array) => new Uint32Array(b.slice().buffer);

/**
 * Hand-derived block: sub-block j is q*s_j - c_j for q = i % 16 (exactly representable), so
 * make_qkx2_quants fits L = q exactly with scale s_j, min c_j. With s = 8..1 and c = [28,1,3,5,7,9,11,13]/8:
 *   ls = nearest_int(63/8 * s)   = [63, 55, 47, 39, 32, 24, 16, 8]   (31.5 ties to even: 32)
 *   lm = nearest_int(63/3.5 * c) = [63, 2, 7, 11, 16, 20, 25, 29]    (2.25k, never a tie)
 *   d = f16(8/63) = 2^-3 * (1 + 16/1024) = 0x3010; dmin = f16(3.5/63) = 2^-5 * (1 + 796/1024) = 0x2B1C
 *   scales[0..3] = ls[0..3] | (ls[4..7] >> 4) << 6; scales[4..7] = lm[0..3] | (lm[4..7] >> 4) << 6;
 *   scales[8..11] = (ls[4..7] & 15) | (lm[4..7] & 15) << 4; every qs byte = q | q << 4 = (i % 16) * 17.
 */
const HAND_S = [8, 7, 6, 5, 4, 3, 2, 1];
const HAND_C = [28, 1, 3, 5, 7, 9, 11, 13].map((v) => v / 8);
const HAND_LS = [63, 55, 47, 39, 32, 24, 16, 8];
const HAND_LM = [63, 2, 7, 11, 16, 20, 25, 29];
const HAND_SCALES = [
  63 | (2 << 6), // 32 >> 4 = 2
  55 | (1 << 6), // 24 >> 4 = 1
  47 | (1 << 6), // 16 >> 4 = 1
  39 | (0 << 6), //  8 >> 4 = 0
  63 | (1 << 6), // lm 16 >> 4 = 1
  2 | (1 << 6), //  lm 20 >> 4 = 1
  7 | (1 << 6), //  lm 25 >> 4 = 1
  11 | (1 << 6), // lm 29 >> 4 = 1
  (32 & 15) | ((16 & 15) << 4), // 0x00
  (24 & 15) | ((20 & 15) << 4), // 0x48
  (16 & 15) | ((25 & 15) << 4), // 0x90
  (8 & 15) | ((29 & 15) << 4), //  0xd8
];

describe('Q4_K (block_q4_K: f16 d, f16 dmin, 12 packed scale bytes, 128 qs bytes)', () => {
  it('quantizes the hand-derived block to the exact bytes derived on paper', () => {
    const x = new Float32Array(256);
    for (let j = 0; j < 8; j++)
      for (let i = 0; i < 32; i++) x[32 * j + i] = (i % 16) * HAND_S[j]! - HAND_C[j]!;
    const { bytes } = quantizeQ4K(x, 1, 256);
    expect(bytes.length).toBe(144);
    expect([bytes[0], bytes[1], bytes[2], bytes[3]]).toEqual([0x10, 0x30, 0x1c, 0x2b]);
    expect([...bytes.subarray(4, 16)]).toEqual(HAND_SCALES);
    expect([...bytes.subarray(4, 16)]).toEqual([...packScaleMin(HAND_LS, HAND_LM)]);
    const qs = [...bytes.subarray(16)];
    expect(qs).toEqual(Array.from({ length: 128 }, (_, b) => (b % 16) * 17));
  });

  it('get_scale_min_k4 (q4kScale/q4kMin) decodes the hand block back to the 6-bit values chosen, j < 4 and j >= 4', () => {
    const sc = words(new Uint8Array(HAND_SCALES));
    expect(Array.from({ length: 8 }, (_, j) => q4kScale(sc, 0, j))).toEqual(HAND_LS);
    expect(Array.from({ length: 8 }, (_, j) => q4kMin(sc, 0, j))).toEqual(HAND_LM);
  });

  it('get_scale_min_k4 inverts the ggml packing for 2000 random 6-bit (scale, min) sets', () => {
    const r = new XorShift64(0x6a09e667f3bcc908n);
    for (let t = 0; t < 2000; t++) {
      const ls = Array.from({ length: 8 }, () => r.nextMod(64));
      const lm = Array.from({ length: 8 }, () => r.nextMod(64));
      const sc = words(packScaleMin(ls, lm));
      for (let j = 0; j < 8; j++) {
        if (q4kScale(sc, 0, j) !== ls[j] || q4kMin(sc, 0, j) !== lm[j]) {
          throw new Error(
            `set ${t} j ${j}: got (${q4kScale(sc, 0, j)}, ${q4kMin(sc, 0, j)}) want (${ls[j]}, ${lm[j]})`,
          );
        }
      }
    }
  });

  it('the quantizer packs scales the decoder reads back: dequantize uses exactly d*sc - dmin*m per sub-block', () => {
    const x = gaussian(4 * 512, 0xbb67ae8584caa73bn, 1);
    const { bytes, split } = quantizeQ4K(x, 4, 512);
    const deq = dequantizeQ4K(split, 4, 512);
    const dv = new DataView(bytes.buffer);
    for (let blk = 0; blk < 8; blk++) {
      const o = blk * Q4K_BLOCK_BYTES;
      const d = f16BitsToF32(dv.getUint16(o, true));
      const dmin = f16BitsToF32(dv.getUint16(o + 2, true));
      const sc = words(bytes.subarray(o + 4, o + 16));
      for (let j = 0; j < 8; j++) {
        const s = q4kScale(sc, 0, j);
        const m = q4kMin(sc, 0, j);
        expect(s).toBeLessThan(64);
        for (let i = 0; i < 32; i++) {
          // qs byte (j/2)*32 + i, low nibble for even j, high for odd j.
          const q = (bytes[o + 16 + (j >> 1) * 32 + i]! >> (4 * (j & 1))) & 15;
          expect(q4kNibble(split.qs, blk, j, i)).toBe(q);
          expect(deq[blk * 256 + j * 32 + i]).toBe(f(f(f(d * s) * q) - f(dmin * m)));
        }
      }
    }
  });

  it('splitQ4K/joinQ4K round-trip byte-exact; q4kByte reads little-endian bytes', () => {
    const x = gaussian(3 * 768, 0x3c6ef372fe94f82bn, 0.02);
    const { bytes, split } = quantizeQ4K(x, 3, 768);
    expect(bytes.length).toBe(9 * 144);
    const back = splitQ4K(bytes, 3, 768);
    expect([...back.qs]).toEqual([...split.qs]);
    expect([...joinQ4K(back)]).toEqual([...bytes]);
    // Random bytes (with finite f16 d/dmin) survive split -> join too.
    const r = new XorShift64(0xa54ff53a5f1d36f1n);
    const raw = new Uint8Array(4 * 144).map(() => r.nextMod(256));
    for (let b = 0; b < 4; b++) {
      raw[b * 144 + 1]! &= 0x7b; // keep the f16 exponent below 0x1f: no Inf/NaN
      raw[b * 144 + 3]! &= 0x7b;
    }
    expect([...joinQ4K(splitQ4K(raw, 2, 512))]).toEqual([...raw]);
    const w = new Uint32Array([0x44332211]);
    expect([0, 1, 2, 3].map((i) => q4kByte(w, 0, i))).toEqual([0x11, 0x22, 0x33, 0x44]);
    expect(() => splitQ4K(raw.subarray(1), 2, 512)).toThrow(/needs 576 bytes, got 575/);
    expect(() => quantizeQ4K(new Float32Array(128), 1, 128)).toThrow(/256-wide Q4_K super-block/);
  });

  it('dequantization error: gaussian relative RMSE, and ggml test-quantize-fns total error on its cos data', () => {
    const [rows, k] = [16, 1024];
    const x = gaussian(rows * k, 0x510e527fade682d1n, 1);
    const deq = dequantizeQ4K(quantizeQ4K(x, rows, k).split, rows, k);
    let se = 0;
    let ss = 0;
    for (let i = 0; i < x.length; i++) {
      se += (deq[i]! - x[i]!) ** 2;
      ss += x[i]! ** 2;
    }
    const relRmse = Math.sqrt(se / ss);
    console.log(
      `[q4k] gaussian relative RMSE ${relRmse.toFixed(4)} (4-bit affine per 32, ~uniform-noise bound 0.08)`,
    );
    expect(relRmse).toBeGreaterThan(0.02); // 4 bits cannot be better than this on gaussian data
    expect(relRmse).toBeLessThan(0.1);

    // ggml tests/test-quantize-fns.cpp: data 0.1 + 2*cosf(i + offset), error sqrt(sum diff^2) / n, < 0.002.
    const n = 32 * 128;
    const cos = new Float32Array(n).map((_, i) => f(0.1 + 2 * f(Math.cos(i))));
    const back = dequantizeQ4K(quantizeQ4K(cos, 1, n).split, 1, n);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += (cos[i]! - back[i]!) ** 2;
    const ggmlTotal = Math.sqrt(sum) / n;
    console.log(
      `[q4k] ggml total quantization error on cos data ${ggmlTotal.toExponential(3)} (ggml bound 2e-3)`,
    );
    expect(ggmlTotal).toBeLessThan(0.002);
  });

  it('decodes the seed generator weights (random scale bytes) with in-range codes', () => {
    const { w } = genMmqQ4k(1, 2, 256);
    const deq = dequantizeQ4K(w, 2, 256);
    expect(deq.every((v) => Number.isFinite(v))).toBe(true);
    for (let blk = 0; blk < 2; blk++) {
      for (let j = 0; j < 8; j++) {
        expect(q4kScale(w.scales, blk * 3, j)).toBeLessThan(64);
        expect(q4kMin(w.scales, blk * 3, j)).toBeLessThan(64);
      }
    }
  });
});

describe('Q4_K matches ggml where nearest_int leaves its range', () => {
  it('values near -1e7: dmin overflows f16 to inf, (x + inf)/d = inf, and nearest_int(inf) clamps to nibble 0', () => {
    // ggml: quantize_row_q4_K_ref gives qs bytes 00 here (its nearest_int bit trick maps inf to -2^22,
    // clamped to 0); rounding the value instead clamped inf to 15 and wrote ff.
    const x = new Float32Array(256).map((_, i) => -1e7 + (i % 16) * 1e5);
    const { bytes } = quantizeQ4K(x, 1, 256);
    expect(f16BitsToF32(bytes[2]! | (bytes[3]! << 8))).toBe(Infinity); // dmin
    expect([...bytes.subarray(16)]).toEqual(new Array<number>(128).fill(0));
  });
});
