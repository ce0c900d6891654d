// The GPU worker's core: owns the one GPUDevice and answers the protocol's requests. It is pure of any
// worker global -- the WebGPU entry point, the kernel families and the `post` function are passed in --
// so the same code runs in the web worker, on a main thread, and in Node on Dawn (test/worker-core.test.ts).
//
// Requests are served one at a time (one device, one queue); `cancel` is handled at once and takes effect
// at the next stage boundary of the request it names (and inside timed dispatch batches).
import { judge } from '../kernels/compare';
import {
  ShapeError,
  type KernelFamily,
  type OwnershipPhase,
  type PreparedProblem,
  type ProblemConfig,
} from '../kernels/family';
import type { AdapterCaps } from '../kernels/gpu/caps';
import { decodeOwnership, splitHostSuffix, type OwnershipMap } from '../kernels/gpu/instrument';
import type { KernelPlan } from '../kernels/gpu/plan';
import {
  clockWarmMs,
  GpuValidationError,
  runPlan,
  WgslCompileError,
  type WgslMessage,
} from '../kernels/gpu/run';
import {
  kernelWithProblems,
  transferablesOf,
  type OwnershipBuffers,
  type RunOutcome,
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

/** The parts of a generated kernel the run path needs again. */
interface Prepared {
  problem: PreparedProblem;
  kernel: string;
  suffix: string;
  instrumentedSuffix: string;
}

const PREPARED_CACHE = 2;

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

/** Copies: results are transferred (detached) and a prepared problem memoizes its maps and oracle. */
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

function errorKind(e: unknown): 'shape' | 'validation' | 'internal' {
  if (
    e instanceof ShapeError ||
    (e instanceof RangeError && /grid|maxStorageBufferBindingSize|outside/.test(e.message))
  )
    return 'shape';
  if (e instanceof GpuValidationError) return 'validation';
  return 'internal';
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

class Cancelled extends Error {}

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
  const prepared = new Map<string, Prepared>();

  const post = (msg: WorkerResponse) => opts.post(msg, transferablesOf(msg));

  const family = (config: ProblemConfig): KernelFamily => {
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
          : Promise.reject(
              new Error(
                'WebGPU is not available in this browser (navigator.gpu is missing; Chrome 113+ or --enable-unsafe-webgpu)',
              ),
            )
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
    if (cancelled.has(id)) throw new Cancelled();
  };

  const prepare = (config: ProblemConfig, caps: AdapterCaps): Prepared => {
    const key = JSON.stringify(config);
    const hit = prepared.get(key);
    if (hit) return hit;
    const problem = family(config).prepare(config, caps);
    const main = problem.plan.passes[problem.plan.mainPass];
    const instrMain = problem.instrumentedPlan.passes[problem.instrumentedPlan.mainPass];
    if (!main || !instrMain) throw new Error(`${config.kernel}: plan has no main pass`);
    const { kernel, suffix } = splitHostSuffix(main.wgsl);
    const entry: Prepared = {
      problem,
      kernel,
      suffix,
      instrumentedSuffix: splitHostSuffix(instrMain.wgsl).suffix,
    };
    prepared.set(key, entry);
    while (prepared.size > PREPARED_CACHE) prepared.delete(prepared.keys().next().value as string);
    return entry;
  };

  const generate = async (id: number, config: ProblemConfig) => {
    const { caps } = await ensureDevice(id);
    const f = family(config);
    const problems = f.validate(config, caps);
    if (problems.length) {
      post({ type: 'generated', id, kernel: kernelWithProblems(problems) });
      return;
    }
    const p = prepare(config, caps);
    const main = p.problem.plan.passes[p.problem.plan.mainPass]!;
    post({
      type: 'generated',
      id,
      kernel: {
        wgsl: p.kernel,
        suffix: p.suffix,
        entryPoint: main.entryPoint,
        workgroupSize: main.workgroupSize,
        workgroups: main.workgroups,
        phases: [...p.problem.phases],
        problems: [],
      },
    });
  };

  const run = async (req: Extract<WorkerRequest, { type: 'run' }>) => {
    const { id, config } = req;
    const progress = (stage: string, fraction: number) => {
      checkCancel(id);
      post({ type: 'progress', id, stage, fraction });
    };
    const dev = await ensureDevice(id);
    progress('preparing inputs', 0.05);
    const problems = family(config).validate(config, dev.caps);
    if (problems.length) throw new ShapeError(problems.join('; '));
    const p = prepare(config, dev.caps);
    const { problem } = p;
    const edited = req.wgsl !== undefined && req.wgsl !== p.kernel;
    const userText = edited ? req.wgsl! : p.kernel;
    const override = edited ? { [problem.plan.mainPass]: userText + p.suffix } : undefined;
    const iters = Math.max(0, Math.floor(req.iters));
    progress(iters > 0 ? `compiling, running and timing ${iters} dispatches` : 'compiling and running', 0.15);
    let result;
    try {
      result = await runPlan(dev.device, problem.plan, {
        ...(override ? { wgslOverride: override } : {}),
        iters,
        cancelled: () => cancelled.has(id),
        // A hardware GPU may idle its clocks between the user's runs: time it warm.
        warmMs: clockWarmMs(dev.caps),
      });
    } catch (e) {
      const main = problem.plan.passes[problem.plan.mainPass]!;
      if (e instanceof WgslCompileError && e.pass === main.label) {
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
    progress('checking against the oracle', 0.55);
    const len = problem.rows * problem.cols;
    const output = typedOutput(result.output, problem.plan.outputType, len);
    const oracle = problem.oracle().slice();
    const verdict = judge(output, oracle, problem.gate);
    progress('full-precision reference', 0.65);
    const fullPrecision = problem.fullPrecision?.().slice();
    const warnings = [...result.warnings];
    let ownership: OwnershipBuffers | undefined;
    if (req.instrument) {
      progress('instrumented run (recording ownership)', 0.75);
      const instrOverride = edited
        ? { [problem.instrumentedPlan.mainPass]: userText + p.instrumentedSuffix }
        : undefined;
      try {
        const ir = await runPlan(dev.device, problem.instrumentedPlan, {
          ...(instrOverride ? { wgslOverride: instrOverride } : {}),
          read: [problem.ownerBuffer],
        });
        const raw = ir.reads[problem.ownerBuffer];
        if (raw) ownership = toBuffers(decodeOwnership(raw, problem.rows, problem.cols));
      } catch (e) {
        // The kernel itself ran; only the recording variant failed (e.g. an edit took the debug binding).
        warnings.push({
          type: 'warning',
          message: `ownership recording failed: ${message(e)}`,
          lineNum: 0,
          linePos: 0,
          offset: 0,
          length: 0,
        });
      }
    }
    progress('analytic ownership', 0.9);
    const analyticOwnership: Partial<Record<OwnershipPhase, OwnershipBuffers>> = {};
    for (const phase of problem.phases)
      analyticOwnership[phase] = toBuffers(problem.analyticOwnership(phase));
    const outcome: RunOutcome = {
      config,
      rows: problem.rows,
      cols: problem.cols,
      output,
      oracle,
      verdict,
      analyticOwnership,
      warnings,
      edited,
    };
    if (fullPrecision) outcome.fullPrecision = fullPrecision;
    if (problem.outputTile) outcome.outputTile = { ...problem.outputTile };
    if (ownership) outcome.ownership = ownership;
    if (result.msPerDispatch !== undefined && result.timing) {
      outcome.msPerDispatch = result.msPerDispatch;
      outcome.timing = result.timing;
      if (result.planMs !== undefined) outcome.planMs = result.planMs;
      if (result.passMs) outcome.passMs = result.passMs.map((p) => ({ ...p }));
      // The op's throughput: a plan's pre-passes are part of what it costs.
      const ms = result.planMs ?? result.msPerDispatch;
      if (ms > 0) outcome.tops = problem.ops / (ms * 1e-3) / 1e12;
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
    await opts.tune(req, {
      device: dev.device,
      caps: dev.caps,
      deviceId: dev.deviceId,
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
        case 'lose-device': {
          // Diagnostics: destroy the device so the loss-and-recovery path can be exercised end to end.
          const d = live;
          if (d) d.device.destroy();
          else post({ type: 'device-lost', reason: 'destroyed', message: 'no device was open' });
          return;
        }
      }
    } catch (e) {
      if (e instanceof Cancelled) post({ type: 'cancelled', id: req.id });
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
