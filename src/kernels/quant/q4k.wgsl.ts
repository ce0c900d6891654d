// WGSL of the Q4_K super-block's packed 6-bit scales and mins (ggml's get_scale_min_k4, the seed's
// q4k_sc / q4k_m), written once for every family that decodes Q4_K on the GPU: the int8 MMQ (and MoE
// through it) and the coopmat twin.
//
// Branch-free: sub-block j reads byte j % 4 of each of the 3 scale words (j < 4: bytes j and j + 4; else
// bytes j + 4, j - 4 and j) and a select takes the 6-bit or the split 4+2-bit form. The seed's branch on
// j < 4 (over a dynamically indexed vector) compiled to branches the H200 took divergently: the 32 items of
// a subgroup in the coopmat weight pre-pass span all 8 sub-blocks of a super-block
// (docs/decisions/0011-branch-free-q4k-scale-decode.md).

/** q4kw_sc(w, j) / q4kw_m(w, j): scale and min of sub-block j from a super-block's 3 scale words `w`. */
export const Q4K_SCALES_REGS_WGSL = `// Q4_K scale and min of sub-block j (get_scale_min_k4), branch-free.
fn q4kw_bytes(w: vec3u, j: u32) -> vec3u { return (w >> vec3u(8u * (j % 4u))) & vec3u(255u); }
fn q4kw_sc(w: vec3u, j: u32) -> u32 {
  let b = q4kw_bytes(w, j);
  return select((b.z & 15u) | ((b.x >> 6u) << 4u), b.x & 63u, j < 4u);
}
fn q4kw_m(w: vec3u, j: u32) -> u32 {
  let b = q4kw_bytes(w, j);
  return select((b.z >> 4u) | ((b.y >> 6u) << 4u), b.y & 63u, j < 4u);
}
`;

/**
 * WGSL: the three scale words of super-block `blk` (a WGSL u32 expression) from `wsc`, inline. Hot loops
 * use this rather than q4k_words(): an index passed through a function parameter keeps its bounds-check
 * clamp (docs/decisions/0007-browser-bounds-checks.md).
 * @example q4kScaleWords('blk') // 'vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u])'
 */
export const q4kScaleWords = (blk: string): string =>
  `vec3u(wsc[${blk} * 3u], wsc[${blk} * 3u + 1u], wsc[${blk} * 3u + 2u])`;

/** q4k_sc(base, j) / q4k_m(base, j): the same from the kernel's `wsc` (array<u32>) at word `base`. */
export const Q4K_SCALES_WGSL = `${Q4K_SCALES_REGS_WGSL}fn q4k_words(base: u32) -> vec3u { return vec3u(wsc[base], wsc[base + 1u], wsc[base + 2u]); }
fn q4k_sc(base: u32, j: u32) -> u32 { return q4kw_sc(q4k_words(base), j); }
fn q4k_m(base: u32, j: u32) -> u32 { return q4kw_m(q4k_words(base), j); }
`;

/** The register form of the scales plus the nibbles as f32: what a decode from prefetched words needs. */
export const Q4K_DECODE_REGS = `${Q4K_SCALES_REGS_WGSL}// The 4 nibbles at bit sh of the bytes of word q as f32, exactly f32(q): OR-ing a 4-bit value into the
// mantissa of 2^23 and subtracting 2^23 is exact and avoids int-to-float conversions (a quarter-rate unit).
fn nib_f32(q: u32, sh: vec4u) -> vec4f {
  let nib = ((vec4u(q) >> vec4u(0u, 8u, 16u, 24u)) >> sh) & vec4u(15u);
  return bitcast<vec4f>(nib | vec4u(0x4b000000u)) - vec4f(8388608.0);
}
`;

/**
 * The Q4_K weight's four read-only buffers from @binding `at` on: qs viewed as `qs` (32 u32 words, 16 vec2u
 * or 8 vec4u per 128-byte super-block), the packed scales, d and dmin.
 */
export function q4kWeightBindings(at: number, qs: 'u32' | 'vec2u' | 'vec4u'): string {
  const per = { u32: 32, vec2u: 16, vec4u: 8 }[qs];
  return `@group(0) @binding(${at}) var<storage, read> wqs: array<${qs}>; // Q4_K qs: ${per} ${qs} (128 B) per super-block
@group(0) @binding(${at + 1}) var<storage, read> wsc: array<u32>; // packed 6-bit scales: 3 words per super-block
@group(0) @binding(${at + 2}) var<storage, read> wd: array<f32>; // d per super-block
@group(0) @binding(${at + 3}) var<storage, read> wdm: array<f32>; // dmin per super-block
`;
}
