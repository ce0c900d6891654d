// WGSL of the Q4_K super-block's packed 6-bit scales and mins (ggml's get_scale_min_k4, the seed's
// q4k_sc / q4k_m), written once for every family that decodes Q4_K on the GPU: the int8 MMQ (and MoE
// through it) and the coopmat twin.
//
// Branch-free: sub-block j reads byte j % 4 of each of the 3 scale words (j < 4: bytes j and j + 4; else
// bytes j + 4, j - 4 and j) and a select takes the 6-bit or the split 4+2-bit form. The seed's branch on
// j < 4 (over a dynamically indexed vector) compiled to branches the H200 took divergently: the 32 items of
// a subgroup in the coopmat weight pre-pass span all 8 sub-blocks of a super-block (134 BRA in its SASS;
// the pass went from 0.0210 to 0.0140 ms without them, docs/benchmarks.md "Follow-up 7").

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
 * clamp (docs/benchmarks.md, "Follow-up 3").
 * @example q4kScaleWords('blk') // 'vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u])'
 */
export const q4kScaleWords = (blk: string): string =>
  `vec3u(wsc[${blk} * 3u], wsc[${blk} * 3u + 1u], wsc[${blk} * 3u + 2u])`;

/** q4k_sc(base, j) / q4k_m(base, j): the same from the kernel's `wsc` (array<u32>) at word `base`. */
export const Q4K_SCALES_WGSL = `${Q4K_SCALES_REGS_WGSL}fn q4k_words(base: u32) -> vec3u { return vec3u(wsc[base], wsc[base + 1u], wsc[base + 2u]); }
fn q4k_sc(base: u32, j: u32) -> u32 { return q4kw_sc(q4k_words(base), j); }
fn q4k_m(base: u32, j: u32) -> u32 { return q4kw_m(q4k_words(base), j); }
`;
