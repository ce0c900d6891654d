// Host launch plans for the MMQ kernels (the reference's *_run functions as data): check the shape
// against the spec, lay out the split-layout inputs (built lazily, when the plan is prepared), size the
// grid, and compute the analytic output ownership the instrumented run is compared against. Adapter
// limits are checked from the plan (gpu/plan.ts planLimitProblems).
import { assertNoProblems, positiveIntegerProblems, ShapeError } from '../family';
import { emptyOwnership, ownerBufferSpec, suffixedPass, type OwnershipMap } from '../gpu/instrument';
import { singlePassPlan, type BufferSpec, type KernelPlan, type PassSpec } from '../gpu/plan';
import { once } from '../memo';
import { packI8 } from '../quant/q8';
import type { MmqInputs } from './mmq.data';
import { microGeometry } from './mmq.microtile';
import { buildMmqKernel, mmqGeometry, mmqSpecProblems, type MmqKernel, type MmqSpec } from './mmq.wgsl';

/** Name of the ownership debug buffer in instrumented plans. */
export const OWNER_BUFFER = 'owner';

/**
 * Why an (m rows x n cols x k) problem does not fit `spec`: k multiple of the block (32 for Q8_0, the
 * 256 super-block for Q4_K), tile multiples for kernels without tail guards, static dims equal to the
 * data. Empty = fine.
 * @example mmqShapeProblems(q4kBlkSpec, 17, 64, 256) // ['m = 17 is not a multiple of BM 32 (this kernel has no tail guards)']
 */
export function mmqShapeProblems(spec: MmqSpec, m: number, n: number, k: number): string[] {
  const p = positiveIntegerProblems({ m, n, k });
  if (p.length) return p;
  const blockK = spec.weights === 'q8_0' ? 32 : 256;
  if (k % blockK !== 0) {
    p.push(
      `k = ${k} is not a multiple of ${blockK} (${spec.weights === 'q8_0' ? 'the Q8_0 32-block' : 'the Q4_K 256 super-block'})`,
    );
  }
  if (spec.schedule === 'microtile' && k % 64 !== 0)
    p.push(`k = ${k} is not a multiple of 64 (the micro-tile schedule stages K 64 at a time)`);
  if (spec.dims.kind === 'static') {
    const d = spec.dims;
    if (d.m !== m || d.n !== n || d.k !== k) {
      p.push(`static kernel was generated for ${d.m}x${d.n}x${d.k}, not ${m}x${n}x${k}`);
    }
  }
  if (256 % spec.plane !== 0) return p;
  const g = mmqGeometry(spec);
  if (!spec.tails) {
    if (m % g.bm !== 0) p.push(`m = ${m} is not a multiple of BM ${g.bm} (this kernel has no tail guards)`);
    if (n % g.bn !== 0) p.push(`n = ${n} is not a multiple of BN ${g.bn} (this kernel has no tail guards)`);
  }
  return p;
}

/** The `dims` uniform: [m, n, k, cap]. */
export function mmqDimsData(m: number, n: number, k: number, cap = 0): Uint32Array {
  return new Uint32Array([m, n, k, cap]);
}

/**
 * Two equal-length f32 arrays as one vec2f array [a0, b0, a1, b1, ...]: the GPU layout of values a
 * kernel reads together, so they cost one storage binding (WebGPU's default limit is 8 per stage).
 * @example interleaveF32(new Float32Array([1, 2]), new Float32Array([3, 4])) // [1, 3, 2, 4]
 */
export function interleaveF32(a: Float32Array, b: Float32Array): Float32Array {
  if (a.length !== b.length) throw new RangeError(`interleave: lengths ${a.length} and ${b.length} differ`);
  const out = new Float32Array(a.length * 2);
  for (let i = 0; i < a.length; i++) {
    out[2 * i] = a[i]!;
    out[2 * i + 1] = b[i]!;
  }
  return out;
}

/**
 * The input buffers of a [rows x k] activation against a [wrows x k] weight, named as the kernel binds
 * them (int8 packed 4 per u32; Q4_K pairs interleaved: xs|xsum, d|dmin), sized without the data, which
 * `inputs()` builds when the plan is prepared. The weight's buffers rotate as cold banks in timings.
 * @example mmqInputBuffers('q4k', m, n, k, () => ds.inputs).map((b) => b.name) // ['xq', 'xs_xsum', 'wqs', 'wsc', 'wd_dmin']
 */
export function mmqInputBuffers(
  weights: MmqInputs['weights'],
  rows: number,
  wrows: number,
  k: number,
  inputs: () => MmqInputs,
): BufferSpec[] {
  const blocks = k / 32;
  const ro = (name: string, size: number, data: () => ArrayBufferView, weight = false): BufferSpec => ({
    name,
    kind: 'read-only-storage',
    size,
    data: once(data),
    ...(weight ? { role: 'weight' as const } : {}),
  });
  const x = ro('xq', rows * k, () => packI8(inputs().data.xq));
  if (weights === 'q8_0') {
    const q8 = () => {
      const i = inputs();
      if (i.weights !== 'q8_0') throw new ShapeError('expected Q8_0 inputs');
      return i.data;
    };
    return [
      x,
      ro('xs', rows * blocks * 4, () => q8().xs),
      ro('wq', wrows * k, () => packI8(q8().wq), true),
      ro('wd', wrows * blocks * 4, () => q8().wd, true),
    ];
  }
  const q4 = () => {
    const i = inputs();
    if (i.weights !== 'q4k') throw new ShapeError('expected Q4_K inputs');
    return i.data;
  };
  const sb = wrows * (k / 256);
  return [
    x,
    ro('xs_xsum', rows * blocks * 8, () => interleaveF32(q4().xs, q4().xsum)),
    ro('wqs', sb * 128, () => q4().w.qs, true),
    ro('wsc', sb * 12, () => q4().w.scales, true),
    ro('wd_dmin', sb * 8, () => interleaveF32(q4().w.d, q4().w.dmin), true),
  ];
}

/** The main pass of a kernel: text + the ownership suffix (plain or recording). */
export function mmqPass(
  kern: MmqKernel,
  workgroups: readonly [number, number, number],
  instrument: boolean,
  label: string,
): PassSpec {
  return suffixedPass(kern, workgroups, label, { instrument, ownerBuffer: OWNER_BUFFER });
}

export interface MmqPlanOptions {
  /** Add the owner debug buffer and the recording suffix. */
  instrument?: boolean;
  /** Pass label (defaults to the spec's weights). */
  label?: string;
}

/**
 * Plan one non-indexed MMQ problem out[m, n] = X[m, k] @ W[n, k]^T (inputs given, or built lazily).
 * Throws ShapeError before any dispatch when the shape does not fit the spec.
 * @example const r = await runPlan(device, buildMmqPlan(ds.inputs, 32, 64, 256, spec)); new Float32Array(r.output)
 */
export function buildMmqPlan(
  inputs: MmqInputs | (() => MmqInputs),
  m: number,
  n: number,
  k: number,
  spec: MmqSpec,
  opts: MmqPlanOptions = {},
): KernelPlan {
  if (spec.indexed)
    throw new ShapeError('buildMmqPlan plans dense problems; plan an indexed spec with the MoE family');
  assertNoProblems([...mmqSpecProblems(spec), ...mmqShapeProblems(spec, m, n, k)]);
  const kern = buildMmqKernel(spec);
  const buffers: BufferSpec[] = [
    ...mmqInputBuffers(spec.weights, m, n, k, typeof inputs === 'function' ? inputs : () => inputs),
    { name: 'out', kind: 'storage', size: m * n * 4 },
  ];
  if (spec.dims.kind === 'runtime')
    buffers.push({ name: 'dims', kind: 'uniform', data: mmqDimsData(m, n, k) });
  const instrument = opts.instrument ?? false;
  if (instrument) buffers.push(ownerBufferSpec(m * n, OWNER_BUFFER));
  return singlePassPlan(
    buffers,
    mmqPass(kern, kern.workgroups(m, n), instrument, opts.label ?? `mmq ${spec.weights}`),
  );
}

/**
 * The owner (plane, lane) of tile-local element (gmm, gnn): subtile (gmm/16, gnn/16) belongs to warp-grid
 * cell (sm/rm, sn/rn); within it p = (gmm%16)*16 + gnn%16 is lane p/PER's element p%PER (the seed's
 * schedule), or the micro-tile lane of its row and column.
 */
export function mmqTileOwner(spec: MmqSpec, gmm: number, gnn: number): { plane: number; lane: number } {
  const { rm, rn, wn } = spec.tile;
  const sm = Math.floor(gmm / 16);
  const sn = Math.floor(gnn / 16);
  const plane = Math.floor(sm / rm) * wn + Math.floor(sn / rn);
  const micro = spec.schedule === 'microtile' ? microGeometry(spec) : undefined;
  if (micro) {
    // A micro-tile lane (lr, lc) owns rows lr + LR*i and columns lc + LC*j of its warp tile.
    const r = gmm % (rm * 16);
    const c = gnn % (rn * 16);
    return { plane, lane: (r % micro.lr) * micro.lc + (c % micro.lc) };
  }
  const per = 256 / spec.plane;
  const p = (gmm % 16) * 16 + (gnn % 16);
  return { plane, lane: Math.floor(p / per) };
}

/**
 * Analytic ownership of a dense m x n output: each element stored once, by workgroup
 * (x = col/BN, y = row/BM) linearised x + y*nx, and the plane/lane of mmqTileOwner. This holds for the
 * scalar epilogue, the register accumulator and the final store alike (one owner mapping throughout).
 */
export function mmqAnalyticOwnership(spec: MmqSpec, m: number, n: number): OwnershipMap {
  const g = mmqGeometry(spec);
  const nx = Math.ceil(n / g.bn);
  const map = emptyOwnership(m, n);
  for (let r = 0; r < m; r++) {
    for (let c = 0; c < n; c++) {
      const i = r * n + c;
      const o = mmqTileOwner(spec, r % g.bm, c % g.bn);
      map.count[i] = 1;
      map.workgroup[i] = Math.floor(c / g.bn) + Math.floor(r / g.bm) * nx;
      map.plane[i] = o.plane;
      map.lane[i] = o.lane;
    }
  }
  return map;
}
