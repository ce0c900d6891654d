enable chromium_experimental_subgroup_matrix;

// hello-mma (subgroup-matrix arm), twin of the seed's mma_hello_i8: out[16,8] = A[16,32] @ B[32,8], int8 in, exact i32 out.
// Workgroup = ONE plane of 32 lanes; lane l owns outputs l*4 .. l*4+3 in the epilogue.

const M = 16u;
const N = 8u;
const K = 32u;
const PLANE = 32u;
const PER = 4u; // outputs per lane: M*N / PLANE

@group(0) @binding(0) var<storage, read> a: array<i32>; // A [M, K] int8, 4 per word, little-endian
@group(0) @binding(1) var<storage, read> b: array<i32>; // B [K, N] int8 row-major, 4 per word
@group(0) @binding(2) var<storage, read_write> out: array<i32>; // [M, N] row-major

// The i32 fragment's lane layout is opaque: spill it to workgroup memory, then store by the scalar partition.
var<workgroup> sc: array<i32, 128>;

@compute @workgroup_size(PLANE)
fn main(@builtin(local_invocation_index) lane: u32) {
  set_owner(0u, 0u, lane);
  // m16n8k32: A [16, 32] row-major (8 words a row), B [32, 8] row-major (2 words a row). Strides count words.
  let l = subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&a, 0u, K / 4u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<i8, 8, 32>, row_major>(&b, 0u, N / 4u);
  let c = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<i32, 8, 16>());
  subgroupMatrixStore<row_major>(&sc, 0u, c, N);
  workgroupBarrier();
  for (var e = 0u; e < PER; e++) {
    let p = lane * PER + e;
    store_out(p, sc[p]);
  }
}
