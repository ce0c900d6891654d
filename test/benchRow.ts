// Bench rows for the peer-ratio tests (bench/peers.ts, bench/llama.ts): the dense 2048x4096x4096 Q4_K
// case, correct unless a test says otherwise.
import type { BenchRow } from '../bench/result';

export const PASS = { pass: true, relToMax: 1e-6, samples: 100, allWritten: true, tol: 1e-3 };

/** A row `id` (family/arm/tile: its arm is the id's second part) of `family` in `role`, timed at `ms`. */
export function benchRow<R extends BenchRow = BenchRow>(
  id: string,
  family: string,
  role: string,
  ms: number,
  extra: Partial<R> = {},
): R {
  const row: BenchRow = {
    id,
    family,
    weights: 'q4k',
    arm: id.split('/')[1] ?? 'x',
    role,
    tile: '-',
    m: 2048,
    n: 4096,
    k: 4096,
    ms,
    correctness: PASS,
  };
  return { ...row, ...extra } as R;
}
