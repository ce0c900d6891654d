// What identifies a tuning problem: the family's params a search does not set (its shape and routing;
// the tile, staging and arm are what it searches) and the data. Stored runs and cached winners are keyed
// by it, per device and op.
import type { FamilyCatalog, RunConfig } from '../family';

/**
 * The key of a hunt's problem, e.g. "m=64,n=64,k=256" (",data=random#3" when not the reference data).
 * @example tuneProblemKey(catalog, config) === 'm=2048,n=4096,k=4096'
 */
export function tuneProblemKey(
  catalog: Pick<FamilyCatalog, 'controls'>,
  config: Pick<RunConfig, 'params' | 'data'>,
): string {
  const shape = catalog.controls
    .filter((c) => c.group !== 'tile')
    .map((c) => `${c.key}=${String(config.params[c.key])}`);
  const { source, seed, tensor } = config.data;
  if (source !== 'reference' || seed !== 0) shape.push(`data=${source}#${seed}`);
  // A real tensor: its file (by header hash) and name, and the activation it multiplies.
  if (source === 'tensor' && tensor)
    shape.push(`tensor=${tensor.file.headerHash}/${tensor.tensor}/${tensor.activation}`);
  return shape.join(',');
}

/** Multiply-adds the CPU oracle may spend (~1-2 s of JS): above it the search's gate samples rows. */
export const ORACLE_MAC_BUDGET = 2 ** 28;

/**
 * The output rows a sampled gate checks for a rows x cols output of `macs` multiply-adds: all of them
 * when the oracle fits the budget, else about budget/(macs/rows) rows (at least 18) spread over the
 * output, stepping through every position within a 16-row subtile (so every lane row of a fragment is
 * checked somewhere), always including row 0 and the last row (tails).
 * @example gateRows(16, 16 * 16 * 256) // undefined: every row
 */
export function gateRows(rows: number, macs: number, budget = ORACLE_MAC_BUDGET): number[] | undefined {
  if (macs <= budget) return undefined;
  const perRow = macs / rows;
  // At least 16 + 2 rows so the i % 16 walk reaches every subtile row besides rows 0 and m-1.
  const count = Math.min(rows, Math.max(18, Math.floor(budget / perRow)));
  const picked = new Set<number>([0, rows - 1]);
  for (let i = 0; picked.size < count && i < rows; i++) {
    const base = Math.floor((i * rows) / count);
    picked.add(Math.min(rows - 1, base - (base % 16) + (i % 16)));
  }
  return [...picked].sort((a, b) => a - b);
}
