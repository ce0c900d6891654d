import { describe, expect, it } from 'vitest';
import { f16BitsToF32, f32ToF16Bits } from './f16';
import {
  GGUF_DEFAULT_ALIGNMENT,
  GgufError,
  GgufType,
  ggufTensorBytes,
  parseGguf,
  readGgufTensorForMmq,
} from './gguf';
import { quantizeQ4K } from './q4k';
import { quantizeQ8_0 } from './q8';
import { XorShift64 } from './xorshift';

// ---- a tiny GGUF writer (test-only), written from the GGUF spec ----
type KvValue =
  | { t: 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'f32' | 'f64'; v: number }
  | { t: 'u64' | 'i64'; v: bigint }
  | { t: 'bool'; v: boolean }
  | { t: 'str'; v: string }
  | { t: 'arr'; elem: KvValue['t']; v: KvValue[] };

const TYPE_ID: Record<KvValue['t'], number> = {
  u8: 0,
  i8: 1,
  u16: 2,
  i16: 3,
  u32: 4,
  i32: 5,
  f32: 6,
  bool: 7,
  str: 8,
  arr: 9,
  u64: 10,
  i64: 11,
  f64: 12,
};

class Writer {
  private chunks: number[] = [];
  get length() {
    return this.chunks.length;
  }
  bytes(b: ArrayLike<number>) {
    for (let i = 0; i < b.length; i++) this.chunks.push(b[i]! & 255);
  }
  num(v: number | bigint, size: 1 | 2 | 4 | 8, kind: 'u' | 'i' | 'f') {
    const dv = new DataView(new ArrayBuffer(size));
    if (kind === 'f') {
      if (size === 4) dv.setFloat32(0, Number(v), true);
      else dv.setFloat64(0, Number(v), true);
    } else if (size === 8) {
      if (kind === 'u') dv.setBigUint64(0, BigInt(v), true);
      else dv.setBigInt64(0, BigInt(v), true);
    } else if (size === 4) {
      if (kind === 'u') dv.setUint32(0, Number(v), true);
      else dv.setInt32(0, Number(v), true);
    } else if (size === 2) {
      if (kind === 'u') dv.setUint16(0, Number(v), true);
      else dv.setInt16(0, Number(v), true);
    } else if (kind === 'u') dv.setUint8(0, Number(v));
    else dv.setInt8(0, Number(v));
    this.bytes(new Uint8Array(dv.buffer));
  }
  str(s: string) {
    const b = new TextEncoder().encode(s);
    this.num(b.length, 8, 'u');
    this.bytes(b);
  }
  value(v: KvValue) {
    switch (v.t) {
      case 'u8':
        return this.num(v.v, 1, 'u');
      case 'i8':
        return this.num(v.v, 1, 'i');
      case 'u16':
        return this.num(v.v, 2, 'u');
      case 'i16':
        return this.num(v.v, 2, 'i');
      case 'u32':
        return this.num(v.v, 4, 'u');
      case 'i32':
        return this.num(v.v, 4, 'i');
      case 'f32':
        return this.num(v.v, 4, 'f');
      case 'f64':
        return this.num(v.v, 8, 'f');
      case 'u64':
        return this.num(v.v, 8, 'u');
      case 'i64':
        return this.num(v.v, 8, 'i');
      case 'bool':
        return this.num(v.v ? 1 : 0, 1, 'u');
      case 'str':
        return this.str(v.v);
      case 'arr':
        this.num(TYPE_ID[v.elem], 4, 'u');
        this.num(v.v.length, 8, 'u');
        for (const e of v.v) this.value(e);
    }
  }
  pad(align: number) {
    while (this.chunks.length % align) this.chunks.push(0);
  }
  out(): Uint8Array<ArrayBuffer> {
    return new Uint8Array(this.chunks);
  }
}

interface TensorSpec {
  name: string;
  dims: number[];
  type: number;
  data: Uint8Array;
}

function writeGguf(opts: {
  version?: number;
  kv: [string, KvValue][];
  tensors: TensorSpec[];
  alignment?: number;
}): Uint8Array<ArrayBuffer> {
  const align = opts.alignment ?? GGUF_DEFAULT_ALIGNMENT;
  const w = new Writer();
  w.bytes(new TextEncoder().encode('GGUF'));
  w.num(opts.version ?? 3, 4, 'u');
  w.num(opts.tensors.length, 8, 'u');
  w.num(opts.kv.length, 8, 'u');
  for (const [k, v] of opts.kv) {
    w.str(k);
    w.num(TYPE_ID[v.t], 4, 'u');
    w.value(v);
  }
  let off = 0;
  const offsets: number[] = [];
  for (const t of opts.tensors) {
    offsets.push(off);
    off = Math.ceil((off + t.data.length) / align) * align;
  }
  opts.tensors.forEach((t, i) => {
    w.str(t.name);
    w.num(t.dims.length, 4, 'u');
    for (const d of t.dims) w.num(d, 8, 'u');
    w.num(t.type, 4, 'u');
    w.num(offsets[i]!, 8, 'u');
  });
  w.pad(align);
  opts.tensors.forEach((t) => {
    w.bytes(t.data);
    w.pad(align);
  });
  return w.out();
}

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
    't.arr_nested',
    {
      t: 'arr',
      elem: 'arr',
      v: [
        { t: 'arr', elem: 'u8', v: [{ t: 'u8', v: 1 }] },
        { t: 'arr', elem: 'u8', v: [] },
      ],
    },
  ],
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
      expect(md.get('t.arr_nested')).toEqual([[1], []]);
      expect((md.get('tokenizer.ggml.tokens') as string[]).length).toBe(50);
      expect(file.tensors.map((t) => [t.name, t.dims, t.typeName, t.byteLength])).toEqual([
        ['f32.weight', [4, 3], 'F32', 48],
        ['f16.weight', [8, 2], 'F16', 32],
        ['q8.weight', [64, 2], 'Q8_0', 4 * 34],
        ['q4k.weight', [256, 3, 1], 'Q4_K', 3 * 144],
        ['q6k.weight', [256], 'Q6_K', 210],
      ]);
      for (const t of file.tensors) expect((t.fileOffset - file.dataOffset) % file.alignment).toBe(0);
      expect([...ggufTensorBytes(file, 'q6k.weight')]).toEqual([...q6kBytes]);
    });
  }

  it('hands F32/F16/Q8_0/Q4_K tensors to the kernels in their split layouts', () => {
    const file = parseGguf(writeGguf({ kv: KV, tensors: TENSORS }).buffer);
    const a = readGgufTensorForMmq(file, 'f32.weight');
    expect(a.type === 'F32' && [a.rows, a.k, [...a.data]]).toEqual([3, 4, [...f32Data]]);
    const b = readGgufTensorForMmq(file, 'f16.weight');
    expect(b.type === 'F16' && [b.rows, b.k, [...b.data]]).toEqual([
      2,
      8,
      [...f16Vals].map((v) => f16BitsToF32(f32ToF16Bits(v))),
    ]);
    const c = readGgufTensorForMmq(file, 'q8.weight');
    if (c.type !== 'Q8_0') throw new Error(c.type);
    expect([c.rows, c.k]).toEqual([2, 64]);
    expect([...c.weight.q]).toEqual([...q8.split.q]);
    expect([...c.weight.d]).toEqual([...q8.split.d]);
    const d = readGgufTensorForMmq(file, 'q4k.weight');
    if (d.type !== 'Q4_K') throw new Error(d.type);
    expect([d.rows, d.k]).toEqual([3, 256]);
    expect([...d.weight.qs]).toEqual([...q4k.split.qs]);
    expect([...d.weight.scales]).toEqual([...q4k.split.scales]);
    expect([...d.weight.d]).toEqual([...q4k.split.d]);
    expect([...d.weight.dmin]).toEqual([...q4k.split.dmin]);
  });

  it('reads from a Uint8Array that is an unaligned view into a larger buffer', () => {
    const bytes = writeGguf({ kv: KV, tensors: TENSORS });
    const big = new Uint8Array(bytes.length + 3);
    big.set(bytes, 3);
    const t = readGgufTensorForMmq(parseGguf(big.subarray(3)), 'f32.weight');
    expect(t.type === 'F32' && [...t.data]).toEqual([...f32Data]);
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
    expect(readGgufTensorForMmq(prefix, 'f32.weight').type).toBe('F32');
    expect(() => readGgufTensorForMmq(prefix, 'q4k.weight')).toThrow(
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
    expect(() => parseGguf(misaligned)).toThrow(/offset 136 is not a multiple of the alignment 32/);
    const w = writeGguf({ kv: [['x', { t: 'u8', v: 1 }]], tensors: [] });
    new DataView(w.buffer).setUint32(24 + 8 + 1, 99, true); // the KV's type field
    expect(() => parseGguf(w)).toThrow(/'x' has unknown value type 99/);
  });

  it('unsupported tensor type and unknown tensor name', () => {
    const file = parseGguf(good);
    expect(() => readGgufTensorForMmq(file, 'q6k.weight')).toThrow(
      /tensor 'q6k.weight' is Q6_K; the MMQ kernels take F32, F16, Q8_0, Q4_K/,
    );
    expect(() => readGgufTensorForMmq(file, 'nope')).toThrow(
      /no tensor 'nope' in this GGUF \(it has 5: f32.weight/,
    );
    const unknownType = writeGguf({
      kv: [],
      tensors: [{ name: 'x', dims: [32], type: 77, data: new Uint8Array(32) }],
    });
    const f = parseGguf(unknownType);
    expect(f.tensors[0]!.typeName).toBe('type77');
    expect(() => ggufTensorBytes(f, 'x')).toThrow(/ggml type 77, which this reader cannot size/);
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
      expect(() => readGgufTensorForMmq(file, 'e')).toThrow(GgufError);
      expect(() => readGgufTensorForMmq(file, 'e')).toThrow(/tensor 'e' .* has no elements/);
    }
  });

  it('general.alignment of a type other than UINT32 is named by its type', () => {
    const i32 = writeGguf({ kv: [['general.alignment', { t: 'i32', v: 32 }]], tensors: [] });
    expect(() => parseGguf(i32)).toThrow(/general.alignment has type INT32; GGUF requires UINT32/);
    const u64 = writeGguf({ kv: [['general.alignment', { t: 'u64', v: 32n }]], tensors: [] });
    expect(() => parseGguf(u64)).toThrow(/general.alignment has type UINT64; GGUF requires UINT32/);
  });
});
