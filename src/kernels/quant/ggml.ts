// ggml tensor types: id, name, elements per block and bytes per block, as ggml's type_traits have them
// (ggml.c, ggml-common.h block structs). Used to size any tensor in a GGUF, including types no kernel here
// reads. Ids 4, 5 (Q4_2, Q4_3), 31..33 (Q4_0_4_4 ...) and 36..38 (IQ4_NL_4_4 ...) were removed from ggml
// (their block size is 0 there, and gguf.cpp refuses a tensor of them); ggml.h ends at Q2_0 = 42.

/** ggml_type ids by name. */
export const GgmlType = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q4_1: 3,
  Q5_0: 6,
  Q5_1: 7,
  Q8_0: 8,
  Q8_1: 9,
  Q2_K: 10,
  Q3_K: 11,
  Q4_K: 12,
  Q5_K: 13,
  Q6_K: 14,
  Q8_K: 15,
  IQ2_XXS: 16,
  IQ2_XS: 17,
  IQ3_XXS: 18,
  IQ1_S: 19,
  IQ4_NL: 20,
  IQ3_S: 21,
  IQ2_S: 22,
  IQ4_XS: 23,
  I8: 24,
  I16: 25,
  I32: 26,
  I64: 27,
  F64: 28,
  IQ1_M: 29,
  BF16: 30,
  TQ1_0: 34,
  TQ2_0: 35,
  MXFP4: 39,
  NVFP4: 40,
  Q1_0: 41,
  Q2_0: 42,
} as const;
export type GgmlTypeName = keyof typeof GgmlType;

/** How a ggml type is stored: `blockSize` elements in `typeSize` bytes. */
export interface GgmlTypeTraits {
  name: GgmlTypeName;
  blockSize: number;
  typeSize: number;
}

// [elements per block, bytes per block]; the K-quants' sizes follow their block structs, e.g. Q4_K =
// d, dmin (2 x f16) + 12 scale bytes + 128 nibble bytes = 144 for 256 weights.
const SIZES: Readonly<Record<GgmlTypeName, readonly [number, number]>> = {
  F32: [1, 4],
  F16: [1, 2],
  Q4_0: [32, 18],
  Q4_1: [32, 20],
  Q5_0: [32, 22],
  Q5_1: [32, 24],
  Q8_0: [32, 34],
  Q8_1: [32, 36],
  Q2_K: [256, 84],
  Q3_K: [256, 110],
  Q4_K: [256, 144],
  Q5_K: [256, 176],
  Q6_K: [256, 210],
  Q8_K: [256, 292],
  IQ2_XXS: [256, 66],
  IQ2_XS: [256, 74],
  IQ3_XXS: [256, 98],
  IQ1_S: [256, 50],
  IQ4_NL: [32, 18],
  IQ3_S: [256, 110],
  IQ2_S: [256, 82],
  IQ4_XS: [256, 136],
  I8: [1, 1],
  I16: [1, 2],
  I32: [1, 4],
  I64: [1, 8],
  F64: [1, 8],
  IQ1_M: [256, 56],
  BF16: [1, 2],
  TQ1_0: [256, 54],
  TQ2_0: [256, 66],
  MXFP4: [32, 17],
  // ggml.c type_traits: blck_size QK_NVFP4 = 64, QK1_0 = 128, QK2_0 = 64, and the sizeof of their blocks.
  NVFP4: [64, 36],
  Q1_0: [128, 18],
  Q2_0: [64, 18],
};

/**
 * ggml's GGML_TYPE_COUNT: gguf.cpp refuses a tensor type id at or past it (or negative as an int32) as
 * undefined, and one below it whose block size is 0 (a removed type) as not a whole number of blocks.
 */
export const GGML_TYPE_COUNT = 43;

const BY_ID = new Map<number, GgmlTypeTraits>(
  (Object.keys(GgmlType) as GgmlTypeName[]).map((name) => {
    const [blockSize, typeSize] = SIZES[name];
    return [GgmlType[name], { name, blockSize, typeSize }];
  }),
);

/**
 * Block size and type size of a ggml type id, or undefined for an id this table does not know.
 * @example ggmlTypeTraits(12) // { name: 'Q4_K', blockSize: 256, typeSize: 144 }
 */
export function ggmlTypeTraits(type: number): GgmlTypeTraits | undefined {
  return BY_ID.get(type);
}

/**
 * The ggml name of a tensor type, or `type<N>` for an id this table does not know.
 * @example ggmlTypeName(14) === 'Q6_K'; ggmlTypeName(77) === 'type77'
 */
export function ggmlTypeName(type: number): string {
  return BY_ID.get(type)?.name ?? `type${type}`;
}

/**
 * ggml_nbytes of a contiguous tensor: ne[0]/blockSize blocks per row times typeSize times the other dims.
 * Undefined for an unknown type or a row length that is not a whole number of blocks.
 * @example ggmlTensorByteLength(GgmlType.Q4_K, [512, 10]) === 2880
 */
export function ggmlTensorByteLength(type: number, ne: readonly number[]): number | undefined {
  const t = BY_ID.get(type);
  const row = ne[0] ?? 1;
  if (!t || row % t.blockSize !== 0) return undefined;
  return ne.slice(1).reduce((a, b) => a * b, (row / t.blockSize) * t.typeSize);
}
