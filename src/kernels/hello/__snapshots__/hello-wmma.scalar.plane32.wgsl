// hello-wmma (scalar arm), twin of the seed's wmma_hello_i8: out[16,16] = A[16,16] @ B[16,16]^T, int8 in, exact i32 out.
// Workgroup = ONE plane of 32 lanes; lane l owns outputs l*8 .. l*8+7 in the epilogue.

const M = 16u;
const N = 16u;
const K = 16u;
const PLANE = 32u;
const PER = 8u; // outputs per lane: M*N / PLANE

@group(0) @binding(0) var<storage, read> a: array<u32>; // A [M, K] int8, 4 per word, little-endian
@group(0) @binding(1) var<storage, read> b: array<u32>; // B [N, K] int8 (row n = B[n, k]), 4 per word
@group(0) @binding(2) var<storage, read_write> out: array<i32>; // [M, N] row-major

// Byte i of a packed int8 array, sign-extended (extractBits on an i32 sign-extends).
fn a_i8(i: u32) -> i32 { return extractBits(bitcast<i32>(a[i >> 2u]), (i & 3u) * 8u, 8u); }
fn b_i8(i: u32) -> i32 { return extractBits(bitcast<i32>(b[i >> 2u]), (i & 3u) * 8u, 8u); }

fn dot_at(row: u32, col: u32) -> i32 {
  var acc = 0i;
  for (var l = 0u; l < K; l++) {
    acc += a_i8(row * K + l) * b_i8(col * K + l);
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
