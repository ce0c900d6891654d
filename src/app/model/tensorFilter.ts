// The Model tab's tensor filter: every word typed must match the tensor's name, type, shape, bytes or a
// kernel that takes it. Pure, so it is unit-tested in Node.
import type { TensorListing } from '../../kernels/tensors';

/**
 * Bytes as the table shows them.
 * @example bytesText(33030144) // '31.5 MiB'
 */
export function bytesText(n: number | null): string {
  if (n === null) return '?';
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** A shape written "4096 × 14336", "4096x14336" or "4096*14336" as one word: "4096x14336". */
const joinShape = (text: string) => text.toLowerCase().replace(/\s*[×x*]\s*(?=\d)/g, 'x');

/**
 * Whether a tensor matches the filter text (empty matches all): each word is found in its name, is its
 * type, is in its shape (a dimension, or a run of them "4096x14336"), is its size in bytes (exact, or as
 * shown: "31.5 MiB"), or is in a kernel id that takes it.
 * @example tensorMatches(t, 'q4_k 4096 x 14336')
 */
export function tensorMatches(t: TensorListing, filter: string): boolean {
  const words = joinShape(filter.trim()).split(/\s+/).filter(Boolean);
  const shape = t.shape.join('x');
  const shown = bytesText(t.bytes).toLowerCase();
  const matches = (w: string) =>
    t.name.toLowerCase().includes(w) ||
    t.typeName.toLowerCase() === w ||
    t.shape.some((d) => String(d) === w) ||
    (w.includes('x') && `x${shape}x`.includes(`x${w}x`)) ||
    String(t.bytes) === w ||
    shown.replace(' ', '') === w.replace(' ', '') ||
    t.kernels.some((k) => k.kernel.includes(w));
  return words.every(matches) || (words.length > 1 && matches(words.join(' ')));
}
