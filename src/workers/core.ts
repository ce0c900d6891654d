// The GPU worker's core: owns the one GPUDevice and answers the protocol's requests. It is pure of any
// worker global -- the WebGPU entry point, the kernel families and the `post` function are passed in --
// so the same code runs in the web worker, on a main thread, in Node on Dawn (tests) and in the CLI.
//
// Requests are served one at a time (one device, one queue); `cancel` is handled at once and takes effect
// at the next stage boundary of the request it names (and between timed batches).
import { CancelledError } from '../kernels/cancel';
import { judge } from '../kernels/compare';
import {
  ShapeError,
  tensorProblems,
  type BuiltProblem,
  type GgufFileRef,
  type KernelFamily,
  type OwnershipPhase,
  type RunConfig,
  type WeightOperand,
} from '../kernels/family';
import { resolveConfig } from '../kernels/gpu/arms';
import type { AdapterCaps } from '../kernels/gpu/caps';
import { decodeOwnership, splitHostSuffix, type OwnershipMap } from '../kernels/gpu/instrument';
import { planLimitProblems, type KernelPlan } from '../kernels/gpu/plan';
import {
  clockWarmMs,
  GpuValidationError,
  preparePlan,
  WgslCompileError,
  type PreparedPlan,
  type WgslMessage,
} from '../kernels/gpu/runner';
import { listTensors, presetFromGgufMetadata, weightShape } from '../kernels/models';
import {
  blobSource,
  checkTensorData,
  ggufTensor,
  GgufError,
  inflatedSource,
  metadataRows,
  openGguf,
  readTensorOperand,
  type ByteSource,
  type GgufFile,
} from '../kernels/quant';
import {
  kernelWithProblems,
  transferablesOf,
  type GeneratedKernel,
  type OpenedModel,
  type OwnershipBuffers,
  type RunOutcome,
  type RunTiming,
  type WorkerRequest,
  type WorkerResponse,
} from './protocol';
import { openDevice, type OpenedDevice } from './runtime/device';

export type PostFn = (msg: WorkerResponse, transfer: Transferable[]) => void;

export type TuneRequest = Extract<WorkerRequest, { type: 'tune' | 'autokernel' }>;

/** What a tune handler gets from the core: the live device, and a way to answer and to see a cancel. */
export interface TuneContext {
  device: GPUDevice;
  caps: AdapterCaps;
  deviceId: string;
  families: readonly KernelFamily[];
  /** The real tensor the request's base config names, read from its file (absent for generated data). */
  weight?: WeightOperand;
  post: (msg: WorkerResponse) => void;
  isCancelled: () => boolean;
}

export type TuneHandler = (req: TuneRequest, ctx: TuneContext) => Promise<void>;

export interface GpuCoreOptions {
  /** `navigator.gpu` in a browser or worker (undefined where WebGPU is missing); Dawn's `create([])` in Node. */
  gpu: GPU | undefined;
  families: readonly KernelFamily[];
  post: PostFn;
  /** Serves 'tune' and 'autokernel' requests (src/workers/tune); absent -> 'unsupported'. */
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
// Opened GGUFs kept (a File is a handle, not its bytes); the last tensor read is kept as an operand.
const MODELS_KEPT = 4;

/** A model file that is not open in this worker (the app asks for it again), or not a usable GGUF. */
class ModelFileError extends Error {}

interface OpenModel {
  ref: GgufFileRef;
  gguf: GgufFile;
  src: ByteSource;
  /** Bytes read from the file so far. */
  bytesRead: () => number;
}

const modelKey = (f: GgufFileRef) => `${f.headerHash}:${f.size}`;

/** A source that counts the bytes read through it (for the reports of what a tensor cost to read). */
function countingSource(src: ByteSource): { src: ByteSource; bytesRead: () => number } {
  let bytes = 0;
  return {
    src: {
      size: src.size,
      ...(src.name === undefined ? {} : { name: src.name }),
      read: async (offset, length) => {
        const b = await src.read(offset, length);
        bytes += b.length;
        return b;
      },
    },
    bytesRead: () => bytes,
  };
}

/** A message that points past the user's text lies in the host suffix: say so, keep the position. */
export function noteSuffixMessages(messages: readonly WgslMessage[], editorLines: number): WgslMessage[] {
  return messages.map((m) =>
    m.lineNum > editorLines
      ? {
          ...m,
          message: `in host suffix (line ${m.lineNum - editorLines} after your code): ${m.message} -- the suffix defines set_owner/store_out and stores into the kernel's output array; keep those names and types`,
        }
      : m,
  );
}

/** Number of editor lines of a text (the suffix starts on the line after the last one). */
export function lineCount(text: string): number {
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

function typedOutput(
  raw: ArrayBuffer,
  type: KernelPlan['outputType'],
  len: number,
): Float32Array | Int32Array {
  if (raw.byteLength < len * 4)
    throw new Error(`output buffer has ${raw.byteLength / 4} elements, expected ${len}`);
  const copy = raw.slice(0, len * 4);
  return type === 'f32' ? new Float32Array(copy) : new Int32Array(copy);
}

/** Copies: results are transferred (detached) and a built problem memoizes its maps and oracle. */
function toBuffers(map: OwnershipMap): OwnershipBuffers {
  return {
    rows: map.rows,
    cols: map.cols,
    count: map.count.slice(),
    workgroup: map.workgroup.slice(),
    plane: map.plane.slice(),
    lane: map.lane.slice(),
  };
}

function errorKind(e: unknown): 'shape' | 'validation' | 'file' | 'internal' {
  if (e instanceof ShapeError) return 'shape';
  if (e instanceof GgufError || e instanceof ModelFileError) return 'file';
  if (e instanceof GpuValidationError) return 'validation';
  return 'internal';
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

const warning = (text: string): WgslMessage => ({
  type: 'warning',
  message: text,
  lineNum: 0,
  linePos: 0,
  offset: 0,
  length: 0,
});

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

/** No adapter or device: WebGPU is unavailable here (reported as 'unsupported'). */
class NoDeviceError extends Error {}

/**
 * Build the worker core.
 * @example
 * const core = createGpuCore({ gpu: navigator.gpu, families: KERNEL_FAMILIES, post: (m, t) => postMessage(m, t) });
 * await core.handle({ type: 'init', id: 1 });
 */
export function createGpuCore(opts: GpuCoreOptions): GpuCore {
  let opened: Promise<OpenedDevice> | undefined;
  let live: OpenedDevice | undefined;
  let queue: Promise<void> = Promise.resolve();
  const cancelled = new Set<number>();
  const pending = new Set<number>();
  const built = new Map<string, BuiltProblem>();
  const models = new Map<string, OpenModel>();
  let lastWeight:
    { key: string; weight: WeightOperand; read: NonNullable<RunOutcome['tensorRead']> } | undefined;

  const post = (msg: WorkerResponse) => opts.post(msg, transferablesOf(msg));

  const familyOf = (config: RunConfig): KernelFamily => {
    const f = opts.families.find((x) => x.id === config.kernel);
    if (!f) throw new ShapeError(`unknown kernel family '${config.kernel}'`);
    return f;
  };

  /** The device, opened on first use and again after a loss; `id` is told when a new one opens. */
  const ensureDevice = async (id: number): Promise<OpenedDevice> => {
    if (!opened) {
      const gpu = opts.gpu;
      const p = (
        gpu
          ? openDevice(gpu, opts.adapterOptions ?? {})
          : Promise.reject(new Error('WebGPU is not available here (navigator.gpu is missing)'))
      ).catch((e: unknown) => {
        throw new NoDeviceError(message(e));
      });
      opened = p;
      p.then(
        (d) => {
          live = d;
          void d.device.lost.then((info) => {
            if (live !== d) return;
            live = undefined;
            opened = undefined;
            built.clear();
            post({
              type: 'device-lost',
              reason: String(info.reason ?? 'unknown'),
              message: info.message || 'the GPU device was lost',
            });
          });
          post({ type: 'ready', id, caps: d.caps, deviceId: d.deviceId, plane: d.plane });
        },
        () => {
          opened = undefined;
        },
      );
    }
    return opened;
  };

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

  const openModel = async (id: number, blob: Blob, given?: string) => {
    const name = given ?? ('name' in blob && typeof blob.name === 'string' ? blob.name : 'model.gguf');
    const file = countingSource(blobSource(blob));
    // Tensor reads are counted on the (inflated) GGUF itself, the open on the file as picked.
    const counted = countingSource(await inflatedSource({ ...file.src, name }));
    const src = counted.src;
    checkCancel(id);
    const gguf = await openGguf(src);
    // A file cut short is refused now, not at the first run of a tensor past its end.
    checkTensorData(gguf, src.size);
    const ref: GgufFileRef = { name, size: blob.size, headerHash: gguf.headerHash };
    const key = modelKey(ref);
    models.delete(key);
    models.set(key, { ref, gguf, src, bytesRead: counted.bytesRead });
    while (models.size > MODELS_KEPT) models.delete(models.keys().next().value as string);
    const model: OpenedModel = {
      file: ref,
      version: gguf.version,
      bytesRead: file.bytesRead(),
      metadata: metadataRows(gguf),
      tensors: listTensors(gguf.tensors, opts.families, ref),
    };
    try {
      model.preset = presetFromGgufMetadata(gguf.metadata, gguf.tensors);
    } catch (e) {
      model.presetProblem = message(e);
    }
    post({ type: 'gguf-opened', id, model });
  };

  /**
   * The real tensor a config names, read from its open file (the last one read is kept), after the
   * family has checked the tensor's shape against the config. Undefined for generated data.
   */
  const weightFor = async (
    config: RunConfig,
  ): Promise<{ weight: WeightOperand; read: NonNullable<RunOutcome['tensorRead']> } | undefined> => {
    const t = config.data.source === 'tensor' ? config.data.tensor : undefined;
    if (!t) return undefined;
    const m = models.get(modelKey(t.file));
    if (!m)
      throw new ModelFileError(
        `${t.tensor} is in ${t.file.name} (${t.file.size} bytes), which is not open here: open that file again`,
      );
    const info = ggufTensor(m.gguf, t.tensor);
    const problems = tensorProblems(familyOf(config), config, weightShape(info));
    if (problems.length) throw new ShapeError(problems.join('; '));
    const key = `${modelKey(t.file)}/${t.tensor}`;
    // The read that loaded the tensor is reported with every run on it (a generate may have read it).
    if (lastWeight?.key === key) return { weight: lastWeight.weight, read: lastWeight.read };
    const before = m.bytesRead();
    const t0 = performance.now();
    const weight = await readTensorOperand(m.src, m.gguf, t.tensor);
    const read = { tensor: t.tensor, bytes: m.bytesRead() - before, ms: performance.now() - t0 };
    lastWeight = { key, weight, read };
    return { weight, read };
  };

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
    const progress = (stage: string, fraction: number) => {
      checkCancel(id);
      post({ type: 'progress', id, stage, fraction });
    };
    const dev = await ensureDevice(id);
    progress('preparing inputs', 0.02);
    const problems = familyOf(config).validate(config, dev.caps);
    if (problems.length) throw new ShapeError(problems.join('; '));
    if (config.data.source === 'tensor') progress('reading the tensor', 0.03);
    const tensor = await weightFor(config);
    const b = build(config, dev.caps, tensor?.weight);
    const { plan, facts } = b;
    const main = plan.mainPass;
    const { kernel, suffix } = splitHostSuffix(plan.passes[main]!.wgsl);
    const edited = req.wgsl !== undefined && req.wgsl !== kernel;
    const userText = edited ? req.wgsl! : kernel;
    progress('compiling', 0.05);
    let p: PreparedPlan;
    try {
      p = await preparePlan(dev.device, plan, edited ? { wgslOverride: { [main]: userText + suffix } } : {});
    } catch (e) {
      if (e instanceof WgslCompileError && e.pass === plan.passes[main]!.label) {
        const editorLines = lineCount(userText);
        post({
          type: 'compile-error',
          id,
          messages: noteSuffixMessages(e.messages, editorLines),
          code: e.code,
          editorLines,
        });
        return;
      }
      throw e;
    }
    const warnings: WgslMessage[] = [];
    let output: Float32Array | Int32Array;
    let timing: RunTiming | undefined;
    let runWallMs: number;
    try {
      progress('running', 0.15);
      const t0 = performance.now();
      await p.run();
      runWallMs = performance.now() - t0;
      output = typedOutput(await p.read(plan.output), plan.outputType, facts.rows * facts.cols);
      if (req.timing) {
        const passes = plan.passes.length;
        const steps = passes > 1 ? passes + 1 : 1;
        const base = {
          ...req.timing,
          warmMs: clockWarmMs(dev.caps),
          cancelled: () => cancelled.has(id),
        };
        const at = (step: number) => (done: number, planned: number) =>
          progress(
            `timing${passes > 1 ? (step === 0 ? ' the whole plan' : ` pass ${step} of ${passes}`) : ''}: batch ${done} of ${planned}`,
            0.2 + (0.4 * (step + done / planned)) / steps,
          );
        progress('timing', 0.2);
        const whole = await p.time({ ...base, estimateMs: runWallMs, onBatch: at(0) });
        timing = { ...whole };
        if (passes > 1) {
          timing.passes = [];
          for (let i = 0; i < passes; i++) {
            const t = await p.time({ ...base, passes: i, warmMs: 0, onBatch: at(i + 1) });
            timing.passes.push({ label: plan.passes[i]!.label, ms: t.ms, coarse: t.coarse });
          }
        }
      }
    } finally {
      p.destroy();
    }
    progress('checking against the oracle', 0.62);
    const oracle = facts.oracle().slice();
    const verdict = judge(output, oracle, facts.gate);
    progress('full-precision reference', 0.7);
    const fullPrecision = facts.fullPrecision?.().slice();
    let ownership: OwnershipBuffers | undefined;
    if (req.instrument) {
      progress('instrumented run (recording ownership)', 0.78);
      const iplan = b.instrumentedPlan();
      const over = planLimitProblems(iplan, dev.caps.limits);
      if (over.length)
        warnings.push(
          warning(
            `ownership not recorded: the recording variant needs more than this adapter allows (${over.join('; ')})`,
          ),
        );
      else {
        const imain = iplan.passes[iplan.mainPass]!;
        const isuffix = splitHostSuffix(imain.wgsl).suffix;
        let ip: PreparedPlan | undefined;
        try {
          ip = await preparePlan(
            dev.device,
            iplan,
            edited ? { wgslOverride: { [iplan.mainPass]: userText + isuffix } } : {},
          );
          await ip.run();
          ownership = toBuffers(decodeOwnership(await ip.read(b.ownerBuffer), facts.rows, facts.cols));
        } catch (e) {
          // The kernel itself ran; only the recording variant failed (e.g. an edit took the debug binding).
          warnings.push(warning(`ownership recording failed: ${message(e)}`));
        } finally {
          ip?.destroy();
        }
      }
    }
    progress('analytic ownership', 0.92);
    const analyticOwnership: Partial<Record<OwnershipPhase, OwnershipBuffers>> = {};
    for (const phase of facts.phases) analyticOwnership[phase] = toBuffers(facts.analyticOwnership(phase));
    const family = familyOf(config);
    const outcome: RunOutcome = {
      config: b.config,
      rows: facts.rows,
      cols: facts.cols,
      output,
      oracle,
      verdict,
      analyticOwnership,
      warnings,
      edited,
      runWallMs,
      ops: facts.ops,
    };
    if (fullPrecision) outcome.fullPrecision = fullPrecision;
    if (tensor?.read) outcome.tensorRead = tensor.read;
    if (facts.outputTile) outcome.outputTile = { ...facts.outputTile };
    if (ownership) outcome.ownership = ownership;
    if (timing) {
      outcome.timing = timing;
      // The op's throughput: a plan's pre-passes are part of what it costs.
      if (timing.ms > 0)
        outcome.throughput = {
          value: facts.ops / (timing.ms * 1e-3) / 1e12,
          unit: (facts.arithmetic ?? family.arithmetic) === 'int8' ? 'int8 TOPS' : 'TFLOP/s',
        };
    }
    checkCancel(id);
    post({ type: 'run-result', id, outcome });
  };

  const tune = async (req: TuneRequest) => {
    if (!opts.tune) {
      post({ type: 'error', id: req.id, kind: 'unsupported', message: 'this worker has no tuner' });
      return;
    }
    const dev = await ensureDevice(req.id);
    const tensor = await weightFor(req.base);
    await opts.tune(req, {
      device: dev.device,
      caps: dev.caps,
      deviceId: dev.deviceId,
      families: opts.families,
      ...(tensor ? { weight: tensor.weight } : {}),
      post,
      isCancelled: () => cancelled.has(req.id),
    });
  };

  const serve = async (req: Exclude<WorkerRequest, { type: 'cancel' }>) => {
    try {
      checkCancel(req.id);
      switch (req.type) {
        case 'init':
          if (live && opened)
            post({ type: 'ready', id: req.id, caps: live.caps, deviceId: live.deviceId, plane: live.plane });
          else await ensureDevice(req.id);
          return;
        case 'generate':
          return await generate(req.id, req.config);
        case 'run':
          return await run(req);
        case 'tune':
        case 'autokernel':
          return await tune(req);
        case 'open-gguf':
          return await openModel(req.id, req.file, req.name);
        case 'lose-device': {
          // Diagnostics: destroy the device so the loss-and-recovery path can be exercised end to end.
          const d = live;
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
    current: () => live,
  };
}
