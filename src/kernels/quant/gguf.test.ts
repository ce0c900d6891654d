import { describe, expect, it } from 'vitest';
import { blobSource, bytesSource, type ByteSource } from './byteSource';
import { f16BitsToF32, f32ToF16Bits } from './f16';
import { fnv1a64 } from './fnv';
import { writeGguf, type KvValue, type TensorSpec } from '../../../test/ggufWriter';
import {
  checkTensorData,
  GgufError,
  GgufType,
  ggufTensor,
  ggufTensorBytes,
  openGguf,
  parseGguf,
  readTensor,
  readTensorOperand,
  tensorOperand,
  tensorToF32,
  type GgufBuffer,
} from './gguf';
import { quantizeQ4K } from './q4k';
import { quantizeQ8_0 } from './q8';
import { XorShift64 } from './xorshift';

/** The sync path: a tensor of a parsed buffer as a kernel operand, or as f32 values. */
const operand = (file: GgufBuffer, name: string) =>
  tensorOperand(ggufTensor(file, name), ggufTensorBytes(file, name));
const valuesOf = (file: GgufBuffer, name: string) =>
  tensorToF32(ggufTensor(file, name), ggufTensorBytes(file, name));

// ---- fixtures ----
const r = new XorShift64(0x1f83d9abfb41bd6bn);
const rand = (len: number, amp: number) =>
  new Float32Array(len).map(() => Math.fround((r.nextMod(1 << 20) / (1 << 19) - 1) * amp));

const f32Data = rand(4 * 3, 5);
const f16Vals = rand(8 * 2, 2);
const f16Bytes = new Uint8Array(new Uint16Array([...f16Vals].map((v) => f32ToF16Bits(v))).buffer);
const q8 = quantizeQ8_0(rand(2 * 64, 1), 2, 64);
const q4k = quantizeQ4K(rand(3 * 256, 0.05), 3, 256);
const q6kBytes = new Uint8Array(210).fill(7);

const KV: [string, KvValue][] = [
  ['general.architecture', { t: 'str', v: 'llama' }],
  ['general.name', { t: 'str', v: 'tiny ünïcode model' }],
  ['t.u8', { t: 'u8', v: 250 }],
  ['t.i8', { t: 'i8', v: -100 }],
  ['t.u16', { t: 'u16', v: 65000 }],
  ['t.i16', { t: 'i16', v: -30000 }],
  ['t.u32', { t: 'u32', v: 4_000_000_000 }],
  ['t.i32', { t: 'i32', v: -2_000_000_000 }],
  ['t.f32', { t: 'f32', v: 0.15625 }],
  ['t.bool', { t: 'bool', v: true }],
  ['t.u64', { t: 'u64', v: 0xfedcba9876543210n }],
  ['t.i64', { t: 'i64', v: -5n }],
  ['t.f64', { t: 'f64', v: Math.PI }],
  ['t.arr_i32', { t: 'arr', elem: 'i32', v: [1, -2, 3].map((v) => ({ t: 'i32' as const, v })) }],
  ['t.arr_str', { t: 'arr', elem: 'str', v: ['a', 'bc', ''].map((v) => ({ t: 'str' as const, v })) }],
  [
    'tokenizer.ggml.tokens',
    { t: 'arr', elem: 'str', v: Array.from({ length: 50 }, (_, i) => ({ t: 'str' as const, v: `tok${i}` })) },
  ],
];

const TENSORS: TensorSpec[] = [
  { name: 'f32.weight', dims: [4, 3], type: 0, data: new Uint8Array(f32Data.buffer) },
  { name: 'f16.weight', dims: [8, 2], type: 1, data: f16Bytes },
  { name: 'q8.weight', dims: [64, 2], type: 8, data: q8.bytes },
  { name: 'q4k.weight', dims: [256, 3, 1], type: 12, data: q4k.bytes },
  { name: 'q6k.weight', dims: [256], type: 14, data: q6kBytes },
];

describe('parseGguf', () => {
  for (const [version, alignment] of [
    [3, undefined],
    [2, 64],
  ] as const) {
    it(`reads a v${version} file (alignment ${alignment ?? 'default 32'}): every metadata type, tensor infos, aligned data`, () => {
      const kv: [string, KvValue][] = alignment
        ? [...KV, ['general.alignment', { t: 'u32', v: alignment }]]
        : KV;
      const file = parseGguf(
        writeGguf({ version, kv, tensors: TENSORS, ...(alignment ? { alignment } : {}) }),
      );
      expect(file.version).toBe(version);
      expect(file.alignment).toBe(alignment ?? 32);
      expect(file.dataOffset % file.alignment).toBe(0);
      const md = file.metadata;
      expect(md.get('general.name')).toBe('tiny ünïcode model');
      expect(md.get('t.u8')).toBe(250);
      expect(md.get('t.i8')).toBe(-100);
      expect(md.get('t.u16')).toBe(65000);
      expect(md.get('t.i16')).toBe(-30000);
      expect(md.get('t.u32')).toBe(4_000_000_000);
      expect(md.get('t.i32')).toBe(-2_000_000_000);
      expect(md.get('t.f32')).toBe(0.15625);
      expect(md.get('t.bool')).toBe(true);
      expect(md.get('t.u64')).toBe(0xfedcba9876543210n);
      expect(md.get('t.i64')).toBe(-5n);
      expect(md.get('t.f64')).toBe(Math.PI);
      expect(md.get('t.arr_i32')).toEqual([1, -2, 3]);
      expect(md.get('t.arr_str')).toEqual(['a', 'bc', '']);
      expect((md.get('tokenizer.ggml.tokens') as string[]).length).toBe(50);
      expect(file.tensors.map((t) => [t.name, t.ne, t.typeName, t.byteLength])).toEqual([
        ['f32.weight', [4, 3], 'F32', 48],
        ['f16.weight', [8, 2], 'F16', 32],
        ['q8.weight', [64, 2], 'Q8_0', 4 * 34],
        ['q4k.weight', [256, 3, 1], 'Q4_K', 3 * 144],
        ['q6k.weight', [256], 'Q6_K', 210],
      ]);
      for (const t of file.tensors) expect((t.offset - file.dataOffset) % file.alignment).toBe(0);
      expect(file.tensors.map((t) => t.shape)).toEqual([[3, 4], [2, 8], [2, 64], [1, 3, 256], [256]]);
      expect([...ggufTensorBytes(file, 'q6k.weight')]).toEqual([...q6kBytes]);
    });
  }

  it('hands Q8_0/Q4_K tensors to the kernels in their split layouts; F32/F16 decode to f32', () => {
    const file = parseGguf(writeGguf({ kv: KV, tensors: TENSORS }).buffer);
    expect([...valuesOf(file, 'f32.weight')]).toEqual([...f32Data]);
    expect([...valuesOf(file, 'f16.weight')]).toEqual([...f16Vals].map((v) => f16BitsToF32(f32ToF16Bits(v))));
    const c = operand(file, 'q8.weight');
    if (c.type !== 'Q8_0') throw new Error(c.type);
    expect([c.rows, c.k, c.n, c.experts]).toEqual([2, 64, 2, 1]);
    expect([...c.weight.q]).toEqual([...q8.split.q]);
    expect([...c.weight.d]).toEqual([...q8.split.d]);
    const d = operand(file, 'q4k.weight');
    if (d.type !== 'Q4_K') throw new Error(d.type);
    expect([d.rows, d.k, d.n, d.experts]).toEqual([3, 256, 3, 1]);
    expect([...d.weight.qs]).toEqual([...q4k.split.qs]);
    expect([...d.weight.scales]).toEqual([...q4k.split.scales]);
    expect([...d.weight.d]).toEqual([...q4k.split.d]);
    expect([...d.weight.dmin]).toEqual([...q4k.split.dmin]);
  });

  it('reads from a Uint8Array that is an unaligned view into a larger buffer', () => {
    const bytes = writeGguf({ kv: KV, tensors: TENSORS });
    const big = new Uint8Array(bytes.length + 3);
    big.set(bytes, 3);
    expect([...valuesOf(parseGguf(big.subarray(3)), 'f32.weight')]).toEqual([...f32Data]);
  });

  it('walks but does not keep arrays longer than maxArrayElements', () => {
    const file = parseGguf(writeGguf({ kv: KV, tensors: TENSORS }), { maxArrayElements: 10 });
    expect(file.metadata.get('tokenizer.ggml.tokens')).toEqual({
      skipped: true,
      elementType: GgufType.STRING,
      length: 50,
    });
    expect(file.metadata.get('t.arr_i32')).toEqual([1, -2, 3]);
    expect(file.tensors).toHaveLength(5); // parsing continued correctly past the skipped array
  });

  it('parses a header-only prefix; a tensor past the prefix fails when read, with the byte range', () => {
    const bytes = writeGguf({ kv: KV, tensors: TENSORS });
    const full = parseGguf(bytes);
    const prefix = parseGguf(bytes.subarray(0, full.dataOffset + 60));
    expect(prefix.tensors).toEqual(full.tensors);
    expect([...valuesOf(prefix, 'f32.weight')]).toEqual([...f32Data]);
    expect(() => operand(prefix, 'q4k.weight')).toThrow(
      /truncated GGUF: tensor 'q4k.weight' needs bytes \[\d+, \d+\) but the data ends at/,
    );
  });
});

describe('parseGguf rejects bad input with GgufError', () => {
  const good = writeGguf({ kv: KV, tensors: TENSORS });
  const headerEnd = parseGguf(good).dataOffset;

  it('not GGUF: wrong magic, empty input', () => {
    expect(() => parseGguf(new TextEncoder().encode('PK\u0003\u0004 a zip file'))).toThrow(
      /not a GGUF file: expected magic 'GGUF', found 'PK..'/,
    );
    expect(() => parseGguf(new Uint8Array(0))).toThrow(GgufError);
  });

  it('unsupported versions 1 and 4', () => {
    for (const v of [1, 4]) {
      const b = good.slice();
      new DataView(b.buffer).setUint32(4, v, true);
      expect(() => parseGguf(b)).toThrow(new RegExp(`unsupported GGUF version ${v}`));
    }
  });

  it('every truncation of the header throws GgufError (never a RangeError or a hang)', () => {
    let other = 0;
    for (let len = 0; len < headerEnd; len++) {
      try {
        const f = parseGguf(good.subarray(0, len));
        // Only the zero padding after the last tensor info may be cut without losing header fields.
        if (len < headerEnd - 31)
          throw new Error(`parsed a ${len}-byte prefix of a ${headerEnd}-byte header: ${f.tensors.length}`);
      } catch (e) {
        if (!(e instanceof GgufError)) other++;
      }
    }
    expect(other).toBe(0);
  });

  it('absurd counts, bad alignment, misaligned offsets, unknown value types', () => {
    const huge = good.slice();
    new DataView(huge.buffer).setBigUint64(16, 1n << 40n, true); // metadata count
    expect(() => parseGguf(huge)).toThrow(/truncated GGUF: 1099511627776 metadata entries/);
    const hugeT = good.slice();
    new DataView(hugeT.buffer).setBigUint64(8, 1n << 62n, true); // tensor count
    expect(() => parseGguf(hugeT)).toThrow(/not a plausible size/);
    const badAlign = writeGguf({ kv: [['general.alignment', { t: 'u32', v: 24 }]], tensors: [] });
    expect(() => parseGguf(badAlign)).toThrow(/general.alignment = 24 is not a positive power of two/);
    const misaligned = writeGguf({ kv: [], tensors: [TENSORS[2]!, TENSORS[0]!], alignment: 2 });
    expect(() => parseGguf(misaligned)).toThrow(/has data offset 136, expected 160 .*would overlap/);
    const w = writeGguf({ kv: [['x', { t: 'u8', v: 1 }]], tensors: [] });
    new DataView(w.buffer).setUint32(24 + 8 + 1, 99, true); // the KV's type field
    expect(() => parseGguf(w)).toThrow(/'x' has unknown value type 99/);
  });

  it('unsupported tensor type and unknown tensor name', () => {
    const file = parseGguf(good);
    expect(() => operand(file, 'q6k.weight')).toThrow(
      /tensor 'q6k.weight' is Q6_K: not taken by these kernels \(Q8_0, Q4_K\)/,
    );
    expect(() => operand(file, 'f32.weight')).toThrow(/is F32: not taken by these kernels/);
    expect(() => operand(file, 'nope')).toThrow(/no tensor 'nope' in this GGUF \(it has 5: f32.weight/);
    const unknownType = writeGguf({
      kv: [],
      tensors: [{ name: 'x', dims: [32], type: 77, data: new Uint8Array(32) }],
    });
    expect(() => parseGguf(unknownType)).toThrow(/tensor 'x' has ggml type 77, which ggml does not define/);
    const badRow = writeGguf({
      kv: [],
      tensors: [{ name: 'y', dims: [48, 1], type: 8, data: new Uint8Array(51) }],
    });
    expect(() => parseGguf(badRow)).toThrow(/'y' \(Q8_0\) row length 48 is not a multiple of its block 32/);
  });
});

describe('GgufError, never another error, for what ggml also rejects', () => {
  it('a Q4_K or Q8_0 tensor with ne[0] = 0 parses but is refused as a kernel operand', () => {
    for (const type of [8, 12]) {
      const file = parseGguf(
        writeGguf({ kv: [], tensors: [{ name: 'e', dims: [0, 4], type, data: new Uint8Array(0) }] }),
      );
      expect(file.tensors[0]!.byteLength).toBe(0);
      expect(() => operand(file, 'e')).toThrow(GgufError);
      expect(() => operand(file, 'e')).toThrow(/tensor 'e' .* has no elements/);
    }
  });

  it('general.alignment of a type other than UINT32 is named by its type', () => {
    const i32 = writeGguf({ kv: [['general.alignment', { t: 'i32', v: 32 }]], tensors: [] });
    expect(() => parseGguf(i32)).toThrow(/general.alignment has type INT32; GGUF requires UINT32/);
    const u64 = writeGguf({ kv: [['general.alignment', { t: 'u64', v: 32n }]], tensors: [] });
    expect(() => parseGguf(u64)).toThrow(/general.alignment has type UINT64; GGUF requires UINT32/);
  });
});

/** A ByteSource over bytes that records every read, to show what a reader touched. */
function countingSource(bytes: Uint8Array) {
  const inner = bytesSource(bytes);
  const reads: [number, number][] = [];
  const src: ByteSource = {
    size: inner.size,
    read: (offset, length) => {
      reads.push([offset, length]);
      return inner.read(offset, length);
    },
  };
  return { src, reads, total: () => reads.reduce((a, [, n]) => a + n, 0) };
}

describe('openGguf: random access through a ByteSource', () => {
  const bytes = writeGguf({ kv: KV, tensors: TENSORS });
  const parsed = parseGguf(bytes);
  const { bytes: _b, ...header } = parsed;

  it('lists what parseGguf lists, from a header read in growing chunks, never the whole file', async () => {
    const big = { name: 'big', dims: [1 << 16], type: 0, data: new Uint8Array(1 << 18) };
    const withBig = writeGguf({ kv: KV, tensors: [...TENSORS, big] });
    const { bytes: _, ...want } = parseGguf(withBig);
    for (const initialReadBytes of [4, 64, 1000, 1 << 20]) {
      const c = countingSource(withBig);
      const file = await openGguf(c.src, { initialReadBytes });
      expect(file).toEqual(want);
      // Chunks double from initialReadBytes: at most max(first, 2 x header) bytes, each byte read once.
      expect(c.total()).toBeLessThanOrEqual(
        Math.min(withBig.length, Math.max(initialReadBytes, 2 * file.headerBytes)),
      );
      let at = 0;
      for (const [offset, length] of c.reads) {
        expect(offset).toBe(at);
        at += length;
      }
    }
  });

  it('headerBytes ends at the last tensor info; headerHash is FNV-1a 64 of those bytes only', async () => {
    const file = await openGguf(bytesSource(bytes));
    expect(file.headerHash).toBe(fnv1a64(bytes.subarray(0, file.headerBytes)));
    expect(file.headerHash).toMatch(/^[0-9a-f]{16}$/);
    expect(file.dataOffset).toBe(Math.ceil(file.headerBytes / 32) * 32);
    expect(file.fileSize).toBe(bytes.length);
    const otherData = bytes.slice();
    otherData[bytes.length - 1]! ^= 1;
    expect((await openGguf(bytesSource(otherData))).headerHash).toBe(file.headerHash);
    const otherName = bytes.slice();
    otherName[40]! ^= 1; // inside 'general.architecture'
    expect((await openGguf(bytesSource(otherName))).headerHash).not.toBe(file.headerHash);
  });

  it('readTensor reads only that tensor; operands come split; other types are refused before any read', async () => {
    const c = countingSource(bytes);
    const file = await openGguf(c.src, { initialReadBytes: 64 });
    const before = c.reads.length;
    const t = ggufTensor(file, 'q4k.weight');
    expect([...(await readTensor(c.src, file, 'q4k.weight'))]).toEqual([...q4k.bytes]);
    expect(c.reads.slice(before)).toEqual([[t.offset, 3 * 144]]);
    const w = await readTensorOperand(c.src, file, 'q4k.weight');
    expect(w.type === 'Q4_K' && [...w.weight.qs]).toEqual([...q4k.split.qs]);
    const q = await readTensorOperand(c.src, file, 'q8.weight');
    expect(q.type === 'Q8_0' && [...q.weight.q]).toEqual([...q8.split.q]);
    const n = c.reads.length;
    await expect(readTensorOperand(c.src, file, 'q6k.weight')).rejects.toThrow(
      /'q6k.weight' is Q6_K: not taken by these kernels \(Q8_0, Q4_K\)/,
    );
    await expect(readTensorOperand(c.src, file, 'f16.weight')).rejects.toThrow(GgufError);
    expect(c.reads.length).toBe(n);
  });

  it('blobSource reads a Blob in slices', async () => {
    const src = blobSource(new Blob([bytes]));
    const file = await openGguf(src, { initialReadBytes: 100 });
    expect(file).toEqual(header);
    expect([...(await readTensor(src, file, 'q8.weight'))]).toEqual([...q8.bytes]);
    expect(blobSource(new File([bytes], 'tiny.gguf')).name).toBe('tiny.gguf');
    await expect(src.read(bytes.length - 1, 2)).rejects.toThrow(RangeError);
  });

  it('every cut inside the header is a GgufError from openGguf (never a RangeError or a hang)', async () => {
    for (let len = 0; len < parsed.headerBytes; len++) {
      const cut = bytes.subarray(0, len);
      const err = await openGguf(bytesSource(cut), { initialReadBytes: 16 }).then(
        () => new Error(`a ${len}-byte cut of a ${parsed.headerBytes}-byte header opened`),
        (e: unknown) => e,
      );
      if (!(err instanceof GgufError)) throw err;
      expect(err.message, `cut at ${len}`).toMatch(/^(truncated GGUF|not a GGUF file)/);
    }
  });

  it('a cut inside the tensor data: the header opens, the cut tensor is a GgufError with the missing bytes', async () => {
    const t = parsed.tensors.find((x) => x.name === 'q4k.weight')!;
    const src = bytesSource(bytes.subarray(0, t.offset + 100));
    const file = await openGguf(src);
    expect(file.tensors).toEqual(parsed.tensors);
    expect([...(await readTensor(src, file, 'q8.weight'))]).toEqual([...q8.bytes]); // wholly before the cut
    await expect(readTensor(src, file, 'q4k.weight')).rejects.toThrow(
      `truncated GGUF: tensor 'q4k.weight' needs bytes [${t.offset}, ${t.offset + 432}) but the data ends at ${t.offset + 100} (332 bytes missing)`,
    );
    await expect(readTensorOperand(src, file, 'q4k.weight')).rejects.toThrow(GgufError);
    // checkTensorData finds the same cut from the header alone.
    expect(() => checkTensorData(file)).toThrow(/tensor 'q4k.weight' needs bytes .* \(332 bytes missing\)/);
    expect(() => checkTensorData(parsed)).not.toThrow();
  });

  it('a non-GGUF source, or a source that returns short reads, is a GgufError', async () => {
    const zip = new TextEncoder().encode('PK\u0003\u0004 a zip file, not a model');
    await expect(openGguf(bytesSource(zip))).rejects.toThrow(
      /not a GGUF file: expected magic 'GGUF', found 'PK..'/,
    );
    await expect(openGguf(bytesSource(new Uint8Array(2)))).rejects.toThrow(/not a GGUF file: 2 bytes/);
    const short: ByteSource = {
      size: bytes.length,
      read: (o, n) => Promise.resolve(bytes.subarray(o, o + n - 1)),
    };
    await expect(openGguf(short)).rejects.toThrow(/asked for \d+ bytes at 0, got/);
  });

  it('a big-endian file is named as such', async () => {
    const be = bytes.slice();
    new DataView(be.buffer).setUint32(4, 3, false);
    await expect(openGguf(bytesSource(be))).rejects.toThrow(
      /unsupported GGUF version 50331648 \(a big-endian GGUF\?\)/,
    );
  });

  it('a u64 offset beyond 2^53 is a GgufError (gguf.cpp: not at the previous end)', async () => {
    const b = writeGguf({ kv: [], tensors: [TENSORS[0]!] });
    const at = parseGguf(b).headerBytes - 8; // the last field: the tensor's offset
    new DataView(b.buffer).setBigUint64(at, 1n << 60n, true);
    await expect(openGguf(bytesSource(b))).rejects.toThrow(
      /tensor 'f32.weight' has data offset 1152921504606846976, expected 0/,
    );
  });
});
