// A GPUDevice that runs on the CPU, for Node tests of the code around the GPU (the runner, the tuner's
// evaluator, the worker's tune handler) without Dawn: buffers are ArrayBuffers, a dispatch calls the
// shader's JavaScript twin (given by the test), and the GPU clock is virtual -- each dispatch advances it
// by what the test says the shader costs, so timestamp timings are exact and a search over them is
// deterministic. Only what the runner and the timing use is here. StrykerJS runs tests that use it (it
// opens no Dawn device; vitest.stryker.config.ts leaves out only the files that do).

/**
 * The WebGPU flag namespaces the runner names, with the spec's values, where no WebGPU implementation
 * defined them (Node without Dawn).
 */
export function defineGpuFlags(): void {
  const g = globalThis as Record<string, unknown>;
  g.GPUBufferUsage ??= {
    MAP_READ: 1,
    MAP_WRITE: 2,
    COPY_SRC: 4,
    COPY_DST: 8,
    INDEX: 16,
    VERTEX: 32,
    UNIFORM: 64,
    STORAGE: 128,
    INDIRECT: 256,
    QUERY_RESOLVE: 512,
  };
  g.GPUMapMode ??= { READ: 1, WRITE: 2 };
}

/** The JavaScript twin of a shader: reads and writes the bound buffers (by binding index). */
export type CpuKernel = (bindings: ReadonlyMap<number, ArrayBuffer>, workgroups: readonly number[]) => void;

export interface CpuDeviceOptions {
  /** The twin of a shader's code and entry point; undefined: the dispatch writes nothing. */
  kernel?: (code: string, entryPoint: string) => CpuKernel | undefined;
  /** GPU ns a dispatch of `code` takes on the virtual clock (default 1000). */
  dispatchNs?: (code: string, workgroups: readonly number[]) => number;
  /** Compilation messages of a shader (default none: it compiles). */
  compile?: (code: string) => GPUCompilationMessage[];
  /** Offer timestamp queries (default true); without them the timing uses the wall clock. */
  timestamps?: boolean;
}

/** What a test can ask the device afterwards. */
export interface CpuDeviceLog {
  /** Dispatches run, by shader code. */
  dispatches: Map<string, number>;
  /** Buffers created and not destroyed. */
  liveBuffers(): number;
  /** The virtual GPU clock, ns. */
  clockNs(): bigint;
}

class CpuBuffer {
  data: ArrayBuffer;
  destroyed = false;
  constructor(
    readonly size: number,
    readonly usage: number,
    readonly label: string,
  ) {
    this.data = new ArrayBuffer(size);
  }
  getMappedRange(offset = 0, size = this.size - offset): ArrayBuffer {
    return offset === 0 && size === this.size ? this.data : this.data.slice(offset, offset + size);
  }
  unmap() {}
  mapAsync(): Promise<void> {
    return Promise.resolve();
  }
  destroy() {
    this.destroyed = true;
  }
}

type Command =
  | { kind: 'copy'; src: CpuBuffer; srcOffset: number; dst: CpuBuffer; dstOffset: number; size: number }
  | { kind: 'clear'; buffer: CpuBuffer }
  | { kind: 'resolve'; querySet: CpuQuerySet; first: number; count: number; dst: CpuBuffer; offset: number }
  | { kind: 'timestamp'; querySet: CpuQuerySet; index: number }
  | { kind: 'dispatch'; code: string; entryPoint: string; bindings: Map<number, CpuBuffer>; xyz: number[] };

class CpuQuerySet {
  readonly values: bigint[];
  constructor(readonly count: number) {
    this.values = new Array<bigint>(count).fill(0n);
  }
  destroy() {}
}

interface CpuPipeline {
  code: string;
  entryPoint: string;
  getBindGroupLayout(): object;
}

/**
 * A GPUDevice on the CPU (see the header), and its log.
 * @example const { device } = cpuDevice({ kernel: () => (b) => new Int32Array(b.get(2)!).fill(1) });
 */
export function cpuDevice(opts: CpuDeviceOptions = {}): { device: GPUDevice; log: CpuDeviceLog } {
  defineGpuFlags();
  let clock = 1_000_000n;
  const buffers: CpuBuffer[] = [];
  const dispatches = new Map<string, number>();
  let loseDevice: (info: { reason: string; message: string }) => void = () => {};
  const lost = new Promise<{ reason: string; message: string }>((resolve) => (loseDevice = resolve));
  const run = (cmds: readonly Command[]) => {
    for (const c of cmds)
      if (c.kind === 'copy')
        new Uint8Array(c.dst.data, c.dstOffset, c.size).set(new Uint8Array(c.src.data, c.srcOffset, c.size));
      else if (c.kind === 'clear') new Uint8Array(c.buffer.data).fill(0);
      else if (c.kind === 'timestamp') c.querySet.values[c.index] = clock;
      else if (c.kind === 'resolve')
        new BigUint64Array(c.dst.data, c.offset, c.count).set(
          c.querySet.values.slice(c.first, c.first + c.count),
        );
      else {
        const data = new Map([...c.bindings].map(([i, b]) => [i, b.data] as const));
        opts.kernel?.(c.code, c.entryPoint)?.(data, c.xyz);
        dispatches.set(c.code, (dispatches.get(c.code) ?? 0) + 1);
        clock += BigInt(Math.round(opts.dispatchNs?.(c.code, c.xyz) ?? 1000));
      }
  };
  const encoder = () => {
    const cmds: Command[] = [];
    return {
      copyBufferToBuffer(src: CpuBuffer, srcOffset: number, dst: CpuBuffer, dstOffset: number, size: number) {
        cmds.push({ kind: 'copy', src, srcOffset, dst, dstOffset, size });
      },
      clearBuffer(buffer: CpuBuffer) {
        cmds.push({ kind: 'clear', buffer });
      },
      resolveQuerySet(querySet: CpuQuerySet, first: number, count: number, dst: CpuBuffer, offset: number) {
        cmds.push({ kind: 'resolve', querySet, first, count, dst, offset });
      },
      beginComputePass(desc: { timestampWrites?: GPUComputePassTimestampWrites } = {}) {
        const ts = desc.timestampWrites as
          | { querySet: CpuQuerySet; beginningOfPassWriteIndex?: number; endOfPassWriteIndex?: number }
          | undefined;
        if (ts?.beginningOfPassWriteIndex !== undefined)
          cmds.push({ kind: 'timestamp', querySet: ts.querySet, index: ts.beginningOfPassWriteIndex });
        let pipeline: CpuPipeline | undefined;
        let group: Map<number, CpuBuffer> | undefined;
        return {
          setPipeline(p: CpuPipeline) {
            pipeline = p;
          },
          setBindGroup(_index: number, g: { bindings: Map<number, CpuBuffer> }) {
            group = g.bindings;
          },
          dispatchWorkgroups(x: number, y = 1, z = 1) {
            cmds.push({
              kind: 'dispatch',
              code: pipeline!.code,
              entryPoint: pipeline!.entryPoint,
              bindings: group!,
              xyz: [x, y, z],
            });
          },
          end() {
            if (ts?.endOfPassWriteIndex !== undefined)
              cmds.push({ kind: 'timestamp', querySet: ts.querySet, index: ts.endOfPassWriteIndex });
          },
        };
      },
      finish: () => ({ cmds }),
    };
  };
  const device = {
    features: new Set(opts.timestamps === false ? [] : ['timestamp-query']),
    createBuffer(d: { size: number; usage: number; label?: string }) {
      const b = new CpuBuffer(d.size, d.usage, d.label ?? '');
      buffers.push(b);
      return b;
    },
    createQuerySet: (d: { count: number }) => new CpuQuerySet(d.count),
    createCommandEncoder: encoder,
    createShaderModule: (d: { code: string }) => ({
      code: d.code,
      getCompilationInfo: () => Promise.resolve({ messages: opts.compile?.(d.code) ?? [] }),
    }),
    createComputePipelineAsync: (d: { compute: { module: { code: string }; entryPoint: string } }) =>
      Promise.resolve<CpuPipeline>({
        code: d.compute.module.code,
        entryPoint: d.compute.entryPoint,
        getBindGroupLayout: () => ({}),
      }),
    createBindGroup: (d: { entries: { binding: number; resource: { buffer: CpuBuffer } }[] }) => ({
      bindings: new Map(d.entries.map((e) => [e.binding, e.resource.buffer])),
    }),
    pushErrorScope() {},
    popErrorScope: () => Promise.resolve(null),
    queue: {
      submit(list: { cmds: Command[] }[]) {
        for (const c of list) run(c.cmds);
      },
      onSubmittedWorkDone: () => Promise.resolve(),
      writeBuffer(b: CpuBuffer, offset: number, src: ArrayBufferView | ArrayBuffer, from = 0, size?: number) {
        const view = ArrayBuffer.isView(src) ? src : new Uint8Array(src);
        const per = 'BYTES_PER_ELEMENT' in view ? (view.BYTES_PER_ELEMENT as number) : 1;
        const bytes = new Uint8Array(
          view.buffer,
          view.byteOffset + from * per,
          (size ?? view.byteLength / per - from) * per,
        );
        new Uint8Array(b.data, offset, bytes.byteLength).set(bytes);
      },
    },
    lost,
    destroy() {
      loseDevice({ reason: 'destroyed', message: 'the device was destroyed' });
    },
  };
  return {
    device: device as unknown as GPUDevice,
    log: {
      dispatches,
      liveBuffers: () => buffers.filter((b) => !b.destroyed).length,
      clockNs: () => clock,
    },
  };
}

/** What a CPU adapter reports: SwiftShader's limits, a CPU's description, timestamps as asked. */
export interface CpuAdapterOptions extends CpuDeviceOptions {
  /** The adapter's info (vendor, architecture, description). */
  info?: { vendor?: string; architecture?: string; description?: string };
  limits?: Partial<Record<string, number>>;
}

/**
 * A WebGPU entry point (what `navigator.gpu` is) whose adapter opens cpuDevice()s; `devices` logs each
 * device opened, in order.
 * @example const { gpu } = cpuGpu({ kernel }); createGpuCore({ gpu, kernels, post });
 */
export function cpuGpu(opts: CpuAdapterOptions = {}): { gpu: GPU; devices: CpuDeviceLog[] } {
  const devices: CpuDeviceLog[] = [];
  const adapter = {
    info: { vendor: 'cpu', architecture: 'twin', description: 'CPU twins (test)', ...opts.info },
    features: new Set(opts.timestamps === false ? [] : ['timestamp-query']),
    limits: {
      maxComputeInvocationsPerWorkgroup: 256,
      maxComputeWorkgroupStorageSize: 32768,
      maxComputeWorkgroupSizeX: 256,
      maxComputeWorkgroupsPerDimension: 65535,
      maxStorageBufferBindingSize: 2 ** 27,
      maxBufferSize: 2 ** 28,
      maxStorageBuffersPerShaderStage: 8,
      ...opts.limits,
    },
    requestDevice: () => {
      const { device, log } = cpuDevice(opts);
      devices.push(log);
      return Promise.resolve(device);
    },
  };
  const gpu = { requestAdapter: () => Promise.resolve(adapter), wgslLanguageFeatures: new Set<string>() };
  return { gpu: gpu as unknown as GPU, devices };
}
