// Bounded submissions: WebGPU cannot take back work once it is submitted, so a cancelled run of a long
// pass would keep the GPU busy for minutes. The runner therefore never submits more than a bounded slice
// of a long pass: a GEMM reads its place in the grid from a small uniform the runner sets per slice
// (`grid_slice`: the slice's first workgroup and the whole grid), dispatches a box of the grid, waits for
// it and checks the cancel before the next. A whole dispatch sees base 0 and its own grid, so the same
// text serves single runs, timed batches and slices. Pure: the WGSL pieces and the slicing arithmetic.
import type { BindingTable, UniformEntry } from './bindings';

/** The name a pass lists in its bindings for the runner's slice uniform (not a plan buffer). */
export const GRID_SLICE_BINDING = 'grid_slice';

/** Bytes of the slice uniform: `base` and `grid`, each a vec3u padded to 16 bytes. */
export const GRID_SLICE_BYTES = 32;

export type Grid = readonly [number, number, number];

/** The uniform's struct. */
export const GRID_SLICE_STRUCT =
  "struct GridSlice { base: vec3u, grid: vec3u } // a slice's first workgroup, and the whole grid";
/** What the uniform is for, as its declaration's comment says. */
export const GRID_SLICE_COMMENT = 'set by the host, which may run the grid in slices';

/**
 * The slice uniform as the last entry of a kernel's binding table (gpu/bindings.ts): the runner provides
 * its buffer, not the plan. `struct: false` where the module declares GridSlice with its other types.
 * @example const table = { ...own, [GRID_SLICE_BINDING]: gridSliceEntry() };
 */
export const gridSliceEntry = (opts: { struct?: boolean } = {}): UniformEntry => ({
  uniform: 'GridSlice',
  comment: GRID_SLICE_COMMENT,
  ...((opts.struct ?? true) ? { before: GRID_SLICE_STRUCT } : {}),
});

/**
 * A table with the slice uniform bound after its own entries.
 * @example bindingNames(withGridSlice({ out: readWrite('array<f32>') })) // ['out', 'grid_slice']
 */
export const withGridSlice = <T extends BindingTable>(
  table: T,
  opts: { struct?: boolean } = {},
): T & Record<typeof GRID_SLICE_BINDING, UniformEntry> => ({
  ...table,
  [GRID_SLICE_BINDING]: gridSliceEntry(opts),
});

/** The entry point's workgroup-id parameter: the id within the slice dispatched. */
export const GRID_SLICE_PARAM = '@builtin(workgroup_id) slice_wg: vec3u';

/**
 * The first lines of an entry point that reads its place in the whole grid as `wg` and the grid's size
 * as `nwg` (what `workgroup_id` and `num_workgroups` are for a whole dispatch).
 * @example gridSliceLets('wid', 'nwg') // ['let wid = slice_wg + grid_slice.base; ...', 'let nwg = grid_slice.grid; ...']
 */
export const gridSliceLets = (wg: string, nwg: string): string[] => [
  `let ${wg} = slice_wg + ${GRID_SLICE_BINDING}.base; // this workgroup in the whole grid`,
  `let ${nwg} = ${GRID_SLICE_BINDING}.grid; // the whole grid (a slice's own is smaller)`,
];

/** The uniform's contents for a slice at `base` of `grid`. */
export function gridSliceData(base: Grid, grid: Grid): Uint32Array<ArrayBuffer> {
  return new Uint32Array([base[0], base[1], base[2], 0, grid[0], grid[1], grid[2], 0]);
}

/** One slice: a box of the grid, dispatched as `size` workgroups with `base` added to their ids. */
export interface GridBox {
  base: [number, number, number];
  size: [number, number, number];
  /** Workgroups in the box. */
  count: number;
}

/**
 * The next box of `grid` from workgroup `done` (counted x fastest, then y, then z) holding at most
 * `want` workgroups (at least one): whole z-slabs when `want` covers one and `done` is at a slab's
 * start, else whole rows of x, else part of a row. Boxes taken in turn cover the grid exactly once.
 * @example nextGridBox([4, 4, 1], 0, 9) // { base: [0, 0, 0], size: [4, 2, 1], count: 8 }
 */
export function nextGridBox(grid: Grid, done: number, want: number): GridBox {
  const [X, Y, Z] = grid;
  const total = X * Y * Z;
  if (!(done >= 0 && done < total)) throw new RangeError(`workgroup ${done} is outside a grid of ${total}`);
  const n = Math.max(1, Math.floor(want));
  const x = done % X;
  const y = Math.floor(done / X) % Y;
  const z = Math.floor(done / (X * Y));
  if (x === 0 && y === 0 && n >= X * Y) {
    const dz = Math.min(Z - z, Math.floor(n / (X * Y)));
    return { base: [0, 0, z], size: [X, Y, dz], count: X * Y * dz };
  }
  if (x === 0 && n >= X) {
    const dy = Math.min(Y - y, Math.floor(n / X));
    return { base: [0, y, z], size: [X, dy, 1], count: X * dy };
  }
  const dx = Math.min(X - x, n);
  return { base: [x, y, z], size: [dx, 1, 1], count: dx };
}

/** What one submission may take on the GPU, ms: a cancel waits at most about this long. */
export const SUBMIT_BUDGET_MS = 250;

/**
 * How many workgroups the next slice takes, from the last one's `count` and wall `ms`: as many as fit the
 * budget at that pace (at most 16x more, so a fast first slice does not jump past the budget on a GPU
 * whose cost per workgroup grows once it fills); after a slice within the budget at least one more than
 * it (a slice's cost does not grow with its count until every core has work), after one past it fewer.
 * @example nextSliceCount(1, 0.05, 250) // 16
 */
export function nextSliceCount(count: number, ms: number, budgetMs = SUBMIT_BUDGET_MS): number {
  const fit = ms > 0 ? Math.floor((count * budgetMs) / ms) : Infinity;
  if (ms > budgetMs) return Math.max(1, fit);
  return Math.max(count + 1, Math.min(16 * count, fit));
}

/**
 * The first slice's workgroups: what `estimateMs` (the whole pass) says fits a quarter of the budget,
 * else a single workgroup.
 * @example firstSliceCount(1024, 180_000) // 1
 */
export function firstSliceCount(total: number, estimateMs?: number, budgetMs = SUBMIT_BUDGET_MS): number {
  if (estimateMs === undefined || !(estimateMs > 0)) return 1;
  return Math.max(1, Math.min(total, Math.floor((total * budgetMs) / 4 / estimateMs)));
}
