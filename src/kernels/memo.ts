// Memoization the families share: a thunk computed once, and a one-entry dataset memo.

/**
 * Memoize a thunk (data conversions and oracles are costly and called by several consumers).
 * @example const oracle = once(() => mmqQ4kRef(data, m, n, k));
 */
export function once<T>(fn: () => T): () => T {
  let v: T | undefined;
  let done = false;
  return () => {
    if (!done) {
      v = fn();
      done = true;
    }
    return v as T;
  };
}

/**
 * A dataset memo of one entry: the tuner builds every config of a hunt on the same data, and the app's
 * plain and instrumented plans share it, so a family generates its data once per problem.
 * @example const ds = memo.get(JSON.stringify([m, n, k, config.data]), () => mmqDataset(...));
 */
export class DatasetMemo<T> {
  private key: string | undefined;
  private value: T | undefined;
  get(key: string, make: () => T): T {
    if (this.key !== key || this.value === undefined) {
      this.value = make();
      this.key = key;
    }
    return this.value;
  }
}
