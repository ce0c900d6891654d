// FNV-1a 64 in plain JS numbers (two 32-bit halves; no BigInt in the loop, so a 10 MB GGUF header hashes
// in tens of milliseconds). Stable across platforms: the app's permalinks store it to recognise a file.

/**
 * FNV-1a 64-bit hash of the bytes, as 16 lowercase hex digits.
 * @example fnv1a64(new TextEncoder().encode('a')) === 'af63dc4c8601ec8c'
 */
export function fnv1a64(bytes: Uint8Array): string {
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < bytes.length; i++) {
    lo ^= bytes[i]!;
    // h * 0x100000001b3 mod 2^64 = h * 0x1b3 + (h << 40): every partial product stays below 2^53.
    const l = (lo >>> 0) * 0x1b3;
    const carry = Math.floor(l / 0x100000000);
    hi = ((hi >>> 0) * 0x1b3 + carry + (lo >>> 0) * 0x100) >>> 0;
    lo = l >>> 0;
  }
  return (hi >>> 0).toString(16).padStart(8, '0') + (lo >>> 0).toString(16).padStart(8, '0');
}
