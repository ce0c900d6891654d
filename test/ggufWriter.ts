// A tiny GGUF writer for tests, written from the GGUF spec (not from the reader it tests).
import { GGUF_DEFAULT_ALIGNMENT } from '../src/kernels/quant/gguf';

export type KvValue =
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

export class Writer {
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

export interface TensorSpec {
  name: string;
  dims: number[];
  type: number;
  data: Uint8Array;
}

export interface GgufSpec {
  version?: number;
  kv: [string, KvValue][];
  /** Tensors, each with its data or only the data's length (for a header whose data is written apart). */
  tensors: (Omit<TensorSpec, 'data'> & ({ data: Uint8Array } | { byteLength: number }))[];
  alignment?: number;
}

/**
 * The header (padded to the alignment) and each tensor's absolute data offset, tensors packed in order as
 * ggml expects (offset = the previous one's end, padded).
 * @example const { header, offsets } = ggufHeader({ kv: [], tensors: [{ name: 'w', dims: [32], type: 8, byteLength: 34 }] });
 */
export function ggufHeader(opts: GgufSpec): { header: Uint8Array<ArrayBuffer>; offsets: number[] } {
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
    off = Math.ceil((off + ('data' in t ? t.data.length : t.byteLength)) / align) * align;
  }
  opts.tensors.forEach((t, i) => {
    w.str(t.name);
    w.num(t.dims.length, 4, 'u');
    for (const d of t.dims) w.num(d, 8, 'u');
    w.num(t.type, 4, 'u');
    w.num(offsets[i]!, 8, 'u');
  });
  w.pad(align);
  return { header: w.out(), offsets: offsets.map((o) => o + w.length) };
}

/**
 * A whole GGUF file in memory.
 * @example parseGguf(writeGguf({ kv: [], tensors: [{ name: 'w', dims: [32], type: 8, data: new Uint8Array(34) }] }))
 */
export function writeGguf(
  opts: Omit<GgufSpec, 'tensors'> & { tensors: TensorSpec[] },
): Uint8Array<ArrayBuffer> {
  const align = opts.alignment ?? GGUF_DEFAULT_ALIGNMENT;
  const { header } = ggufHeader(opts);
  const w = new Writer();
  w.bytes(header);
  opts.tensors.forEach((t) => {
    w.bytes(t.data);
    w.pad(align);
  });
  return w.out();
}
