import { describe, expect, it } from 'vitest';
import { GgmlType, ggmlTensorByteLength, ggmlTypeName, ggmlTypeTraits, type GgmlTypeName } from './ggml';

const QK_K = 256;
const HALF = 2;

// sizeof of each block struct in ggml-common.h, written out field by field.
const STRUCT_BYTES: Partial<Record<GgmlTypeName, number>> = {
  Q4_0: HALF + 32 / 2,
  Q4_1: 2 * HALF + 32 / 2,
  Q5_0: HALF + 4 + 32 / 2,
  Q5_1: 2 * HALF + 4 + 32 / 2,
  Q8_0: HALF + 32,
  Q8_1: 2 * HALF + 32,
  Q2_K: QK_K / 16 + QK_K / 4 + 2 * HALF,
  Q3_K: QK_K / 8 + QK_K / 4 + 12 + HALF,
  Q4_K: 2 * HALF + 12 + QK_K / 2,
  Q5_K: 2 * HALF + 12 + QK_K / 8 + QK_K / 2,
  Q6_K: QK_K / 2 + QK_K / 4 + QK_K / 16 + HALF,
  Q8_K: 4 + QK_K + (QK_K / 16) * 2,
  IQ4_NL: HALF + 32 / 2,
  IQ4_XS: HALF + 2 + QK_K / 64 + QK_K / 2,
  TQ2_0: QK_K / 4 + HALF,
  MXFP4: 1 + 32 / 2,
};

describe('ggml type table', () => {
  it('type sizes equal the block structs of ggml-common.h', () => {
    for (const [name, bytes] of Object.entries(STRUCT_BYTES)) {
      expect(ggmlTypeTraits(GgmlType[name as GgmlTypeName])?.typeSize, name).toBe(bytes);
    }
  });

  it('sizes tensors as ggml_nbytes; unknown types and partial blocks are undefined', () => {
    expect(ggmlTensorByteLength(GgmlType.Q4_K, [512, 10])).toBe(2880);
    expect(ggmlTensorByteLength(GgmlType.Q4_K, [256, 8, 4])).toBe(4608);
    expect(ggmlTensorByteLength(GgmlType.Q4_0, [64, 2])).toBe(72);
    expect(ggmlTensorByteLength(GgmlType.BF16, [32, 2])).toBe(128);
    expect(ggmlTensorByteLength(GgmlType.Q8_0, [48])).toBeUndefined();
    expect(ggmlTensorByteLength(77, [32])).toBeUndefined();
    expect([ggmlTypeName(30), ggmlTypeName(4), ggmlTypeName(39)]).toEqual(['BF16', 'type4', 'MXFP4']);
  });
});
