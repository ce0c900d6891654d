// A WebGPU entry point whose adapters do not list some features: how the test builds (and the Node test
// of the app's worker client) play an adapter without subgroups, timestamps or shader-f16, as Firefox and
// Safari are today. Never used by a production build.

/** Every property of `target` through a proxy, with methods bound to the real object. */
const passThrough = (target: object, prop: string | symbol) => {
  const v: unknown = Reflect.get(target, prop, target);
  return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
};

/**
 * `gpu` with its adapters' `features` minus `hidden` (the device then cannot request them either).
 * @example const gpu = withoutFeatures(navigator.gpu, ['subgroups', 'timestamp-query']);
 */
export function withoutFeatures(gpu: GPU, hidden: readonly string[]): GPU {
  const requestAdapter = async (options?: GPURequestAdapterOptions) => {
    const adapter = await gpu.requestAdapter(options);
    if (!adapter) return null;
    const features = new Set([...adapter.features].filter((f) => !hidden.includes(f)));
    return new Proxy(adapter, {
      get: (target, prop) => (prop === 'features' ? features : passThrough(target, prop)),
    });
  };
  return new Proxy(gpu, {
    get: (target, prop) => (prop === 'requestAdapter' ? requestAdapter : passThrough(target, prop)),
  });
}
