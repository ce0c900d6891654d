// A GGUF (v2/v3) reader that opens files of any size without reading them whole: the header is read in
// growing chunks from a ByteSource, and a tensor's bytes only when asked for.
// Layout (little-endian): 'GGUF' u32 version u64 n_tensors u64 n_kv, then n_kv x {string key, u32 type,
// value}, then n_tensors x {string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset}, then
// padding to `general.alignment` (default 32) and the tensor data; offsets are relative to that start.
// A GGUF string is u64 length + UTF-8 bytes. ne[0] is the contiguous (row, K) axis.
import { chunksSource, type ByteSource } from './byteSource';
import { f16BitsToF32 } from './f16';
import { fnv1a64 } from './fnv';
import { GGML_TYPE_COUNT, GgmlType, ggmlTypeName, ggmlTypeTraits } from './ggml';
import { dequantizeQ4K, splitQ4K, type Q4KWeight } from './q4k';
import { dequantizeQ8_0, splitQ8_0, type Q8Weight } from './q8';
import { excerpt } from './untrustedText';

/** A name or key from the file as it appears in a message: quoted, escaped, and cut (a name may be 4 MB). */
const quoted = (text: string) => `'${excerpt(text, 64)}'`;

/** Not a GGUF file, a truncated or malformed one, or a tensor this reader cannot hand to the kernels. */
export class GgufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GgufError';
  }
}

export const GGUF_MAGIC = 0x46554747; // 'GGUF' read as a little-endian u32
export const GGUF_DEFAULT_ALIGNMENT = 32;
/** ggml's GGML_MAX_NAME: a tensor name takes at most 63 bytes (gguf.cpp refuses a longer one). */
export const GGUF_MAX_TENSOR_NAME_BYTES = 63;
/**
 * The most header openGguf reads (64 MiB): a 150k-token vocabulary takes a few MB, so a header claiming
 * more (a 2.5 GiB string inside a 3 GiB file) is refused before anything that size is allocated.
 */
export const GGUF_MAX_HEADER_BYTES = 64 * 2 ** 20;
/** The most a gzip-compressed GGUF may inflate to (256 MiB): it is held in memory, unlike a plain file. */
export const GGUF_MAX_INFLATED_BYTES = 256 * 2 ** 20;

/** GGUF metadata value types (gguf_type). */
export const GgufType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;
export type GgufTypeId = (typeof GgufType)[keyof typeof GgufType];

/**
 * The gguf-py name of a metadata value type ('UINT32'), or `type <N>` for an unknown one.
 * @example ggufTypeName(GgufType.STRING) === 'STRING'
 */
export function ggufTypeName(type: number): string {
  return TYPE_NAMES.get(type) ?? `type ${type}`;
}
const TYPE_NAMES = new Map<number, string>(Object.entries(GgufType).map(([name, id]) => [id, name]));

/** A metadata array too long to keep (its elements were walked over, not stored). */
export interface GgufSkippedArray {
  skipped: true;
  elementType: GgufTypeId;
  length: number;
}

/** A metadata value: integers up to 32 bits and floats as number, 64-bit integers as bigint. */
export type GgufValue = number | bigint | boolean | string | GgufValue[] | GgufSkippedArray;

/** The stored type of a metadata value; arrays also say their element type. */
export interface GgufValueType {
  type: GgufTypeId;
  elementType?: GgufTypeId;
}

export interface GgufTensorInfo {
  name: string;
  /** ne[0..n_dims) in ggml order: ne[0] is the contiguous axis (k of a weight [n, k]). */
  ne: number[];
  /** The same dims row-major (ne reversed), as numpy and torch print them. */
  shape: number[];
  /** ggml_type id, and its name ('Q4_K', or `type<N>` when unknown). */
  type: number;
  typeName: string;
  /** Absolute byte offset of the data in the file (data section start + the stored offset). */
  offset: number;
  /** Bytes of data (ggml_nbytes), or undefined for a type this reader cannot size. */
  byteLength: number | undefined;
  /**
   * The exact ne, offset and byte length, present only when one of them is past 2^53 (where `ne`,
   * `offset` and `byteLength` are rounded): gguf.cpp accepts such a tensor, and no file holds its data.
   */
  exact?: { ne: bigint[]; offset: bigint; byteLength: bigint };
}

/** A parsed GGUF header: everything but the tensor data. */
export interface GgufFile {
  version: number;
  alignment: number;
  metadata: Map<string, GgufValue>;
  metadataTypes: Map<string, GgufValueType>;
  tensors: GgufTensorInfo[];
  /** Start of the (aligned) tensor data section in the file. */
  dataOffset: number;
  /** Length of the header proper: magic to the end of the last tensor info (the padding excluded). */
  headerBytes: number;
  /** FNV-1a 64 of the header bytes, 16 hex digits: with the name and size, it recognises a file again. */
  headerHash: string;
  /** Size of the file (or source) the header was read from. */
  fileSize: number;
}

/** A GgufFile parsed from bytes in memory, which it keeps for the synchronous tensor readers. */
export interface GgufBuffer extends GgufFile {
  bytes: Uint8Array;
}

export interface GgufParseOptions {
  /** Arrays longer than this are walked but not kept (e.g. a 150k-entry token list). Default 4096. */
  maxArrayElements?: number;
}

export interface GgufOpenOptions extends GgufParseOptions {
  /** Bytes read first; the buffer doubles while the header runs past it. Default 1 MiB. */
  initialReadBytes?: number;
  /** A header longer than this is refused before it is read. Default GGUF_MAX_HEADER_BYTES. */
  maxHeaderBytes?: number;
}

/**
 * What a field is, for a message: a string, or the parts of one, joined only when a message is needed
 * (a header of 2.5 M keys would otherwise escape and quote every key twice just in case). An object
 * literal, not a closure: creating one is cheaper.
 */
type What = string | { pre?: string; key?: string; index?: number; post?: string };
const say = (w: What): string =>
  typeof w === 'string'
    ? w
    : `${w.pre ?? ''}${w.key === undefined ? '' : quoted(w.key)}${w.index === undefined ? '' : `[${w.index}]`}${w.post ?? ''}`;
/** `what` with more words after it. */
const plus = (w: What, post: string): What =>
  typeof w === 'string' ? w + post : { ...w, post: (w.post ?? '') + post };

/** Thrown inside the parser when the header runs past the bytes read so far; openGguf reads more. */
class NeedMore {
  constructor(
    readonly end: number,
    readonly what: string,
  ) {}
}

// A string this short and plain ASCII is built directly: TextDecoder costs more per call than the bytes.
const SHORT_STRING = 64;

function isAscii(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! >= 0x80) return false;
  return true;
}

class Cursor {
  private readonly dv: DataView;
  pos = 0;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: false });

  /** `bytes` is a prefix of a file of `total` bytes. */
  constructor(
    readonly bytes: Uint8Array,
    readonly total: number,
  ) {
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  need(n: number, what: What): void {
    const end = this.pos + n;
    if (end > this.total) {
      throw new GgufError(
        `truncated GGUF: ${say(what)} needs ${n} bytes at offset ${this.pos}, but the file ends at ${this.total}`,
      );
    }
    if (end > this.bytes.length) throw new NeedMore(end, say(what));
  }
  /** Refuse a claim the file cannot hold (`n` more bytes), without asking for them to be read yet. */
  fits(n: number, what: What): void {
    if (this.pos + n > this.total) this.need(n, what);
  }
  u32(what: What): number {
    this.need(4, what);
    const v = this.dv.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  /** A u64 as gguf.cpp reads it (uint64_t), exactly. */
  u64(what: What): bigint {
    this.need(8, what);
    const v = this.dv.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }
  /** A u64 that is a count, length or offset: must fit a JS safe integer. */
  size(what: What): number {
    const v = this.u64(what);
    if (v > BigInt(Number.MAX_SAFE_INTEGER))
      throw new GgufError(`malformed GGUF: ${say(what)} = ${v} is not a plausible size`);
    return Number(v);
  }
  /** A GGUF string; `maxBytes` refuses a longer one before its bytes are read. */
  string(what: What, maxBytes?: number): string {
    const len = this.size(plus(what, ' length'));
    if (maxBytes !== undefined && len > maxBytes) {
      throw new GgufError(`malformed GGUF: ${say(what)} is ${len} bytes long (at most ${maxBytes})`);
    }
    this.need(len, what);
    const start = this.pos;
    this.pos += len;
    const bytes = this.bytes.subarray(start, this.pos);
    if (len <= SHORT_STRING && isAscii(bytes))
      return String.fromCharCode.apply(null, bytes as unknown as number[]);
    return this.utf8.decode(bytes);
  }
  skip(n: number, what: What): void {
    this.need(n, what);
    this.pos += n;
  }
  /** Where a fixed-size field of `n` bytes starts (the cursor moves past it). */
  private at(n: number, what: What): number {
    this.need(n, what);
    const p = this.pos;
    this.pos += n;
    return p;
  }
  scalar(type: number, what: What): GgufValue {
    const dv = this.dv;
    switch (type) {
      case GgufType.UINT8:
        return dv.getUint8(this.at(1, what));
      case GgufType.INT8:
        return dv.getInt8(this.at(1, what));
      case GgufType.UINT16:
        return dv.getUint16(this.at(2, what), true);
      case GgufType.INT16:
        return dv.getInt16(this.at(2, what), true);
      case GgufType.UINT32:
        return dv.getUint32(this.at(4, what), true);
      case GgufType.INT32:
        return dv.getInt32(this.at(4, what), true);
      case GgufType.FLOAT32:
        return dv.getFloat32(this.at(4, what), true);
      case GgufType.BOOL:
        // As gguf.cpp reads it: any byte but 0 is true.
        return dv.getUint8(this.at(1, what)) !== 0;
      case GgufType.STRING:
        return this.string(what);
      case GgufType.UINT64:
        return dv.getBigUint64(this.at(8, what), true);
      case GgufType.INT64:
        return dv.getBigInt64(this.at(8, what), true);
      case GgufType.FLOAT64:
        return dv.getFloat64(this.at(8, what), true);
      default:
        throw new GgufError(`malformed GGUF: ${say(what)} has unknown value type ${type}`);
    }
  }
}

const FIXED_SIZE: Readonly<Record<number, number>> = {
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  10: 8,
  11: 8,
  12: 8,
};

function readArray(c: Cursor, key: string, maxArray: number): { value: GgufValue; elementType: GgufTypeId } {
  const elementType = c.u32({ key, post: ' element type' }) as GgufTypeId;
  const length = c.size({ key, post: ' length' });
  const fixed = FIXED_SIZE[elementType];
  const what = say({ key });
  // The least the elements can take: an absurd length from a corrupt file fails here, before any loop.
  if (fixed !== undefined) c.need(length * fixed, `${what} (${length} elements)`);
  else if (elementType === GgufType.STRING) c.need(length * 8, `${what} (${length} elements)`);
  else if (elementType === GgufType.ARRAY)
    throw new GgufError(`malformed GGUF: ${what} is an array of arrays (gguf.cpp refuses them)`);
  else throw new GgufError(`malformed GGUF: ${what} has unknown element type ${elementType}`);
  if (length > maxArray) {
    // Walked, not kept: a 150k-entry token list costs no memory beyond the header bytes themselves.
    if (fixed !== undefined) c.skip(length * fixed, what);
    else
      for (let i = 0; i < length; i++)
        c.skip(c.size({ pre: what, index: i, post: ' length' }), { pre: what, index: i });
    return { value: { skipped: true, elementType, length }, elementType };
  }
  const out: GgufValue[] = [];
  for (let i = 0; i < length; i++) out.push(c.scalar(elementType, { pre: what, index: i }));
  return { value: out, elementType };
}

// One type record per scalar type, shared: a header of millions of keys would otherwise hold as many.
const SCALAR_TYPES = new Map<number, GgufValueType>(
  Object.values(GgufType).map((type) => [type, Object.freeze({ type })]),
);

const INT64_MAX = 2n ** 63n - 1n;
const SIZE_MAX = 2n ** 64n - 1n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * n_dims, ne and type of a tensor info, checked as gguf.cpp checks them (gguf_init_from_reader): at most
 * 4 dims, no ne past INT64_MAX (negative as int64), an element count under INT64_MAX, a type id in
 * [0, GGML_TYPE_COUNT) with a block that divides ne[0], and a byte size within SIZE_MAX. Returns ggml_nbytes
 * in size_t arithmetic (mod 2^64), as gguf.cpp then packs the tensors with it.
 */
function tensorInfo(c: Cursor, name: string): { ne: bigint[]; type: number; nbytes: bigint } {
  const field = (post: string): What => ({ pre: 'tensor ', key: name, post });
  const nDims = c.u32(field(' n_dims'));
  // Only a message needs it; so it is made only for one.
  const what = () => `tensor ${quoted(name)}`;
  if (nDims > 4) throw new GgufError(`malformed GGUF: ${what()} has ${nDims} dims (at most 4)`);
  // ggml gives missing dims (all four of a 0-dim tensor, a scalar) ne = 1.
  const ne: bigint[] = [];
  for (let d = 0; d < nDims; d++) {
    const v = c.u64(field(` ne[${d}]`));
    if (v > INT64_MAX)
      throw new GgufError(
        `malformed GGUF: ${what()} dimension ${d} has invalid number of elements: ${BigInt.asIntN(64, v)} < 0`,
      );
    ne.push(v);
  }
  if (nDims === 0) ne.push(1n);
  const [n0, n1, n2, n3] = [0, 1, 2, 3].map((d) => ne[d] ?? 1n) as [bigint, bigint, bigint, bigint];
  const empty = n0 === 0n || n1 === 0n || n2 === 0n || n3 === 0n;
  // Every real tensor: its element count and bytes are far inside 2^53, so gguf.cpp's overflow checks
  // pass and ggml_nbytes is elements / block * size, in plain numbers (BigInt costs more per tensor).
  const small = Number(n0) * Number(n1) * Number(n2) * Number(n3);
  if (small < 2 ** 44) {
    const type = c.u32(field(' type'));
    const traits = type < GGML_TYPE_COUNT ? ggmlTypeTraits(type) : undefined;
    if (traits && Number(n0) % traits.blockSize === 0)
      return { ne, type, nbytes: BigInt((small / traits.blockSize) * traits.typeSize) };
    c.pos -= 4; // the checks below say what is wrong with it
  }
  // gguf.cpp's check, INT64_MAX/ne[1] <= ne[0] || ...; with a 0 in ne it would divide by zero, and a
  // tensor of no elements is representable, so that case is skipped (as newer ports of it do).
  if (!empty && (INT64_MAX / n1 <= n0 || INT64_MAX / n2 <= n0 * n1 || INT64_MAX / n3 <= n0 * n1 * n2))
    throw new GgufError(
      `malformed GGUF: the number of elements of ${what()} with shape (${n0}, ${n1}, ${n2}, ${n3}) is >= ${INT64_MAX} (gguf.cpp refuses it)`,
    );
  const type = c.u32(field(' type'));
  if (type >= GGML_TYPE_COUNT)
    throw new GgufError(
      `malformed GGUF: ${what()} has ggml type ${type | 0}, which ggml does not define (gguf.cpp takes 0 to ${GGML_TYPE_COUNT - 1}, up to ${ggmlTypeName(GGML_TYPE_COUNT - 1)})`,
    );
  const traits = ggmlTypeTraits(type);
  if (!traits)
    throw new GgufError(
      `malformed GGUF: ${what()} has ggml type ${type}, removed from ggml (its block size is 0; gguf.cpp refuses it)`,
    );
  const [blck, size] = [BigInt(traits.blockSize), BigInt(traits.typeSize)];
  if (n0 % blck !== 0n) {
    throw new GgufError(
      `malformed GGUF: ${what()} (${traits.name}) row length ${n0} is not a multiple of its block ${traits.blockSize}`,
    );
  }
  if ((n0 * n1 * n2 * n3) / blck > SIZE_MAX / size)
    throw new GgufError(
      `malformed GGUF: ${what()} with shape (${n0}, ${n1}, ${n2}, ${n3}) has a size in bytes > ${SIZE_MAX} (gguf.cpp refuses it)`,
    );
  // ggml_nbytes: 0 for an empty tensor, else ne[0]*nb[0]/blck + sum (ne[i]-1)*nb[i], all in size_t.
  const mod = (v: bigint) => v & SIZE_MAX;
  let nbytes = 0n;
  if (!empty) {
    const nb1 = mod(size * (n0 / blck));
    const nb2 = mod(nb1 * n1);
    const nb3 = mod(nb2 * n2);
    nbytes =
      blck === 1n
        ? mod(size + (n0 - 1n) * size + (n1 - 1n) * nb1 + (n2 - 1n) * nb2 + (n3 - 1n) * nb3)
        : mod(mod(n0 * size) / blck + (n1 - 1n) * nb1 + (n2 - 1n) * nb2 + (n3 - 1n) * nb3);
  }
  return { ne, type, nbytes };
}

/** Where the parse got to when it ran past the bytes read (openGguf sizes its next read from it). */
interface ParseProgress {
  phase: 'metadata' | 'tensors' | 'done';
  /** Entries of this phase read. */
  done: number;
  metadataStart: number;
  tensorsStart: number;
  nKv: number;
  nTensors: number;
}

const newProgress = (): ParseProgress => ({
  phase: 'metadata',
  done: 0,
  metadataStart: 0,
  tensorsStart: 0,
  nKv: 0,
  nTensors: 0,
});

// A tensor info's bytes when none has been read yet to tell (a 30-byte name, 2 dims).
const TENSOR_INFO_GUESS = 64;

/**
 * Where the header will end, from the entries read so far: a header of millions of keys is then read in
 * two or three passes instead of one per doubling (each pass parses from the start).
 */
function headerEstimate(p: ParseProgress, pos: number): number {
  if (p.phase === 'done') return pos;
  if (p.phase === 'tensors') {
    const per = p.done > 0 ? (pos - p.tensorsStart) / p.done : TENSOR_INFO_GUESS;
    return p.tensorsStart + per * p.nTensors;
  }
  const per = p.done > 0 ? (pos - p.metadataStart) / p.done : 0;
  return p.metadataStart + per * p.nKv + TENSOR_INFO_GUESS * p.nTensors;
}

/** Parse the header from `bytes`, a prefix of a `total`-byte file; throws NeedMore when the prefix is short. */
function parseHeader(
  bytes: Uint8Array,
  total: number,
  opts: GgufParseOptions,
  progress: ParseProgress = newProgress(),
): GgufFile {
  const maxArray = opts.maxArrayElements ?? 4096;
  const c = new Cursor(bytes, total);
  if (total < 4) {
    throw new GgufError(`not a GGUF file: ${total} bytes, too short for the magic 'GGUF'`);
  }
  if (c.u32('magic') !== GGUF_MAGIC) {
    const head = [...bytes.subarray(0, 4)]
      .map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.'))
      .join('');
    throw new GgufError(`not a GGUF file: expected magic 'GGUF', found '${head}'`);
  }
  const version = c.u32('version');
  if (version !== 2 && version !== 3) {
    const swapped = version >= 0x01000000 && (version & 0xffffff) === 0 ? ' (a big-endian GGUF?)' : '';
    throw new GgufError(
      `unsupported GGUF version ${version}${swapped} (this reader handles versions 2 and 3)`,
    );
  }
  const nTensors = c.size('tensor count');
  const nKv = c.size('metadata count');
  // Each KV takes at least 8 (key length) + 4 (type) + 1 bytes, each tensor info at least 8 + 4 + 4 + 8:
  // reject absurd counts from a corrupt header before looping over them.
  c.fits(nKv * 13, `${nKv} metadata entries`);
  Object.assign(progress, { phase: 'metadata', done: 0, metadataStart: c.pos, nKv, nTensors });
  const metadata = new Map<string, GgufValue>();
  const metadataTypes = new Map<string, GgufValueType>();
  for (let i = 0; i < nKv; i++) {
    progress.done = i;
    const key = c.string({ pre: 'metadata key #', post: String(i) });
    if (key === '') throw new GgufError(`malformed GGUF: metadata key #${i} is empty`);
    const type = c.u32({ pre: 'type of ', key });
    if (metadata.has(key)) throw new GgufError(`malformed GGUF: duplicate metadata key ${quoted(key)}`);
    if (type === GgufType.ARRAY) {
      const a = readArray(c, key, maxArray);
      metadata.set(key, a.value);
      metadataTypes.set(key, { type, elementType: a.elementType });
    } else {
      metadata.set(key, c.scalar(type, { key }));
      metadataTypes.set(key, SCALAR_TYPES.get(type)!);
    }
  }
  const alignment = readAlignment(metadata, metadataTypes);
  c.fits(nTensors * 24, `${nTensors} tensor infos`);
  progress.phase = 'tensors';
  progress.tensorsStart = c.pos;
  const raw: { name: string; ne: bigint[]; type: number; offset: bigint; nbytes: bigint }[] = [];
  const names = new Set<string>();
  for (let i = 0; i < nTensors; i++) {
    progress.done = i;
    const stored = c.string({ pre: 'tensor #', post: `${i} name` }, GGUF_MAX_TENSOR_NAME_BYTES);
    // ggml_set_name copies the name into a C string and gguf.cpp compares names with strcmp: the name
    // ggml (and llama.cpp) knows a tensor by ends at its first NUL byte.
    const nul = stored.indexOf('\0');
    const name = nul < 0 ? stored : stored.slice(0, nul);
    if (names.has(name))
      throw new GgufError(
        `malformed GGUF: duplicate tensor name ${quoted(name)}${nul < 0 ? '' : ` (${quoted(stored)} up to its NUL byte; gguf.cpp compares names as C strings)`}`,
      );
    names.add(name);
    raw.push({ name, ...tensorInfo(c, name), offset: c.u64({ pre: 'tensor ', key: name, post: ' offset' }) });
  }
  progress.phase = 'done';
  const headerBytes = c.pos;
  const dataOffset = Math.ceil(headerBytes / alignment) * alignment;
  if (nTensors > 0 && dataOffset > total) {
    throw new GgufError(
      `truncated GGUF: the tensor data starts at ${dataOffset} (the header padded to ${alignment}), but the file ends at ${total}`,
    );
  }
  // As gguf.cpp demands: tensors packed in order, each at the previous one's end padded to the alignment
  // (size_t arithmetic, which it checks for overflow). This also refuses overlapping data and gaps.
  const align = BigInt(alignment);
  let packedEnd = 0n;
  const tensors = raw.map(({ name, ne, type, offset, nbytes }): GgufTensorInfo => {
    if (offset !== packedEnd) {
      throw new GgufError(
        `malformed GGUF: tensor ${quoted(name)} has data offset ${offset}, expected ${packedEnd} (the previous tensor's end, padded to ${alignment}${offset < packedEnd ? '; its data would overlap' : ''})`,
      );
    }
    const padded = (nbytes + align - 1n) & ~(align - 1n) & SIZE_MAX;
    if (SIZE_MAX - packedEnd < padded)
      throw new GgufError(
        `malformed GGUF: tensor ${quoted(name)} size overflow, cannot accumulate size ${packedEnd} + ${padded} (gguf.cpp refuses it)`,
      );
    packedEnd += padded;
    const absolute = BigInt(dataOffset) + offset;
    const safe = [...ne, absolute + nbytes].every((v) => v <= MAX_SAFE);
    const neNumbers = ne.map(Number);
    return {
      name,
      ne: neNumbers,
      shape: [...neNumbers].reverse(),
      type,
      typeName: ggmlTypeName(type),
      offset: Number(absolute),
      byteLength: Number(nbytes),
      ...(safe ? {} : { exact: { ne, offset: absolute, byteLength: nbytes } }),
    };
  });
  const headerHash = fnv1a64(bytes.subarray(0, headerBytes));
  return {
    version,
    alignment,
    metadata,
    metadataTypes,
    tensors,
    dataOffset,
    headerBytes,
    headerHash,
    fileSize: total,
  };
}

function readAlignment(metadata: Map<string, GgufValue>, types: Map<string, GgufValueType>): number {
  const al = metadata.get('general.alignment');
  if (al === undefined) return GGUF_DEFAULT_ALIGNMENT;
  // ggml reads it with gguf_get_val_u32, which asserts the type: any other type is a malformed file.
  const type = types.get('general.alignment')!.type;
  if (type !== GgufType.UINT32) {
    throw new GgufError(
      `malformed GGUF: general.alignment has type ${ggufTypeName(type)}; GGUF requires UINT32`,
    );
  }
  if (typeof al !== 'number' || !Number.isInteger(al) || al <= 0 || (al & (al - 1)) !== 0) {
    throw new GgufError(`malformed GGUF: general.alignment = ${String(al)} is not a positive power of two`);
  }
  return al;
}

/**
 * Parse a GGUF v2/v3 header from bytes in memory: the whole file, or a prefix holding at least the header
 * (a tensor past the prefix fails when it is read, not before). Throws GgufError on anything that is not a
 * well-formed GGUF header. To open a file without reading it whole, use openGguf.
 * @example const g = parseGguf(new Uint8Array(await file.arrayBuffer())); g.tensors.map((t) => t.name)
 */
export function parseGguf(input: Uint8Array | ArrayBuffer, opts: GgufParseOptions = {}): GgufBuffer {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  try {
    return { ...parseHeader(bytes, bytes.length, opts), bytes };
  } catch (e) {
    // With total = the bytes' length every shortfall is a GgufError already; this keeps the type honest.
    if (e instanceof NeedMore) throw new GgufError(`truncated GGUF: the header runs past ${bytes.length}`);
    throw e;
  }
}

/** `length` bytes at `offset`, or GgufError when the source returns fewer. */
async function readExactly(
  src: ByteSource,
  offset: number,
  length: number,
  what: string,
): Promise<Uint8Array> {
  const b = await src.read(offset, length);
  if (b.length !== length) {
    throw new GgufError(`truncated GGUF: ${what}: asked for ${length} bytes at ${offset}, got ${b.length}`);
  }
  return b;
}

// Compressed bytes handed to the inflater per read.
const GZIP_READ_BYTES = 1 << 20;

/**
 * The source itself, or for a gzip-compressed file (magic 1f 8b, e.g. `model.gguf.gz`) its inflated
 * bytes, held in memory: small files ship compressed (the test data does). The file is read and inflated
 * as a stream that stops at `maxInflatedBytes` (a 6 MB file can claim 6 GiB), with a GgufError saying so;
 * a broken gzip stream is a GgufError too.
 * @example const g = await openGguf(await inflatedSource(blobSource(file)));
 */
export async function inflatedSource(
  src: ByteSource,
  maxInflatedBytes: number = GGUF_MAX_INFLATED_BYTES,
): Promise<ByteSource> {
  if (src.size < 2) return src;
  const magic = await src.read(0, 2);
  if (magic[0] !== 0x1f || magic[1] !== 0x8b) return src;
  const name = src.name ?? 'the file';
  let readAt = 0;
  const packed = new ReadableStream<Uint8Array<ArrayBuffer>>({
    async pull(controller) {
      if (readAt >= src.size) return controller.close();
      const n = Math.min(GZIP_READ_BYTES, src.size - readAt);
      controller.enqueue((await src.read(readAt, n)).slice());
      readAt += n;
    },
  });
  const inflated = packed.pipeThrough(new DecompressionStream('gzip')).getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    for (let r = await inflated.read(); !r.done; r = await inflated.read()) {
      total += r.value.length;
      if (total > maxInflatedBytes) {
        await inflated.cancel();
        throw new GgufError(
          `${quoted(name)} inflates to more than ${maxInflatedBytes} bytes (a gzip-compressed GGUF is held in memory); gunzip it and open the .gguf itself`,
        );
      }
      parts.push(r.value);
    }
  } catch (e) {
    if (e instanceof GgufError) throw e;
    throw new GgufError(
      `${quoted(name)} is not a valid gzip file: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  return chunksSource(parts, src.name);
}

/**
 * Open a GGUF through random access: reads the header in growing chunks (never the tensor data), and
 * lists its metadata and tensors. Throws GgufError for a non-GGUF, truncated or malformed header.
 * @example const g = await openGguf(blobSource(file)); const w = await readTensorOperand(src, g, 'blk.0.ffn_down.weight');
 */
export async function openGguf(src: ByteSource, opts: GgufOpenOptions = {}): Promise<GgufFile> {
  const cap = opts.maxHeaderBytes ?? GGUF_MAX_HEADER_BYTES;
  const first = Math.max(4, opts.initialReadBytes ?? 1 << 20);
  let buf = await readExactly(src, 0, Math.min(src.size, first, cap), 'header');
  for (;;) {
    const progress = newProgress();
    try {
      return parseHeader(buf, src.size, opts, progress);
    } catch (e) {
      if (!(e instanceof NeedMore)) throw e;
      // Checked before the read: a claimed length the file holds but no real header needs.
      if (e.end > cap) {
        throw new GgufError(
          `GGUF header too large: ${e.what} would take it to ${e.end} bytes, past the ${cap} this reader reads`,
        );
      }
      // NeedMore.end <= src.size (the cursor checked), so each pass grows the buffer: this terminates.
      const guess = Math.ceil(headerEstimate(progress, e.end) * 1.05);
      const want = Math.min(src.size, cap, Math.max(e.end, buf.length * 2, guess));
      const more = await readExactly(src, buf.length, want - buf.length, 'header');
      const next = new Uint8Array(want);
      next.set(buf);
      next.set(more, buf.length);
      buf = next;
    }
  }
}

/**
 * The tensor info of `name`, or GgufError listing what the file has.
 * @example ggufTensor(g, 'blk.0.attn_q.weight').ne // [4096, 4096]
 */
export function ggufTensor(file: GgufFile, name: string): GgufTensorInfo {
  const t = file.tensors.find((x) => x.name === name);
  if (!t) {
    const some = file.tensors.slice(0, 8).map((x) => x.name);
    throw new GgufError(
      `no tensor ${quoted(name)} in this GGUF (it has ${file.tensors.length}: ${some.map((n) => excerpt(n, 64)).join(', ')}${file.tensors.length > 8 ? ', ...' : ''})`,
    );
  }
  return t;
}

/**
 * Why a tensor's data cannot be read from a file of `size` bytes (cut short inside or before it), or
 * undefined when it is all there. A file cut in its last tensor keeps the others usable.
 * @example tensorDataProblem(ggufTensor(g, 'output.weight'), src.size) // 'truncated GGUF: ...'
 */
export function tensorDataProblem(t: GgufTensorInfo, size: number): string | undefined {
  // Past 2^53 the numbers are rounded: the exact values say it (such a tensor never fits in a file).
  const [offset, bytes] = t.exact
    ? [t.exact.offset, t.exact.byteLength]
    : [BigInt(t.offset), BigInt(t.byteLength ?? 0)];
  const end = offset + bytes;
  if (end <= BigInt(size)) return undefined;
  const missing = end - (offset > BigInt(size) ? offset : BigInt(size));
  return `truncated GGUF: tensor ${quoted(t.name)} needs bytes [${offset}, ${end}) but the data ends at ${size} (${missing} bytes missing)`;
}

/** [offset, end) of a tensor's data, checked against the `size` bytes there are. */
function tensorRange(t: GgufTensorInfo, size: number): [number, number] {
  const problem = tensorDataProblem(t, size);
  if (problem) throw new GgufError(problem);
  return [t.offset, t.offset + (t.byteLength ?? 0)];
}

/**
 * Check that every sized tensor's data lies inside `size` bytes; throws the GgufError readTensor would
 * throw for the first one that does not (a file cut short, found without reading any tensor).
 * @example checkTensorData(await openGguf(src), src.size)
 */
export function checkTensorData(file: GgufFile, size: number = file.fileSize): void {
  for (const t of file.tensors) if (t.byteLength !== undefined) tensorRange(t, size);
}

/**
 * Read only one tensor's bytes from the source. GgufError when the file is shorter than the header says.
 * @example const raw = await readTensor(src, g, 'blk.0.ffn_down.weight'); // ggml blocks
 */
export async function readTensor(src: ByteSource, file: GgufFile, name: string): Promise<Uint8Array> {
  const t = ggufTensor(file, name);
  const [start, end] = tensorRange(t, src.size);
  return readExactly(src, start, end - start, `tensor ${quoted(name)}`);
}

/**
 * A tensor's raw bytes as a view into a parsed buffer (no copy).
 * @example const raw = ggufTensorBytes(parseGguf(bytes), 'blk.0.ffn_down.weight');
 */
export function ggufTensorBytes(file: GgufBuffer, name: string): Uint8Array {
  const [start, end] = tensorRange(ggufTensor(file, name), file.bytes.length);
  return file.bytes.subarray(start, end);
}

/** The tensor types the MMQ kernels take as weights. */
export const KERNEL_TENSOR_TYPES = ['Q8_0', 'Q4_K'] as const;

/**
 * A GGUF weight in the layout the kernels consume: `rows` = n * experts rows of length k. ne = [k, n] is
 * one matrix; ne = [k, n, experts] an expert bank whose expert e owns rows e*n .. e*n + n - 1.
 */
export type GgufOperand = {
  name: string;
  ne: number[];
  k: number;
  n: number;
  experts: number;
  rows: number;
} & ({ type: 'Q8_0'; weight: Q8Weight } | { type: 'Q4_K'; weight: Q4KWeight });

/** Refuse, before any read, a tensor the kernels cannot take. */
function operandShape(t: GgufTensorInfo): { k: number; n: number; experts: number; rows: number } {
  if (t.type !== GgmlType.Q8_0 && t.type !== GgmlType.Q4_K) {
    throw new GgufError(
      `tensor ${quoted(t.name)} is ${t.typeName}: not taken by these kernels (${KERNEL_TENSOR_TYPES.join(', ')})`,
    );
  }
  const k = t.ne[0]!;
  const n = t.ne[1] ?? 1;
  const experts = t.ne.slice(2).reduce((a, b) => a * b, 1);
  // An empty tensor is legal GGUF (ggml reads it) but no kernel operand; the split steps would throw RangeError.
  if (k * n * experts === 0) {
    throw new GgufError(`tensor ${quoted(t.name)} (${t.typeName}, ne [${t.ne.join(', ')}]) has no elements`);
  }
  return { k, n, experts, rows: n * experts };
}

/**
 * Split a Q8_0 / Q4_K tensor's bytes into the kernels' layout (splitQ8_0 / splitQ4K).
 * @example const w = tensorOperand(ggufTensor(g, name), bytes); if (w.type === 'Q4_K') q4kRows(w.weight, e * w.n, w.n, w.k)
 */
export function tensorOperand(t: GgufTensorInfo, bytes: Uint8Array): GgufOperand {
  const s = operandShape(t);
  if (bytes.length !== t.byteLength) {
    throw new GgufError(`tensor ${quoted(t.name)} needs ${t.byteLength} bytes, got ${bytes.length}`);
  }
  const base = { name: t.name, ne: t.ne, ...s };
  if (t.type === GgmlType.Q8_0) return { ...base, type: 'Q8_0', weight: splitQ8_0(bytes, s.rows, s.k) };
  return { ...base, type: 'Q4_K', weight: splitQ4K(bytes, s.rows, s.k) };
}

/**
 * Read a Q8_0 / Q4_K tensor from the source as a kernel operand; any other type is a GgufError before
 * anything is read.
 * @example const w = await readTensorOperand(src, g, 'blk.0.ffn_down_exps.weight'); w.experts // 4
 */
export async function readTensorOperand(src: ByteSource, file: GgufFile, name: string): Promise<GgufOperand> {
  const t = ggufTensor(file, name);
  operandShape(t);
  return tensorOperand(t, await readTensor(src, file, name));
}

/**
 * A tensor's values as f32 (F32, F16, BF16, Q8_0, Q4_K), row-major over `shape`: for looking at weights
 * and for checking against other readers. GgufError for the types it does not decode.
 * @example const values = tensorToF32(ggufTensor(g, 't.f16'), await readTensor(src, g, 't.f16'));
 */
export function tensorToF32(t: GgufTensorInfo, bytes: Uint8Array): Float32Array {
  if (bytes.length !== t.byteLength) {
    throw new GgufError(`tensor ${quoted(t.name)} needs ${t.byteLength ?? '?'} bytes, got ${bytes.length}`);
  }
  const count = t.ne.reduce((a, b) => a * b, 1);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(count);
  switch (t.type) {
    case GgmlType.F32:
      for (let i = 0; i < count; i++) out[i] = dv.getFloat32(4 * i, true);
      return out;
    case GgmlType.F16:
      for (let i = 0; i < count; i++) out[i] = f16BitsToF32(dv.getUint16(2 * i, true));
      return out;
    case GgmlType.BF16: {
      const u = new Uint32Array(out.buffer);
      for (let i = 0; i < count; i++) u[i] = dv.getUint16(2 * i, true) << 16;
      return out;
    }
    case GgmlType.Q8_0:
    case GgmlType.Q4_K: {
      const w = tensorOperand(t, bytes);
      return w.type === 'Q8_0' ? dequantizeQ8_0(w.weight, w.rows, w.k) : dequantizeQ4K(w.weight, w.rows, w.k);
    }
    default:
      throw new GgufError(`tensor ${quoted(t.name)} is ${t.typeName}, which tensorToF32 does not decode`);
  }
}
