// What a config moves and computes, declared by each family's catalog (FamilyCatalog.work) so generic
// code (the app's run estimates) reads it instead of guessing from knob names. Light: the main thread
// imports it.

/** A config's multiply-adds, and the bytes it reads or writes once (weights, activation, output). */
export interface Work {
  macs: number;
  bytes: number;
}

/** Bytes per weight element of each quant format (Q4_K: 144 bytes a 256-block; Q8_0: 34 a 32-block). */
export const WEIGHT_BYTES = { Q4_K: 144 / 256, Q8_0: 34 / 32 } as const;

/**
 * The work of a GEMM over `rows` activation rows (x `topk` slots each for a routed GEMM) and a weight
 * bank of `experts` [n, k] matrices, every expert read once; f32 output.
 * @example gemmWork({ rows: 16, n: 4096, k: 4096, weightBytes: WEIGHT_BYTES.Q4_K, activationBytes: 1 }).macs === 16 * 4096 * 4096
 */
export function gemmWork(g: {
  rows: number;
  n: number;
  k: number;
  weightBytes: number;
  activationBytes: number;
  experts?: number;
  topk?: number;
}): Work {
  const { rows, n, k, experts = 1, topk = 1 } = g;
  return {
    macs: rows * topk * n * k,
    bytes: n * k * experts * g.weightBytes + rows * k * g.activationBytes + rows * topk * n * 4,
  };
}

/** A positive number param, else `fallback` (a half-typed field must not make the work NaN). */
export const workParam = (
  params: Readonly<Record<string, unknown>>,
  key: string,
  fallback: number,
): number => {
  const v = params[key];
  return typeof v === 'number' && v > 0 ? v : fallback;
};

/**
 * A dense family's `work`: `m` rows against one [n, k] weight of `format`, K defaulting to one block.
 * @example denseGemmWork('Q4_K', 1, 256)({ m: 2, n: 8, k: 512 }).macs === 2 * 8 * 512
 */
export const denseGemmWork =
  (format: keyof typeof WEIGHT_BYTES, activationBytes: number, block: number) =>
  (params: Readonly<Record<string, unknown>>): Work =>
    gemmWork({
      rows: workParam(params, 'm', 1),
      n: workParam(params, 'n', 1),
      k: workParam(params, 'k', block),
      weightBytes: WEIGHT_BYTES[format],
      activationBytes,
    });
