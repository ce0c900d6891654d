// Memory bounded by what the file really holds: a gzip bomb stops at the inflated cap, and a length the
// header claims is checked against the bytes there are (and the header cap) before anything is read.
import { describe, expect, it } from 'vitest';
import { Writer, writeGguf } from '../../../test/ggufWriter';
import { bytesSource, chunksSource, type ByteSource } from './byteSource';
import { GGUF_MAX_HEADER_BYTES, GgufError, inflatedSource, openGguf } from './gguf';
import { XorShift64 } from './xorshift';

/** gzip through the web's CompressionStream (this folder runs in browsers too: no node:zlib). */
async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes.slice()]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A source that records the largest read and the bytes read in all. */
function recording(src: ByteSource) {
  const seen = { largest: 0, total: 0 };
  const wrapped: ByteSource = {
    size: src.size,
    name: 'bomb.gguf.gz',
    read: async (offset, length) => {
      seen.largest = Math.max(seen.largest, length);
      seen.total += length;
      return src.read(offset, length);
    },
  };
  return { src: wrapped, seen };
}

describe('inflatedSource', () => {
  const gguf = writeGguf({
    kv: [['general.architecture', { t: 'str', v: 'llama' }]],
    tensors: [{ name: 'w', dims: [32, 2], type: 0, data: new Uint8Array(256).fill(3) }],
  });

  it('inflates a .gguf.gz to the same bytes, read across the inflated pieces', async () => {
    const src = await inflatedSource(bytesSource(await gzip(gguf)));
    expect(src.size).toBe(gguf.length);
    expect(await src.read(0, gguf.length)).toEqual(gguf);
    const g = await openGguf(src);
    expect(g.tensors.map((t) => t.name)).toEqual(['w']);
  });

  it('stops at the inflated cap with one line, reading the file in pieces', async () => {
    // Incompressible: 8 MiB of gzip that inflates to 8 MiB; the cap is 1 MiB.
    const rng = new XorShift64(7n);
    const noise = new Uint8Array(8 << 20).map(() => rng.nextMod(256));
    const { src, seen } = recording(bytesSource(await gzip(noise)));
    const e = await inflatedSource(src, 1 << 20).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GgufError);
    expect((e as GgufError).message).toBe(
      "'bomb.gguf.gz' inflates to more than 1048576 bytes (a gzip-compressed GGUF is held in memory); gunzip it and open the .gguf itself",
    );
    expect(seen.largest).toBeLessThanOrEqual(1 << 20);
  });

  it('takes a file that inflates to the cap exactly, and refuses one byte more', async () => {
    const gz = await gzip(gguf);
    expect((await inflatedSource(bytesSource(gz), gguf.length)).size).toBe(gguf.length);
    await expect(inflatedSource(bytesSource(gz), gguf.length - 1)).rejects.toThrow(
      `inflates to more than ${gguf.length - 1} bytes`,
    );
  });

  it('a gzip stream that is cut or corrupt is a GgufError', async () => {
    const gz = await gzip(gguf);
    await expect(inflatedSource(bytesSource(gz.subarray(0, gz.length - 20)))).rejects.toThrow(GgufError);
    const bad = gz.slice();
    bad.fill(0xff, 10, 40);
    await expect(inflatedSource(bytesSource(bad))).rejects.toThrow(/is not a valid gzip file/);
  });

  it('chunksSource reads inside one piece as a view and across pieces as a copy', async () => {
    const parts = [new Uint8Array([1, 2, 3]), new Uint8Array([4]), new Uint8Array([5, 6, 7, 8])];
    const src = chunksSource(parts);
    expect(src.size).toBe(8);
    expect([...(await src.read(2, 4))]).toEqual([3, 4, 5, 6]);
    expect([...(await src.read(5, 3))]).toEqual([6, 7, 8]);
    expect((await src.read(4, 2)).buffer).toBe(parts[2]!.buffer);
    expect((await chunksSource([]).read(0, 0)).length).toBe(0);
    expect(() => src.read(6, 3)).toThrow(RangeError);
  });
});

describe('claimed lengths', () => {
  /** A 3 GiB file of zeros but for its header: nothing is allocated for it. */
  function virtualFile(header: Uint8Array, size: number): ByteSource {
    return {
      size,
      read: (offset, length) => {
        // A read this large is the bug under test: fail loudly rather than allocate it.
        if (length > GGUF_MAX_HEADER_BYTES) throw new Error(`read of ${length} bytes`);
        const out = new Uint8Array(length);
        if (offset < header.length) out.set(header.subarray(offset, offset + length));
        return Promise.resolve(out);
      },
    };
  }

  it('a 2.5 GiB string inside a 3 GiB file is refused before it is read', async () => {
    const header = writeGguf({ kv: [['k', { t: 'str', v: '' }]], tensors: [] });
    // Rewrite the string's length field (after magic, version, two counts, the key and its type).
    new DataView(header.buffer).setBigUint64(24 + 9 + 4, 5n * 2n ** 29n, true);
    const { src, seen } = recording(virtualFile(header, 3 * 2 ** 30));
    const e = await openGguf(src).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GgufError);
    expect((e as GgufError).message).toMatch(
      /^GGUF header too large: 'k' would take it to 2684354\d\d\d bytes, past the 67108864 this reader reads$/,
    );
    expect(seen.largest).toBeLessThanOrEqual(1 << 20);
  });

  it('5 GiB and 2^40 claims in a small file are one GgufError line each', async () => {
    for (const claim of [5n * 2n ** 30n, 2n ** 40n]) {
      const header = writeGguf({ kv: [['k', { t: 'str', v: '' }]], tensors: [] });
      new DataView(header.buffer).setBigUint64(24 + 9 + 4, claim, true);
      await expect(openGguf(bytesSource(header))).rejects.toThrow(
        /^truncated GGUF: 'k' needs \d+ bytes at offset 45, but the file ends at 64$/,
      );
    }
  });

  /** A header written field by field: magic, version 3, the counts, then `body`. */
  function header(nTensors: number, nKv: number, body: (w: Writer) => void): Uint8Array {
    const w = new Writer();
    w.bytes(new TextEncoder().encode('GGUF'));
    w.num(3, 4, 'u');
    w.num(nTensors, 8, 'u');
    w.num(nKv, 8, 'u');
    body(w);
    return w.out();
  }

  it('counts the file cannot hold are refused before their first entry is read', async () => {
    // 10 entries of at least 13 bytes each do not fit the 40 bytes left: refused as a count, not as
    // entry #1 (its key would be read from the zeros after entry #0).
    const kvs = header(0, 10, (w) => {
      w.str('k');
      w.num(4, 4, 'u');
      w.num(1, 4, 'u');
      w.bytes(new Uint8Array(23));
    });
    await expect(openGguf(bytesSource(kvs))).rejects.toThrow(
      /^truncated GGUF: 10 metadata entries needs 130 bytes at offset 24, but the file ends at 64$/,
    );
    // 3 tensor infos of at least 24 bytes each, 40 bytes left.
    const infos = header(3, 0, (w) => w.bytes(new Uint8Array(40)));
    await expect(openGguf(bytesSource(infos))).rejects.toThrow(
      /^truncated GGUF: 3 tensor infos needs 72 bytes at offset 24, but the file ends at 64$/,
    );
  });

  it("a string array's count is checked against 8 bytes an element before any element is read", async () => {
    const strings = header(0, 1, (w) => {
      w.str('k');
      w.num(9, 4, 'u');
      w.num(8, 4, 'u');
      w.num(20, 8, 'u');
      w.str('x');
      w.bytes(new Uint8Array(40));
    });
    await expect(openGguf(bytesSource(strings))).rejects.toThrow(
      /^truncated GGUF: 'k' \(20 elements\) needs 160 bytes at offset 49, but the file ends at 98$/,
    );
  });
});
