// Small shapes per family for the app's end-to-end runs (e2e/ and the worker client's Dawn test).

/** Small shapes per family (by the families' param keys): each runs in a second or two on SwiftShader. */
export const SMALL: Record<string, Record<string, number>> = {
  'hello-wmma': {},
  'hello-mma': {},
  'mmq-q8-naive': { m: 32, n: 32, k: 64 },
  'mmq-q8-tiled': { m: 32, n: 64, k: 64 },
  'mmq-q4k-blk': { m: 32, n: 64, k: 256 },
  'mmq-q4k-rt': { m: 17, n: 50, k: 256 },
  'mmq-q4k-tile': { m: 20, n: 40, k: 256 },
  'moe-q4k-id': { tokens: 8, n: 64, k: 256, experts: 4, topk: 2 },
  'coopmat-f16': { m: 32, n: 32, k: 256 },
};
