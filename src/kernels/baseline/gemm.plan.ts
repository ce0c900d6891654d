// Host plan of the f32 baseline GEMM: validate before any dispatch, upload X and the dequantized W,
// size the grid, and the analytic ownership the instrumented run is compared with.
import { assertNoProblems } from '../family';
import type { AdapterCaps } from '../gpu/caps';
import { emptyOwnership, ownerBufferSpec, suffixedPass, type OwnershipMap } from '../gpu/instrument';
import { singlePassPlan, type BufferSpec, type KernelPlan } from '../gpu/plan';
import { buildGemmF32Kernel, gemmF32ShapeProblems, type GemmF32Tile } from './gemm.wgsl';

export const GEMM_OWNER_BUFFER = 'owner';

/** The `dims` uniform: [m, n, k, 0]. */
export function gemmF32Dims(m: number, n: number, k: number): Uint32Array {
  return new Uint32Array([m, n, k, 0]);
}

/**
 * Plan out[m, n] = X[m, k] @ W[n, k]^T in f32. Throws ShapeError (every problem listed) before any dispatch.
 * @example const r = await runPlan(device, gemmF32Plan({ x, w }, 64, 64, 128, GEMM_F32_SMALL_TILE, caps));
 */
export function gemmF32Plan(
  data: { x: Float32Array; w: Float32Array } | (() => { x: Float32Array; w: Float32Array }),
  m: number,
  n: number,
  k: number,
  tile: GemmF32Tile,
  caps: AdapterCaps,
  opts: { instrument?: boolean } = {},
): KernelPlan {
  const problems = gemmF32ShapeProblems(tile, m, n, k, caps.limits);
  const get = typeof data === 'function' ? data : () => data;
  if (typeof data !== 'function') {
    if (data.x.length !== m * k) problems.push(`x has ${data.x.length} values, [${m} x ${k}] needs ${m * k}`);
    if (data.w.length !== n * k) problems.push(`w has ${data.w.length} values, [${n} x ${k}] needs ${n * k}`);
  }
  assertNoProblems(problems);
  const kern = buildGemmF32Kernel(tile);
  const instrument = opts.instrument ?? false;
  const buffers: BufferSpec[] = [
    { name: 'x', kind: 'read-only-storage', size: m * k * 4, data: () => get().x },
    { name: 'w', kind: 'read-only-storage', size: n * k * 4, data: () => get().w, role: 'weight' },
    { name: 'out', kind: 'storage', size: m * n * 4 },
    { name: 'dims', kind: 'uniform', data: gemmF32Dims(m, n, k) },
  ];
  if (instrument) buffers.push(ownerBufferSpec(m * n, GEMM_OWNER_BUFFER));
  const label = `gemm-f32 ${tile.bm}x${tile.bn}x${tile.bk} t${tile.tm}x${tile.tn}`;
  const pass = suffixedPass(kern, kern.workgroups(m, n), label, {
    instrument,
    ownerBuffer: GEMM_OWNER_BUFFER,
  });
  return singlePassPlan(buffers, pass);
}

/**
 * Who stores each output: workgroup (col/BN) + (row/BM) * gridX, plane 0, lane = thread
 * (row%BM / TM) * (BN/TN) + (col%BN) / TN.
 */
export function gemmF32AnalyticOwnership(tile: GemmF32Tile, m: number, n: number): OwnershipMap {
  const map = emptyOwnership(m, n);
  const gridX = Math.ceil(n / tile.bn);
  const tx = tile.bn / tile.tn;
  for (let r = 0; r < m; r++) {
    for (let c = 0; c < n; c++) {
      const i = r * n + c;
      map.count[i] = 1;
      map.workgroup[i] = Math.floor(c / tile.bn) + Math.floor(r / tile.bm) * gridX;
      map.plane[i] = 0;
      map.lane[i] = Math.floor((r % tile.bm) / tile.tm) * tx + Math.floor((c % tile.bn) / tile.tn);
    }
  }
  return map;
}
