// Host launch plans for the hello kernels: one workgroup of ONE plane, buffers a, b (packed int8) and
// out (i32); the instrumented plan adds the ownership debug buffer at binding 3.
import { bindingNames } from '../gpu/bindings';
import { emptyOwnership, ownerBufferSpec, suffixedPass, type OwnershipMap } from '../gpu/instrument';
import { singlePassPlan, type KernelPlan } from '../gpu/plan';
import { packI8 } from '../quant';
import { HELLO_SHAPES, type HelloKernelId } from './catalog';
import {
  helloBindings,
  helloPerLane,
  helloWgsl,
  helloWorkgroupBytes,
  type HelloWgslParams,
} from './hello.wgsl';

export const HELLO_OWNER_BUFFER = 'owner';

/**
 * The launch plan of a hello kernel on inputs `a`, `b` (int8, the kernel's fixed shape).
 * @example await runPlan(device, helloPlan({ kernel: 'hello-wmma', arm: 'scalar', plane: 4 }, data))
 */
export function helloPlan(
  params: HelloWgslParams,
  data: { a: Int8Array; b: Int8Array },
  opts: { instrument?: boolean } = {},
): KernelPlan {
  const { m, n, k } = HELLO_SHAPES[params.kernel];
  if (data.a.length !== m * k || data.b.length !== n * k) {
    throw new RangeError(
      `${params.kernel} needs A of ${m * k} and B of ${n * k} int8, got ${data.a.length} and ${data.b.length}`,
    );
  }
  const instrument = opts.instrument ?? false;
  const kern = {
    wgsl: helloWgsl(params),
    entryPoint: 'main',
    bindings: bindingNames(helloBindings(params)),
    workgroupSize: params.plane,
    workgroupBytes: helloWorkgroupBytes(params),
  };
  const buffers: KernelPlan['buffers'] = [
    { name: 'a', kind: 'read-only-storage', data: packI8(data.a) },
    { name: 'b', kind: 'read-only-storage', data: packI8(data.b) },
    { name: 'out', kind: 'storage', size: m * n * 4 },
  ];
  if (instrument) buffers.push(ownerBufferSpec(m * n, HELLO_OWNER_BUFFER));
  return singlePassPlan(
    buffers,
    suffixedPass(kern, [1, 1, 1], params.kernel, {
      instrument,
      ownerBuffer: HELLO_OWNER_BUFFER,
      outType: 'i32',
    }),
    'i32',
  );
}

/** Who stores each output: workgroup 0, plane 0, lane floor(p / PER) -- the scalar epilogue partition. */
export function helloAnalyticOwnership(kernel: HelloKernelId, plane: number): OwnershipMap {
  const { m, n } = HELLO_SHAPES[kernel];
  const per = helloPerLane(kernel, plane);
  const map = emptyOwnership(m, n);
  for (let p = 0; p < m * n; p++) {
    map.count[p] = 1;
    map.lane[p] = Math.floor(p / per);
  }
  return map;
}
