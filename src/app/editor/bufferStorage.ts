// Editor buffers in localStorage: the user's edited kernel text per kernel family (and the generated text
// it was edited from), so an edit survives a reload or a crash. Only edited buffers are stored; a buffer
// equal to its generated base is removed. localStorage (not IndexedDB) because the write must be
// synchronous on every keystroke and the data is a few kB of text per family.
import type { KernelId } from '../../kernels/family';
import type { EditorBuffer } from '../store';

const PREFIX = 'mmq-playground:editor:v1:';
const STASH = 'mmq-playground:editor-stash:v1';

/** The subset of the Storage interface used (so tests can pass a Map-backed fake). */
export type BufferStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

function parseBuffer(raw: string | null): EditorBuffer | undefined {
  if (!raw) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    if (
      typeof v === 'object' &&
      v !== null &&
      'text' in v &&
      'base' in v &&
      typeof v.text === 'string' &&
      typeof v.base === 'string'
    ) {
      return { text: v.text, base: v.base };
    }
  } catch {
    // A corrupt entry is dropped; the generated kernel shows instead.
  }
  return undefined;
}

/**
 * Read the stored edits of the given kernels; unreadable entries are skipped.
 * @example const buffers = loadBuffers(localStorage, CATALOG.ids);
 */
export function loadBuffers(
  storage: BufferStorage,
  kernels: readonly KernelId[],
): Partial<Record<KernelId, EditorBuffer>> {
  const out: Partial<Record<KernelId, EditorBuffer>> = {};
  for (const id of kernels) {
    const b = parseBuffer(storage.getItem(PREFIX + id));
    if (b) out[id] = b;
  }
  return out;
}

/** Store (or, when unedited, remove) one kernel's buffer. Quota errors are reported, never thrown. */
export function saveBuffer(
  storage: BufferStorage,
  kernel: KernelId,
  buffer: EditorBuffer | undefined,
): string | undefined {
  try {
    if (!buffer || buffer.text === buffer.base) storage.removeItem(PREFIX + kernel);
    else storage.setItem(PREFIX + kernel, JSON.stringify(buffer));
    return undefined;
  } catch (e) {
    return `could not save the editor buffer: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/** A local edit a permalink set aside (see applyPermalink), kept until the user restores or drops it. */
export interface StashedBuffer {
  kernel: KernelId;
  buffer: EditorBuffer;
}

/** Read the stashed edit, if its kernel is still known. */
export function loadStash(storage: BufferStorage, kernels: readonly KernelId[]): StashedBuffer | undefined {
  try {
    const v: unknown = JSON.parse(storage.getItem(STASH) ?? 'null');
    if (typeof v !== 'object' || v === null || !('kernel' in v) || !('buffer' in v)) return undefined;
    const kernel = kernels.find((k) => k === v.kernel);
    const buffer = parseBuffer(JSON.stringify(v.buffer));
    return kernel && buffer ? { kernel, buffer } : undefined;
  } catch {
    return undefined;
  }
}

/** Store or clear the stashed edit. */
export function saveStash(storage: BufferStorage, stash: StashedBuffer | undefined): void {
  try {
    if (stash) storage.setItem(STASH, JSON.stringify(stash));
    else storage.removeItem(STASH);
  } catch {
    // Quota: the stash stays in memory for this session.
  }
}
