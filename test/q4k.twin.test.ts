// A second transcription of ggml's quantize_row_q4_K_ref (ggml-quants.c at ggml-org/ggml d99724f2, the
// commit test/golden/quant was made with), written from the C and kept apart from src/kernels/quant/q4k.ts.
// It is held to ggml's own bytes on every golden case, and then serves as the oracle where the goldens do
// not reach: super-blocks in which make_qkx2_quants' last search step (is = nstep = 20) decides the fit.
// A mutation run (scripts/mutate.ts) showed that stopping the search one step early changed no golden
// byte; it changes these.
import { describe, expect, it } from 'vitest';
import { f16BitsToF32, f32ToF16Bits, gaussianStream, quantizeQ4K, XorShift64 } from '../src/kernels/quant';
import { goldenBytes, goldenF32, goldenQuantCases } from './golden';

const F = Math.fround;
const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);

/** static inline int nearest_int(float fval): fval + 12582912.f, then the low 23 bits less 0x400000. */
function nearest_int(fval: number): number {
  f32[0] = F(F(fval) + 12582912);
  return (i32[0]! & 0x007fffff) - 0x00400000;
}

const MAX = Math.max;
const MIN = Math.min;

/** make_qkx2_quants(n, nmax, x, weights, L, &the_min, Laux, rmin, rdelta, nstep, use_mad = false). */
function make_qkx2_quants(
  n: number,
  nmax: number,
  x: Float32Array,
  weights: Float32Array,
  L: Uint8Array,
  rmin: number,
  rdelta: number,
  nstep: number,
): { scale: number; the_min: number } {
  let min = x[0]!;
  let max = x[0]!;
  let sum_w = weights[0]!;
  let sum_x = F(sum_w * x[0]!);
  for (let i = 1; i < n; ++i) {
    if (x[i]! < min) min = x[i]!;
    if (x[i]! > max) max = x[i]!;
    const w = weights[i]!;
    sum_w = F(sum_w + w);
    sum_x = F(sum_x + F(w * x[i]!));
  }
  if (min > 0) min = 0;
  if (max === min) {
    L.fill(0, 0, n);
    return { scale: 0, the_min: -min };
  }
  let iscale = F(nmax / F(max - min));
  let scale = F(1 / iscale);
  let best_error = 0;
  for (let i = 0; i < n; ++i) {
    const l = nearest_int(F(iscale * F(x[i]! - min)));
    L[i] = MAX(0, MIN(nmax, l));
    let diff = F(F(F(scale * L[i]!) + min) - x[i]!);
    diff = F(diff * diff);
    best_error = F(best_error + F(weights[i]! * diff));
  }
  const Laux = new Uint8Array(n);
  for (let is = 0; is <= nstep; ++is) {
    iscale = F(F(F(rmin + F(rdelta * is)) + nmax) / F(max - min));
    let sum_l = 0;
    let sum_l2 = 0;
    let sum_xl = 0;
    for (let i = 0; i < n; ++i) {
      let l = nearest_int(F(iscale * F(x[i]! - min)));
      l = MAX(0, MIN(nmax, l));
      Laux[i] = l;
      const w = weights[i]!;
      sum_l = F(sum_l + F(w * l));
      sum_l2 = F(sum_l2 + F(F(w * l) * l));
      sum_xl = F(sum_xl + F(F(w * l) * x[i]!));
    }
    const D = F(F(sum_w * sum_l2) - F(sum_l * sum_l));
    if (D > 0) {
      let this_scale = F(F(F(sum_w * sum_xl) - F(sum_x * sum_l)) / D);
      let this_min = F(F(F(sum_l2 * sum_x) - F(sum_l * sum_xl)) / D);
      if (this_min > 0) {
        this_min = 0;
        this_scale = F(sum_xl / sum_l2);
      }
      let cur_error = 0;
      for (let i = 0; i < n; ++i) {
        let diff = F(F(F(this_scale * Laux[i]!) + this_min) - x[i]!);
        diff = F(diff * diff);
        cur_error = F(cur_error + F(weights[i]! * diff));
      }
      if (cur_error < best_error) {
        L.set(Laux.subarray(0, n));
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  return { scale, the_min: -min };
}

/** get_scale_min_k4(j, q, &d, &m). */
function get_scale_min_k4(j: number, q: Uint8Array): [number, number] {
  if (j < 4) return [q[j]! & 63, q[j + 4]! & 63];
  return [(q[j + 4]! & 0xf) | ((q[j - 4]! >> 6) << 4), (q[j + 4]! >> 4) | ((q[j]! >> 6) << 4)];
}

/** quantize_row_q4_K_ref(x, y, k) with the search's step count as a parameter (ggml: 20). */
function quantize_row_q4_K_ref(x: Float32Array, k: number, nstep = 20): Uint8Array {
  const QK_K = 256;
  const nb = k / QK_K;
  const y = new Uint8Array(nb * 144);
  const L = new Uint8Array(QK_K);
  const weights = new Float32Array(32);
  const mins = new Float32Array(QK_K / 32);
  const scales = new Float32Array(QK_K / 32);
  for (let i = 0; i < nb; i++) {
    const xb = x.subarray(i * QK_K, (i + 1) * QK_K);
    const blk = y.subarray(i * 144, (i + 1) * 144);
    const sc = blk.subarray(4, 16);
    let max_scale = 0;
    let max_min = 0;
    for (let j = 0; j < QK_K / 32; ++j) {
      let sum_x2 = 0;
      for (let l = 0; l < 32; ++l) sum_x2 = F(sum_x2 + F(xb[32 * j + l]! * xb[32 * j + l]!));
      const av_x = F(Math.sqrt(F(sum_x2 / 32)));
      for (let l = 0; l < 32; ++l) weights[l] = F(av_x + Math.abs(xb[32 * j + l]!));
      const r = make_qkx2_quants(32, 15, xb.subarray(32 * j), weights, L.subarray(32 * j), -1, F(0.1), nstep);
      scales[j] = r.scale;
      mins[j] = r.the_min;
      if (scales[j]! > max_scale) max_scale = scales[j]!;
      if (mins[j]! > max_min) max_min = mins[j]!;
    }
    const inv_scale = max_scale > 0 ? F(63 / max_scale) : 0;
    const inv_min = max_min > 0 ? F(63 / max_min) : 0;
    for (let j = 0; j < QK_K / 32; ++j) {
      // uint8_t ls = nearest_int(...): the conversion keeps the low 8 bits.
      const ls = MIN(63, nearest_int(F(inv_scale * scales[j]!)) & 0xff);
      const lm = MIN(63, nearest_int(F(inv_min * mins[j]!)) & 0xff);
      if (j < 4) {
        sc[j] = ls;
        sc[j + 4] = lm;
      } else {
        sc[j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
        sc[j - 4]! |= (ls >> 4) << 6;
        sc[j]! |= (lm >> 4) << 6;
      }
    }
    const d16 = f32ToF16Bits(F(max_scale / 63));
    const dmin16 = f32ToF16Bits(F(max_min / 63));
    blk[0] = d16 & 0xff;
    blk[1] = d16 >> 8;
    blk[2] = dmin16 & 0xff;
    blk[3] = dmin16 >> 8;
    for (let j = 0; j < QK_K / 32; ++j) {
      const [s, m] = get_scale_min_k4(j, sc);
      const d = F(f16BitsToF32(d16) * s);
      if (!d) continue;
      const dm = F(f16BitsToF32(dmin16) * m);
      for (let ii = 0; ii < 32; ++ii) {
        const l = nearest_int(F(F(xb[32 * j + ii]! + dm) / d));
        L[32 * j + ii] = MAX(0, MIN(15, l));
      }
    }
    const q = blk.subarray(16);
    for (let j = 0, o = 0; j < QK_K; j += 64, o += 32)
      for (let l = 0; l < 32; ++l) q[o + l] = L[j + l]! | (L[j + l + 32]! << 4);
  }
  return y;
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

describe('Q4_K against a second transcription of ggml quantize_row_q4_K_ref', () => {
  it("the transcription reproduces ggml's bytes on every golden case (so it is a faithful oracle)", () => {
    const cases = goldenQuantCases();
    expect(cases.length).toBeGreaterThanOrEqual(9);
    for (const { name, rows, k } of cases)
      expect(
        sameBytes(
          quantize_row_q4_K_ref(goldenF32(`quant/${name}.f32`), rows * k),
          goldenBytes(`quant/${name}.ggml.q4_K`),
        ),
        name,
      ).toBe(true);
  });

  it('quantizeQ4K equals it on 40 gaussian super-blocks, among them blocks where the search step is = 20 decides', () => {
    let decidedByLastStep = 0;
    for (let i = 100; i < 140; i++) {
      const x = gaussianStream(new XorShift64(BigInt(i + 1)), 256);
      const want = quantize_row_q4_K_ref(x, 256);
      expect(sameBytes(quantizeQ4K(x, 1, 256).bytes, want), `super-block seed ${i + 1}`).toBe(true);
      if (!sameBytes(quantize_row_q4_K_ref(x, 256, 19), want)) decidedByLastStep++;
    }
    // Stopping the search at is = 19 would change these blocks' bytes (seed 106 is one).
    expect(decidedByLastStep).toBeGreaterThan(0);
  });
});
