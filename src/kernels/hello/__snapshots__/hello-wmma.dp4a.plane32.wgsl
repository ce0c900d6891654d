requires packed_4x8_integer_dot_product;

// hello-wmma (dp4a arm), twin of the seed's wmma_hello_i8: out[16,16] = A[16,16] @ B[16,16]^T, int8 in, exact i32 out.
// Workgroup = ONE plane of 32 lanes; lane l owns outputs l*8 .. l*8+7 in the epilogue.

const M = 16u;
const N = 16u;
const K = 16u;
const PLANE = 32u;
const PER = 8u; // outputs per lane: M*N / PLANE

@group(0) @binding(0) var<storage, read> a: array<u32>; // A [M, K] int8, 4 per word, little-endian
@group(0) @binding(1) var<storage, read> b: array<u32>; // B [N, K] int8 (row n = B[n, k]), 4 per word
@group(0) @binding(2) var<storage, read_write> out: array<i32>; // [M, N] row-major

fn dot_at(row: u32, col: u32) -> i32 {
  var acc = 0i;
  for (var w = 0u; w < K / 4u; w++) {
    acc += dot4I8Packed(a[row * (K / 4u) + w], b[col * (K / 4u) + w]);
  }
  return acc;
}

@compute @workgroup_size(PLANE)
fn main(@builtin(local_invocation_index) lane: u32) {
  set_owner(0u, 0u, lane);
  for (var e = 0u; e < PER; e++) {
    let p = lane * PER + e;
    store_out(p, dot_at(p / N, p % N));
  }
}
