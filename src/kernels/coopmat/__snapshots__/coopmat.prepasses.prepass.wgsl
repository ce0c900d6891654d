// ==== weight Q4_K to f16: grid 3x1x1, writes wh 51200 B
// coopmat-f16 split plan, pass 0: the weight to f16
const K = 256u;
// Weight: Q4_K W [72, 256] decoded ONCE to f16 wh, [96, 256] row-major (rows 72..95 zero).
const N = 72u;
const NSB = K / 256u; // super-blocks per row
const W_INV = 768u; // invocations, each taking items t, t + W_INV, ... (4 items) of the 3072 vec4u (8 weights each) of wh
@group(0) @binding(0) var<storage, read> wqs: array<vec2u>; // Q4_K qs: 16 vec2u (128 B) per super-block
@group(0) @binding(1) var<storage, read> wsc: array<u32>; // packed 6-bit scales: 3 words per super-block
@group(0) @binding(2) var<storage, read> wd: array<f32>; // d per super-block
@group(0) @binding(3) var<storage, read> wdm: array<f32>; // dmin per super-block
@group(0) @binding(4) var<storage, read_write> wh: array<vec4u>; // f16 as pack2x16float pairs

// Q4_K scale and min of sub-block j (get_scale_min_k4), branch-free.
fn q4kw_bytes(w: vec3u, j: u32) -> vec3u { return (w >> vec3u(8u * (j % 4u))) & vec3u(255u); }
fn q4kw_sc(w: vec3u, j: u32) -> u32 {
  let b = q4kw_bytes(w, j);
  return select((b.z & 15u) | ((b.x >> 6u) << 4u), b.x & 63u, j < 4u);
}
fn q4kw_m(w: vec3u, j: u32) -> u32 {
  let b = q4kw_bytes(w, j);
  return select((b.z >> 4u) | ((b.y >> 6u) << 4u), b.y & 63u, j < 4u);
}
// The 4 nibbles at bit sh of the bytes of word q as f32, exactly f32(q): OR-ing a 4-bit value into the
// mantissa of 2^23 and subtracting 2^23 is exact and avoids int-to-float conversions (a quarter-rate unit).
fn nib_f32(q: u32, sh: vec4u) -> vec4f {
  let nib = ((vec4u(q) >> vec4u(0u, 8u, 16u, 24u)) >> sh) & vec4u(15u);
  return bitcast<vec4f>(nib | vec4u(0x4b000000u)) - vec4f(8388608.0);
}
var<private> nofuse_zero: u32; // 0 at run time (set from num_workgroups), opaque to the compiler
fn no_fuse(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | nofuse_zero); }
fn no_fuse2(x: vec2f) -> vec2f { return bitcast<vec2f>(bitcast<vec2u>(x) | vec2u(nofuse_zero)); }
fn no_fuse4(x: vec4f) -> vec4f { return bitcast<vec4f>(bitcast<vec4u>(x) | vec4u(nofuse_zero)); }

// The raw words of item t: its 8 nibbles' qs bytes, its super-block's scale words, d and dmin.
struct Item { q: vec2u, w: vec3u, d: f32, dm: f32, j: u32, live: bool }

fn load_item(t: u32) -> Item {
  let row = t / (K / 8u);
  let k0 = (t % (K / 8u)) * 8u;
  // Rows n..NP-1 are written as zeros; they read row N - 1's words (in bounds, unused).
  let blk = min(row, N - 1u) * NSB + k0 / 256u;
  let j = (k0 % 256u) / 32u; // sub-block 2g + s
  let q = wqs[blk * 16u + (j / 2u) * 4u + (k0 % 32u) / 8u]; // qs bytes 32g + k0 % 32 .. +7
  let w = vec3u(wsc[blk * 3u], wsc[blk * 3u + 1u], wsc[blk * 3u + 2u]);
  return Item(q, w, wd[blk], wdm[blk], j, row < N);
}

fn store_item(t: u32, it: Item) {
  let ds = it.d * f32(q4kw_sc(it.w, it.j));
  let ms = no_fuse(it.dm * f32(q4kw_m(it.w, it.j)));
  let sh = vec4u(4u * (it.j % 2u));
  let a = no_fuse4(ds * nib_f32(it.q.x, sh)) - ms;
  let b = no_fuse4(ds * nib_f32(it.q.y, sh)) - ms;
  let h = vec4u(pack2x16float(a.xy), pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));
  wh[t] = select(vec4u(0u), h, it.live);
}

// Every item's loads first, then the decodes and stores.
fn weight_items(t: u32) {
  let it0 = load_item(t);
  let it1 = load_item(t + 1u * W_INV);
  let it2 = load_item(t + 2u * W_INV);
  let it3 = load_item(t + 3u * W_INV);
  store_item(t, it0);
  store_item(t + 1u * W_INV, it1);
  store_item(t + 2u * W_INV, it2);
  store_item(t + 3u * W_INV, it3);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  nofuse_zero = nwg.z >> 31u; // a grid never has 2^31 workgroups in z
  let t = gid.y * 768u + gid.x;
  if (t < 768u) { weight_items(t); }
}

// ==== activation to f16 tiles: grid 8x1x1, writes xt 34816 B
// coopmat-f16 split plan, pass 1: the activation to f16 tiles
const K = 256u;
// Activation: x [40, 256] rounded to f16 into 16x16 fragment tiles xt [4][16][16][16]
// (rows 40..63 zero).
const M = 40u;
@group(0) @binding(0) var<storage, read> x: array<vec4f>; // [M, K] row-major
@group(0) @binding(1) var<storage, read_write> xt: array<vec4u>; // f16 tiles as pack2x16float pairs

fn activation_item(t: u32) {
  let tile = t / 32u; // 32 items = one 16x16 tile [16 rows][16 K]
  let row = (tile / (K / 16u)) * 16u + (t % 32u) / 2u;
  let col = (tile % (K / 16u)) * 16u + (t % 2u) * 8u;
  var a = vec4f(0.0);
  var b = vec4f(0.0);
  if (row < M) {
    a = x[(row * K + col) / 4u];
    b = x[(row * K + col) / 4u + 1u];
  }
  xt[t] = vec4u(pack2x16float(a.xy), pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let t = gid.y * 2048u + gid.x;
  if (t < 2048u) { activation_item(t); }
}
