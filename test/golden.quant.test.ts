// Byte equality with ggml's own reference quantizers (test/golden/quant, produced by ggml's C code, not ours)
// on every golden case: Q8_0, q8_1 and Q4_K bytes, and dequantize_row_q4_K's f32 values bit for bit.
import { describe, expect, it } from 'vitest';
import {
  dequantizeQ4K,
  joinQ4K,
  Q4K_BLOCK_BYTES,
  Q8_0_BLOCK_BYTES,
  Q8_1_BLOCK_BYTES,
  quantizeQ4K,
  quantizeQ8_0,
  quantizeQ8_1,
  splitQ4K,
  splitQ8_0,
} from '../src/kernels/quant';
import { f16BitsToF32 } from '../src/kernels/quant/f16';
import { goldenBytes, goldenF32, goldenQuantCases } from './golden';

/** Indices of the blocks whose bytes differ (an empty list when equal), so a failure says how many and where. */
function badBlocks(got: Uint8Array, want: Uint8Array, blockBytes: number): number[] {
  expect(got.length).toBe(want.length);
  const bad: number[] = [];
  for (let b = 0; b < want.length / blockBytes; b++) {
    for (let i = b * blockBytes; i < (b + 1) * blockBytes; i++) {
      if (got[i] !== want[i]) {
        bad.push(b);
        break;
      }
    }
  }
  return bad;
}

/** f32 values compared by their bits (tells -0 from 0, and NaN payloads apart). */
const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);

const cases = goldenQuantCases();

describe('golden cases', () => {
  it('are all there: nine inputs covering normal, uniform, zeros, subnormal-d, outliers, min clamp, const, ties, affine', () => {
    expect(cases.map((c) => c.name)).toEqual([
      'normal',
      'uniform',
      'zeros',
      'small1e-5',
      'outlier',
      'positive',
      'const_neg',
      'ties_half',
      'affine_blocks',
    ]);
    for (const c of cases) expect(goldenF32(`quant/${c.name}.f32`).length, c.name).toBe(c.rows * c.k);
  });
});

describe.each(cases)('golden quant case $name ($rows x $k: $desc)', ({ name, rows, k }) => {
  const x = goldenF32(`quant/${name}.f32`);

  it('Q8_0 bytes equal quantize_row_q8_0_ref, and the split layout decodes them', () => {
    const want = goldenBytes(`quant/${name}.ggml.q8_0`);
    const { bytes, split } = quantizeQ8_0(x, rows, k);
    expect(badBlocks(bytes, want, Q8_0_BLOCK_BYTES)).toEqual([]);
    const back = splitQ8_0(want, rows, k);
    expect([...back.q]).toEqual([...split.q]);
    expect(bits(back.d)).toEqual(bits(split.d));
  });

  it('q8_1 bytes equal quantize_row_q8_1_ref (d and s = d*sum(q) as f16)', () => {
    const want = goldenBytes(`quant/${name}.ggml.q8_1`);
    const { bytes, split } = quantizeQ8_1(x, rows, k);
    expect(badBlocks(bytes, want, Q8_1_BLOCK_BYTES)).toEqual([]);
    const dv = new DataView(want.buffer);
    for (let b = 0; b < split.s.length; b++) {
      expect(split.d[b]).toBe(f16BitsToF32(dv.getUint16(b * Q8_1_BLOCK_BYTES, true)));
      expect(split.s[b]).toBe(f16BitsToF32(dv.getUint16(b * Q8_1_BLOCK_BYTES + 2, true)));
    }
  });

  it('Q4_K bytes equal quantize_row_q4_K_ref; split/join round-trips them', () => {
    const want = goldenBytes(`quant/${name}.ggml.q4_K`);
    const { bytes, split } = quantizeQ4K(x, rows, k);
    expect(badBlocks(bytes, want, Q4K_BLOCK_BYTES)).toEqual([]);
    expect(badBlocks(joinQ4K(split), want, Q4K_BLOCK_BYTES)).toEqual([]);
  });

  it('dequantizeQ4K of ggml bytes equals dequantize_row_q4_K bit for bit', () => {
    const want = goldenF32(`quant/${name}.ggml.q4_K.deq`);
    const got = dequantizeQ4K(splitQ4K(goldenBytes(`quant/${name}.ggml.q4_K`), rows, k), rows, k);
    expect(got.length).toBe(want.length);
    let bad = 0;
    for (let i = 0; i < want.length; i++) if (bits(got)[i] !== bits(want)[i]) bad++;
    expect(bad).toBe(0);
  });
});
