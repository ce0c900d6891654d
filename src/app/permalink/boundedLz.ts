// lz-string's URI-safe decompression with a cap on what it produces. A permalink is untrusted: LZ codes
// can each repeat a longer dictionary entry than the last, so a few KB of link inflate quadratically
// (an 8 KB link made a 10 MB kernel name). lz-string's own decoder has no bound and returns only at the
// end; this one stops as soon as the output passes `maxChars`. Same format, so links made by
// lz-string's compressToEncodedURIComponent decode here unchanged (boundedLz.test.ts holds it to that).

const URI_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-$';
const CODE_OF = new Map([...URI_SAFE].map((ch, i) => [ch, i]));
/** Bits per input character of the URI-safe alphabet. */
const CHAR_BITS = 6;

/** The decoded text, or why there is none. */
export type InflateResult = { ok: true; text: string } | { ok: false; reason: 'corrupt' | 'too-long' };

/**
 * Decode a compressToEncodedURIComponent string, giving up once the text would pass `maxChars`.
 * @example inflateUriComponent(compressToEncodedURIComponent('abc'), 100) // { ok: true, text: 'abc' }
 */
export function inflateUriComponent(input: string, maxChars: number): InflateResult {
  const codes = input.replace(/ /g, '+'); // as lz-string: a '+' may arrive as a space
  let next = 0; // the next input character
  let value = 0;
  let mask = 0;
  let corrupt = false;
  const readBits = (n: number): number => {
    let bits = 0;
    for (let i = 0; i < n; i++) {
      if (mask === 0) {
        const code = CODE_OF.get(codes.charAt(next));
        if (code === undefined && next < codes.length) corrupt = true;
        value = code ?? 0; // past the end reads zeros, as lz-string does
        next++;
        mask = 1 << (CHAR_BITS - 1);
      }
      if (value & mask) bits |= 1 << i;
      mask >>= 1;
    }
    return bits;
  };
  const literal = (code: number): string | undefined =>
    code === 0
      ? String.fromCharCode(readBits(8))
      : code === 1
        ? String.fromCharCode(readBits(16))
        : undefined;

  const firstCode = readBits(2);
  if (firstCode === 2 && !corrupt) return { ok: true, text: '' };
  const first = literal(firstCode);
  if (first === undefined || corrupt) return { ok: false, reason: 'corrupt' };
  const dictionary: string[] = ['', '', '', first];
  const out = [first];
  let total = first.length;
  let previous = first;
  let numBits = 3;
  let enlargeIn = 4;
  const grow = () => {
    if (--enlargeIn === 0) enlargeIn = 2 ** numBits++;
  };
  for (;;) {
    if (next > codes.length) return { ok: false, reason: 'corrupt' };
    let code = readBits(numBits);
    if (code === 2) return corrupt ? { ok: false, reason: 'corrupt' } : { ok: true, text: out.join('') };
    const added = literal(code);
    if (added !== undefined) {
      code = dictionary.push(added) - 1;
      grow();
    }
    const known = dictionary[code];
    const entry =
      code >= 3 && known !== undefined
        ? known
        : code === dictionary.length
          ? previous + previous.charAt(0)
          : undefined;
    if (entry === undefined || corrupt) return { ok: false, reason: 'corrupt' };
    total += entry.length;
    if (total > maxChars) return { ok: false, reason: 'too-long' };
    out.push(entry);
    dictionary.push(previous + entry.charAt(0));
    grow();
    previous = entry;
  }
}
