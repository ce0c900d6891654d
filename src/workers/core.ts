// The GPU worker's core: owns the one GPUDevice and answers the protocol's requests. It is pure of any
// worker global -- the WebGPU entry point, the kernel families and the `post` function are passed in --
// so the same code runs in the web worker, on a main thread, in Node on Dawn (tests) and in the CLI.
//
// Requests are served one at a time (one device, one queue); `cancel` is handled at once and takes effect
// at the next stage boundary of the request it names (and between timed batches).
import { CancelledError } from '../kernels/cancel';
import {
  ShapeError,
  type BuiltProblem,
  type KernelFamily,
  type RunConfig,
  type WeightOperand,
} from '../kernels/family';
import { resolveConfig } from '../kernels/arms';
import type { AdapterCaps } from '../kernels/gpu/caps';
import { splitHostSuffix } from '../kernels/gpu/instrument';
import { GpuValidationError } from '../kernels/gpu/runner';
import { runProbe } from '../kernels/perf/probe.run';
import { GgufError, type ByteSource } from '../kernels/quant';
import type { Registry } from '../kernels/registry';
import { createModelCache, ModelFileError } from './models';
import {
  kernelWithProblems,
  transferablesOf,
  type GeneratedKernel,
  type WorkerRequest,
  type WorkerResponse,
} from './protocol';
import { serveRun } from './run';
import { keepDevice, NoDeviceError, type OpenedDevice } from './runtime/device';

export type PostFn = (msg: WorkerResponse, transfer: Transferable[]) => void;

export type TuneRequest = Extract<WorkerRequest, { type: 'tune' | 'autokernel' | 'pick' | 'model-run' }>;

/** What a tune handler gets from the core: the live device, and a way to answer and to see a cancel. */
export interface TuneContext {
  device: GPUDevice;
  caps: AdapterCaps;
  deviceId: string;
  kernels: Registry<KernelFamily>;
  /** The real tensor the request's base config names, read from its file (absent for generated data). */
  weight?: WeightOperand;
  post: (msg: WorkerResponse) => void;
  isCancelled: () => boolean;
}

export type TuneHandler = (req: TuneRequest, ctx: TuneContext) => Promise<void>;

export interface GpuCoreOptions {
  /** `navigator.gpu` in a browser or worker (undefined where WebGPU is missing); Dawn's `create([])` in Node. */
  gpu: GPU | undefined;
  /** The families it builds and runs (src/kernels KERNELS; a test passes its own registry). */
  kernels: Registry<KernelFamily>;
  post: PostFn;
  /** Serves 'tune', 'autokernel', 'pick' and 'model-run' requests (src/workers/tune); absent -> 'unsupported'. */
  tune?: TuneHandler;
  adapterOptions?: GPURequestAdapterOptions;
}

export interface GpuCore {
  /** Serve one request; resolves when its final response has been posted. */
  handle(req: WorkerRequest): Promise<void>;
  /** The open device, if any (tests). */
  current(): OpenedDevice | undefined;
}

const BUILT_CACHE = 2;

/**
 * A request's progress as it is posted: never less than it was (a timing that doubles its batches when
 * they disagree would otherwise step back, 58% to 55%), never past 1.
 * @example const at = monotonic(); [0.5, 0.4, 0.6].map(at) // [0.5, 0.5, 0.6]
 */
export function monotonic(): (fraction: number) => number {
  let reached = 0;
  return (fraction) => (reached = Math.max(reached, Math.min(1, fraction)));
}

function errorKind(e: unknown): 'shape' | 'validation' | 'file' | 'internal' {
  if (e instanceof ShapeError) return 'shape';
  if (e instanceof GgufError || e instanceof ModelFileError) return 'file';
  if (e instanceof GpuValidationError) return 'validation';
  return 'internal';
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * A built problem as the editor shows it: every pass's editable text and host suffix, apart.
 * @example post({ type: 'generated', id, kernel: generatedKernel(built, resolved.plane) });
 */
export function generatedKernel(b: BuiltProblem, plane: number): GeneratedKernel {
  return {
    passes: b.plan.passes.map((p) => {
      const { kernel: wgsl, suffix } = splitHostSuffix(p.wgsl);
      return {
        label: p.label,
        wgsl,
        suffix,
        entryPoint: p.entryPoint,
        workgroupSize: p.workgroupSize,
        workgroups: p.workgroups,
      };
    }),
    mainPass: b.plan.mainPass,
    phases: [...b.facts.phases],
    plane,
    problems: [],
  };
}

/**
 * Build the worker core.
 * @example
 * const core = createGpuCore({ gpu: navigator.gpu, kernels: KERNELS, post: (m, t) => postMessage(m, t) });
 * await core.handle({ type: 'init', id: 1 });
 */
export function createGpuCore(opts: GpuCoreOptions): GpuCore {
  let queue: Promise<void> = Promise.resolve();
  const cancelled = new Set<number>();
  const pending = new Set<number>();
  const built = new Map<string, BuiltProblem>();
  const models = createModelCache(opts.kernels.families);

  const post = (msg: WorkerResponse) => opts.post(msg, transferablesOf(msg));

  const familyOf = (config: RunConfig): KernelFamily => opts.kernels.get(config.kernel);

  const gpu = keepDevice(opts.gpu, opts.adapterOptions ?? {}, (info) => {
    built.clear();
    post({
      type: 'device-lost',
      reason: String(info.reason ?? 'unknown'),
      message: info.message || 'the GPU device was lost',
    });
  });
  /** The device; the request that opens a new one is answered 'ready' with its caps. */
  const ensureDevice = (id: number): Promise<OpenedDevice> =>
    gpu.ensure((d) => post({ type: 'ready', id, caps: d.caps, deviceId: d.deviceId, plane: d.plane }));

  const checkCancel = (id: number) => {
    if (cancelled.has(id)) throw new CancelledError();
  };

  /** Validate once and build (memoized per config, so a run after its generate rebuilds nothing). */
  const build = (config: RunConfig, caps: AdapterCaps, weight?: WeightOperand): BuiltProblem => {
    const resolved = resolveConfig(config, caps);
    const key = JSON.stringify(resolved);
    const hit = built.get(key);
    if (hit) return hit;
    const problem = familyOf(config).build(resolved, caps, weight);
    built.set(key, problem);
    while (built.size > BUILT_CACHE) built.delete(built.keys().next().value as string);
    return problem;
  };

  const openModel = async (id: number, blob: Blob | ByteSource, name?: string) => {
    const model = await models.open(blob, name, () => checkCancel(id));
    post({ type: 'gguf-opened', id, model });
  };

  /** The real tensor a config names (the model cache reads it), checked by its family. */
  const weightFor = (config: RunConfig) => models.weightFor(config, familyOf(config));

  const generate = async (id: number, config: RunConfig) => {
    const { caps } = await ensureDevice(id);
    const resolved = resolveConfig(config, caps);
    const problems = familyOf(config).validate(config, caps);
    if (problems.length) {
      post({ type: 'generated', id, kernel: kernelWithProblems(problems, resolved.plane) });
      return;
    }
    let b: BuiltProblem;
    try {
      b = build(config, caps, (await weightFor(config))?.weight);
    } catch (e) {
      if (!(e instanceof ShapeError)) throw e;
      post({ type: 'generated', id, kernel: kernelWithProblems(e.message.split('; '), resolved.plane) });
      return;
    }
    post({ type: 'generated', id, kernel: generatedKernel(b, resolved.plane) });
  };

  const run = async (req: Extract<WorkerRequest, { type: 'run' }>) => {
    const { id, config } = req;
    const dev = await ensureDevice(id);
    const fraction = monotonic();
    await serveRun(req, {
      dev,
      family: familyOf(config),
      weight: () => weightFor(config),
      build: (tensor) => build(config, dev.caps, tensor?.weight),
      progress: (stage, f, busy) => {
        checkCancel(id);
        post({ type: 'progress', id, stage, fraction: fraction(f), ...(busy ?? {}) });
      },
      isCancelled: () => cancelled.has(id),
      post,
    });
  };

  const tune = async (req: TuneRequest) => {
    if (!opts.tune) {
      post({ type: 'error', id: req.id, kind: 'unsupported', message: 'this worker has no tuner' });
      return;
    }
    const dev = await ensureDevice(req.id);
    // A pick runs on generated data (kernels/tune/pick.ts PICK_DATA): no tensor to read.
    const tensor = 'base' in req ? await weightFor(req.base) : undefined;
    await opts.tune(req, {
      device: dev.device,
      caps: dev.caps,
      deviceId: dev.deviceId,
      kernels: opts.kernels,
      ...(tensor ? { weight: tensor.weight } : {}),
      post,
      isCancelled: () => cancelled.has(req.id),
    });
  };

  const probe = async (id: number) => {
    const dev = await ensureDevice(id);
    const result = await runProbe(dev.device, dev.caps, {
      cancelled: () => cancelled.has(id),
      onProgress: (stage, fraction) => post({ type: 'progress', id, stage, fraction }),
    });
    post({ type: 'probe-result', id, result });
  };

  const serve = async (req: Exclude<WorkerRequest, { type: 'cancel' }>) => {
    try {
      checkCancel(req.id);
      switch (req.type) {
        case 'init': {
          const live = gpu.live();
          if (live)
            post({ type: 'ready', id: req.id, caps: live.caps, deviceId: live.deviceId, plane: live.plane });
          else await ensureDevice(req.id);
          return;
        }
        case 'generate':
          return await generate(req.id, req.config);
        case 'run':
          return await run(req);
        case 'tune':
        case 'autokernel':
        case 'pick':
        case 'model-run':
          return await tune(req);
        case 'open-gguf':
          return await openModel(req.id, req.file, req.name);
        case 'probe':
          return await probe(req.id);
        case 'lose-device': {
          // Diagnostics: destroy the device so the loss-and-recovery path can be exercised end to end.
          const d = gpu.live();
          if (d) d.device.destroy();
          else post({ type: 'device-lost', reason: 'destroyed', message: 'no device was open' });
          return;
        }
      }
    } catch (e) {
      if (e instanceof CancelledError) post({ type: 'cancelled', id: req.id });
      else if (e instanceof NoDeviceError)
        post({ type: 'error', id: req.id, kind: 'unsupported', message: message(e) });
      else post({ type: 'error', id: req.id, kind: errorKind(e), message: message(e) });
    } finally {
      cancelled.delete(req.id);
      pending.delete(req.id);
    }
  };

  return {
    handle(req) {
      if (req.type === 'cancel') {
        if (pending.has(req.id)) cancelled.add(req.id);
        return Promise.resolve();
      }
      pending.add(req.id);
      const next = queue.then(() => serve(req));
      queue = next;
      return next;
    },
    current: () => gpu.live(),
  };
}
