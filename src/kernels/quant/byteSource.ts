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
