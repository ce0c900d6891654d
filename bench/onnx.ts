// The few ONNX models the bench feeds to ONNX Runtime, written by hand: a protobuf writer (varints and
// length-delimited fields, nothing else is needed) and the ModelProto of one com.microsoft MatMulNBits node,
// plus the Identity and Slice models that move tensors between the CPU and the GPU. ORT is not a dependency
// of this project, and neither is an ONNX or protobuf package: a one-node model is a few hundred bytes of
// protobuf, and writing it here keeps bench/ort.ts loadable from a folder outside node_modules.
//
// Field numbers are onnx/onnx.proto3's (ModelProto, GraphProto, NodeProto, AttributeProto, ValueInfoProto,
// TypeProto, TensorShapeProto, TensorProto, OperatorSetIdProto); the operator is
// onnxruntime/core/graph/contrib_ops/contrib_defs.cc's MatMulNBits (docs/ContribOperators.md).

/** Protobuf wire types used here. */
const VARINT = 0;
const I32 = 5;
const LEN = 2;

/**
 * The protobuf varint of a non-negative integer or of an int64 (negative values take ten bytes, two's
 * complement, as protobuf writes an int64).
 * @example encodeVarint(300) // Uint8Array [0xac, 0x02]
 */
export function encodeVarint(value: number | bigint): Uint8Array {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v) byte |= 0x80;
    out.push(byte);
  } while (v);
  return Uint8Array.from(out);
}

/**
 * A protobuf message under construction: fields are appended in call order (protobuf readers accept any
 * order). Nested messages are written by a callback on a child writer, then length-prefixed.
 * @example const w = new ProtoWriter(); w.int(1, 10); w.str(2, 'x'); w.finish(); // 08 0a 12 01 78
 */
export class ProtoWriter {
  private parts: Uint8Array[] = [];

  private tag(field: number, wire: number) {
    this.parts.push(encodeVarint((field << 3) | wire));
  }

  /** An int32/int64/enum/bool field (varint). */
  int(field: number, value: number | bigint): this {
    this.tag(field, VARINT);
    this.parts.push(encodeVarint(value));
    return this;
  }

  /** A float field (fixed 32 bits, little-endian). */
  float(field: number, value: number): this {
    this.tag(field, I32);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.parts.push(b);
    return this;
  }

  /** A bytes field. */
  bytes(field: number, value: Uint8Array): this {
    this.tag(field, LEN);
    this.parts.push(encodeVarint(value.length), value);
    return this;
  }

  /** A string field (UTF-8). */
  str(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  /** A packed repeated int64 field (one length-delimited run of varints). */
  packedInts(field: number, values: readonly (number | bigint)[]): this {
    const inner = new ProtoWriter();
    for (const v of values) inner.parts.push(encodeVarint(v));
    return this.bytes(field, inner.finish());
  }

  /** An embedded message, written by `build` on a fresh writer. */
  msg(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  /** The message's bytes. */
  finish(): Uint8Array {
    const out = new Uint8Array(this.parts.reduce((s, p) => s + p.length, 0));
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

/** One field as read back by decodeFields: a varint as bigint, I32/I64 as raw bytes, LEN as its payload. */
export interface ProtoField {
  field: number;
  wire: number;
  value: bigint | Uint8Array;
}

/**
 * Split one protobuf message into its top-level fields (no schema: nested messages stay bytes, to be decoded
 * again). For tests and for a sanity check of what the bench wrote; throws on truncated input.
 * @example decodeFields(new ProtoWriter().int(1, 10).finish()) // [{ field: 1, wire: 0, value: 10n }]
 */
export function decodeFields(bytes: Uint8Array): ProtoField[] {
  const out: ProtoField[] = [];
  let at = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= bytes.length) throw new RangeError('truncated varint');
      const b = bytes[at++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  };
  const take = (len: number) => {
    if (at + len > bytes.length) throw new RangeError('truncated field');
    const v = bytes.subarray(at, at + len);
    at += len;
    return v;
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === VARINT) out.push({ field, wire, value: varint() });
    else if (wire === LEN) out.push({ field, wire, value: take(Number(varint())) });
    else if (wire === I32) out.push({ field, wire, value: take(4) });
    else if (wire === 1) out.push({ field, wire, value: take(8) });
    else throw new RangeError(`unsupported wire type ${wire}`);
  }
  return out;
}

/** TensorProto.DataType values the bench's models use. */
export const OnnxType = { FLOAT: 1, UINT8: 2, INT64: 7, FLOAT16: 10 } as const;
export type OnnxElem = (typeof OnnxType)[keyof typeof OnnxType];

/** IR version 10 (ONNX 1.16) and default-domain opset 21: both within what ORT 1.30 loads. */
export const ONNX_IR_VERSION = 10;
export const ONNX_OPSET = 21;
/** com.microsoft's opset version that defines MatMulNBits. */
export const MS_OPSET = 1;

/** A dimension: a fixed size, or a symbolic name (dynamic). */
type Dim = number | string;

/** ValueInfoProto { name = 1, type = 2 } with TypeProto.tensor_type = 1 { elem_type = 1, shape = 2 }. */
function valueInfo(w: ProtoWriter, field: number, name: string, elem: OnnxElem, dims: readonly Dim[]) {
  w.msg(field, (vi) => {
    vi.str(1, name);
    vi.msg(2, (tp) =>
      tp.msg(1, (tt) => {
        tt.int(1, elem);
        // TensorShapeProto.dim = 1 { dim_value = 1 | dim_param = 2 }
        tt.msg(2, (sh) => {
          for (const d of dims) sh.msg(1, (dm) => (typeof d === 'number' ? dm.int(1, d) : dm.str(2, d)));
        });
      }),
    );
  });
}

/** AttributeProto { name = 1, i = 3, type = 20 (INT = 2) }. */
function intAttribute(w: ProtoWriter, name: string, value: number) {
  w.msg(5, (a) => a.str(1, name).int(3, value).int(20, 2));
}

/** TensorProto initializer { dims = 1, data_type = 2, name = 8, raw_data = 9 } of int64 values. */
function int64Initializer(w: ProtoWriter, name: string, values: readonly number[]) {
  w.msg(5, (t) => {
    t.packedInts(1, [values.length]);
    t.int(2, OnnxType.INT64);
    t.str(8, name);
    const raw = new BigInt64Array(values.map((v) => BigInt(v)));
    t.bytes(9, new Uint8Array(raw.buffer));
  });
}

interface GraphSpec {
  name: string;
  nodes: {
    op: string;
    domain?: string;
    inputs: readonly string[];
    outputs: readonly string[];
    attrs?: readonly [string, number][];
  }[];
  inputs: readonly [string, OnnxElem, readonly Dim[]][];
  outputs: readonly [string, OnnxElem, readonly Dim[]][];
  initializers?: readonly [string, readonly number[]][];
  /** Opsets besides the default domain's. */
  opsets?: readonly [string, number][];
}

/** ModelProto { ir_version = 1, producer_name = 2, graph = 7, opset_import = 8 } around one graph. */
function model(g: GraphSpec): Uint8Array {
  const w = new ProtoWriter();
  w.int(1, ONNX_IR_VERSION);
  w.str(2, 'mmq-playground bench');
  w.msg(7, (gr) => {
    // NodeProto { input = 1, output = 2, name = 3, op_type = 4, attribute = 5, domain = 7 }
    g.nodes.forEach((n, i) =>
      gr.msg(1, (nd) => {
        for (const x of n.inputs) nd.str(1, x);
        for (const y of n.outputs) nd.str(2, y);
        nd.str(3, `${n.op}_${i}`);
        nd.str(4, n.op);
        for (const [name, v] of n.attrs ?? []) intAttribute(nd, name, v);
        if (n.domain) nd.str(7, n.domain);
      }),
    );
    gr.str(2, g.name);
    for (const [name, values] of g.initializers ?? []) int64Initializer(gr, name, values);
    for (const [name, elem, dims] of g.inputs) valueInfo(gr, 11, name, elem, dims);
    for (const [name, elem, dims] of g.outputs) valueInfo(gr, 12, name, elem, dims);
  });
  // OperatorSetIdProto { domain = 1, version = 2 }; the default domain is the empty string.
  for (const [domain, version] of [['', ONNX_OPSET] as const, ...(g.opsets ?? [])])
    w.msg(8, (o) => {
      if (domain) o.str(1, domain);
      o.int(2, version);
    });
  return w.finish();
}

export interface MatMulNBitsSpec {
  k: number;
  n: number;
  /** Type of A, scales and Y. */
  float: 'f16' | 'f32';
  /** MatMulNBits accuracy_level: 0 (default, the type of A), 4 (int8 compute: ORT WebGPU's DP4A path). */
  accuracyLevel?: number;
  /** Add the optional uint8 zero_points input (packed 4-bit, ceil(blocks / 2) bytes per row). */
  zeroPoints?: boolean;
  /** Weight block size along K (default 32; ORT wants a power of two >= 16). */
  blockSize?: number;
}

/** Bits per weight the bench's MatMulNBits models use. */
export const NBITS = 4;

/**
 * MatMulNBits' input shapes for `spec`: B [N, K/block, block/2] uint8, scales [N*K/block], zero points
 * [N * ceil(K/block / 2)] uint8. Throws when K is not a multiple of the block.
 * @example nbitsShapes({ k: 256, n: 64, float: 'f16' }).b // [64, 8, 16]
 */
export function nbitsShapes(spec: MatMulNBitsSpec): { b: number[]; scales: number[]; zeroPoints: number[] } {
  const block = spec.blockSize ?? 32;
  if (spec.k % block) throw new RangeError(`MatMulNBits: K=${spec.k} is not a multiple of block ${block}`);
  const blocks = spec.k / block;
  return {
    b: [spec.n, blocks, (block * NBITS) / 8],
    scales: [spec.n * blocks],
    zeroPoints: [spec.n * Math.ceil(blocks / 2)],
  };
}

const floatElem = (f: 'f16' | 'f32'): OnnxElem => (f === 'f16' ? OnnxType.FLOAT16 : OnnxType.FLOAT);

/**
 * The ModelProto of one com.microsoft MatMulNBits node: Y [M, N] = A [M, K] x dequant(B)^T with M dynamic,
 * bits 4, the block size along K, accuracy_level as given; B, scales (and zero points) are graph inputs, not
 * initializers, so the bench can feed a different (cold) weight bank on every run.
 * @example const bytes = matMulNBitsModel({ k: 4096, n: 4096, float: 'f16' });
 */
export function matMulNBitsModel(spec: MatMulNBitsSpec): Uint8Array {
  const t = floatElem(spec.float);
  const sh = nbitsShapes(spec);
  const inputs: [string, OnnxElem, Dim[]][] = [
    ['A', t, ['M', spec.k]],
    ['B', OnnxType.UINT8, sh.b],
    ['scales', t, sh.scales],
  ];
  if (spec.zeroPoints) inputs.push(['zero_points', OnnxType.UINT8, sh.zeroPoints]);
  return model({
    name: 'matmul_nbits',
    nodes: [
      {
        op: 'MatMulNBits',
        domain: 'com.microsoft',
        inputs: inputs.map(([name]) => name),
        outputs: ['Y'],
        attrs: [
          ['K', spec.k],
          ['N', spec.n],
          ['bits', NBITS],
          ['block_size', spec.blockSize ?? 32],
          ['accuracy_level', spec.accuracyLevel ?? 0],
        ],
      },
    ],
    inputs,
    outputs: [['Y', t, ['M', spec.n]]],
    opsets: [['com.microsoft', MS_OPSET]],
  });
}

/**
 * Y = Identity(X) over a tensor of `rank` dynamic dimensions. A session on the WebGPU EP whose output is
 * preferred on the GPU uploads a CPU tensor; one whose input is a GPU tensor and output on the CPU downloads.
 * @example const up = identityModel(OnnxType.UINT8, 3);
 */
export function identityModel(elem: OnnxElem, rank: number): Uint8Array {
  const dims = Array.from({ length: rank }, (_, i) => `d${i}`);
  return model({
    name: 'identity',
    nodes: [{ op: 'Identity', inputs: ['X'], outputs: ['Y'] }],
    inputs: [['X', elem, dims]],
    outputs: [['Y', elem, dims]],
  });
}

/**
 * Y = X[0:1, 0:1] of a 2-D tensor: a session reading a GPU tensor's first element back to the CPU, which
 * cannot return before the GPU has finished the work that wrote it (the bench's end-of-batch wait).
 * @example const sync = firstElementModel(OnnxType.FLOAT16);
 */
export function firstElementModel(elem: OnnxElem): Uint8Array {
  return model({
    name: 'first_element',
    nodes: [{ op: 'Slice', inputs: ['X', 'starts', 'ends', 'axes'], outputs: ['Y'] }],
    inputs: [['X', elem, ['rows', 'cols']]],
    outputs: [['Y', elem, [1, 1]]],
    initializers: [
      ['starts', [0, 0]],
      ['ends', [1, 1]],
      ['axes', [0, 1]],
    ],
  });
}
