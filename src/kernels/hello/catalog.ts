// What the app knows of the two hello kernels before any WGSL exists: fixed-shape int8 tiles with the
// three island arms. Light: no generator, oracle or quant code (see ../family.ts).
import { armPlaneProblems, DP4A_ARM, int8MatrixArm, SCALAR_ARM } from '../arms';
import { findMatrixConfig, planeWidth, type AdapterCaps } from '../gpu/caps';
import { dataProblems, type FamilyCatalog, type RunConfig } from '../family';

export type HelloKernelId = 'hello-wmma' | 'hello-mma';

export interface HelloShape {
  m: number;
  n: number;
  k: number;
  /** 'nk': B is [N, K] row-major (out = A @ B^T); 'kn': B is [K, N] row-major (out = A @ B). */
  bLayout: 'nk' | 'kn';
}

/** The fixed tile of each hello kernel. */
export const HELLO_SHAPES: Readonly<Record<HelloKernelId, HelloShape>> = {
  'hello-wmma': { m: 16, n: 16, k: 16, bLayout: 'nk' },
  'hello-mma': { m: 16, n: 8, k: 32, bLayout: 'kn' },
};

/** The i8 -> i32 config the matrix arm uses: hello-mma needs 16x8x32; hello-wmma takes 16x16x16, else 16x16x32 padded. */
export function helloMatrixShape(kernel: HelloKernelId, caps: AdapterCaps): [number, number, number] {
  if (kernel === 'hello-mma') return [16, 8, 32];
  return findMatrixConfig(caps, 'i8', 'i32', 16, 16, 16) ? [16, 16, 16] : [16, 16, 32];
}

function helloCatalog(
  kernel: HelloKernelId,
  title: string,
  summary: string,
  reference: string,
): FamilyCatalog {
  const { m, n } = HELLO_SHAPES[kernel];
  const arms = [SCALAR_ARM, DP4A_ARM, int8MatrixArm((_, caps) => helloMatrixShape(kernel, caps))];
  const catalog: FamilyCatalog = {
    id: kernel,
    title,
    summary,
    reference,
    arithmetic: 'int8',
    arms,
    controls: [],
    defaults: {},
    small: {},
    checks: [{ label: `the ${m}x${n} tile`, params: {} }],
    validate(config: RunConfig, caps?: AdapterCaps) {
      const out = armPlaneProblems(catalog, config, caps);
      const plane = config.plane ?? (caps ? planeWidth(caps) : 1);
      // The workgroup is one plane: it must split the tile's outputs evenly.
      if (!out.length && (m * n) % plane !== 0)
        out.push(`plane width ${plane} does not divide the ${m}x${n} = ${m * n} outputs of ${kernel}`);
      return [...out, ...dataProblems(config.data, catalog)];
    },
  };
  return catalog;
}

/** STAGE 1a: out[16,16] = A @ B^T, 16x16x16 int8 -> i32 (the reference's wmma_hello_i8). */
export const helloWmmaCatalog = helloCatalog(
  'hello-wmma',
  'WMMA hello (16x16x16 i8)',
  'out[16,16] = A[16,16] @ B[16,16]^T over int8, exact i32: one plane, one matrix tile (wmma_hello_i8).',
  'wmma_hello_i8',
);

/** STAGE 1b: out[16,8] = A[16,32] @ B[32,8], the m16n8k32 int8 MMA shape (the reference's mma_hello_i8). */
export const helloMmaCatalog = helloCatalog(
  'hello-mma',
  'MMA hello (m16n8k32 i8)',
  'out[16,8] = A[16,32] @ B[32,8] (B row-major) over int8, exact i32: the m16n8k32 MMA tile (mma_hello_i8).',
  'mma_hello_i8',
);
