// GGUF metadata as people read it: one line per value, long strings and arrays cut. The CLI's inspect and
// the app's model panel (through the worker) print the same text.
import { ggufTypeName, type GgufFile, type GgufValue, type GgufValueType } from './gguf';

// Arrays longer than this are summarised (and not even materialised: openGguf walks over them).
export const SHOWN_ELEMENTS = 16;
const SHOWN_CHARS = 80;

/** A metadata value's stored type: 'UINT32', 'ARRAY[STRING]'. */
export function metadataTypeLabel(t: GgufValueType): string {
  return t.elementType === undefined ? ggufTypeName(t.type) : `ARRAY[${ggufTypeName(t.elementType)}]`;
}

/** A value as JSON can hold it: bigints as strings, long arrays cut to their first elements. */
export function jsonValue(v: GgufValue): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.slice(0, SHOWN_ELEMENTS).map(jsonValue);
  if (typeof v === 'object') return undefined; // skipped array: only its length is known
  return v;
}

/** The length of an array value (kept or walked over), else undefined. */
export function arrayLength(v: GgufValue): number | undefined {
  if (Array.isArray(v)) return v.length;
  return typeof v === 'object' && v !== null && 'skipped' in v ? v.length : undefined;
}

function short(s: string): string {
  const one = JSON.stringify(s);
  return one.length > SHOWN_CHARS ? `${one.slice(0, SHOWN_CHARS - 1)}… (${s.length} chars)` : one;
}

/** A value as one line of text: strings quoted and cut, long arrays summarised. */
export function metadataText(v: GgufValue): string {
  if (typeof v === 'string') return short(v);
  if (typeof v !== 'object') return String(v);
  const n = arrayLength(v)!;
  if (!Array.isArray(v) || n > SHOWN_ELEMENTS) {
    const head = Array.isArray(v) ? v.slice(0, 4).map(metadataText).join(', ') + ', ' : '';
    return `[${head}...] (${n} elements)`;
  }
  return `[${v.map(metadataText).join(', ')}]`;
}

/**
 * Every metadata key of a file with its type and value as text.
 * @example metadataRows(g)[0] // { key: 'general.architecture', type: 'STRING', value: '"llama"' }
 */
export function metadataRows(file: GgufFile): { key: string; type: string; value: string }[] {
  return [...file.metadata].map(([key, value]) => ({
    key,
    type: metadataTypeLabel(file.metadataTypes.get(key)!),
    value: metadataText(value),
  }));
}
