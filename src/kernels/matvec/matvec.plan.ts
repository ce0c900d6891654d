// The decode matvec's host plan: the MMQ Q4_K input buffers (built lazily), the output, one pass; and the
// analytic ownership the instrumented run is compared against.
import { emptyOwnership, ownerBufferSpec, suffixedPass, type OwnershipMap } from '../gpu/instrument';
import { singlePassPlan, type KernelPlan } from '../gpu/plan';
import { mmqInputBuffers, OWNER_BUFFER, type MmqInputs } from '../mmq';
import { buildMatvecKernel, type MatvecSpec } from './matvec.wgsl';

/**
 * The plan of out[m, n] = X[m, k] @ W[n, k]^T (Q4_K W) in one pass.
 * @example const r = await runPlan(device, matvecPlan(() => ds.inputs, spec)); new Float32Array(r.output)
 */
export function matvecPlan(
  inputs: () => MmqInputs,
  s: MatvecSpec,
  opts: { instrument?: boolean; label?: string } = {},
): KernelPlan {
  const kern = buildMatvecKernel(s);
  const instrument = opts.instrument ?? false;
  const buffers = [
    ...mmqInputBuffers('q4k', s.m, s.n, s.k, inputs),
    { name: 'out', kind: 'storage' as const, size: s.m * s.n * 4 },
    ...(instrument ? [ownerBufferSpec(s.m * s.n, OWNER_BUFFER)] : []),
  ];
  const label = opts.label ?? `matvec-q4k ${s.arm} ${s.planes}x${s.cols}`;
  return singlePassPlan(
    buffers,
    suffixedPass(kern, kern.workgroups, label, { instrument, ownerBuffer: OWNER_BUFFER }),
  );
}

/**
 * Who stores each output element: column c is workgroup c / (planes*cols)'s plane (c / cols) % planes;
 * output o = r*cols + c%cols of that plane is lane o % plane's.
 */
export function matvecOwnership(s: MatvecSpec): OwnershipMap {
  const map = emptyOwnership(s.m, s.n);
  for (let r = 0; r < s.m; r++)
    for (let c = 0; c < s.n; c++) {
      const i = r * s.n + c;
      const o = r * s.cols + (c % s.cols);
      map.count[i] = 1;
      map.workgroup[i] = Math.floor(c / (s.planes * s.cols));
      map.plane[i] = Math.floor(c / s.cols) % s.planes;
      map.lane[i] = o % s.plane;
    }
  return map;
}
