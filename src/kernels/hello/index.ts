// The hello kernel families: the smallest kernels that prove an int8 matrix-core op (or its scalar /
// dot4I8Packed twin) runs and is exact. Public entry of src/kernels/hello.
import { defineFamily, familyBuilder } from '../define';
import type { ResolvedConfig } from '../family';
import type { AdapterCaps } from '../gpu/caps';
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
export { helloPlan, helloAnalyticOwnership, HELLO_OWNER_BUFFER } from './hello.plan';

/** Generator parameters of a config on an adapter (the matrix arm's K comes from the adapter's configs). */
export function helloParams(config: ResolvedConfig, caps: AdapterCaps): HelloWgslParams {
  const kernel = config.kernel as HelloKernelId;
  const p: HelloWgslParams = { kernel, arm: config.arm, plane: config.plane };
  if (kernel === 'hello-wmma' && config.arm === 'subgroup-matrix')
    p.matrixK = helloMatrixShape(kernel, caps)[2] === 16 ? 16 : 32;
  return p;
}

function helloFamily(kernel: HelloKernelId, catalog: typeof helloWmmaCatalog) {
  const { m, n, k } = HELLO_SHAPES[kernel];
  return defineFamily({
    catalog,
    builder: familyBuilder(kernel, {
      spec: helloParams,
      dataKey: (p) => p.kernel,
      data: (p, config) => helloData(p.kernel, config.data.source, config.data.seed),
      plan: (p, data, { instrument }) => helloPlan(p, data(), { instrument }),
      ownerBuffer: HELLO_OWNER_BUFFER,
      oracle: (p, data) => helloRef(p.kernel, data.a, data.b),
      phases: () => ['scalar-epilogue'],
      ownership: (p) => helloAnalyticOwnership(p.kernel, p.plane),
      facts: () => ({
        rows: m,
        cols: n,
        gate: { kind: 'bit-exact' },
        ops: 2 * m * n * k,
        weightBytes: n * k,
      }),
    }),
  });
}

export const helloWmmaFamily = helloFamily('hello-wmma', helloWmmaCatalog);
export const helloMmaFamily = helloFamily('hello-mma', helloMmaCatalog);
