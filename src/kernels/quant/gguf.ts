// A GGUF (v2/v3) reader that opens files of any size without reading them whole: the header is read in
// growing chunks from a ByteSource, and a tensor's bytes only when asked for.
// Layout (little-endian): 'GGUF' u32 version u64 n_tensors u64 n_kv, then n_kv x {string key, u32 type,
// value}, then n_tensors x {string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset}, then
// padding to `general.alignment` (default 32) and the tensor data; offsets are relative to that start.
// A GGUF string is u64 length + UTF-8 bytes. ne[0] is the contiguous (row, K) axis.
import { chunksSource, type ByteSource } from './byteSource';
import { f16BitsToF32 } from './f16';
import { fnv1a64 } from './fnv';
import { GgmlType, ggmlTensorByteLength, ggmlTypeName, ggmlTypeTraits } from './ggml';
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
  return Object.entries(GgufType).find(([, id]) => id === type)?.[0] ?? `type ${type}`;
}

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

/** Thrown inside the parser when the header runs past the bytes read so far; openGguf reads more. */
class NeedMore {
  constructor(
    readonly end: number,
    readonly what: string,
  ) {}
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

  need(n: number, what: string): void {
    const end = this.pos + n;
    if (end > this.total) {
      throw new GgufError(
        `truncated GGUF: ${what} needs ${n} bytes at offset ${this.pos}, but the file ends at ${this.total}`,
      );
    }
    if (end > this.bytes.length) throw new NeedMore(end, what);
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.dv.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  /** A u64 that is a count, length or offset: must fit a JS safe integer. */
  size(what: string): number {
    this.need(8, what);
    const v = this.dv.getBigUint64(this.pos, true);
    this.pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER))
      throw new GgufError(`malformed GGUF: ${what} = ${v} is not a plausible size`);
    return Number(v);
  }
  /** A GGUF string; `maxBytes` refuses a longer one before its bytes are read. */
  string(what: string, maxBytes?: number): string {
    const len = this.size(`${what} length`);
    if (maxBytes !== undefined && len > maxBytes) {
      throw new GgufError(`malformed GGUF: ${what} is ${len} bytes long (at most ${maxBytes})`);
    }
    this.need(len, what);
    const s = this.utf8.decode(this.bytes.subarray(this.pos, this.pos + len));
    this.pos += len;
    return s;
  }
  skip(n: number, what: string): void {
    this.need(n, what);
    this.pos += n;
  }
  scalar(type: number, what: string): GgufValue {
    const dv = this.dv;
    const at = (n: number) => {
      this.need(n, what);
      const p = this.pos;
      this.pos += n;
      return p;
    };
    switch (type) {
      case GgufType.UINT8:
        return dv.getUint8(at(1));
      case GgufType.INT8:
        return dv.getInt8(at(1));
      case GgufType.UINT16:
        return dv.getUint16(at(2), true);
      case GgufType.INT16:
        return dv.getInt16(at(2), true);
      case GgufType.UINT32:
        return dv.getUint32(at(4), true);
      case GgufType.INT32:
        return dv.getInt32(at(4), true);
      case GgufType.FLOAT32:
        return dv.getFloat32(at(4), true);
      case GgufType.BOOL:
        // As gguf.cpp reads it: any byte but 0 is true.
        return dv.getUint8(at(1)) !== 0;
      case GgufType.STRING:
        return this.string(what);
      case GgufType.UINT64:
        return dv.getBigUint64(at(8), true);
      case GgufType.INT64:
        return dv.getBigInt64(at(8), true);
      case GgufType.FLOAT64:
        return dv.getFloat64(at(8), true);
      default:
        throw new GgufError(`malformed GGUF: ${what} has unknown value type ${type}`);
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

function readArray(c: Cursor, what: string, maxArray: number): { value: GgufValue; elementType: GgufTypeId } {
  const elementType = c.u32(`${what} element type`) as GgufTypeId;
  const length = c.size(`${what} length`);
  const fixed = FIXED_SIZE[elementType];
  // The least the elements can take: an absurd length from a corrupt file fails here, before any loop.
  if (fixed !== undefined) c.need(length * fixed, `${what} (${length} elements)`);
  else if (elementType === GgufType.STRING) c.need(length * 8, `${what} (${length} elements)`);
  else if (elementType === GgufType.ARRAY)
    throw new GgufError(`malformed GGUF: ${what} is an array of arrays (gguf.cpp refuses them)`);
  else throw new GgufError(`malformed GGUF: ${what} has unknown element type ${elementType}`);
  if (length > maxArray) {
    // Walked, not kept: a 150k-entry token list costs no memory beyond the header bytes themselves.
    if (fixed !== undefined) c.skip(length * fixed, what);
    else for (let i = 0; i < length; i++) c.skip(c.size(`${what}[${i}] length`), `${what}[${i}]`);
    return { value: { skipped: true, elementType, length }, elementType };
  }
  const out: GgufValue[] = [];
  for (let i = 0; i < length; i++) out.push(c.scalar(elementType, `${what}[${i}]`));
  return { value: out, elementType };
}

/** Parse the header from `bytes`, a prefix of a `total`-byte file; throws NeedMore when the prefix is short. */
function parseHeader(bytes: Uint8Array, total: number, opts: GgufParseOptions): GgufFile {
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
  c.need(nKv * 13, `${nKv} metadata entries`);
  const metadata = new Map<string, GgufValue>();
  const metadataTypes = new Map<string, GgufValueType>();
  for (let i = 0; i < nKv; i++) {
    const key = c.string(`metadata key #${i}`);
    if (key === '') throw new GgufError(`malformed GGUF: metadata key #${i} is empty`);
    const type = c.u32(`type of ${quoted(key)}`);
    if (metadata.has(key)) throw new GgufError(`malformed GGUF: duplicate metadata key ${quoted(key)}`);
    if (type === GgufType.ARRAY) {
      const a = readArray(c, quoted(key), maxArray);
      metadata.set(key, a.value);
      metadataTypes.set(key, { type, elementType: a.elementType });
    } else {
      metadata.set(key, c.scalar(type, quoted(key)));
      metadataTypes.set(key, { type: type as GgufTypeId });
    }
  }
  const alignment = readAlignment(metadata, metadataTypes);
  c.need(nTensors * 24, `${nTensors} tensor infos`);
  const raw: { name: string; ne: number[]; type: number; offset: number }[] = [];
  const names = new Set<string>();
  for (let i = 0; i < nTensors; i++) {
    const name = c.string(`tensor #${i} name`, GGUF_MAX_TENSOR_NAME_BYTES);
    const what = `tensor ${quoted(name)}`;
    if (names.has(name)) throw new GgufError(`malformed GGUF: duplicate tensor name ${quoted(name)}`);
    names.add(name);
    const nDims = c.u32(`${what} n_dims`);
    if (nDims > 4) throw new GgufError(`malformed GGUF: ${what} has ${nDims} dims (at most 4)`);
    const ne: number[] = [];
    for (let d = 0; d < nDims; d++) ne.push(c.size(`${what} ne[${d}]`));
    // ggml gives a 0-dim tensor ne = [1, 1, 1, 1]: a scalar.
    if (nDims === 0) ne.push(1);
    const type = c.u32(`${what} type`);
    const traits = ggmlTypeTraits(type);
    if (!traits) {
      throw new GgufError(`malformed GGUF: ${what} has ggml type ${type}, which ggml does not define`);
    }
    if (ne[0]! % traits.blockSize !== 0) {
      throw new GgufError(
        `malformed GGUF: ${what} (${traits.name}) row length ${ne[0]} is not a multiple of its block ${traits.blockSize}`,
      );
    }
    raw.push({ name, ne, type, offset: c.size(`${what} offset`) });
  }
  const headerBytes = c.pos;
  const dataOffset = Math.ceil(headerBytes / alignment) * alignment;
  if (nTensors > 0 && dataOffset > total) {
    throw new GgufError(
      `truncated GGUF: the tensor data starts at ${dataOffset} (the header padded to ${alignment}), but the file ends at ${total}`,
    );
  }
  // As gguf.cpp demands: tensors packed in order, each at the previous one's end padded to the alignment.
  // This also refuses overlapping data (two tensors sharing bytes) and gaps.
  let packedEnd = 0;
  const tensors = raw.map(({ name, ne, type, offset }): GgufTensorInfo => {
    const elements = ne.reduce((a, b) => a * b, 1);
    const byteLength = ggmlTensorByteLength(type, ne)!;
    const end = dataOffset + offset + byteLength;
    if (!Number.isSafeInteger(elements) || !Number.isSafeInteger(end)) {
      throw new GgufError(
        `malformed GGUF: tensor ${quoted(name)} (ne [${ne.join(', ')}]) is too large to address`,
      );
    }
    if (offset !== packedEnd) {
      throw new GgufError(
        `malformed GGUF: tensor ${quoted(name)} has data offset ${offset}, expected ${packedEnd} (the previous tensor's end, padded to ${alignment}${offset < packedEnd ? '; its data would overlap' : ''})`,
      );
    }
    packedEnd = Math.ceil((offset + byteLength) / alignment) * alignment;
    return {
      name,
      ne,
      shape: [...ne].reverse(),
      type,
      typeName: ggmlTypeName(type),
      offset: dataOffset + offset,
      byteLength,
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
    try {
      return parseHeader(buf, src.size, opts);
    } catch (e) {
      if (!(e instanceof NeedMore)) throw e;
      // Checked before the read: a claimed length the file holds but no real header needs.
      if (e.end > cap) {
        throw new GgufError(
          `GGUF header too large: ${e.what} would take it to ${e.end} bytes, past the ${cap} this reader reads`,
        );
      }
      // NeedMore.end <= src.size (the cursor checked), so each pass grows the buffer: this terminates.
      const want = Math.min(src.size, cap, Math.max(e.end, buf.length * 2));
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
  const end = t.offset + (t.byteLength ?? 0);
  if (end <= size) return undefined;
  return `truncated GGUF: tensor ${quoted(t.name)} needs bytes [${t.offset}, ${end}) but the data ends at ${size} (${end - Math.max(size, t.offset)} bytes missing)`;
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
