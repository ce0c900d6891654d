// The hello kernel families: the smallest kernels that prove an int8 matrix-core op (or its scalar /
// dot4I8Packed twin) runs and is exact. Public entry of src/kernels/hello.
import { findMatrixConfig, int8ArmSupport, type AdapterCaps, type Arm } from '../gpu/caps';
import {
  assertNoProblems,
  dataSourceProblems,
  type KernelFamily,
  type OwnershipPhase,
  type PreparedProblem,
  type ProblemConfig,
} from '../family';
import { helloData, helloRef, HELLO_SHAPES, type HelloKernelId } from './hello.oracle';
import { helloAnalyticOwnership, helloPlan, HELLO_OWNER_BUFFER } from './hello.plan';
import { helloParamErrors, type HelloWgslParams } from './hello.wgsl';

export { helloI8Ref, mmaHelloRef, helloRef, helloData, HELLO_SHAPES } from './hello.oracle';
export type { HelloKernelId, HelloShape } from './hello.oracle';
export { helloWgsl, helloPerLane, helloParamErrors } from './hello.wgsl';
export type { HelloWgslParams } from './hello.wgsl';
export { helloPlan, helloAnalyticOwnership, HELLO_BINDINGS, HELLO_OWNER_BUFFER } from './hello.plan';

const HELLO_ARMS: readonly Arm[] = ['scalar', 'dp4a', 'subgroup-matrix'];

/** The i8 -> i32 config the matrix arm uses: hello-mma needs 16x8x32; hello-wmma takes 16x16x16, else 16x16x32 padded. */
export function helloMatrixShape(kernel: HelloKernelId, caps: AdapterCaps): [number, number, number] {
  if (kernel === 'hello-mma') return [16, 8, 32];
  return findMatrixConfig(caps, 'i8', 'i32', 16, 16, 16) ? [16, 16, 16] : [16, 16, 32];
}

/** Generator parameters of a config on an adapter (the matrix arm's K comes from the adapter's configs). */
export function helloParams(config: ProblemConfig, caps: AdapterCaps): HelloWgslParams {
  const kernel = config.kernel as HelloKernelId;
  const p: HelloWgslParams = { kernel, arm: config.arm, plane: config.plane };
  if (kernel === 'hello-wmma' && config.arm === 'subgroup-matrix')
    p.matrixK = helloMatrixShape(kernel, caps)[2] === 16 ? 16 : 32;
  return p;
}

function validateHello(kernel: HelloKernelId, config: ProblemConfig, caps: AdapterCaps): string[] {
  const s = HELLO_SHAPES[kernel];
  const errs: string[] = [];
  if (config.kernel !== kernel) errs.push(`config is for ${config.kernel}, not ${kernel}`);
  if (config.m !== s.m || config.n !== s.n || config.k !== s.k) {
    errs.push(
      `${kernel} is a fixed ${s.m}x${s.n}x${s.k} tile (m x n x k); got ${config.m}x${config.n}x${config.k}`,
    );
  }
  if (!HELLO_ARMS.includes(config.arm)) errs.push(`unknown arm '${config.arm}'`);
  errs.push(...helloParamErrors({ kernel, arm: config.arm, plane: config.plane }));
  const L = caps.limits;
  if (config.plane > L.maxComputeInvocationsPerWorkgroup || config.plane > L.maxComputeWorkgroupSizeX) {
    errs.push(
      `plane ${config.plane} exceeds the adapter's workgroup limit (${Math.min(L.maxComputeInvocationsPerWorkgroup, L.maxComputeWorkgroupSizeX)})`,
    );
  }
  if (config.arm === 'dp4a' || config.arm === 'subgroup-matrix') {
    const support = int8ArmSupport(caps, config.arm, helloMatrixShape(kernel, caps));
    if (!support.ok) errs.push(`${config.arm} arm unavailable: ${support.reason}`);
    else if (config.arm === 'subgroup-matrix' && config.plane !== caps.subgroupMaxSize) {
      errs.push(
        `the subgroup-matrix arm needs plane = the hardware subgroup size ${caps.subgroupMaxSize}, got ${config.plane}`,
      );
    }
  }
  errs.push(...dataSourceProblems(config));
  return errs;
}

function prepareHello(kernel: HelloKernelId, config: ProblemConfig, caps: AdapterCaps): PreparedProblem {
  assertNoProblems(validateHello(kernel, config, caps));
  const { m, n, k } = HELLO_SHAPES[kernel];
  const params = helloParams(config, caps);
  const data = helloData(kernel, config.dataSource, config.dataSeed);
  let oracle: Int32Array | undefined;
  return {
    config,
    plan: helloPlan(params, data),
    instrumentedPlan: helloPlan(params, data, { instrument: true }),
    ownerBuffer: HELLO_OWNER_BUFFER,
    rows: m,
    cols: n,
    oracle: () => (oracle ??= helloRef(kernel, data.a, data.b)),
    gate: { kind: 'bit-exact' },
    phases: ['scalar-epilogue'],
    analyticOwnership(phase: OwnershipPhase) {
      if (phase !== 'scalar-epilogue')
        throw new RangeError(`${kernel} stores its output only in the scalar epilogue, not '${phase}'`);
      return helloAnalyticOwnership(kernel, config.plane);
    },
    ops: 2 * m * n * k,
    weightBytes: n * k,
  };
}

function helloFamily(kernel: HelloKernelId, title: string, summary: string, seedName: string): KernelFamily {
  const s = HELLO_SHAPES[kernel];
  return {
    id: kernel,
    title,
    summary,
    seedName,
    arms: HELLO_ARMS,
    knobs: [],
    defaults: {
      m: s.m,
      n: s.n,
      k: s.k,
      experts: 1,
      topk: 1,
      ytiles: 1,
      tile: { wm: 1, wn: 1, rm: 1, rn: 1 },
      dataSource: 'seed',
      dataSeed: 0,
    },
    validate: (config, caps) => validateHello(kernel, config, caps),
    prepare: (config, caps) => prepareHello(kernel, config, caps),
  };
}

/** STAGE 1a: out[16,16] = A @ B^T, 16x16x16 int8 -> i32 (the seed's wmma_hello_i8). */
export const helloWmmaFamily: KernelFamily = helloFamily(
  'hello-wmma',
  'WMMA hello (16x16x16 i8)',
  'out[16,16] = A[16,16] @ B[16,16]^T over int8, exact i32: one plane, one matrix tile (wmma_hello_i8).',
  'wmma_hello_i8',
);

/** STAGE 1b: out[16,8] = A[16,32] @ B[32,8], the m16n8k32 int8 MMA shape (the seed's mma_hello_i8). */
export const helloMmaFamily: KernelFamily = helloFamily(
  'hello-mma',
  'MMA hello (m16n8k32 i8)',
  'out[16,8] = A[16,32] @ B[32,8] (B row-major) over int8, exact i32: the m16n8k32 MMA tile (mma_hello_i8).',
  'mma_hello_i8',
);
