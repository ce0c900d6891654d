// The quantizers on degenerate blocks (NaN, +-inf, a super-block scale past f16) against bytes derived by
// hand from ggml's C code (ggml-quants.c quantize_row_q8_0_ref / q8_1_ref / q4_K_ref, make_qkx2_quants,
// nearest_int, GGML_FP32_TO_FP16) under the x86-64 rules ggml's golden outputs were made with: a NaN
// operand is carried through with its sign, an invalid operation (0 * inf) gives the default NaN
// 0xffc00000 (negative), and a NaN or inf converted to int goes through cvttss2si as 0x80000000.
import { describe, expect, it } from 'vitest';
import { quantizeQ4K } from './q4k';
import { quantizeQ8_0, quantizeQ8_1 } from './q8';

const block = (len: number, fill: number, at: Record<number, number> = {}) => {
  const x = new Float32Array(len).fill(fill);
  for (const [i, v] of Object.entries(at)) x[Number(i)] = v;
  return x;
};
const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const i8 = (b: Uint8Array, from: number, n: number) => [...new Int8Array(b.buffer, b.byteOffset + from, n)];

describe('Q8_0 / q8_1 with NaN and inf, as quantize_row_q8_*_ref computes them', () => {
  it('one NaN among ones: MAX(amax, fabsf(v)) = (amax > v ? amax : v) lets the next element replace the NaN', () => {
    // amax: 1, 1, 1, then MAX(1, NaN) = NaN (1 > NaN is false), then MAX(NaN, 1) = 1 (NaN > 1 is false)...
    // so amax = 1 and d = 1/127 = 1.00787 x 2^-7: exponent field 15 - 7 = 8, mantissa round(0.00787 x 1024)
    // = 8 -> 0x2008. id = 1/d = 127, roundf(1 x 127) = 127, and roundf(NaN) -> int8 = 0 (cvttss2si).
    const { bytes } = quantizeQ8_0(block(32, 1, { 3: NaN }), 1, 32);
    expect(u16(bytes, 0)).toBe(0x2008);
    expect(i8(bytes, 2, 32)).toEqual([127, 127, 127, 0, ...new Array<number>(28).fill(127)]);
  });

  it('a NaN in the last position stays (nothing after it replaces it): d = fabsf-born NaN = 0x7e00, codes 0', () => {
    // amax = MAX(1, NaN) = NaN at j = 31; fabsf cleared its sign, NaN / 127 keeps it: GGML_FP32_TO_FP16 of a
    // positive NaN is 0x7e00. id = d ? 1/d : 0 takes 1/d (a NaN is not 0) = NaN, every code roundf(NaN) -> 0.
    const { bytes } = quantizeQ8_0(block(32, 1, { 31: NaN }), 1, 32);
    expect(u16(bytes, 0)).toBe(0x7e00);
    expect(i8(bytes, 2, 32)).toEqual(new Array<number>(32).fill(0));
  });

  it('an all-NaN block: d = 0x7e00 (positive, from fabsf), codes 0; q8_1 s = 0 x NaN carries that NaN', () => {
    const q80 = quantizeQ8_0(block(32, NaN), 1, 32).bytes;
    expect(u16(q80, 0)).toBe(0x7e00);
    expect(i8(q80, 2, 32)).toEqual(new Array<number>(32).fill(0));
    // q8_1: sum of the stored codes is 0; s = sum * d = 0.0f * NaN: mulss returns the NaN operand, positive.
    const q81 = quantizeQ8_1(block(32, NaN), 1, 32).bytes;
    expect([u16(q81, 0), u16(q81, 2)]).toEqual([0x7e00, 0x7e00]);
  });

  it('an inf in a q8_1 block: d = inf (0x7c00), id = 1/inf = 0, codes 0, s = 0 x inf = the default NaN (0xfe00)', () => {
    // amax = inf, d = inf/127 = inf -> 0x7c00. x * 0 = 0 for the ones, inf * 0 = NaN -> code 0; sum = 0.
    // s = 0.0f * inf is an invalid operation: x86 yields 0xffc00000, and GGML_FP32_TO_FP16 keeps its sign.
    const { bytes } = quantizeQ8_1(block(32, 1, { 5: Infinity }), 1, 32);
    expect([u16(bytes, 0), u16(bytes, 2)]).toEqual([0x7c00, 0xfe00]);
    expect(i8(bytes, 4, 32)).toEqual(new Array<number>(32).fill(0));
  });
});

describe('Q4_K when the super-block scale d overflows f16 (quantize_row_q4_K_ref)', () => {
  // Header bytes: d (f16 LE), dmin (f16 LE), 12 packed scale bytes; then 128 nibble bytes.
  const zeros = (n: number) => new Array<number>(n).fill(0);

  it('one element at 1e20 among ones: d = inf, and the sub-blocks whose 6-bit scale is 0 get codes 0', () => {
    // Sub-block 0 [1e20, 1 x 31]: sum_x2 = 1e40 -> inf, so av_x and every weight are inf; min = 1 -> 0, max =
    // 1e20, scale = 1/(15/1e20) ~ 6.67e18 (D = inf - inf = NaN never passes D > 0). Sub-blocks 1..7 (all 1):
    // scale 1/15, min 0 (mins are -0, so max_min = 0). inv_scale = 63/6.67e18: ls = [63, 0 x 7], lm = 0.
    // d = f16(6.67e18/63) = inf (0x7c00), dmin = f16(0) = 0. Re-quantization: sub-block 0 has d = inf x 63,
    // (x + 0)/inf = 0 -> codes 0; sub-blocks 1..7 have d = inf x 0 = NaN, which `if (!d) continue;` does
    // NOT skip, and nearest_int((1 + 0)/NaN) = 0 (the NaN's mantissa bits 0x400000 minus 0x400000). So
    // every code is 0; a quantizer that skipped NaN like 0 kept 15s there (bytes F0 and FF).
    const { bytes } = quantizeQ4K(block(256, 1, { 0: 1e20 }), 1, 256);
    expect([u16(bytes, 0), u16(bytes, 2)]).toEqual([0x7c00, 0]);
    expect([...bytes.subarray(4, 16)]).toEqual([63, ...zeros(11)]);
    expect([...bytes.subarray(16)]).toEqual(zeros(128));
  });

  it('+inf among ones: scale inf, inv_scale = 63/inf = 0, every 6-bit scale nearest_int(0 x inf = NaN) = 0', () => {
    // Sub-block 0: max = inf, iscale = 15/inf = 0, scale = 1/0 = inf; max_scale = inf -> d = f16(inf) =
    // 0x7c00. ls = nearest_int(0 x inf) = nearest_int(NaN) = 0, the others nearest_int(0 x 1/15) = 0. Every
    // sub-block then has d = inf x 0 = NaN (not skipped): codes nearest_int(NaN) = 0. dmin = 0 (mins -0).
    const { bytes } = quantizeQ4K(block(256, 1, { 0: Infinity }), 1, 256);
    expect([u16(bytes, 0), u16(bytes, 2)]).toEqual([0x7c00, 0]);
    expect([...bytes.subarray(4)]).toEqual(zeros(140));
  });

  it('-inf among ones: the min is -inf, so the_min = inf and dmin = inf too; codes 0', () => {
    // Sub-block 0: min = -inf, iscale = 15/(1 - -inf) = 0, scale = inf, the_min = -min = inf (D stays NaN).
    // max_min = inf -> dmin = 0x7c00, inv_min = 0, lm = nearest_int(0 x inf) = 0; d = 0x7c00 as above.
    const { bytes } = quantizeQ4K(block(256, 1, { 0: -Infinity }), 1, 256);
    expect([u16(bytes, 0), u16(bytes, 2)]).toEqual([0x7c00, 0x7c00]);
    expect([...bytes.subarray(4)]).toEqual(zeros(140));
  });
});
