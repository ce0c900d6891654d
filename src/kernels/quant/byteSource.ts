// Random access to the bytes of a file of any size, without holding it: a browser File (Blob.slice), a
// buffer in memory, or (in cli/) a Node file handle. Offsets are JS numbers, exact up to 2^53.

/** A read-only run of bytes read in pieces. `read` resolves to exactly `length` bytes inside [0, size). */
export interface ByteSource {
  readonly size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
  /** A file name, where there is one (for messages and permalinks). */
  readonly name?: string;
}

function checkRange(size: number, offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new RangeError(`read(${offset}, ${length}): offset and length must be non-negative integers`);
  }
  if (offset + length > size) {
    throw new RangeError(`read(${offset}, ${length}) runs past the end of a ${size}-byte source`);
  }
}

/**
 * A ByteSource over bytes in memory (reads are views, not copies).
 * @example const g = await openGguf(bytesSource(await file.arrayBuffer()));
 */
export function bytesSource(bytes: Uint8Array | ArrayBuffer, name?: string): ByteSource {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  return {
    size: b.length,
    ...(name === undefined ? {} : { name }),
    read: (offset, length) => {
      checkRange(b.length, offset, length);
      return Promise.resolve(b.subarray(offset, offset + length));
    },
  };
}

/**
 * A ByteSource over a Blob or a browser File: each read is `blob.slice(...).arrayBuffer()`, so only the
 * bytes asked for are loaded. The name is the File's name where the Blob has one.
 * @example const src = blobSource(input.files[0]); const g = await openGguf(src);
 */
export function blobSource(blob: Blob): ByteSource {
  const name = 'name' in blob && typeof blob.name === 'string' ? blob.name : undefined;
  return {
    size: blob.size,
    ...(name === undefined ? {} : { name }),
    read: async (offset, length) => {
      checkRange(blob.size, offset, length);
      return new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
    },
  };
}

/**
 * A ByteSource over bytes held as consecutive pieces (an inflated stream), without joining them: a read
 * inside one piece is a view, one across pieces a copy.
 * @example chunksSource([a, b]).read(a.length - 2, 4) // the last 2 bytes of a, the first 2 of b
 */
export function chunksSource(parts: readonly Uint8Array[], name?: string): ByteSource {
  const starts: number[] = [];
  let size = 0;
  for (const p of parts) {
    starts.push(size);
    size += p.length;
  }
  // The last piece starting at or before `offset` (binary search: a 256 MiB stream has thousands).
  const pieceAt = (offset: number) => {
    let lo = 0;
    let hi = parts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  return {
    size,
    ...(name === undefined ? {} : { name }),
    read: (offset, length) => {
      checkRange(size, offset, length);
      if (length === 0) return Promise.resolve(new Uint8Array(0));
      let i = pieceAt(offset);
      const inFirst = offset - starts[i]!;
      if (inFirst + length <= parts[i]!.length) {
        return Promise.resolve(parts[i]!.subarray(inFirst, inFirst + length));
      }
      const out = new Uint8Array(length);
      for (let done = 0; done < length; i++) {
        const from = offset + done - starts[i]!;
        const piece = parts[i]!.subarray(from, from + length - done);
        out.set(piece, done);
        done += piece.length;
      }
      return Promise.resolve(out);
    },
  };
}
