enable chromium_experimental_subgroup_matrix;

// hello-wmma (subgroup-matrix arm), twin of the seed's wmma_hello_i8: out[16,16] = A[16,16] @ B[16,16]^T, int8 in, exact i32 out.
// Workgroup = ONE plane of 32 lanes; lane l owns outputs l*8 .. l*8+7 in the epilogue.

const M = 16u;
const N = 16u;
const K = 16u;
const PLANE = 32u;
const PER = 8u; // outputs per lane: M*N / PLANE

@group(0) @binding(0) var<storage, read> a: array<i32>; // A [M, K] int8, 4 per word, little-endian
@group(0) @binding(1) var<storage, read> b: array<i32>; // B [N, K] int8 (row n = B[n, k]), 4 per word
@group(0) @binding(2) var<storage, read_write> out: array<i32>; // [M, N] row-major

// The i32 fragment's lane layout is opaque: spill it to workgroup memory, then store by the scalar partition.
var<workgroup> sc: array<i32, 256>;
// The adapter's i8 config has K = 32: A and B^T are staged with K zero-padded 16 -> 32 (8 words a row);
// the padding multiplies to zero, so the i32 result is the K = 16 product exactly.
const KP = 32u;
var<workgroup> sa: array<i32, 128>; // A [M, KP]
var<workgroup> sb: array<i32, 128>; // B [N, KP] = (B^T) column-major

@compute @workgroup_size(PLANE)
fn main(@builtin(local_invocation_index) lane: u32) {
  set_owner(0u, 0u, lane);
  for (var i = lane; i < M * KP / 4u; i += PLANE) { // M = N = 16: one pass stages both
    let row = i / (KP / 4u);
    let w = i % (KP / 4u);
    var va = 0i;
    var vb = 0i;
    if (w < K / 4u) {
      va = a[row * (K / 4u) + w];
      vb = b[row * (K / 4u) + w];
    }
    sa[i] = va;
    sb[i] = vb;
  }
  workgroupBarrier();
  let l = subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&sa, 0u, KP / 4u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<i8, 16, 32>, col_major>(&sb, 0u, KP / 4u);
  let c = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<i32, 16, 16>());
  subgroupMatrixStore<row_major>(&sc, 0u, c, N);
  workgroupBarrier();
  for (var e = 0u; e < PER; e++) {
    let p = lane * PER + e;
    store_out(p, sc[p]);
  }
}
