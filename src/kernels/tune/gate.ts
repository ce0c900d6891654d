// Which output rows a search's gate checks against the CPU oracle: all of them while the oracle's work
// fits its budget, else a sample that still reaches every row of a 16-row subtile and the tails.
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
