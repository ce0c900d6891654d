// Accept and reject as ggml's gguf.cpp (gguf_init_from_file with no_alloc, as llama.cpp opens a model)
// does, on hand-made malformed files: each case says what gguf.cpp does and, where this reader differs on
// purpose, why. The rules are gguf.cpp's (ggml/src/gguf.cpp, gguf_init_from_reader): magic, version 2..3,
// non-negative counts, non-empty unique keys, known value types and no arrays of arrays, strings within
// the file, a u32 power-of-two general.alignment, tensor names under 64 bytes and unique, at most 4 dims,
// no negative ne and no int64 overflow of their product, a defined ggml type whose block divides ne[0],
// tensors packed in order (offset = the previous end padded; size_t sums that do not overflow), and the
// data section's start inside the file. Tensor names compare up to their first NUL (strcmp). The tensor data itself is not read there (no_alloc): a cut inside it is accepted.
import { describe, expect, it } from 'vitest';
import { Writer } from '../../../test/ggufWriter';
import { bytesSource } from './byteSource';
import { ggmlTensorByteLength } from './ggml';
import { GgufError, openGguf, tensorDataProblem, type GgufFile, type GgufOpenOptions } from './gguf';
import { XorShift64 } from './xorshift';

type Field = (w: Writer) => void;

interface RawTensor {
  name?: string;
  dims?: (number | bigint)[];
  /** n_dims as written, when it is not dims.length. */
  nDims?: number;
  type?: number;
  offset?: number | bigint;
}

interface RawSpec {
  magic?: string;
  version?: number;
  nTensors?: number | bigint;
  nKv?: number | bigint;
  kv?: Field[];
  tensors?: RawTensor[];
  alignment?: number;
  /** Bytes after the padded header (default: every tensor's data, packed). */
  data?: number;
  /** Leave out the padding after the header. */
  noPad?: boolean;
}

const u64 =
  (v: number | bigint): Field =>
  (w) =>
    w.num(v, 8, 'u');
const u32 =
  (v: number): Field =>
  (w) =>
    w.num(v, 4, 'u');
const str =
  (s: string): Field =>
  (w) =>
    w.str(s);
const kv =
  (key: string, type: number, ...value: Field[]): Field =>
  (w) => {
    w.str(key);
    w.num(type, 4, 'u');
    for (const f of value) f(w);
  };
const byte =
  (b: number): Field =>
  (w) =>
    w.num(b, 1, 'u');

const bytesOf = (t: RawTensor) => ggmlTensorByteLength(t.type ?? 0, (t.dims ?? [32, 2]).map(Number)) ?? 0;
const padTo = (n: number, a: number) => Math.ceil(n / a) * a;

/** A GGUF written field by field, any field wrong on purpose. */
function raw(spec: RawSpec): Uint8Array {
  const align = spec.alignment ?? 32;
  const w = new Writer();
  w.bytes(new TextEncoder().encode(spec.magic ?? 'GGUF'));
  w.num(spec.version ?? 3, 4, 'u');
  const tensors = spec.tensors ?? [];
  const kvs = spec.kv ?? [];
  w.num(spec.nTensors ?? tensors.length, 8, 'u');
  w.num(spec.nKv ?? kvs.length, 8, 'u');
  for (const f of kvs) f(w);
  let packed = 0;
  tensors.forEach((t, i) => {
    const dims = t.dims ?? [32, 2];
    w.str(t.name ?? `t${i}`);
    w.num(t.nDims ?? dims.length, 4, 'u');
    for (const d of dims) w.num(d, 8, 'u');
    w.num(t.type ?? 0, 4, 'u');
    w.num(t.offset ?? packed, 8, 'u');
    packed = padTo(packed + bytesOf(t), align);
  });
  if (!spec.noPad) w.pad(align);
  w.bytes(new Uint8Array(spec.data ?? packed));
  return w.out();
}

const cut = (b: Uint8Array, drop: number) => b.subarray(0, b.length - drop);
const two: RawTensor[] = [{ name: 'a' }, { name: 'b' }];

interface Case {
  name: string;
  bytes: Uint8Array;
  ggml: 'accept' | 'reject';
  /** Where this reader differs from gguf.cpp on purpose: what it does, and why. */
  ours?: { verdict: 'accept' | 'reject'; why: string };
  /** The message of a rejection (checked where given). */
  msg?: RegExp;
  /** For an accepted file: what must hold of it. */
  check?: (g: GgufFile, size: number) => void;
  opts?: GgufOpenOptions;
}

const CASES: Case[] = [
  { name: 'a valid file, no tensors, no metadata', bytes: raw({}), ggml: 'accept' },
  { name: 'a valid file with two tensors', bytes: raw({ tensors: two }), ggml: 'accept' },
  { name: 'an empty file', bytes: new Uint8Array(0), ggml: 'reject', msg: /not a GGUF file/ },
  { name: 'three bytes', bytes: new Uint8Array([71, 71, 85]), ggml: 'reject' },
  { name: 'wrong magic', bytes: raw({ magic: 'GGUG' }), ggml: 'reject', msg: /expected magic/ },
  { name: 'version 0', bytes: raw({ version: 0 }), ggml: 'reject' },
  { name: 'version 1 (no longer supported)', bytes: raw({ version: 1 }), ggml: 'reject' },
  { name: 'version 2', bytes: raw({ version: 2, tensors: two }), ggml: 'accept' },
  { name: 'version 4', bytes: raw({ version: 4 }), ggml: 'reject', msg: /unsupported GGUF version 4/ },
  {
    name: 'a big-endian version 3',
    bytes: raw({ version: 0x03000000 }),
    ggml: 'reject',
    msg: /big-endian/,
  },
  { name: 'a negative tensor count (2^63)', bytes: raw({ nTensors: 2n ** 63n }), ggml: 'reject' },
  { name: 'a metadata count of 2^64 - 1', bytes: raw({ nKv: 2n ** 64n - 1n }), ggml: 'reject' },
  {
    name: '1000 tensors claimed, none there',
    bytes: raw({ nTensors: 1000 }),
    ggml: 'reject',
    msg: /truncated GGUF/,
  },
  {
    name: '10^9 metadata entries claimed in a small file',
    bytes: raw({ nKv: 1e9 }),
    ggml: 'reject',
    msg: /truncated GGUF/,
  },
  {
    name: 'an empty key',
    bytes: raw({ kv: [kv('', 4, u32(1))] }),
    ggml: 'reject',
    msg: /key #0 is empty/,
  },
  {
    name: 'a duplicate key',
    bytes: raw({ kv: [kv('k', 4, u32(1)), kv('k', 4, u32(2))] }),
    ggml: 'reject',
    msg: /duplicate metadata key 'k'/,
  },
  { name: 'value type 13', bytes: raw({ kv: [kv('k', 13, u32(1))] }), ggml: 'reject' },
  { name: 'value type 0xffffffff', bytes: raw({ kv: [kv('k', 0xffffffff, u32(1))] }), ggml: 'reject' },
  {
    name: 'an array of arrays',
    bytes: raw({ kv: [kv('k', 9, u32(9), u64(1), u32(4), u64(1), u32(7))] }),
    ggml: 'reject',
    msg: /array of arrays/,
  },
  {
    name: 'an array of element type 13',
    bytes: raw({ kv: [kv('k', 9, u32(13), u64(1), u32(1))] }),
    ggml: 'reject',
  },
  {
    name: 'an array of 2^40 u8 in a small file',
    bytes: raw({ kv: [kv('k', 9, u32(0), u64(2 ** 40))] }),
    ggml: 'reject',
    msg: /truncated GGUF/,
  },
  {
    name: 'an array of strings, count past the bytes left',
    bytes: raw({ kv: [kv('k', 9, u32(8), u64(1000), str('x'))] }),
    ggml: 'reject',
  },
  {
    name: 'a string length of 2^63',
    bytes: raw({ kv: [kv('k', 8, u64(2n ** 63n))] }),
    ggml: 'reject',
    msg: /not a plausible size/,
  },
  {
    name: 'a string running past the end of the file',
    bytes: raw({ kv: [kv('k', 8, u64(5000))] }),
    ggml: 'reject',
    msg: /truncated GGUF/,
  },
  {
    name: 'a bool of byte value 2',
    bytes: raw({ kv: [kv('k', 7, byte(2))] }),
    ggml: 'accept',
    check: (g) => expect(g.metadata.get('k')).toBe(true),
  },
  {
    name: 'a bool array holding 255',
    bytes: raw({ kv: [kv('k', 9, u32(7), u64(2), byte(255), byte(0))] }),
    ggml: 'accept',
    check: (g) => expect(g.metadata.get('k')).toEqual([true, false]),
  },
  {
    name: 'general.alignment = 64 (u32)',
    bytes: raw({ kv: [kv('general.alignment', 4, u32(64))], alignment: 64, tensors: two }),
    ggml: 'accept',
    check: (g) => expect(g.tensors[1]!.offset - g.tensors[0]!.offset).toBe(256),
  },
  {
    name: 'general.alignment as i32',
    bytes: raw({ kv: [kv('general.alignment', 5, u32(32))] }),
    ggml: 'reject',
    msg: /requires UINT32/,
  },
  {
    name: 'general.alignment = 0',
    bytes: raw({ kv: [kv('general.alignment', 4, u32(0))] }),
    ggml: 'reject',
  },
  {
    name: 'general.alignment = 24',
    bytes: raw({ kv: [kv('general.alignment', 4, u32(24))] }),
    ggml: 'reject',
    msg: /power of two/,
  },
  {
    name: 'general.alignment as a string',
    bytes: raw({ kv: [kv('general.alignment', 8, str('32'))] }),
    ggml: 'reject',
  },
  { name: 'a 63-byte tensor name', bytes: raw({ tensors: [{ name: 'n'.repeat(63) }] }), ggml: 'accept' },
  {
    name: 'a 64-byte tensor name',
    bytes: raw({ tensors: [{ name: 'n'.repeat(64) }] }),
    ggml: 'reject',
    msg: /name is 64 bytes long \(at most 63\)/,
  },
  {
    name: 'a 4 MB tensor name',
    bytes: raw({ tensors: [{ name: 'n'.repeat(4 << 20) }] }),
    ggml: 'reject',
    msg: /name is 4194304 bytes long/,
  },
  {
    name: "a name 't.f16\\0' beside 't.f16' (strcmp stops at the NUL)",
    bytes: raw({ tensors: [{ name: 't.f16' }, { name: 't.f16\0' }] }),
    ggml: 'reject',
    msg: /duplicate tensor name 't\.f16' \('t\.f16\\x00' up to its NUL byte/,
  },
  {
    name: 'a duplicate tensor name',
    bytes: raw({ tensors: [{ name: 'a' }, { name: 'a' }] }),
    ggml: 'reject',
    msg: /duplicate tensor name 'a'/,
  },
  {
    name: 'n_dims = 0 (a scalar)',
    bytes: raw({ tensors: [{ dims: [] }] }),
    ggml: 'accept',
    check: (g) => expect(g.tensors[0]!.ne).toEqual([1]),
  },
  {
    name: 'n_dims = 5',
    bytes: raw({ tensors: [{ dims: [32, 1, 1, 1, 1] }] }),
    ggml: 'reject',
    msg: /5 dims/,
  },
  {
    name: 'a negative ne (2^63)',
    bytes: raw({ tensors: [{ dims: [32, 2n ** 63n] }], data: 0 }),
    ggml: 'reject',
  },
  {
    name: 'ne[0] = 0 (no elements)',
    bytes: raw({ tensors: [{ dims: [0, 4] }, { name: 'b' }] }),
    ggml: 'accept',
    check: (g) => expect(g.tensors[0]!.byteLength).toBe(0),
  },
  { name: 'ne[1] = 0 (no elements)', bytes: raw({ tensors: [{ dims: [32, 0] }] }), ggml: 'accept' },
  {
    name: 'ne product past int64 (2^32 x 2^32)',
    bytes: raw({ tensors: [{ dims: [2 ** 32, 2 ** 32], type: 24 }], data: 0 }),
    ggml: 'reject',
  },
  {
    name: 'ne product 2^54 (inside int64): read, and listed as cut short',
    bytes: raw({ tensors: [{ dims: [2 ** 40, 2 ** 14], type: 24 }], data: 0 }),
    ggml: 'accept',
    check: (g, size) => {
      expect(g.tensors[0]!.exact?.byteLength).toBe(2n ** 54n);
      expect(tensorDataProblem(g.tensors[0]!, size)).toMatch(
        /needs bytes \[\d+, 18014398509482\d+\) but the data ends at \d+ \(18014398509481\d+ bytes missing\)/,
      );
    },
  },
  {
    name: 'ne[0] = 2^62 + 1 (one dim past 2^53): exact in the listing, cut short',
    bytes: raw({ tensors: [{ dims: [2n ** 62n + 1n], type: 24 }], data: 0 }),
    ggml: 'accept',
    check: (g, size) => {
      expect(g.tensors[0]!.exact?.ne).toEqual([2n ** 62n + 1n]);
      // Exact: as a JS number 2^62 + 1 would read ...904.
      expect(tensorDataProblem(g.tensors[0]!, size)).toMatch(
        /needs bytes \[64, 4611686018427387969\) but the data ends at 64 \(4611686018427387905 bytes missing\)/,
      );
    },
  },
  {
    name: 'a size in bytes past SIZE_MAX (F32, 2^62 elements)',
    bytes: raw({ tensors: [{ dims: [2n ** 62n, 1], type: 0 }], data: 0 }),
    ggml: 'reject',
    msg: /has a size in bytes > 18446744073709551615/,
  },
  {
    name: 'packed sizes past SIZE_MAX (four I8 tensors of 2^62 bytes)',
    bytes: raw({ tensors: [0, 1, 2, 3].map((i) => ({ name: `t${i}`, dims: [2 ** 62], type: 24 })), data: 0 }),
    ggml: 'reject',
    msg: /tensor 't3' size overflow/,
  },
  {
    name: 'the newer ggml types NVFP4 (40), Q1_0 (41), Q2_0 (42) beside a Q4_K',
    bytes: raw({
      tensors: [
        { name: 'nv', type: 40, dims: [64, 2] },
        { name: 'q1', type: 41, dims: [128, 1] },
        { name: 'q2', type: 42, dims: [64, 1] },
        { name: 'w', type: 12, dims: [256, 2] },
      ],
    }),
    ggml: 'accept',
    check: (g, size) => {
      expect(g.tensors.map((t) => [t.typeName, t.byteLength])).toEqual([
        ['NVFP4', 72],
        ['Q1_0', 18],
        ['Q2_0', 18],
        ['Q4_K', 288],
      ]);
      expect(tensorDataProblem(g.tensors[3]!, size)).toBeUndefined();
    },
  },
  {
    name: 'tensor type 43 (GGML_TYPE_COUNT)',
    bytes: raw({ tensors: [{ type: 43 }], data: 256 }),
    ggml: 'reject',
    msg: /ggml type 43, which ggml does not define \(gguf.cpp takes 0 to 42, up to Q2_0\)/,
  },
  {
    name: 'tensor type 99',
    bytes: raw({ tensors: [{ type: 99 }], data: 256 }),
    ggml: 'reject',
    msg: /ggml type 99, which ggml does not define/,
  },
  {
    name: 'tensor type 0xffffffff',
    bytes: raw({ tensors: [{ type: 0xffffffff }], data: 256 }),
    ggml: 'reject',
  },
  {
    name: 'tensor type 4 (Q4_2, removed: block size 0)',
    bytes: raw({ tensors: [{ type: 4 }], data: 256 }),
    ggml: 'reject',
  },
  {
    name: 'tensor type 31 (Q4_0_4_4, removed)',
    bytes: raw({ tensors: [{ type: 31 }], data: 256 }),
    ggml: 'reject',
  },
  {
    name: 'a Q8_0 row of 48 (not a whole block)',
    bytes: raw({ tensors: [{ type: 8, dims: [48, 1] }], data: 64 }),
    ggml: 'reject',
    msg: /row length 48 is not a multiple of its block 32/,
  },
  {
    name: 'a misaligned first offset (16)',
    bytes: raw({ tensors: [{ offset: 16 }], data: 288 }),
    ggml: 'reject',
  },
  {
    name: 'overlapping data (both tensors at offset 0)',
    bytes: raw({ tensors: [{ name: 'a' }, { name: 'b', offset: 0 }] }),
    ggml: 'reject',
    msg: /'b' has data offset 0, expected 256 .*would overlap/,
  },
  {
    name: 'a gap between tensors',
    bytes: raw({ tensors: [{ name: 'a' }, { name: 'b', offset: 512 }], data: 768 }),
    ggml: 'reject',
  },
  {
    name: 'tensors out of order',
    bytes: raw({
      tensors: [
        { name: 'a', offset: 256 },
        { name: 'b', offset: 0 },
      ],
    }),
    ggml: 'reject',
  },
  {
    name: 'a cut inside the tensor infos',
    bytes: cut(raw({ tensors: two, data: 0, noPad: true }), 10),
    ggml: 'reject',
    msg: /truncated GGUF/,
  },
  {
    name: 'a cut before the padding ends (tensors > 0)',
    bytes: raw({ tensors: [{ name: 'abc' }], noPad: true, data: 0 }),
    ggml: 'reject',
    msg: /tensor data starts at 96 .* the file ends at/,
  },
  {
    name: 'no padding and no data, no tensors',
    bytes: raw({ kv: [kv('abc', 4, u32(1))], noPad: true }),
    ggml: 'accept',
  },
  {
    name: 'a header with no tensor data at all',
    bytes: raw({ tensors: two, data: 0 }),
    ggml: 'accept',
    check: (g, size) => {
      expect(tensorDataProblem(g.tensors[0]!, size)).toMatch(/'a' needs bytes .* \(256 bytes missing\)/);
      expect(tensorDataProblem(g.tensors[1]!, size)).toMatch(/'b' needs bytes/);
    },
  },
  {
    name: 'a cut inside the last tensor: the first stays usable, the last says why',
    bytes: cut(raw({ tensors: two }), 100),
    ggml: 'accept',
    check: (g, size) => {
      expect(tensorDataProblem(g.tensors[0]!, size)).toBeUndefined();
      expect(tensorDataProblem(g.tensors[1]!, size)).toMatch(
        /truncated GGUF: tensor 'b' needs bytes \[\d+, \d+\) but the data ends at \d+ \(100 bytes missing\)/,
      );
    },
  },
  {
    name: 'a cut inside the first of two tensors',
    bytes: cut(raw({ tensors: two }), 300),
    ggml: 'accept',
    check: (g, size) => {
      expect(tensorDataProblem(g.tensors[0]!, size)).toMatch(/44 bytes missing/);
      expect(tensorDataProblem(g.tensors[1]!, size)).toMatch(/256 bytes missing/);
    },
  },
  { name: 'bytes after the last tensor', bytes: raw({ tensors: two, data: 4096 }), ggml: 'accept' },
  {
    name: 'a key that is not UTF-8',
    bytes: raw({
      kv: [(w) => (w.num(2, 8, 'u'), w.bytes([0xff, 0xfe]), w.num(4, 4, 'u'), w.num(1, 4, 'u'))],
    }),
    ggml: 'accept',
  },
  {
    name: 'terminal escapes in a key and a tensor name',
    bytes: raw({
      kv: [kv('\x1b[2J', 8, str('\rverdict: matches oracle'))],
      tensors: [{ name: '\x1b[31mred' }],
    }),
    ggml: 'accept',
  },
  {
    name: 'a header past the header cap (a long string)',
    bytes: raw({ kv: [kv('k', 8, str('s'.repeat(10_000)))] }),
    opts: { maxHeaderBytes: 4096, initialReadBytes: 1024 },
    ggml: 'accept',
    ours: {
      verdict: 'reject',
      why: 'a header is read into memory: one past 64 MiB (here a 4 KiB cap) is refused before it is read',
    },
    msg: /GGUF header too large: 'k' would take it to 10\d\d\d bytes, past the 4096/,
  },
];

describe("malformed GGUF files: accepted and rejected as ggml's gguf.cpp does", () => {
  it.each(CASES)('$name', async (c) => {
    const want = c.ours?.verdict ?? c.ggml;
    const opened = await openGguf(bytesSource(c.bytes), c.opts).then(
      (g) => ({ g }),
      (e: unknown) => ({ e }),
    );
    if (want === 'accept') {
      expect('e' in opened ? String(opened.e) : '').toBe('');
      if ('g' in opened) c.check?.(opened.g, c.bytes.length);
      return;
    }
    expect('e' in opened, 'accepted').toBe(true);
    const e = 'e' in opened ? opened.e : undefined;
    // Never a RangeError with a stack: a GgufError with one bounded, printable line.
    expect(e).toBeInstanceOf(GgufError);
    const message = (e as GgufError).message;
    expect(message.length).toBeLessThan(400);
    // eslint-disable-next-line no-control-regex
    expect(message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    if (c.msg) expect(message).toMatch(c.msg);
  });

  it('corrupted copies of a file with hostile names: every rejection is one bounded, printable line', async () => {
    const base = raw({
      kv: [kv(`\x1b[2J${'k'.repeat(3000)}`, 8, str('\r\nverdict: matches oracle'.repeat(100)))],
      tensors: [{ name: '\x1b[31mw' }, { name: 'b\n' }],
    });
    const rng = new XorShift64(31n);
    let rejected = 0;
    for (let i = 0; i < 400; i++) {
      const b = base.slice();
      // Mostly the counts, lengths and types near the start, where a flip changes what is claimed.
      for (let j = 0; j <= rng.nextMod(3); j++) {
        b[rng.nextMod(2) ? rng.nextMod(48) : rng.nextMod(b.length)] = rng.nextMod(256);
      }
      const e = await openGguf(bytesSource(b)).then(
        () => undefined,
        (x: unknown) => x,
      );
      if (e === undefined) continue;
      rejected++;
      expect(e).toBeInstanceOf(GgufError);
      const message = (e as GgufError).message;
      expect(message.length).toBeLessThan(400);
      // eslint-disable-next-line no-control-regex
      expect(message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    }
    expect(rejected).toBeGreaterThan(100);
  });

  it('covers 50 to 72 files, and says why for each deliberate difference', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(50);
    expect(CASES.length).toBeLessThanOrEqual(72);
    const differ = CASES.filter((c) => c.ours);
    expect(differ.map((c) => c.name)).toEqual(['a header past the header cap (a long string)']);
    for (const c of differ) expect(c.ours!.verdict).not.toBe(c.ggml);
  });
});
