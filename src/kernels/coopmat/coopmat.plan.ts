// Host launch plan of the coopmat twin: activation x (f32), the split Q4_K weight (qs, scales, d, dmin)
// and out (f32); the split stagings add their pre-passes and the scratch they hand the GEMM. Inputs are
// built lazily (when the plan is prepared); the instrumented plan adds the owner debug buffer.
import { emptyOwnership, ownerBufferSpec, type OwnershipMap } from '../gpu/instrument';
import { kernelPass, type BufferSpec, type KernelPlan } from '../gpu/plan';
import type { CoopmatData } from './coopmat.oracle';
import { coopmatGeometry, stagingOf, streamGeometry, type CoopmatSpec } from './coopmat.params';
import { coopmatPrePasses } from './coopmat.split';
import { partSumsPass } from '../gpu/prepass';
import { buildCoopmatKernel } from './coopmat.wgsl';

export const COOPMAT_OWNER_BUFFER = 'owner';

/**
 * The input buffers of an [m, k] activation against an [n, k] Q4_K weight, sized without the data.
 * @example coopmatInputBuffers(64, 64, 256, () => coopmatData(64, 64, 256, 'reference', 0)).map((b) => b.name)
 */
export function coopmatInputBuffers(m: number, n: number, k: number, data: () => CoopmatData): BufferSpec[] {
  const nsb = (n * k) / 256;
  const ro = (name: string, size: number, get: () => ArrayBufferView, weight = true): BufferSpec => ({
    name,
    kind: 'read-only-storage',
    size,
    data: get,
    ...(weight ? { role: 'weight' as const } : {}),
  });
  return [
    ro('x', m * k * 4, () => data().x, false),
    ro('wqs', nsb * 128, () => data().w.qs),
    ro('wsc', nsb * 12, () => data().w.scales),
    ro('wd', nsb * 4, () => data().w.d),
    ro('wdm', nsb * 4, () => data().w.dmin),
  ];
}

/**
 * The launch plan of a coopmat tile: its pre-passes (split stagings), then the kernel the editor shows.
 * @example const r = await runPlan(device, coopmatPlan(spec, () => coopmatData(m, n, k, 'reference', 0)));
 */
export function coopmatPlan(
  spec: CoopmatSpec,
  data: () => CoopmatData,
  opts: { instrument?: boolean } = {},
): KernelPlan {
  const { m, n, k } = spec;
  const instrument = opts.instrument ?? false;
  const kc = buildCoopmatKernel(spec, { instrument });
  const buffers: BufferSpec[] = [
    ...coopmatInputBuffers(m, n, k, data),
    { name: 'out', kind: 'storage', size: m * n * 4 },
  ];
  // Split-K: the GEMM writes [ksplit, m, n] partial sums (the owner buffer covers them all; the map
  // shows part 0's), and a reduction pass adds them into out. The stream GEMM adds its parts itself.
  const ksplit = stagingOf(spec).stream ? 1 : (spec.ksplit ?? 1);
  if (ksplit > 1) buffers.push({ name: 'part', kind: 'storage', size: ksplit * m * n * 4 });
  if (instrument) buffers.push(ownerBufferSpec(ksplit * m * n, COOPMAT_OWNER_BUFFER));
  const { wm, wn, rm, rn } = spec.tile;
  const main = kernelPass(
    kc,
    kc.workgroups(m, n),
    `coopmat-f16 ${spec.arm} ${wm}x${wn}x${rm}x${rn}${ksplit > 1 ? ` split-K ${ksplit}` : ''}${stagingOf(spec).stream ? ` stream ${spec.ksplit ?? 1} parts` : ''}`,
  );
  const pre = spec.staging === 'one-pass' ? [] : coopmatPrePasses(spec);
  for (const [p] of pre)
    buffers.push(...p.writes.map((w) => ({ name: w.name, kind: 'storage' as const, size: w.bytes })));
  const reduce = ksplit > 1 ? partSumsPass(m * n, ksplit, 'coopmat-f16') : undefined;
  return {
    buffers,
    passes: [
      ...pre.map(([p, what]) => kernelPass({ ...p, workgroupBytes: 0 }, p.grid, `coopmat-f16 ${what}`)),
      main,
      ...(reduce
        ? [kernelPass({ ...reduce, workgroupBytes: 0 }, reduce.grid, 'coopmat-f16 split-K sum')]
        : []),
    ],
    output: 'out',
    outputType: 'f32',
    mainPass: pre.length,
  };
}

/**
 * Who stores output (row, col) of a coopmat tile: workgroup (row-major over the grid), plane
 * warp_m*WN+warp_n, lane p / PER for element p = (row % 16)*16 + col % 16 of its 16x16 subtile. Both arms
 * store by this partition (the scalar arm from its register accumulators, the matrix arm after its spill).
 */
export function coopmatOwner(spec: CoopmatSpec, row: number, col: number) {
  if (stagingOf(spec).stream) {
    // The stream GEMM stores from its part-sum loop: element e of the tile by invocation e % NT.
    const s = streamGeometry(spec);
    const flat = (((row % s.bm) * s.bn + (col % s.bn)) % s.threads) | 0;
    return {
      workgroup: Math.floor(row / s.bm) * Math.ceil(spec.n / s.bn) + Math.floor(col / s.bn),
      plane: Math.floor(flat / spec.plane),
      lane: flat % spec.plane,
    };
  }
  const g = coopmatGeometry(spec);
  const { wn, rm, rn } = spec.tile;
  const sm = Math.floor((row % g.bm) / 16); // M-subtile within the block
  const sn = Math.floor((col % g.bn) / 16);
  return {
    workgroup: Math.floor(row / g.bm) * Math.ceil(spec.n / g.bn) + Math.floor(col / g.bn),
    plane: Math.floor(sm / rm) * wn + Math.floor(sn / rn),
    lane: Math.floor(((row % 16) * 16 + (col % 16)) / g.per),
  };
}

/** coopmatOwner of every output element of a tile's m x n (split-K: part 0's workgroups). */
export function coopmatAnalyticOwnership(spec: CoopmatSpec): OwnershipMap {
  const map = emptyOwnership(spec.m, spec.n);
  for (let row = 0; row < spec.m; row++) {
    for (let col = 0; col < spec.n; col++) {
      const i = row * spec.n + col;
      const o = coopmatOwner(spec, row, col);
      map.count[i] = 1;
      map.workgroup[i] = o.workgroup;
      map.plane[i] = o.plane;
      map.lane[i] = o.lane;
    }
  }
  return map;
}
