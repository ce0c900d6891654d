// The oracles against naive dequantize-then-multiply references (pure Node, no GPU): the oracle must be
// the quantized math itself, and a wrong epilogue must be visible against an independent reference.
import { describe, expect, it } from 'vitest';
import { relToMax } from '../compare';
import { gemmF64 } from '../oracle';
import { roundToF16 } from '../quant/f16';
import { gaussianStream, genMmq, genMmqQ4k, type MmqQ4kData } from '../quant/gen';
import { joinQ4K, q4kRows, quantizeQ4K, type Q4KWeight } from '../quant/q4k';
import { dequantizeQ8_0 } from '../quant/q8';
import { XorShift64 } from '../quant/xorshift';
import { fullPrecisionOf, mmqDataset } from './mmq.data';
import { dequantizeActivation, gemmF32, mmqQ4kIdRef, mmqQ4kRef, mmqQ8IdRef, mmqQ8Ref } from './mmq.oracle';

const f = Math.fround;

// ---- An independent Q4_K decoder for the reference: ggml's dequantize_row_q4_K, written from ggml-quants.c
// over the raw 144-byte blocks. It shares nothing with the oracle (no q4kScale / q4kMin / q4kNibble), so a
// bug in those helpers shows up here as a mismatch instead of passing on both sides.

/** IEEE binary16 bits -> value (GGML_FP16_TO_FP32). */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 31;
  const m = h & 1023;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** ggml's get_scale_min_k4(j, q, &d, &m) on the 12 raw scale bytes. */
function getScaleMinK4(j: number, q: Uint8Array): [number, number] {
  if (j < 4) return [q[j]! & 63, q[j + 4]! & 63];
  return [(q[j + 4]! & 0xf) | ((q[j - 4]! >> 6) << 4), (q[j + 4]! >> 4) | ((q[j]! >> 6) << 4)];
}

/** dequantize_row_q4_K(x, y, k): per super-block, four 64-value steps, low nibbles then high nibbles. */
function dequantizeRowQ4K(blocks: Uint8Array, k: number): Float32Array {
  const y = new Float32Array(k);
  let yi = 0;
  for (let i = 0; i < k / 256; i++) {
    const x = blocks.subarray(i * 144, (i + 1) * 144);
    const d = halfToFloat(x[0]! | (x[1]! << 8));
    const min = halfToFloat(x[2]! | (x[3]! << 8));
    const scales = x.subarray(4, 16);
    let q = 16;
    let is = 0;
    for (let j = 0; j < 256; j += 64) {
      const [sc1, m1q] = getScaleMinK4(is + 0, scales);
      const [sc2, m2q] = getScaleMinK4(is + 1, scales);
      const d1 = f(d * sc1);
      const m1 = f(min * m1q);
      const d2 = f(d * sc2);
      const m2 = f(min * m2q);
      for (let l = 0; l < 32; ++l) y[yi++] = f(f(d1 * (x[q + l]! & 0xf)) - m1);
      for (let l = 0; l < 32; ++l) y[yi++] = f(f(d2 * (x[q + l]! >> 4)) - m2);
      q += 32;
      is += 2;
    }
  }
  return y;
}

/** The f32 weight [n, k] a Q4_K split layout stands for, decoded from its ggml bytes by the code above. */
const refDequantQ4K = (w: Q4KWeight, n: number, k: number) => dequantizeRowQ4K(joinQ4K(w), n * k);

/**
 * Seed Q4_K data with d and dmin rounded to f16: a ggml block stores them as f16, so only then do the raw
 * bytes (joinQ4K) hold exactly the operand the oracle multiplies.
 */
function genQ4kF16(m: number, n: number, k: number): MmqQ4kData {
  const d = genMmqQ4k(m, n, k);
  return { ...d, w: { ...d.w, d: d.w.d.map(roundToF16), dmin: d.w.dmin.map(roundToF16) } };
}

describe('mmqQ8Ref', () => {
  it('is the exact integer GEMM when every scale is 1', () => {
    const [m, n, k] = [8, 8, 64];
    const d = genMmq(m, n, k);
    d.xs.fill(1);
    d.wd.fill(1);
    const got = mmqQ8Ref(d, m, n, k);
    const want = gemmF64(d.xq, d.wq, m, n, k); // |sum| < 2^24: exact in f32
    expect(Array.from(got)).toEqual(Array.from(want));
  });

  it('matches the dequantize-then-multiply reference on seed data', () => {
    for (const [m, n, k] of [
      [16, 16, 64],
      [32, 16, 128],
      [16, 32, 256],
    ] as const) {
      const d = genMmq(m, n, k);
      const x = dequantizeActivation(d.xq, d.xs, m, k);
      const w = dequantizeQ8_0({ q: d.wq, d: d.wd }, n, k);
      const rel = relToMax(mmqQ8Ref(d, m, n, k), gemmF64(x, w, m, n, k));
      expect(rel, `${m}x${n}x${k}`).toBeLessThan(2e-6);
    }
  });
});

describe('mmqQ4kRef', () => {
  it('matches the dequantize-then-multiply reference: xs*(D*dot) - M*xsum == sum x*(D*q - M)', () => {
    for (const [m, n, k] of [
      [8, 16, 256],
      [4, 8, 512],
    ] as const) {
      const d = genQ4kF16(m, n, k);
      const x = dequantizeActivation(d.xq, d.xs, m, k);
      const rel = relToMax(mmqQ4kRef(d, m, n, k), gemmF64(x, refDequantQ4K(d.w, n, k), m, n, k));
      expect(rel, `${m}x${n}x${k}`).toBeLessThan(1e-5);
    }
  });

  it('matches the reference on weights from the ggml quantizer (real blocks, not random scale bytes)', () => {
    const [m, n, k] = [4, 6, 512];
    const d = genMmqQ4k(m, n, k);
    const w = quantizeQ4K(gaussianStream(new XorShift64(0x9b05688c2b3e6c1fn), n * k, 0.05), n, k);
    expect(Array.from(joinQ4K(w.split))).toEqual(Array.from(w.bytes));
    const data: MmqQ4kData = { ...d, w: w.split };
    const x = dequantizeActivation(d.xq, d.xs, m, k);
    const rel = relToMax(mmqQ4kRef(data, m, n, k), gemmF64(x, dequantizeRowQ4K(w.bytes, n * k), m, n, k));
    expect(rel).toBeLessThan(1e-5);
  });

  it('the reference catches an epilogue that drops - M*xsum (what the GPU negative test relies on)', () => {
    const [m, n, k] = [8, 16, 256];
    const d = genQ4kF16(m, n, k);
    const noMin: MmqQ4kData = { ...d, w: { ...d.w, dmin: new Float32Array(d.w.dmin.length) } };
    const x = dequantizeActivation(d.xq, d.xs, m, k);
    const rel = relToMax(mmqQ4kRef(noMin, m, n, k), gemmF64(x, refDequantQ4K(d.w, n, k), m, n, k));
    expect(rel).toBeGreaterThan(1e-2);
  });

  it('the reference decoder follows ggml: a hand-made block decodes to the values worked out on paper', () => {
    // d = 1 (0x3c00), dmin = 0.5 (0x3800); sub-block 0: sc 3, m 2; sub-block 1: sc 5, m 1; sub-block 5
    // (j >= 4, the packed path): sc = (b[9] & 15) | (b[1] >> 6) << 4 = 7 | 1 << 4 = 23, m = (b[9] >> 4) |
    // (b[5] >> 6) << 4 = 2 | 2 << 4 = 34. qs byte 0 = 0x9a: sub-block 0 reads 0xa, sub-block 1 reads 0x9;
    // qs byte 64 = 0x0c: sub-block 4 reads 0xc, sub-block 5 reads 0.
    const b = new Uint8Array(144);
    b.set([0x00, 0x3c, 0x00, 0x38]);
    b.set([3, 5 | (1 << 6), 0, 0, 2, 1 | (2 << 6), 0, 0, 0, 7 | (2 << 4), 0, 0], 4);
    b[16] = 0x9a;
    b[16 + 64] = 0x0c;
    const y = dequantizeRowQ4K(b, 256);
    expect(y[0]).toBe(3 * 10 - 0.5 * 2);
    expect(y[1]).toBe(-1); // nibble 0 of sub-block 0
    expect(y[32]).toBe(5 * 9 - 0.5 * 1);
    expect(y[128]).toBe(0 * 12 - 0); // sub-block 4: sc = b[8] & 15 | (b[0] >> 6) << 4 = 0, m = 0
    expect(y[160]).toBe(23 * 0 - 0.5 * 34);
  });

  it("the indexed oracle is mmqQ4kRef on each slot's expert slice", () => {
    const [experts, n, k, nslots] = [3, 16, 256, 7];
    const d = genMmqQ4k(nslots, experts * n, k);
    const ids = [2, 0, 1, 1, 2, 0, 2];
    const got = mmqQ4kIdRef(d, ids, nslots, n, k);
    for (let e = 0; e < experts; e++) {
      const per = mmqQ4kRef({ ...d, w: q4kRows(d.w, e * n, n, k) }, nslots, n, k);
      ids.forEach((id, s) => {
        if (id === e)
          expect(Array.from(got.subarray(s * n, s * n + n))).toEqual(
            Array.from(per.subarray(s * n, s * n + n)),
          );
      });
    }
    // One expert with identity routing is the dense oracle, bit for bit.
    const dense = genMmqQ4k(5, n, k);
    expect(Array.from(mmqQ4kIdRef(dense, [0, 0, 0, 0, 0], 5, n, k))).toEqual(
      Array.from(mmqQ4kRef(dense, 5, n, k)),
    );
  });

  it("the indexed q8 oracle is mmqQ8Ref on each slot's expert rows", () => {
    const [n, k] = [8, 64];
    const d = genMmq(4, 2 * n, k);
    const got = mmqQ8IdRef(d, [1, 0, 1, 1], 4, n, k);
    const full = mmqQ8Ref(d, 4, 2 * n, k); // every slot against both experts' rows
    [1, 0, 1, 1].forEach((e, s) => {
      expect(Array.from(got.subarray(s * n, s * n + n))).toEqual(
        Array.from(full.subarray(s * 2 * n + e * n, s * 2 * n + e * n + n)),
      );
    });
  });
});

describe('fullPrecision and data sources', () => {
  it('seed data is the seed generator, bit for bit', () => {
    const ds = mmqDataset('q4k', 32, 64, 256, 'reference', 0);
    const g = genMmqQ4k(32, 64, 256);
    expect(ds.inputs.weights).toBe('q4k');
    if (ds.inputs.weights === 'q4k') {
      expect(Array.from(ds.inputs.data.w.qs.subarray(0, 64))).toEqual(Array.from(g.w.qs.subarray(0, 64)));
      expect(Array.from(ds.inputs.data.xsum)).toEqual(Array.from(g.xsum));
    }
    const other = mmqDataset('q4k', 32, 64, 256, 'reference', 7);
    expect(other.inputs.data.xq).not.toEqual(ds.inputs.data.xq);
  });

  it('random data quantizes real f32 tensors: oracle vs full precision is the (small, non-zero) quantization error', () => {
    for (const weights of ['q8_0', 'q4k'] as const) {
      const [m, n, k] = [8, 16, 256];
      const ds = mmqDataset(weights, m, n, k, 'random', 0);
      expect(ds.activationF32).toBeDefined();
      const oracle =
        ds.inputs.weights === 'q8_0' ? mmqQ8Ref(ds.inputs.data, m, n, k) : mmqQ4kRef(ds.inputs.data, m, n, k);
      const rel = relToMax(oracle, fullPrecisionOf(ds, n));
      expect(rel, weights).toBeGreaterThan(1e-6);
      expect(rel, weights).toBeLessThan(weights === 'q8_0' ? 0.02 : 0.1);
    }
  });

  it("gemmF32 with rowExpert reads each row's expert block", () => {
    const x = new Float32Array([1, 2, 3, 4]); // 2 rows, k 2
    const w = new Float32Array([1, 0, 0, 1, 2, 0, 0, 2]); // 2 experts x n 2 x k 2
    expect(Array.from(gemmF32(x, w, 2, 2, 2, [1, 0]))).toEqual([2, 4, 3, 4]);
  });
});
