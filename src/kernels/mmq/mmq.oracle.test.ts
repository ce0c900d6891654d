// The oracles against naive dequantize-then-multiply references (pure Node, no GPU): the oracle must be
// the quantized math itself, and a wrong epilogue must be visible against an independent reference.
import { describe, expect, it } from 'vitest';
import { relToMax } from '../compare';
import { gemmF64 } from '../oracle';
import { genMmq, genMmqQ4k, type MmqQ4kData } from '../quant/gen';
import { dequantizeQ4K, q4kRows } from '../quant/q4k';
import { dequantizeQ8_0 } from '../quant/q8';
import { fullPrecisionOf, mmqDataset } from './mmq.data';
import { dequantizeActivation, gemmF32, mmqQ4kIdRef, mmqQ4kRef, mmqQ8IdRef, mmqQ8Ref } from './mmq.oracle';

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
      const d = genMmqQ4k(m, n, k);
      const x = dequantizeActivation(d.xq, d.xs, m, k);
      const rel = relToMax(mmqQ4kRef(d, m, n, k), gemmF64(x, dequantizeQ4K(d.w, n, k), m, n, k));
      expect(rel, `${m}x${n}x${k}`).toBeLessThan(1e-5);
    }
  });

  it('the reference catches an epilogue that drops - M*xsum (what the GPU negative test relies on)', () => {
    const [m, n, k] = [8, 16, 256];
    const d = genMmqQ4k(m, n, k);
    const noMin: MmqQ4kData = { ...d, w: { ...d.w, dmin: new Float32Array(d.w.dmin.length) } };
    const x = dequantizeActivation(d.xq, d.xs, m, k);
    const rel = relToMax(mmqQ4kRef(noMin, m, n, k), gemmF64(x, dequantizeQ4K(d.w, n, k), m, n, k));
    expect(rel).toBeGreaterThan(1e-2);
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
