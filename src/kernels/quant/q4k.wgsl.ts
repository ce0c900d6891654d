// WGSL of the Q4_K format, written once for every family that decodes it on the GPU: the super-block's
// packed 6-bit scales and mins (ggml's get_scale_min_k4, the seed's q4k_sc / q4k_m: the int8 MMQ, MoE
// and the coopmat twin), the decode to f32 with its rounding made explicit, the weight's bindings, and
// the pre-pass part that decodes a Q4_K matrix (or a bank of them) to f16 rows.
import { readOnly, readWrite } from '../gpu/bindings';
import type { PrePassPart } from '../gpu/prepass';
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

/** How a kernel's Q4_K decode rounds (the coopmat oracle's DecodeRounding says what each computes). */
export type DecodeGuard = 'separate' | 'compiler';

/**
 * The decode's no_fuse helpers: `nofuse_zero` is 0 at run time (set from num_workgroups by SET_NO_FUSE at
 * the top of main), which no compiler can prove, so OR-ing it into a product's bits keeps that product a
 * separately rounded f32 (the int8 epilogue's no_fuse: docs/decisions/0002-no-fuse.md).
 */
export const NO_FUSE_DECODE = `var<private> nofuse_zero: u32; // 0 at run time (set from num_workgroups), opaque to the compiler
fn no_fuse(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | nofuse_zero); }
fn no_fuse2(x: vec2f) -> vec2f { return bitcast<vec2f>(bitcast<vec2u>(x) | vec2u(nofuse_zero)); }
`;

/**
 * round_f16x2(x): x rounded to f16 and widened back, for a value that never goes through memory (needs
 * NO_FUSE_DECODE). NVIDIA's compiler folds unpack2x16float(pack2x16float(x)) to x and drops the rounding:
 * the scalar arm's in-gemm and stream rows were 1.5e-4 of max off their oracle on the H100/H200; OR-ing
 * nofuse_zero into the packed word hides the pair.
 */
export const ROUND_F16X2 =
  'fn round_f16x2(x: vec2f) -> vec2f { return unpack2x16float(pack2x16float(x) | nofuse_zero); }\n';
export const SET_NO_FUSE = '  nofuse_zero = nwg.z >> 31u; // a grid never has 2^31 workgroups in z\n';

/**
 * The Q4_K decode w = ds * q - ms, written ONCE for every coopmat kernel: `scaleMin` defines
 * ds${s} = d * sc and ms${s} = dmin * m (f32), `value` is the weight of nibbles `q` (an f32/vec2f/vec4f
 * expression; `width` names its no_fuse helper). 'separate' keeps both products separately rounded
 * (no_fuse), so every compiler computes the emulation's 'separate' decode -- NVIDIA's contracts either
 * product into an fma with the subtract, `x - ms` as fma(-dmin, m, x) too, and a flipped f16 rounding
 * shows at 1e-4 of max; 'compiler' leaves the contraction to the compiler (the matrix arm, whose gate
 * admits it). The scalar arm always decodes 'separate'.
 */
export const q4kDecode = {
  scaleMin: (s: string, d: string, sc: string, dmin: string, m: string, guard: DecodeGuard) => [
    `let ds${s} = ${d} * f32(${sc});`,
    `let ms${s} = ${guard === 'separate' ? `no_fuse(${dmin} * f32(${m}))` : `${dmin} * f32(${m})`};`,
  ],
  value: (s: string, q: string, guard: DecodeGuard, width: '' | '2' | '4' = '') =>
    `${guard === 'separate' ? `no_fuse${width}(ds${s} * ${q})` : `ds${s} * ${q}`} - ms${s}`,
};

/** The Q4_K weight's four buffers, qs viewed as 32 u32 words, 16 vec2u or 8 vec4u per 128-byte super-block. */
export function q4kWeight(qs: 'u32' | 'vec2u' | 'vec4u') {
  const per = { u32: 32, vec2u: 16, vec4u: 8 }[qs];
  return {
    wqs: readOnly(`array<${qs}>`, `Q4_K qs: ${per} ${qs} (128 B) per super-block`),
    wsc: readOnly('array<u32>', 'packed 6-bit scales: 3 words per super-block'),
    wd: readOnly('array<f32>', 'd per super-block'),
    wdm: readOnly('array<f32>', 'dmin per super-block'),
  };
}

const NO_FUSE4 =
  'fn no_fuse4(x: vec4f) -> vec4f { return bitcast<vec4f>(bitcast<vec4u>(x) | vec4u(nofuse_zero)); }\n';

/** Items (8 weights each) per invocation of the f16-rows pre-pass. */
export const Q4K_F16_ROWS_PER = 4;

/**
 * The pre-pass part that decodes Q4_K weights to f16 rows: `banks` matrices [n, k] one after another,
 * each written padded to `np` rows (rows n..np-1 zero), [banks x np, k] row-major in `wh`, 8 consecutive
 * weights an item (one 16-byte store, so a subgroup writes 512 contiguous bytes). An invocation takes
 * Q4K_F16_ROWS_PER items W_INV apart, loading all of their words before decoding any, so several loads are
 * in flight per invocation while a subgroup's stores stay contiguous. Sub-block j = 2g + s of a super-block
 * takes the low (s = 0) or high (s = 1) nibbles of qs bytes 32g .. 32g+31; w = ds*q - ms as q4kDecode.
 * @example prePassKernel(k, 'weight to f16', [q4kF16RowsPart({ n, k, np, banks: 1, guard: 'compiler', slack })])
 */
export function q4kF16RowsPart(o: {
  n: number;
  k: number;
  np: number;
  banks: number;
  guard: DecodeGuard;
  slack: number;
}): PrePassPart {
  const { n, k, np, banks, guard } = o;
  const per = Q4K_F16_ROWS_PER;
  const items = (banks * np * k) / 8;
  // items is a multiple of 32 (k of 256), so every per divides it.
  const inv = items / per;
  const ts = Array.from({ length: per }, (_, i) => (i === 0 ? 't' : `t + ${i}u * W_INV`));
  const bindings = {
    ...q4kWeight('vec2u'),
    wh: readWrite('array<vec4u>', 'f16 as pack2x16float pairs'),
  };
  const decls = (declared: string) => `${
    banks > 1
      ? `// Weight: a bank of ${banks} Q4_K matrices [${n}, ${k}] decoded ONCE to f16 wh, [${banks} x ${np}, ${k}] row-major
// (each matrix's rows ${n}..${np - 1} zero).
const NP = ${np}u;`
      : `// Weight: Q4_K W [${n}, ${k}] decoded ONCE to f16 wh, [${np}, ${k}] row-major (rows ${n}..${np - 1} zero).`
  }
const N = ${n}u;
const NSB = K / 256u; // super-blocks per row
const W_INV = ${inv}u; // invocations, each taking items t, t + W_INV, ... (${per} items) of the ${items} vec4u (8 weights each) of wh
${declared}

${Q4K_DECODE_REGS}${guard === 'separate' ? NO_FUSE_DECODE + NO_FUSE4 : ''}
// The raw words of item t: its 8 nibbles' qs bytes, its super-block's scale words, d and dmin.
struct Item { q: vec2u, w: vec3u, d: f32, dm: f32, j: u32, live: bool }

fn load_item(t: u32) -> Item {
  let row = t / (K / 8u)${banks > 1 ? ' % NP' : ''};
  let k0 = (t % (K / 8u)) * 8u;
  // Rows n..NP-1 are written as zeros; they read row N - 1's words (in bounds, unused).
  let blk = ${banks > 1 ? '(t / (K / 8u) / NP * N + min(row, N - 1u))' : 'min(row, N - 1u)'} * NSB + k0 / 256u;
  let j = (k0 % 256u) / 32u; // sub-block 2g + s
  let q = wqs[blk * 16u + (j / 2u) * 4u + (k0 % 32u) / 8u]; // qs bytes 32g + k0 % 32 .. +7
  let w = ${q4kScaleWords('blk')};
  return Item(q, w, wd[blk], wdm[blk], j, row < N);
}

fn store_item(t: u32, it: Item) {
${q4kDecode
  .scaleMin('', 'it.d', 'q4kw_sc(it.w, it.j)', 'it.dm', 'q4kw_m(it.w, it.j)', guard)
  .map((l) => `  ${l}`)
  .join('\n')}
  let sh = vec4u(4u * (it.j % 2u));
  let a = ${q4kDecode.value('', 'nib_f32(it.q.x, sh)', guard, '4')};
  let b = ${q4kDecode.value('', 'nib_f32(it.q.y, sh)', guard, '4')};
  let h = vec4u(pack2x16float(a.xy), pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));
  wh[t] = select(vec4u(0u), h, it.live);
}

// Every item's loads first, then the decodes and stores.
fn weight_items(t: u32) {
${ts.map((e, i) => `  let it${i} = load_item(${e});`).join('\n')}
${ts.map((e, i) => `  store_item(${e}, it${i});`).join('\n')}
}
`;
  return {
    bindings,
    decls,
    fn: 'weight_items',
    ...(guard === 'separate' ? { head: SET_NO_FUSE } : {}),
    items: inv,
    out: { name: 'wh', bytes: banks * np * k * 2 + o.slack },
  };
}
