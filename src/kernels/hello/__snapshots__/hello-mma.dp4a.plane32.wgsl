requires packed_4x8_integer_dot_product;

// hello-mma (dp4a arm), twin of the seed's mma_hello_i8: out[16,8] = A[16,32] @ B[32,8], int8 in, exact i32 out.
// Workgroup = ONE plane of 32 lanes; lane l owns outputs l*4 .. l*4+3 in the epilogue.

const M = 16u;
const N = 8u;
const K = 32u;
const PLANE = 32u;
const PER = 4u; // outputs per lane: M*N / PLANE

@group(0) @binding(0) var<storage, read> a: array<u32>; // A [M, K] int8, 4 per word, little-endian
@group(0) @binding(1) var<storage, read> b: array<u32>; // B [K, N] int8 row-major, 4 per word
@group(0) @binding(2) var<storage, read_write> out: array<i32>; // [M, N] row-major

var<workgroup> bt: array<u32, 64>; // B^T [N, K] int8, 4 k-consecutive bytes per word

fn b_u8(i: u32) -> u32 { return (b[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu; }

fn dot_at(row: u32, col: u32) -> i32 {
  var acc = 0i;
  for (var w = 0u; w < K / 4u; w++) {
    acc += dot4I8Packed(a[row * (K / 4u) + w], bt[col * (K / 4u) + w]);
  }
  return acc;
}

@compute @workgroup_size(PLANE)
fn main(@builtin(local_invocation_index) lane: u32) {
  set_owner(0u, 0u, lane);
  for (var i = lane; i < N * K / 4u; i += PLANE) {
    let col = i / (K / 4u);
    let r0 = (i % (K / 4u)) * 4u;
    bt[i] = b_u8(r0 * N + col) | (b_u8((r0 + 1u) * N + col) << 8u) | (b_u8((r0 + 2u) * N + col) << 16u) | (b_u8((r0 + 3u) * N + col) << 24u);
  }
  workgroupBarrier();
  for (var e = 0u; e < PER; e++) {
    let p = lane * PER + e;
    store_out(p, dot_at(p / N, p % N));
  }
}
