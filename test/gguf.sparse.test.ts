// A GGUF larger than 4 GiB read through a Node file handle: offsets past 2^32 stay exact, and only the
// header and the one tensor are read (the 4 GiB hole before it is never touched).
import { truncate } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSource, type FileByteSource } from '../cli/fileSource';
import { openGguf, readTensor, readTensorOperand, splitQ4K, type ByteSource } from '../src/kernels/quant';
import { writeSparseGguf, type SparseGguf } from './ggufSparse';

let sparse: SparseGguf;
let file: FileByteSource;
beforeAll(async () => {
  sparse = await writeSparseGguf();
  file = await fileSource(sparse.path);
});
afterAll(async () => {
  await file?.close();
  await sparse?.remove();
});

/** Wraps a source and counts what was read. */
function counted(src: ByteSource) {
  const reads: [number, number][] = [];
  const wrapped: ByteSource = {
    size: src.size,
    read: (offset, length) => {
      reads.push([offset, length]);
      return src.read(offset, length);
    },
  };
  return { src: wrapped, reads, bytesRead: () => reads.reduce((a, [, n]) => a + n, 0) };
}

describe('a sparse GGUF over 4 GiB through fileSource', () => {
  it('opens; the Q4_K tensor lies past 2^32 and its bytes round-trip; O(header + tensor) bytes are read', async () => {
    expect(file.size).toBeGreaterThan(2 ** 32);
    const c = counted(file);
    const g = await openGguf(c.src, { initialReadBytes: 4096 });
    const t = g.tensors.find((x) => x.name === sparse.tensor.name)!;
    expect(t.offset).toBe(sparse.tensor.offset);
    expect(t.offset).toBeGreaterThan(2 ** 32);
    expect(g.tensors[0]).toMatchObject({ name: 'pad', typeName: 'I8', byteLength: 2 ** 32 + 64 });
    const headerRead = c.bytesRead();
    expect(headerRead).toBeLessThanOrEqual(4096);
    const bytes = await readTensor(c.src, g, t.name);
    expect([...bytes]).toEqual([...sparse.tensor.bytes]);
    expect(c.reads.at(-1)).toEqual([t.offset, sparse.tensor.bytes.length]);
    expect(c.bytesRead()).toBe(headerRead + sparse.tensor.bytes.length);
  });

  it('with the default first read (1 MiB) it still reads about 1 MiB, not 4 GiB; the operand is the split layout', async () => {
    const c = counted(file);
    const g = await openGguf(c.src);
    const w = await readTensorOperand(c.src, g, sparse.tensor.name);
    if (w.type !== 'Q4_K') throw new Error(w.type);
    expect([w.rows, w.k]).toEqual([sparse.tensor.rows, sparse.tensor.k]);
    expect([...w.weight.qs]).toEqual([...splitQ4K(sparse.tensor.bytes, 2, 256).qs]);
    expect(c.bytesRead()).toBe((1 << 20) + sparse.tensor.bytes.length);
  });

  it('cut inside the tensor (last test: it truncates the file): a GgufError naming the tensor and the missing bytes', async () => {
    await truncate(sparse.path, sparse.tensor.offset + 100);
    const cut = await fileSource(sparse.path);
    try {
      const g = await openGguf(cut);
      await expect(readTensorOperand(cut, g, sparse.tensor.name)).rejects.toThrow(
        `truncated GGUF: tensor '${sparse.tensor.name}' needs bytes [${sparse.tensor.offset}, ${sparse.tensor.offset + 288}) but the data ends at ${sparse.tensor.offset + 100} (188 bytes missing)`,
      );
    } finally {
      await cut.close();
    }
  });
});
