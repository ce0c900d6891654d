// The GGUF reader against a file it did not write: test/golden/gguf/peer_default.gguf (llama.cpp's gguf-py
// 0.10.0) and gguf-py's own view of it (names, types, ne, offsets, sizes, metadata, dequantized values).
import { describe, expect, it } from 'vitest';
import {
  blobSource,
  bytesSource,
  dequantizeQ4K,
  ggufTensor,
  ggufTypeName,
  openGguf,
  q4kRows,
  readTensor,
  readTensorOperand,
  tensorToF32,
  type ByteSource,
  type GgufFile,
  type GgufValue,
} from '../src/kernels/quant';
import { presetFromGgufMetadata } from '../src/kernels/models';
import { goldenF32, goldenGguf, goldenGgufView } from './golden';

const view = goldenGgufView();
const bytes = goldenGguf();

/** gguf-py prints integers and bools as strings ("250", "True"), floats as numbers. */
function asGgufPy(v: GgufValue): unknown {
  if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))) return String(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return v;
}

const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);

const sources: [string, () => ByteSource][] = [
  ['bytesSource', () => bytesSource(bytes)],
  ['blobSource', () => blobSource(new File([bytes], 'peer_default.gguf'))],
];

describe.each(sources)('the gguf-py file through %s', (_, makeSource) => {
  const src = makeSource();
  let file: GgufFile;
  it('opens: version, alignment and data offset as gguf-py has them', async () => {
    file = await openGguf(src, { initialReadBytes: 4096 });
    expect(file.version).toBe(3);
    expect(file.alignment).toBe(view.alignment);
    expect(file.dataOffset).toBe(view.data_offset);
    expect(file.headerBytes).toBe(99490); // 30 bytes of padding to the data at 99520
    expect(file.fileSize).toBe(bytes.length);
    // Pinned (checked with an independent Python FNV-1a over bytes [0, 99490)): permalinks store this
    // hash, so it must not change between versions of the reader.
    expect(file.headerHash).toBe('26405835ce3f8093');
  });

  it("tensors: names, ggml types, ne, absolute offsets and byte sizes equal gguf-py's", () => {
    expect(file.tensors.map((t) => [t.name, t.typeName, t.ne, t.offset, t.byteLength])).toEqual(
      view.tensors.map((t) => [t.name, t.type, t.ne, t.offset, t.nbytes]),
    );
    for (const t of file.tensors) expect(t.shape).toEqual([...t.ne].reverse());
  });

  it("metadata: every key, its type and its value equal gguf-py's (long arrays walked, not kept)", () => {
    expect([...file.metadata.keys()]).toEqual(Object.keys(view.meta));
    for (const [key, want] of Object.entries(view.meta)) {
      const type = file.metadataTypes.get(key)!;
      const got = file.metadata.get(key)!;
      expect(ggufTypeName(type.type), key).toBe(want.type);
      if (want.type !== 'ARRAY') {
        expect(asGgufPy(got), key).toEqual(want.value);
        continue;
      }
      expect(ggufTypeName(type.elementType!), key).toBe(want.sub);
      if (want.value === null) {
        // gguf-py left these out of its dump (5,000 and 6,000 elements); the default keeps up to 4,096.
        expect(got, key).toEqual({ skipped: true, elementType: type.elementType, length: want.len });
      } else {
        expect(Array.isArray(got) && got.length, key).toBe(want.len);
        expect(got, key).toEqual(want.value);
      }
    }
  });

  it('dequantized F16, Q8_0 and Q4_K (2-D and the 3-D expert bank) equal gguf-py bit for bit', async () => {
    for (const name of ['t.f16', 't.q8_0', 'blk.0.ffn_down.weight', 'blk.0.ffn_down_exps.weight']) {
      const want = goldenF32(`gguf/peer_default.${name}.gguf_py_dequant.f32`);
      const got = tensorToF32(ggufTensor(file, name), await readTensor(src, file, name));
      expect(got.length, name).toBe(want.length);
      expect(bits(got), name).toEqual(bits(want));
    }
  });

  it("the expert bank ne = [256, 8, 4] is 32 rows; expert e's rows e*8 .. e*8+7 are its slice of the values", async () => {
    const w = await readTensorOperand(src, file, 'blk.0.ffn_down_exps.weight');
    if (w.type !== 'Q4_K') throw new Error(w.type);
    expect([w.k, w.n, w.experts, w.rows]).toEqual([256, 8, 4, 32]);
    const want = goldenF32('gguf/peer_default.blk.0.ffn_down_exps.weight.gguf_py_dequant.f32');
    for (let e = 0; e < 4; e++) {
      const got = dequantizeQ4K(q4kRows(w.weight, e * 8, 8, 256), 8, 256);
      expect(bits(got), `expert ${e}`).toEqual(bits(want.subarray(e * 8 * 256, (e + 1) * 8 * 256)));
    }
    const d = await readTensorOperand(src, file, 'blk.0.ffn_down.weight');
    expect([d.type, d.k, d.n, d.experts, d.rows]).toEqual(['Q4_K', 512, 10, 1, 10]);
    const q = await readTensorOperand(src, file, 't.q8_0');
    expect([q.type, q.k, q.n, q.rows]).toEqual(['Q8_0', 128, 6, 6]);
  });

  it('Q4_0, BF16, F16 and F32 tensors are listed, and refused as kernel operands', async () => {
    for (const name of ['t.q4_0', 't.bf16', 't.f16', 't.f32.3d']) {
      const t = ggufTensor(file, name);
      await expect(readTensorOperand(src, file, name), name).rejects.toThrow(
        `tensor '${name}' is ${t.typeName}: not taken by these kernels (Q8_0, Q4_K)`,
      );
    }
  });
});

describe('the gguf-py file with a larger array limit', () => {
  it('keeps the 5,000 tokens and 6,000 ints when maxArrayElements allows them', async () => {
    const file = await openGguf(bytesSource(bytes), { maxArrayElements: 10_000 });
    const tokens = file.metadata.get('tokenizer.ggml.tokens');
    expect(Array.isArray(tokens) && tokens.length).toBe(5000);
    const ints = file.metadata.get('test.arr.bigints');
    expect(Array.isArray(ints) && ints.length).toBe(6000);
    expect(file.headerHash).toBe('26405835ce3f8093'); // the options change what is kept, not the hash
  });
});

describe('a model preset from the gguf-py file', () => {
  it('its metadata alone is not enough (arch llama, no llama.* dims); its tensors give the GEMMs', async () => {
    const file = await openGguf(bytesSource(bytes));
    expect(() => presetFromGgufMetadata(file.metadata)).toThrow(
      'no model preset: the GGUF metadata lacks llama.embedding_length, llama.attention.head_count',
    );
    const p = presetFromGgufMetadata(file.metadata, file.tensors);
    expect(p.id).toBe('gguf:llama');
    expect(p.name).toBe('heldout-peer-file');
    expect(p.gemms).toEqual([
      {
        name: 'ffn_down',
        n: 10,
        k: 512,
        fits: { Q4_K: true, Q8_0: true },
        tensor: { name: 'blk.0.ffn_down.weight', typeName: 'Q4_K' },
      },
      {
        name: 'ffn_down_exps',
        n: 8,
        k: 256,
        experts: 4,
        fits: { Q4_K: true, Q8_0: true },
        tensor: { name: 'blk.0.ffn_down_exps.weight', typeName: 'Q4_K' },
      },
    ]);
  });
});
