// WGSL generator for the two int8 matrix-core hello kernels, written ONCE as a function of typed
// parameters (kernel, arm, plane). Every arm computes the same exact i32 tile:
//   scalar          : i32 MACs on sign-extended bytes
//   dp4a            : dot4I8Packed on packed words (hello-mma gathers B's column bytes into words first)
//   subgroup-matrix : one i8 -> i32 subgroup-matrix multiply (chromium_experimental_subgroup_matrix)
// The workgroup is exactly ONE plane: a matrix op is plane-scoped, and the scalar arms partition the
// tile by the same width (256/plane or 128/plane outputs per lane) -- "a hardcoded 32 silently produces a
// half-written tile" on a 64-wide plane, and a 4-wide one on SwiftShader.
// The kernel calls set_owner / store_out, which the host defines in a suffix (gpu/instrument.ts).
import { bindingDecls, readOnly, readWrite } from '../gpu/bindings';
import type { Arm } from '../gpu/caps';
import { HELLO_SHAPES, type HelloKernelId } from './catalog';

export interface HelloWgslParams {
  kernel: HelloKernelId;
  arm: Arm;
  /** Workgroup width: one plane (the hardware subgroup for the matrix arm; a logical width otherwise). */
  plane: number;
  /**
   * Matrix arm of hello-wmma only: K of the i8 -> i32 config used. 16 loads A/B straight from storage;
   * 32 (the only i8 K many adapters list) zero-pads A and B from K = 16 to 32 in workgroup memory, which
   * leaves the dot products unchanged.
   */
  matrixK?: 16 | 32;
}

/** Outputs each lane owns in the scalar epilogue: the tile divided by the plane width. */
export function helloPerLane(kernel: HelloKernelId, plane: number): number {
  const { m, n } = HELLO_SHAPES[kernel];
  return (m * n) / plane;
}

/** Validity of generator parameters, independent of any adapter. Empty = fine. */
export function helloParamErrors(p: HelloWgslParams): string[] {
  const { m, n } = HELLO_SHAPES[p.kernel];
  const errs: string[] = [];
  if (
    !Number.isInteger(p.plane) ||
    p.plane < 1 ||
    p.plane > m * n ||
    (m * n) % p.plane !== 0 ||
    (p.plane & (p.plane - 1)) !== 0
  ) {
    errs.push(
      `plane ${p.plane} must be a power of two dividing the ${m}x${n} = ${m * n} outputs of ${p.kernel}`,
    );
  }
  if (p.matrixK !== undefined && (p.kernel !== 'hello-wmma' || p.arm !== 'subgroup-matrix')) {
    errs.push('matrixK applies only to the subgroup-matrix arm of hello-wmma');
  }
  return errs;
}

function header(p: HelloWgslParams, per: number): string {
  const { m, n, k, bLayout } = HELLO_SHAPES[p.kernel];
  const what =
    bLayout === 'nk'
      ? `out[${m},${n}] = A[${m},${k}] @ B[${n},${k}]^T`
      : `out[${m},${n}] = A[${m},${k}] @ B[${k},${n}]`;
  const seed = p.kernel === 'hello-wmma' ? 'wmma_hello_i8' : 'mma_hello_i8';
  return `// ${p.kernel} (${p.arm} arm), twin of the seed's ${seed}: ${what}, int8 in, exact i32 out.
// Workgroup = ONE plane of ${p.plane} lanes; lane l owns outputs l*${per} .. l*${per}+${per - 1} in the epilogue.
`;
}

function consts(p: HelloWgslParams, per: number): string {
  const { m, n, k } = HELLO_SHAPES[p.kernel];
  return `const M = ${m}u;
const N = ${n}u;
const K = ${k}u;
const PLANE = ${p.plane}u;
const PER = ${per}u; // outputs per lane: M*N / PLANE
`;
}

/**
 * A hello kernel's bindings: packed int8 A and B, the i32 output. i8 subgroup matrices load from i32
 * arrays (their scalar type); the other arms read raw words.
 */
export function helloBindings(p: Pick<HelloWgslParams, 'kernel' | 'arm'>) {
  const elem = p.arm === 'subgroup-matrix' ? 'i32' : 'u32';
  const nk = HELLO_SHAPES[p.kernel].bLayout === 'nk';
  return {
    a: readOnly(`array<${elem}>`, 'A [M, K] int8, 4 per word, little-endian'),
    b: readOnly(
      `array<${elem}>`,
      nk ? 'B [N, K] int8 (row n = B[n, k]), 4 per word' : 'B [K, N] int8 row-major, 4 per word',
    ),
    out: readWrite('array<i32>', '[M, N] row-major'),
  };
}

/** The epilogue every arm shares: lane l stores its PER outputs, value given by `value(p)`. */
function epilogue(value: string): string {
  return `  for (var e = 0u; e < PER; e++) {
    let p = lane * PER + e;
    store_out(p, ${value});
  }`;
}

/** The entry point every arm shares: ONE plane, the owner hook, then `body` (indented statements). */
function entry(body: string): string {
  return `@compute @workgroup_size(PLANE)
fn main(@builtin(local_invocation_index) lane: u32) {
  set_owner(0u, 0u, lane);
${body}
}
`;
}

/** dot4I8Packed over a row of packed A words and a row of packed B^T words read from `bRows`. */
function dp4aDotAt(bRows: 'b' | 'bt'): string {
  return `fn dot_at(row: u32, col: u32) -> i32 {
  var acc = 0i;
  for (var w = 0u; w < K / 4u; w++) {
    acc += dot4I8Packed(a[row * (K / 4u) + w], ${bRows}[col * (K / 4u) + w]);
  }
  return acc;
}
`;
}

function scalarBody(p: HelloWgslParams): string {
  const { bLayout } = HELLO_SHAPES[p.kernel];
  const bIdx = bLayout === 'nk' ? 'col * K + l' : 'l * N + col';
  return `// Byte i of a packed int8 array, sign-extended (extractBits on an i32 sign-extends).
fn a_i8(i: u32) -> i32 { return extractBits(bitcast<i32>(a[i >> 2u]), (i & 3u) * 8u, 8u); }
fn b_i8(i: u32) -> i32 { return extractBits(bitcast<i32>(b[i >> 2u]), (i & 3u) * 8u, 8u); }

fn dot_at(row: u32, col: u32) -> i32 {
  var acc = 0i;
  for (var l = 0u; l < K; l++) {
    acc += a_i8(row * K + l) * b_i8(${bIdx});
  }
  return acc;
}

${entry(epilogue('dot_at(p / N, p % N)'))}`;
}

function dp4aBody(p: HelloWgslParams): string {
  const { bLayout } = HELLO_SHAPES[p.kernel];
  if (bLayout === 'nk') {
    // B row n is already K-consecutive: both operands are packed words as stored.
    return `${dp4aDotAt('b')}
${entry(epilogue('dot_at(p / N, p % N)'))}`;
  }
  // B is [K, N] row-major: a column's K-consecutive bytes are N bytes apart. Gather them once into
  // packed words of B^T in workgroup memory (4 k-consecutive bytes per word), then dot4I8Packed.
  return `var<workgroup> bt: array<u32, ${(HELLO_SHAPES[p.kernel].n * HELLO_SHAPES[p.kernel].k) / 4}>; // B^T [N, K] int8, 4 k-consecutive bytes per word

fn b_u8(i: u32) -> u32 { return (b[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu; }

${dp4aDotAt('bt')}
${entry(`  for (var i = lane; i < N * K / 4u; i += PLANE) {
    let col = i / (K / 4u);
    let r0 = (i % (K / 4u)) * 4u;
    bt[i] = b_u8(r0 * N + col) | (b_u8((r0 + 1u) * N + col) << 8u) | (b_u8((r0 + 2u) * N + col) << 16u) | (b_u8((r0 + 3u) * N + col) << 24u);
  }
  workgroupBarrier();
${epilogue('dot_at(p / N, p % N)')}`)}`;
}

function matrixBody(p: HelloWgslParams): string {
  const { m, n } = HELLO_SHAPES[p.kernel];
  const store = `  subgroupMatrixStore<row_major>(&sc, 0u, c, N);
  workgroupBarrier();
${epilogue('sc[p]')}`;
  const scratch = `// The i32 fragment's lane layout is opaque: spill it to workgroup memory, then store by the scalar partition.
var<workgroup> sc: array<i32, ${m * n}>;
`;
  if (p.kernel === 'hello-mma') {
    return `${scratch}
${entry(`  // m16n8k32: A [16, 32] row-major (8 words a row), B [32, 8] row-major (2 words a row). Strides count words.
  let l = subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&a, 0u, K / 4u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<i8, 8, 32>, row_major>(&b, 0u, N / 4u);
  let c = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<i32, 8, 16>());
${store}`)}`;
  }
  if ((p.matrixK ?? 32) === 16) {
    return `${scratch}
${entry(`  // 16x16x16: A row-major; B [N, K] row-major is B^T column-major. Strides count words (K/4).
  let l = subgroupMatrixLoad<subgroup_matrix_left<i8, 16, 16>, row_major>(&a, 0u, K / 4u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<i8, 16, 16>, col_major>(&b, 0u, K / 4u);
  let c = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<i32, 16, 16>());
${store}`)}`;
  }
  return `${scratch}// The adapter's i8 config has K = 32: A and B^T are staged with K zero-padded 16 -> 32 (8 words a row);
// the padding multiplies to zero, so the i32 result is the K = 16 product exactly.
const KP = 32u;
var<workgroup> sa: array<i32, ${(m * 32) / 4}>; // A [M, KP]
var<workgroup> sb: array<i32, ${(n * 32) / 4}>; // B [N, KP] = (B^T) column-major

${entry(`  for (var i = lane; i < M * KP / 4u; i += PLANE) { // M = N = 16: one pass stages both
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
${store}`)}`;
}

/**
 * Workgroup memory a hello kernel declares, in bytes: the dp4a arm's gathered B^T (hello-mma), the
 * matrix arm's i32 spill, and its K-padded operand copies when the adapter's i8 config has K = 32.
 * @example helloWorkgroupBytes({ kernel: 'hello-mma', arm: 'dp4a', plane: 32 }) // 256
 */
export function helloWorkgroupBytes(p: HelloWgslParams): number {
  const { m, n, k, bLayout } = HELLO_SHAPES[p.kernel];
  if (p.arm === 'scalar') return 0;
  if (p.arm === 'dp4a') return bLayout === 'kn' ? n * k : 0;
  const padded = p.kernel === 'hello-wmma' && (p.matrixK ?? 32) === 32 ? (m + n) * 32 : 0;
  return m * n * 4 + padded;
}

/**
 * The kernel text of a hello kernel (the host appends the set_owner/store_out suffix).
 * @example helloWgsl({ kernel: 'hello-mma', arm: 'dp4a', plane: 32 })
 */
export function helloWgsl(p: HelloWgslParams): string {
  const errs = helloParamErrors(p);
  if (errs.length) throw new RangeError(errs.join('; '));
  const per = helloPerLane(p.kernel, p.plane);
  const enables =
    p.arm === 'subgroup-matrix'
      ? 'enable chromium_experimental_subgroup_matrix;\n\n'
      : p.arm === 'dp4a'
        ? 'requires packed_4x8_integer_dot_product;\n\n'
        : '';
  const body = p.arm === 'scalar' ? scalarBody(p) : p.arm === 'dp4a' ? dp4aBody(p) : matrixBody(p);
  return `${enables}${header(p, per)}
${consts(p, per)}
${bindingDecls(helloBindings(p))}

${body}`;
}
