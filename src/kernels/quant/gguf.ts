// A minimal GGUF (v2/v3) reader: header, metadata KV, tensor infos, aligned tensor data -- enough to
// pull a real Q8_0 / Q4_K weight out of a llama.cpp model file and feed it to the MMQ kernels.
// Layout (little-endian): 'GGUF' u32 version u64 n_tensors u64 n_kv, then n_kv x {string key, u32 type,
// value}, then n_tensors x {string name, u32 n_dims, u64 dims[n_dims], u32 ggml_type, u64 offset}, then
// padding to `general.alignment` (default 32) and the tensor data; offsets are relative to that start.
// A GGUF string is u64 length + UTF-8 bytes. dims[0] is the contiguous (row, K) axis.
// The input may be just a PREFIX of the file (a browser reads File.slice(0, n) for the header): parsing
// needs only the header, and a tensor whose bytes lie past the prefix fails when it is read, not before.
import { f16BitsToF32 } from './f16';
import { splitQ4K, type Q4KWeight } from './q4k';
import { splitQ8_0, type Q8Weight } from './q8';

/** Not a GGUF file, a truncated or malformed one, or a tensor this reader cannot hand to the kernels. */
export class GgufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GgufError';
  }
}

export const GGUF_MAGIC = 0x46554747; // 'GGUF' read as a little-endian u32
export const GGUF_DEFAULT_ALIGNMENT = 32;

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

/** ggml tensor types this reader decodes for the kernels. */
export const GgmlType = { F32: 0, F16: 1, Q8_0: 8, Q4_K: 12 } as const;

/** ggml_type -> [name, elements per block, bytes per block] (ggml's type_traits), for sizing any tensor. */
const GGML_TYPES: Readonly<Record<number, readonly [string, number, number]>> = {
  0: ['F32', 1, 4],
  1: ['F16', 1, 2],
  2: ['Q4_0', 32, 18],
  3: ['Q4_1', 32, 20],
  6: ['Q5_0', 32, 22],
  7: ['Q5_1', 32, 24],
  8: ['Q8_0', 32, 34],
  9: ['Q8_1', 32, 36],
  10: ['Q2_K', 256, 84],
  11: ['Q3_K', 256, 110],
  12: ['Q4_K', 256, 144],
  13: ['Q5_K', 256, 176],
  14: ['Q6_K', 256, 210],
  15: ['Q8_K', 256, 292],
  16: ['IQ2_XXS', 256, 66],
  17: ['IQ2_XS', 256, 74],
  18: ['IQ3_XXS', 256, 98],
  19: ['IQ1_S', 256, 50],
  20: ['IQ4_NL', 32, 18],
  21: ['IQ3_S', 256, 110],
  22: ['IQ2_S', 256, 82],
  23: ['IQ4_XS', 256, 136],
  24: ['I8', 1, 1],
  25: ['I16', 1, 2],
  26: ['I32', 1, 4],
  27: ['I64', 1, 8],
  28: ['F64', 1, 8],
  29: ['IQ1_M', 256, 56],
  30: ['BF16', 1, 2],
  34: ['TQ1_0', 256, 54],
  35: ['TQ2_0', 256, 66],
  39: ['MXFP4', 32, 17],
};

/** The ggml name of a tensor type ('Q4_K'), or `type<N>` for one this table does not know. */
export function ggmlTypeName(type: number): string {
  return GGML_TYPES[type]?.[0] ?? `type${type}`;
}

/** A metadata array too long to keep (its elements were walked over, not stored). */
export interface GgufSkippedArray {
  skipped: true;
  elementType: GgufTypeId;
  length: number;
}

/** A metadata value: integers up to 32 bits and floats as number, 64-bit integers as bigint. */
export type GgufValue = number | bigint | boolean | string | GgufValue[] | GgufSkippedArray;

export interface GgufTensorInfo {
  name: string;
  /** ne[0..n_dims): ne[0] is the contiguous axis (K for a weight [rows, K]). */
  dims: number[];
  type: number;
  typeName: string;
  /** Byte offset of the data from the start of the file (data section start + the stored offset). */
  fileOffset: number;
  /** Bytes of data, or undefined for a type this reader cannot size. */
  byteLength: number | undefined;
}

export interface GgufFile {
  version: number;
  alignment: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  /** Start of the (aligned) tensor data section in the file. */
  dataOffset: number;
  /** The bytes parsed (the whole file, or a prefix holding at least the header). */
  bytes: Uint8Array;
}

export interface GgufParseOptions {
  /** Arrays longer than this are walked but not kept (e.g. a 150k-entry token list). Default 4096. */
  maxArrayElements?: number;
}

class Cursor {
  private readonly dv: DataView;
  pos = 0;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: false });

  constructor(readonly bytes: Uint8Array) {
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  need(n: number, what: string): void {
    if (this.pos + n > this.bytes.length) {
      throw new GgufError(
        `truncated GGUF: ${what} needs ${n} bytes at offset ${this.pos}, but only ${this.bytes.length - this.pos} remain`,
      );
    }
  }
  u8(what: string): number {
    this.need(1, what);
    return this.dv.getUint8(this.pos++);
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.dv.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  u64(what: string): bigint {
    this.need(8, what);
    const v = this.dv.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }
  /** A u64 that is a count, length or offset: must fit a JS safe integer. */
  size(what: string): number {
    const v = this.u64(what);
    if (v > BigInt(Number.MAX_SAFE_INTEGER))
      throw new GgufError(`malformed GGUF: ${what} = ${v} is not a plausible size`);
    return Number(v);
  }
  string(what: string): string {
    const len = this.size(`${what} length`);
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
      case GgufType.BOOL: {
        const b = dv.getUint8(at(1));
        if (b > 1) throw new GgufError(`malformed GGUF: ${what} is a bool with byte value ${b}`);
        return b === 1;
      }
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

function readValue(c: Cursor, type: number, what: string, maxArray: number, depth: number): GgufValue {
  if (type !== GgufType.ARRAY) return c.scalar(type, what);
  if (depth > 8) throw new GgufError(`malformed GGUF: ${what} nests arrays deeper than 8`);
  const elementType = c.u32(`${what} element type`);
  const length = c.size(`${what} length`);
  const fixed = FIXED_SIZE[elementType];
  if (fixed !== undefined) c.need(length * fixed, `${what} (${length} elements)`);
  else if (elementType === GgufType.STRING || elementType === GgufType.ARRAY)
    c.need(length * 8, `${what} (${length} elements)`);
  else throw new GgufError(`malformed GGUF: ${what} has unknown element type ${elementType}`);
  if (length > maxArray) {
    if (fixed !== undefined) c.skip(length * fixed, what);
    else if (elementType === GgufType.STRING)
      for (let i = 0; i < length; i++) c.skip(c.size(`${what}[${i}] length`), `${what}[${i}]`);
    else for (let i = 0; i < length; i++) readValue(c, elementType, `${what}[${i}]`, 0, depth + 1);
    return { skipped: true, elementType: elementType as GgufTypeId, length };
  }
  const out: GgufValue[] = [];
  for (let i = 0; i < length; i++) out.push(readValue(c, elementType, `${what}[${i}]`, maxArray, depth + 1));
  return out;
}

/**
 * Parse a GGUF v2/v3 header (metadata + tensor infos). Throws GgufError on anything that is not a
 * well-formed GGUF header.
 * @example const g = parseGguf(new Uint8Array(await file.arrayBuffer())); g.tensors.map((t) => t.name)
 */
export function parseGguf(input: Uint8Array | ArrayBuffer, opts: GgufParseOptions = {}): GgufFile {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  const maxArray = opts.maxArrayElements ?? 4096;
  const c = new Cursor(bytes);
  if (bytes.length < 4 || c.u32('magic') !== GGUF_MAGIC) {
    const head = [...bytes.subarray(0, 4)]
      .map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.'))
      .join('');
    throw new GgufError(`not a GGUF file: expected magic 'GGUF', found '${head}'`);
  }
  const version = c.u32('version');
  if (version !== 2 && version !== 3) {
    throw new GgufError(`unsupported GGUF version ${version} (this reader handles versions 2 and 3)`);
  }
  const nTensors = c.size('tensor count');
  const nKv = c.size('metadata count');
  // Each KV takes at least 8 (key length) + 4 (type) + 1 bytes, each tensor info at least 8 + 4 + 4 + 8:
  // reject absurd counts from a corrupt header before looping over them.
  c.need(nKv * 13, `${nKv} metadata entries`);
  const metadata = new Map<string, GgufValue>();
  let alignmentType: number | undefined;
  for (let i = 0; i < nKv; i++) {
    const key = c.string(`metadata key #${i}`);
    const type = c.u32(`type of '${key}'`);
    if (key === 'general.alignment') alignmentType = type;
    metadata.set(key, readValue(c, type, `'${key}'`, maxArray, 0));
  }
  let alignment = GGUF_DEFAULT_ALIGNMENT;
  const al = metadata.get('general.alignment');
  if (al !== undefined) {
    // ggml reads it with gguf_get_val_u32, which asserts the type: any other type is a malformed file.
    if (alignmentType !== GgufType.UINT32) {
      const name =
        Object.entries(GgufType).find(([, id]) => id === alignmentType)?.[0] ?? `type ${alignmentType}`;
      throw new GgufError(`malformed GGUF: general.alignment has type ${name}; GGUF requires UINT32`);
    }
    if (typeof al !== 'number' || !Number.isInteger(al) || al <= 0 || (al & (al - 1)) !== 0) {
      throw new GgufError(`malformed GGUF: general.alignment = ${String(al)} is not a positive power of two`);
    }
    alignment = al;
  }
  c.need(nTensors * 24, `${nTensors} tensor infos`);
  const raw: { name: string; dims: number[]; type: number; offset: number }[] = [];
  for (let i = 0; i < nTensors; i++) {
    const name = c.string(`tensor #${i} name`);
    const nDims = c.u32(`tensor '${name}' n_dims`);
    if (nDims < 1 || nDims > 4)
      throw new GgufError(`malformed GGUF: tensor '${name}' has ${nDims} dims (1..4 allowed)`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(c.size(`tensor '${name}' dim ${d}`));
    const type = c.u32(`tensor '${name}' type`);
    const offset = c.size(`tensor '${name}' offset`);
    if (offset % alignment !== 0) {
      throw new GgufError(
        `malformed GGUF: tensor '${name}' offset ${offset} is not a multiple of the alignment ${alignment}`,
      );
    }
    raw.push({ name, dims, type, offset });
  }
  const dataOffset = Math.ceil(c.pos / alignment) * alignment;
  const tensors = raw.map(({ name, dims, type, offset }): GgufTensorInfo => {
    const t = GGML_TYPES[type];
    const elements = dims.reduce((a, b) => a * b, 1);
    let byteLength: number | undefined;
    if (t) {
      const [tname, block, bytesPerBlock] = t;
      if (dims[0]! % block !== 0) {
        throw new GgufError(
          `malformed GGUF: tensor '${name}' (${tname}) row length ${dims[0]} is not a multiple of its block ${block}`,
        );
      }
      byteLength = (elements / block) * bytesPerBlock;
    }
    return { name, dims, type, typeName: ggmlTypeName(type), fileOffset: dataOffset + offset, byteLength };
  });
  return { version, alignment, metadata, tensors, dataOffset, bytes };
}

/** The tensor info of `name`, or GgufError listing what the file has. */
export function ggufTensor(file: GgufFile, name: string): GgufTensorInfo {
  const t = file.tensors.find((x) => x.name === name);
  if (!t) {
    const some = file.tensors.slice(0, 8).map((x) => x.name);
    throw new GgufError(
      `no tensor '${name}' in this GGUF (it has ${file.tensors.length}: ${some.join(', ')}${file.tensors.length > 8 ? ', ...' : ''})`,
    );
  }
  return t;
}

/**
 * A tensor's raw bytes as a view into the file (no copy). Throws GgufError when the bytes lie past the
 * end of what was parsed, or the type cannot be sized.
 * @example const raw = ggufTensorBytes(g, 'blk.0.ffn_down.weight'); // Uint8Array of ggml blocks
 */
export function ggufTensorBytes(file: GgufFile, name: string): Uint8Array {
  const t = ggufTensor(file, name);
  if (t.byteLength === undefined)
    throw new GgufError(`tensor '${name}' has ggml type ${t.type}, which this reader cannot size`);
  const end = t.fileOffset + t.byteLength;
  if (end > file.bytes.length) {
    throw new GgufError(
      `truncated GGUF: tensor '${name}' needs bytes [${t.fileOffset}, ${end}) but the data ends at ${file.bytes.length}`,
    );
  }
  return file.bytes.subarray(t.fileOffset, end);
}

/** A weight [rows, k] in the layout the MMQ kernels consume. */
export type GgufMmqTensor =
  | { type: 'F32'; name: string; rows: number; k: number; data: Float32Array }
  | { type: 'F16'; name: string; rows: number; k: number; data: Float32Array }
  | { type: 'Q8_0'; name: string; rows: number; k: number; weight: Q8Weight }
  | { type: 'Q4_K'; name: string; rows: number; k: number; weight: Q4KWeight };

/**
 * Read a tensor as a [rows, k] weight for the kernels: k = dims[0], rows = the product of the other dims.
 * F32 comes back as-is, F16 decoded to f32, Q8_0 / Q4_K in their split layouts (splitQ8_0 / splitQ4K).
 * @example const w = readGgufTensorForMmq(g, 'blk.0.attn_q.weight'); if (w.type === 'Q4_K') run(w.weight)
 */
export function readGgufTensorForMmq(file: GgufFile, name: string): GgufMmqTensor {
  const t = ggufTensor(file, name);
  const k = t.dims[0]!;
  const rows = t.dims.slice(1).reduce((a, b) => a * b, 1);
  const supported = Object.keys(GgmlType).join(', ');
  if (
    t.type !== GgmlType.F32 &&
    t.type !== GgmlType.F16 &&
    t.type !== GgmlType.Q8_0 &&
    t.type !== GgmlType.Q4_K
  ) {
    throw new GgufError(`tensor '${name}' is ${t.typeName}; the MMQ kernels take ${supported}`);
  }
  // An empty tensor is legal GGUF (ggml reads it) but no kernel operand; the split steps would throw RangeError.
  if (rows * k === 0) {
    throw new GgufError(`tensor '${name}' (${t.typeName}, ne [${t.dims.join(', ')}]) has no elements`);
  }
  const bytes = ggufTensorBytes(file, name);
  switch (t.type) {
    case GgmlType.F32: {
      // Copy: the view may not be 4-byte aligned in the caller's buffer.
      const data = new Float32Array(rows * k);
      new Uint8Array(data.buffer).set(bytes);
      return { type: 'F32', name, rows, k, data };
    }
    case GgmlType.F16: {
      const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const data = new Float32Array(rows * k);
      for (let i = 0; i < data.length; i++) data[i] = f16BitsToF32(dv.getUint16(2 * i, true));
      return { type: 'F16', name, rows, k, data };
    }
    case GgmlType.Q8_0:
      // parseGguf already checked k % 32 and sized the bytes, so the split cannot reject them.
      return { type: 'Q8_0', name, rows, k, weight: splitQ8_0(bytes, rows, k) };
    default:
      return { type: 'Q4_K', name, rows, k, weight: splitQ4K(bytes, rows, k) };
  }
}
