// A GGUF larger than 4 GiB that costs a few KB of disk: a sparse file whose tensors sit past 2^32.
import { randomBytes } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GgmlType, quantizeQ4K } from '../src/kernels/quant';
import { ggufHeader } from './ggufWriter';

export interface SparseGguf {
  path: string;
  size: number;
  /** The Q4_K tensor's name, absolute offset, ggml bytes and row/k. */
  tensor: { name: string; offset: number; bytes: Uint8Array; rows: number; k: number };
  /** Bytes before the tensor data (the header and its padding). */
  headerLength: number;
  remove(): Promise<void>;
}

/**
 * Write a valid GGUF (ggml's packing: offsets follow each other) whose first tensor is a 4 GiB + 64 byte
 * I8 `pad` that is never written (a hole) and whose second is a small Q4_K weight beyond 4 GiB.
 * @example const f = await writeSparseGguf(); try { ... } finally { await f.remove(); }
 */
export async function writeSparseGguf(): Promise<SparseGguf> {
  const padLength = 2 ** 32 + 64;
  const [rows, k] = [2, 256];
  const x = new Float32Array(rows * k).map((_, i) => Math.sin(i) * 0.1);
  const { bytes } = quantizeQ4K(x, rows, k);
  const name = 'blk.0.ffn_down.weight';
  const { header, offsets } = ggufHeader({
    kv: [
      ['general.architecture', { t: 'str', v: 'llama' }],
      ['general.name', { t: 'str', v: 'sparse beyond 4 GiB' }],
    ],
    tensors: [
      { name: 'pad', dims: [padLength], type: GgmlType.I8, byteLength: padLength },
      { name, dims: [k, rows], type: GgmlType.Q4_K, byteLength: bytes.length },
    ],
  });
  const offset = offsets[1]!;
  const size = offset + bytes.length;
  const path = join(tmpdir(), `mmq-sparse-${randomBytes(6).toString('hex')}.gguf`);
  const fh = await open(path, 'wx');
  try {
    await fh.truncate(size); // a hole: no blocks allocated for the 4 GiB of pad
    await fh.write(header, 0, header.length, 0);
    await fh.write(bytes, 0, bytes.length, offset);
  } finally {
    await fh.close();
  }
  return {
    path,
    size,
    tensor: { name, offset, bytes, rows, k },
    headerLength: header.length,
    remove: () => rm(path, { force: true }),
  };
}
