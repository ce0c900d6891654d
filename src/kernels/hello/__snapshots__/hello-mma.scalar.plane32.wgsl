// hello-mma (scalar arm), twin of the seed's mma_hello_i8: out[16,8] = A[16,32] @ B[32,8], int8 in, exact i32 out.
// Workgroup = ONE plane of 32 lanes; lane l owns outputs l*4 .. l*4+3 in the epilogue.

const M = 16u;
const N = 8u;
const K = 32u;
const PLANE = 32u;
const PER = 4u; // outputs per lane: M*N / PLANE

@group(0) @binding(0) var<storage, read> a: array<u32>; // A [M, K] int8, 4 per word, little-endian
@group(0) @binding(1) var<storage, read> b: array<u32>; // B [K, N] int8 row-major, 4 per word
@group(0) @binding(2) var<storage, read_write> out: array<i32>; // [M, N] row-major

// Byte i of a packed int8 array, sign-extended (extractBits on an i32 sign-extends).
fn a_i8(i: u32) -> i32 { return extractBits(bitcast<i32>(a[i >> 2u]), (i & 3u) * 8u, 8u); }
fn b_i8(i: u32) -> i32 { return extractBits(bitcast<i32>(b[i >> 2u]), (i & 3u) * 8u, 8u); }

fn dot_at(row: u32, col: u32) -> i32 {
  var acc = 0i;
  for (var l = 0u; l < K; l++) {
    acc += a_i8(row * K + l) * b_i8(l * N + col);
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
