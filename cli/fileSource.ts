// A ByteSource over a file on disk (Node): positional reads through one FileHandle, so a 40 GB model is
// opened without reading it whole. src/kernels stays free of node: imports; this lives with the CLI.
import { constants, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import type { ByteSource } from '../src/kernels/quant/byteSource';

/** A ByteSource that holds an open file; close it when done. */
export interface FileByteSource extends ByteSource {
  readonly name: string;
  close(): Promise<void>;
}

// One read call moves at most this much (Node caps a single read near 2 GiB).
const MAX_READ = 1 << 30;

/** What a path is when it is not a regular file, for the one line that refuses it. */
function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Open `path` for random access: a regular file only (a FIFO would block the open, /dev/zero never ends). Reads resolve to exactly the bytes asked for, or fewer when the file
 * has shrunk since it was opened (the GGUF reader turns that into a GgufError).
 * @example const src = await fileSource('model.gguf'); try { await openGguf(src); } finally { await src.close(); }
 */
export async function fileSource(path: string): Promise<FileByteSource> {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, for ever.
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = await fh.stat();
    if (stat.isDirectory()) throw Object.assign(new Error(`${path} is a directory`), { code: 'EISDIR' });
    if (!stat.isFile()) throw new Error(`${kindOf(stat)}, not a regular file`);
    return {
      size: stat.size,
      name: path,
      async read(offset, length) {
        if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
          throw new RangeError(`read(${offset}, ${length}): offset and length must be non-negative integers`);
        }
        const buf = new Uint8Array(length);
        let done = 0;
        while (done < length) {
          const n = Math.min(MAX_READ, length - done);
          const { bytesRead } = await fh.read(buf, done, n, offset + done);
          if (bytesRead === 0) break; // end of file
          done += bytesRead;
        }
        return done === length ? buf : buf.subarray(0, done);
      },
      close: () => fh.close(),
    };
  } catch (e) {
    await fh.close();
    throw e;
  }
}
