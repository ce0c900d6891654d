// WGSL snippets of the Q4_K decode shared by the coopmat kernels (the one-pass kernels and the split
// plan's weight pre-pass), byte for byte the seed's q4k_byte / q4k_sc / q4k_m (get_scale_min_k4).

/** get_scale_min_k4's 6-bit scale and min of sub-block j, over a byte accessor of the 12 scale bytes. */
function q4kScaleFns(prefix: string, arg: string, byteOf: (i: string) => string): string {
  return `fn ${prefix}_sc(${arg}, j: u32) -> u32 {
  if (j < 4u) { return ${byteOf('j')} & 63u; }
  return (${byteOf('j + 4u')} & 15u) | ((${byteOf('j - 4u')} >> 6u) << 4u);
}
fn ${prefix}_m(${arg}, j: u32) -> u32 {
  if (j < 4u) { return ${byteOf('j + 4u')} & 63u; }
  return (${byteOf('j + 4u')} >> 4u) | ((${byteOf('j')} >> 6u) << 4u);
}
`;
}

export const Q4K_DECODE = `// Q4_K decode, byte for byte the seed's q4k_byte / q4k_sc / q4k_m (get_scale_min_k4).
fn wsc_byte(base: u32, i: u32) -> u32 { return (wsc[base + i / 4u] >> (8u * (i % 4u))) & 255u; }
${q4kScaleFns('q4k', 'base: u32', (i) => `wsc_byte(base, ${i})`)}`;

// The pipelined staging prefetches a super-block's 3 scale words into registers and decodes from them.
export const Q4K_DECODE_REGS = `// Q4_K decode from the 3 prefetched scale words, byte for byte the seed's q4k_sc / q4k_m (get_scale_min_k4).
fn w_byte(w: vec3u, i: u32) -> u32 { return (w[i / 4u] >> (8u * (i % 4u))) & 255u; }
${q4kScaleFns('q4kw', 'w: vec3u', (i) => `w_byte(w, ${i})`)}
// The 4 nibbles at bit sh of the bytes of word q as f32, exactly f32(q): OR-ing a 4-bit value into the
// mantissa of 2^23 and subtracting 2^23 is exact and avoids int-to-float conversions (a quarter-rate unit).
fn nib_f32(q: u32, sh: vec4u) -> vec4f {
  let nib = ((vec4u(q) >> vec4u(0u, 8u, 16u, 24u)) >> sh) & vec4u(15u);
  return bitcast<vec4f>(nib | vec4u(0x4b000000u)) - vec4f(8388608.0);
}
`;

/** 0, 1, ..., n - 1 (the generators unroll over it). */
export const range = (n: number) => Array.from({ length: n }, (_, i) => i);
