// The hello kernel families: the smallest kernels that prove an int8 matrix-core op (or its scalar /
// dot4I8Packed twin) runs and is exact. Public entry of src/kernels/hello.
import {
  assertNoProblems,
  type BuiltProblem,
  type KernelFamily,
  type OwnershipPhase,
  type ResolvedConfig,
} from '../family';
import type { AdapterCaps } from '../gpu/caps';
import { planLimitProblems } from '../gpu/plan';
import { selectRows } from '../oracle';
import {
  HELLO_SHAPES,
  helloMatrixShape,
  helloMmaCatalog,
  helloWmmaCatalog,
  type HelloKernelId,
} from './catalog';
import { helloData, helloRef } from './hello.oracle';
import { helloAnalyticOwnership, helloPlan, HELLO_OWNER_BUFFER } from './hello.plan';
import type { HelloWgslParams } from './hello.wgsl';

export { helloI8Ref, mmaHelloRef, helloRef, helloData } from './hello.oracle';
export { HELLO_SHAPES, helloMatrixShape, type HelloKernelId, type HelloShape } from './catalog';
export { helloWgsl, helloPerLane, helloParamErrors } from './hello.wgsl';
export type { HelloWgslParams } from './hello.wgsl';
export { helloPlan, helloAnalyticOwnership, HELLO_BINDINGS, HELLO_OWNER_BUFFER } from './hello.plan';

/** Generator parameters of a config on an adapter (the matrix arm's K comes from the adapter's configs). */
export function helloParams(config: ResolvedConfig, caps: AdapterCaps): HelloWgslParams {
  const kernel = config.kernel as HelloKernelId;
  const p: HelloWgslParams = { kernel, arm: config.arm, plane: config.plane };
  if (kernel === 'hello-wmma' && config.arm === 'subgroup-matrix')
    p.matrixK = helloMatrixShape(kernel, caps)[2] === 16 ? 16 : 32;
  return p;
}

function helloFamily(kernel: HelloKernelId, catalog: typeof helloWmmaCatalog): KernelFamily {
  return {
    ...catalog,
    build(config, caps): BuiltProblem {
      assertNoProblems(catalog.validate(config, caps));
      const { m, n, k } = HELLO_SHAPES[kernel];
      const params = helloParams(config, caps);
      const data = helloData(kernel, config.data.source, config.data.seed);
      const plan = helloPlan(params, data);
      assertNoProblems(planLimitProblems(plan, caps.limits));
      let oracle: Int32Array | undefined;
      return {
        config,
        plan,
        instrumentedPlan: () => helloPlan(params, data, { instrument: true }),
        ownerBuffer: HELLO_OWNER_BUFFER,
        facts: {
          rows: m,
          cols: n,
          oracle: (rows) => {
            oracle ??= helloRef(kernel, data.a, data.b);
            return selectRows(oracle, rows, n);
          },
          gate: { kind: 'bit-exact' },
          phases: ['scalar-epilogue'],
          analyticOwnership(phase: OwnershipPhase) {
            if (phase !== 'scalar-epilogue')
              throw new RangeError(`${kernel} stores its output only in the scalar epilogue, not '${phase}'`);
            return helloAnalyticOwnership(kernel, config.plane);
          },
          ops: 2 * m * n * k,
          weightBytes: n * k,
        },
      };
    },
  };
}

export const helloWmmaFamily = helloFamily('hello-wmma', helloWmmaCatalog);
export const helloMmaFamily = helloFamily('hello-mma', helloMmaCatalog);
