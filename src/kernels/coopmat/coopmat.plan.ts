// Host launch plan for the coopmat twin: activation x (f32), the split Q4_K weight (qs, scales, d, dmin)
// and out (f32); grid (ceil(n/BN), ceil(m/BM)); the instrumented plan adds the owner debug buffer.
import { emptyOwnership, ownerBufferSpec, type OwnershipMap } from '../gpu/instrument';
import { kernelPass, singlePassPlan, type KernelPlan } from '../gpu/plan';
import type { CoopmatData } from './coopmat.oracle';
import {
  buildCoopmatKernel,
  buildCoopmatXToF16Kernel,
  coopmatGeometry,
  type CoopmatSpec,
} from './coopmat.wgsl';
import {
  buildCoopmatFusedPrePassKernel,
  buildCoopmatWToF16Kernel,
  buildCoopmatXTiledKernel,
  splitStageOf,
  type SplitPrePass,
} from './coopmat.split';

export const COOPMAT_OWNER_BUFFER = 'owner';

/**
 * The launch plan of a coopmat tile on `data` (x [m, k], Q4_K weight [n, k]).
 * @example const r = await runPlan(device, coopmatPlan(spec, coopmatData(m, n, k, 'seed', 0)));
 */
export function coopmatPlan(
  spec: CoopmatSpec,
  data: CoopmatData,
  opts: { instrument?: boolean } = {},
): KernelPlan {
  const { m, n, k } = spec;
  const nsb = (n * k) / 256;
  if (data.x.length !== m * k)
    throw new RangeError(`activation has ${data.x.length} values, [${m} x ${k}] needs ${m * k}`);
  if (
    data.w.qs.length !== nsb * 32 ||
    data.w.scales.length !== nsb * 3 ||
    data.w.d.length !== nsb ||
    data.w.dmin.length !== nsb
  ) {
    throw new RangeError(`Q4_K weight does not hold the ${nsb} super-blocks of [${n} x ${k}]`);
  }
  const instrument = opts.instrument ?? false;
  const kc = buildCoopmatKernel(spec, { instrument });
  const buffers: KernelPlan['buffers'] = [
    { name: 'x', kind: 'read-only-storage', data: data.x },
    { name: 'wqs', kind: 'read-only-storage', data: data.w.qs },
    { name: 'wsc', kind: 'read-only-storage', data: data.w.scales },
    { name: 'wd', kind: 'read-only-storage', data: data.w.d },
    { name: 'wdm', kind: 'read-only-storage', data: data.w.dmin },
    { name: 'out', kind: 'storage', size: m * n * 4 },
  ];
  if (instrument) buffers.push(ownerBufferSpec(m * n, COOPMAT_OWNER_BUFFER));
  const main = kernelPass(
    kc,
    kc.workgroups(m, n),
    `coopmat-f16 ${spec.arm} ${spec.tile.wm}x${spec.tile.wn}x${spec.tile.rm}x${spec.tile.rn}`,
  );
  const label = (what: string) => `coopmat-f16 ${what}`;
  // Pre-passes, then the kernel the editor shows (the last pass), which writes out.
  const chained = (pre: KernelPlan['passes']): KernelPlan => ({
    buffers,
    passes: [...pre, main],
    output: 'out',
    outputType: 'f32',
    mainPass: pre.length,
  });
  if (spec.split) {
    // Split: pass 0 decodes the weight to f16 once, pass 1 tiles the activation into f16 fragments,
    // pass 2 multiplies them. 'fused': passes 0 and 1 in one dispatch; B decoded in the GEMM's stage
    // ('q4k'): no pass 0.
    const st = splitStageOf(spec);
    const pre: [SplitPrePass, string][] = [];
    if (st.pre === 'fused') pre.push([buildCoopmatFusedPrePassKernel(spec), 'weight and activation to f16']);
    else {
      if (st.b !== 'q4k') pre.push([buildCoopmatWToF16Kernel(spec), 'weight Q4_K to f16']);
      pre.push([buildCoopmatXTiledKernel(spec), 'activation to f16 tiles']);
    }
    for (const [p] of pre)
      buffers.push(...p.writes.map((w) => ({ name: w.name, kind: 'storage' as const, size: w.bytes })));
    return chained(pre.map(([p, what]) => kernelPass(p, p.grid, label(what))));
  }
  if (!spec.aDirect) return singlePassPlan(buffers, main);
  // Direct A: pass 0 rounds the activation to f16 once, pass 1 reads it.
  const pre = buildCoopmatXToF16Kernel(spec);
  buffers.push({ name: 'xh', kind: 'storage', size: pre.xhBytes });
  return chained([kernelPass(pre, pre.grid, label('activation to f16'))]);
}

/**
 * Who stores each output of a coopmat tile: workgroup (row-major over the grid), plane warp_m*WN+warp_n,
 * lane p / PER for element p = (row % 16)*16 + col % 16 of its 16x16 subtile. Both arms store by this
 * partition (the scalar arm from its register accumulators, the matrix arm after its spill).
 */
export function coopmatAnalyticOwnership(spec: CoopmatSpec): OwnershipMap {
  const { m, n } = spec;
  const g = coopmatGeometry(spec);
  const { wn, rm, rn } = spec.tile;
  const gridX = Math.ceil(n / g.bn);
  const map = emptyOwnership(m, n);
  for (let row = 0; row < m; row++) {
    for (let col = 0; col < n; col++) {
      const i = row * n + col;
      const sm = Math.floor((row % g.bm) / 16); // M-subtile within the block
      const sn = Math.floor((col % g.bn) / 16);
      const p = (row % 16) * 16 + (col % 16);
      map.count[i] = 1;
      map.workgroup[i] = Math.floor(row / g.bm) * gridX + Math.floor(col / g.bn);
      map.plane[i] = Math.floor(sm / rm) * wn + Math.floor(sn / rn);
      map.lane[i] = Math.floor(p / g.per);
    }
  }
  return map;
}
