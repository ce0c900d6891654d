// Sampled output elements, for the peers the bench times beside its own rows (ONNX Runtime), whose
// outputs are checked at a fixed sample -- the four corners, the first/last rows and columns around
// each tile edge, and random interior points -- since their full CPU reference at prefill shapes is
// minutes of JS. (The bench's own rows are gated on sampled rows by the runner's problem session.)
import { fastWords } from '../src/kernels/quant/synthetic';

/**
 * Flat output indices to check for a rows x cols output: corners, edges of 16/32/64/128-wide tiles near
 * both ends, and `random` uniformly drawn interior points (deterministic).
 * @example sampleIndices(2048, 4096, 128).length // ~ 200 distinct indices
 */
export function sampleIndices(rows: number, cols: number, random = 128): Uint32Array {
  const pick = (size: number) => {
    const s = new Set<number>([0, 1, size - 1, size - 2, Math.floor(size / 2)]);
    for (const t of [15, 16, 31, 32, 63, 64, 127, 128]) {
      if (t < size) s.add(t);
      if (size - 1 - t >= 0) s.add(size - 1 - t);
    }
    return [...s].filter((v) => v >= 0 && v < size);
  };
  const rs = pick(rows);
  const cs = pick(cols);
  const out = new Set<number>();
  for (const r of rs.slice(0, 8)) for (const c of cs) out.add(r * cols + c);
  for (const c of cs.slice(0, 8)) for (const r of rs) out.add(r * cols + c);
  const w = fastWords(2 * random, rows * 31 + cols);
  for (let i = 0; i < random; i++) out.add((w[2 * i]! % rows) * cols + (w[2 * i + 1]! % cols));
  return Uint32Array.from([...out].sort((a, b) => a - b));
}
