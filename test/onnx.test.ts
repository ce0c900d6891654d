// bench/onnx.ts and bench/nbits.ts without ONNX Runtime: the protobuf writer against known encodings, the
// MatMulNBits model decoded back field by field, and the data and reference the ORT rows are checked with.
import { describe, expect, it } from 'vitest';
import {
  decodeFields,
  encodeVarint,
  firstElementModel,
  identityModel,
  matMulNBitsModel,
  nbitsShapes,
  OnnxType,
  ProtoWriter,
  type ProtoField,
} from '../bench/onnx';
import {
  ACT_STEP,
  fromF16Words,
  nbitsActivations,
  nbitsRefAt,
  nbitsWeightAt,
  nbitsWeights,
  toF16Words,
} from '../bench/nbits';
import { roundToF16 } from '../src/kernels/quant/f16';

const text = (v: ProtoField['value']) => new TextDecoder().decode(v as Uint8Array);
const sub = (v: ProtoField['value']) => decodeFields(v as Uint8Array);
const all = (fields: ProtoField[], n: number) => fields.filter((f) => f.field === n);
const one = (fields: ProtoField[], n: number) => {
  const f = all(fields, n);
  expect(f).toHaveLength(1);
  return f[0]!.value;
};

describe('protobuf writer', () => {
  it('writes varints as protobuf does (known encodings)', () => {
    expect([...encodeVarint(0)]).toEqual([0]);
    expect([...encodeVarint(1)]).toEqual([1]);
    expect([...encodeVarint(127)]).toEqual([0x7f]);
    expect([...encodeVarint(128)]).toEqual([0x80, 0x01]);
    expect([...encodeVarint(300)]).toEqual([0xac, 0x02]);
    expect([...encodeVarint(2 ** 32)]).toEqual([0x80, 0x80, 0x80, 0x80, 0x10]);
    // An int64 -1 is ten bytes, two's complement.
    expect([...encodeVarint(-1)]).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  });

  it('writes tagged fields and nested messages (the protobuf docs example: field 1 = 150 is 08 96 01)', () => {
    expect([...new ProtoWriter().int(1, 150).finish()]).toEqual([0x08, 0x96, 0x01]);
    // field 2 = "testing": 12 07 74 65 73 74 69 6e 67
    expect([...new ProtoWriter().str(2, 'testing').finish()]).toEqual([
      0x12, 0x07, 0x74, 0x65, 0x73, 0x74, 0x69, 0x6e, 0x67,
    ]);
    // field 3 = message { field 1 = 150 }: 1a 03 08 96 01
    expect([...new ProtoWriter().msg(3, (w) => w.int(1, 150)).finish()]).toEqual([
      0x1a, 0x03, 0x08, 0x96, 0x01,
    ]);
    // packed repeated int64 [3, 270, 86942] in field 4: 22 06 03 8e 02 9e a7 05
    expect([...new ProtoWriter().packedInts(4, [3, 270, 86942]).finish()]).toEqual([
      0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05,
    ]);
    // float 1.0 in field 2: 15 00 00 80 3f
    expect([...new ProtoWriter().float(2, 1).finish()]).toEqual([0x15, 0, 0, 0x80, 0x3f]);
  });

  it('reads back what it wrote, and refuses truncated input', () => {
    const bytes = new ProtoWriter()
      .int(1, 10)
      .str(2, 'x')
      .msg(3, (w) => w.int(1, -1))
      .finish();
    const f = decodeFields(bytes);
    expect(f.map((x) => x.field)).toEqual([1, 2, 3]);
    expect(f[0]!.value).toBe(10n);
    expect(text(f[1]!.value)).toBe('x');
    expect(BigInt.asIntN(64, sub(f[2]!.value)[0]!.value as bigint)).toBe(-1n);
    expect(() => decodeFields(bytes.subarray(0, bytes.length - 1))).toThrow(RangeError);
  });
});

describe('ONNX models', () => {
  it('MatMulNBits: IR 10, opsets "" 21 and com.microsoft 1, one node with K, N, bits, block_size, accuracy_level', () => {
    const m = decodeFields(matMulNBitsModel({ k: 4096, n: 11008, float: 'f16', accuracyLevel: 4 }));
    expect(one(m, 1)).toBe(10n);
    const opsets = all(m, 8).map((o) => {
      const f = sub(o.value);
      return [all(f, 1).length ? text(one(f, 1)) : '', one(f, 2)];
    });
    expect(opsets).toEqual([
      ['', 21n],
      ['com.microsoft', 1n],
    ]);
    const graph = sub(one(m, 7));
    const nodes = all(graph, 1).map((n) => sub(n.value));
    expect(nodes).toHaveLength(1);
    const node = nodes[0]!;
    expect(text(one(node, 4))).toBe('MatMulNBits');
    expect(text(one(node, 7))).toBe('com.microsoft');
    expect(all(node, 1).map((i) => text(i.value))).toEqual(['A', 'B', 'scales']);
    expect(all(node, 2).map((o) => text(o.value))).toEqual(['Y']);
    const attrs = Object.fromEntries(
      all(node, 5).map((a) => {
        const f = sub(a.value);
        expect(one(f, 20)).toBe(2n); // AttributeProto.INT
        return [text(one(f, 1)), one(f, 3)];
      }),
    );
    expect(attrs).toEqual({ K: 4096n, N: 11008n, bits: 4n, block_size: 32n, accuracy_level: 4n });
    // Inputs: A [M, K] f16 with M symbolic, B [N, K/32, 16] uint8, scales [N*K/32] f16.
    const inputs = all(graph, 11).map((vi) => {
      const f = sub(vi.value);
      const tensor = sub(one(sub(one(f, 2)), 1));
      const dims = all(sub(one(tensor, 2)), 1).map((d) => {
        const df = sub(d.value);
        return all(df, 1).length ? Number(one(df, 1)) : text(one(df, 2));
      });
      return [text(one(f, 1)), Number(one(tensor, 1)), dims];
    });
    expect(inputs).toEqual([
      ['A', OnnxType.FLOAT16, ['M', 4096]],
      ['B', OnnxType.UINT8, [11008, 128, 16]],
      ['scales', OnnxType.FLOAT16, [11008 * 128]],
    ]);
  });

  it('adds the zero_points input when asked, with packed 4-bit shape', () => {
    const spec = { k: 96, n: 8, float: 'f32' as const, zeroPoints: true };
    expect(nbitsShapes(spec)).toEqual({ b: [8, 3, 16], scales: [24], zeroPoints: [16] });
    const node = sub(one(sub(one(decodeFields(matMulNBitsModel(spec)), 7)), 1));
    expect(all(node, 1).map((i) => text(i.value))).toEqual(['A', 'B', 'scales', 'zero_points']);
    expect(() => nbitsShapes({ k: 100, n: 8, float: 'f32' })).toThrow(RangeError);
  });

  it('Identity and first-element (Slice) models: their ops, and Slice constants as int64 initializers', () => {
    const id = sub(one(decodeFields(identityModel(OnnxType.UINT8, 3)), 7));
    expect(text(one(sub(one(id, 1)), 4))).toBe('Identity');
    const sl = sub(one(decodeFields(firstElementModel(OnnxType.FLOAT)), 7));
    expect(text(one(sub(one(sl, 1)), 4))).toBe('Slice');
    const inits = all(sl, 5).map((t) => {
      const f = sub(t.value);
      const raw = one(f, 9) as Uint8Array;
      return [text(one(f, 8)), Number(one(f, 2)), [...new BigInt64Array(raw.slice().buffer)]];
    });
    expect(inits).toEqual([
      ['starts', OnnxType.INT64, [0n, 0n]],
      ['ends', OnnxType.INT64, [1n, 1n]],
      ['axes', OnnxType.INT64, [0n, 1n]],
    ]);
  });
});

describe('MatMulNBits data and reference', () => {
  it('activations: integers times 2^-7, a +-127 in every 32-block (so int8 re-quantization is exact)', () => {
    const a = nbitsActivations(4, 128, 3);
    for (let blk = 0; blk < a.length / 32; blk++) {
      const block = a.subarray(blk * 32, blk * 32 + 32);
      expect(Math.max(...block.map(Math.abs))).toBe(127 * ACT_STEP);
      for (const x of block) {
        expect(Number.isInteger(x / ACT_STEP)).toBe(true);
        expect(roundToF16(x)).toBe(x);
      }
    }
  });

  it('dequantizes as MatMulNBits defines it: low nibble first, zero point 8 by default, packed zero points', () => {
    const spec = { k: 64, n: 2, float: 'f32' as const };
    const w = nbitsWeights(spec, 5);
    for (const s of w.scales) expect(roundToF16(s)).toBe(s);
    w.b.fill(0);
    w.b[0] = 0x3a; // elements 0 and 1 of row 0: codes 10 (low) and 3 (high)
    w.scales[0] = 0.5;
    expect(nbitsWeightAt(spec, w, 0, 0)).toBe((10 - 8) * 0.5);
    expect(nbitsWeightAt(spec, w, 0, 1)).toBe((3 - 8) * 0.5);
    const z = { ...w, zeroPoints: Uint8Array.of(0x52, 0) }; // row 0: block 0 -> 2, block 1 -> 5
    w.b[16] = 0x07; // row 0, element 32 (block 1): code 7
    w.scales[1] = 0.25;
    expect(nbitsWeightAt(spec, z, 0, 0)).toBe((10 - 2) * 0.5);
    expect(nbitsWeightAt(spec, z, 0, 32)).toBe((7 - 5) * 0.25);
    // The reference is the f64 dot product of A's row with W's row.
    const a = nbitsActivations(1, 64, 1);
    let s = 0;
    for (let l = 0; l < 64; l++) s += a[l]! * nbitsWeightAt(spec, z, 1, l);
    expect(nbitsRefAt(spec, a, z, 0, 1)).toBe(s);
  });

  it('f16 words round-trip the f16-exact values', () => {
    const x = Float32Array.of(1, -2.5, 0.0009765625, 127 * ACT_STEP);
    expect(toF16Words(Float32Array.of(1))[0]).toBe(0x3c00);
    expect([...fromF16Words(toF16Words(x))]).toEqual([...x]);
  });
});
