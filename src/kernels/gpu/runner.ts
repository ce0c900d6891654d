// The one runner: every plan the app, the tuner, the bench and the CLI execute goes through here, and
// this is the only module that creates compute pipelines. A plan is PREPARED once (buffers uploaded,
// cold weight banks copied, pipelines compiled, bind groups made), then run, read back and timed as often
// as needed, and destroyed. Timing has one method everywhere (docs/decisions/0006-timing-method.md):
// back-to-back runs between two GPU timestamps (wall clock where the device has none), the batch length
// calibrated to a target duration, several batches, the fastest counting.
import { CancelledError, checkCancelled } from '../cancel';
import { isSoftwareAdapter, type AdapterCaps } from './caps';
import { bufferBytes, bufferData, type BufferSpec, type KernelPlan, type PassSpec } from './plan';

export interface WgslMessage {
  type: 'error' | 'warning' | 'info';
  message: string;
  /** 1-based; 0 when the message has no position. */
  lineNum: number;
  linePos: number;
  offset: number;
  length: number;
}

/** A shader that did not compile: the messages carry line numbers into `code`. */
export class WgslCompileError extends Error {
  constructor(
    readonly pass: string,
    readonly messages: WgslMessage[],
    readonly code: string,
  ) {
    const first = messages.find((m) => m.type === 'error') ?? messages[0];
    super(
      `${pass}: WGSL error${first ? ` at line ${first.lineNum}:${first.linePos}: ${first.message}` : ''}`,
    );
    this.name = 'WgslCompileError';
  }
}

/** WebGPU rejected a pipeline, bind group or dispatch. */
export class GpuValidationError extends Error {
  constructor(
    readonly pass: string,
    message: string,
  ) {
    super(`${pass}: ${message}`);
    this.name = 'GpuValidationError';
  }
}

export { CancelledError };

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Run `fn` in a validation scope; a reported error (or a throw) becomes GpuValidationError(label). */
async function scoped<T>(device: GPUDevice, label: string, fn: () => T | Promise<T>): Promise<T> {
  device.pushErrorScope('validation');
  let out: T;
  try {
    out = await fn();
  } catch (e) {
    await device.popErrorScope();
    throw e instanceof GpuValidationError || e instanceof WgslCompileError
      ? e
      : new GpuValidationError(label, message(e));
  }
  const err = await device.popErrorScope();
  if (err) throw new GpuValidationError(label, err.message);
  return out;
}

// ------------------------------------------------------------------------------------------ pipelines

const modules = new WeakMap<GPUDevice, Map<string, Promise<GPUShaderModule>>>();
const pipelines = new WeakMap<GPUDevice, Map<string, Promise<GPUComputePipeline>>>();

/** Memoize a failing-or-not promise per device and key; a rejection is forgotten so it is reported again. */
function cached<T>(
  store: WeakMap<GPUDevice, Map<string, Promise<T>>>,
  device: GPUDevice,
  key: string,
  make: () => Promise<T>,
): Promise<T> {
  let map = store.get(device);
  if (!map) store.set(device, (map = new Map()));
  const hit = map.get(key);
  if (hit) return hit;
  const made = make();
  map.set(key, made);
  made.catch(() => map.delete(key));
  return made;
}

async function compileModule(device: GPUDevice, code: string, label: string): Promise<GPUShaderModule> {
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code, label });
  const info = await module.getCompilationInfo();
  const scopedErr = await device.popErrorScope();
  const messages: WgslMessage[] = info.messages.map((m) => ({
    type: m.type,
    message: m.message,
    lineNum: m.lineNum,
    linePos: m.linePos,
    offset: m.offset,
    length: m.length,
  }));
  if (messages.some((m) => m.type === 'error') || scopedErr) {
    if (!messages.length && scopedErr)
      messages.push({
        type: 'error',
        message: scopedErr.message,
        lineNum: 0,
        linePos: 0,
        offset: 0,
        length: 0,
      });
    throw new WgslCompileError(label, messages, code);
  }
  return module;
}

/**
 * The compute pipeline of (code, entry point), created once per device: pipeline creation is where a
 * driver compiles (seconds per kernel on SwiftShader), and a layout-'auto' pipeline is reusable with
 * fresh bind groups. Compile errors come back as WgslCompileError with positioned messages.
 */
function pipelineOf(device: GPUDevice, pass: PassSpec, code: string): Promise<GPUComputePipeline> {
  return cached(pipelines, device, `${pass.entryPoint}\n${code}`, async () => {
    const module = await cached(modules, device, code, () => compileModule(device, code, pass.label));
    return scoped(device, pass.label, () =>
      device.createComputePipelineAsync({
        label: pass.label,
        layout: 'auto',
        compute: { module, entryPoint: pass.entryPoint },
      }),
    );
  });
}

// --------------------------------------------------------------------------------------------- buffers

const storageUsage = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const usageOf = (b: BufferSpec) =>
  b.kind === 'uniform' ? GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST : storageUsage();

function createBuffer(device: GPUDevice, b: BufferSpec, label: string): GPUBuffer {
  const data = bufferData(b);
  const size = data ? Math.max(4, Math.ceil(data.byteLength / 4) * 4) : bufferBytes(b);
  const buf = device.createBuffer({
    size: b.kind === 'uniform' ? Math.max(16, Math.ceil(size / 16) * 16) : size,
    usage: usageOf(b),
    mappedAtCreation: !!data,
    label,
  });
  if (data) {
    new Uint8Array(buf.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    buf.unmap();
  }
  return buf;
}

/**
 * Buffers uploaded once and shared: a tuner's or a bench's problem inputs, bound by every config it
 * prepares. Buffers of role 'weight' get `banks` GPU-side copies (distinct allocations, so consecutive
 * timed runs that rotate them read memory the cache has not seen); bank 0 is the uploaded original.
 */
export interface ResidentBuffers {
  readonly device: GPUDevice;
  readonly banks: number;
  /** The buffer `name` of bank `bank` (the one buffer for a buffer without banks); undefined if absent. */
  buffer(name: string, bank?: number): GPUBuffer | undefined;
  /** Bytes of one bank of the rotated buffers. */
  readonly bankBytes: number;
  destroy(): void;
}

/**
 * Upload `specs` once; every 'weight' buffer gets `banks` copies (default 1).
 * @example const res = uploadResident(device, plan.buffers.filter((b) => b.data), { banks: banksFor(bytes, l2) });
 */
export function uploadResident(
  device: GPUDevice,
  specs: readonly BufferSpec[],
  opts: { banks?: number; label?: string } = {},
): ResidentBuffers {
  const banks = Math.max(1, Math.floor(opts.banks ?? 1));
  const label = opts.label ? `${opts.label}:` : '';
  const buffers = new Map<string, GPUBuffer[]>();
  let bankBytes = 0;
  const enc = device.createCommandEncoder();
  try {
    for (const b of specs) {
      if (buffers.has(b.name)) throw new RangeError(`two buffers are named ${b.name}`);
      const src = createBuffer(device, b, `${label}${b.name}`);
      const list = [src];
      buffers.set(b.name, list);
      if (b.role !== 'weight') continue;
      bankBytes += src.size;
      for (let i = 1; i < banks; i++) {
        const copy = device.createBuffer({
          size: src.size,
          usage: storageUsage(),
          label: `${label}${b.name}#${i}`,
        });
        enc.copyBufferToBuffer(src, 0, copy, 0, src.size);
        list.push(copy);
      }
    }
  } catch (e) {
    for (const list of buffers.values()) list.forEach((x) => x.destroy());
    throw e;
  }
  device.queue.submit([enc.finish()]);
  return {
    device,
    banks,
    bankBytes,
    buffer: (name, bank = 0) => {
      const list = buffers.get(name);
      return list?.[bank % list.length];
    },
    destroy() {
      for (const list of buffers.values()) list.forEach((x) => x.destroy());
      buffers.clear();
    },
  };
}

/**
 * Banks needed so consecutive runs read >= 4x the L2 of distinct weight bytes (1..16).
 * @example banksFor(9.4e6, 60 * 2 ** 20) // 16
 */
export function banksFor(bytesPerBank: number, l2Bytes: number): number {
  return Math.max(1, Math.min(16, Math.ceil((4 * l2Bytes) / Math.max(1, bytesPerBank))));
}

/** Read a GPU buffer back to the host. */
export async function readBuffer(device: GPUDevice, src: GPUBuffer, bytes = src.size): Promise<ArrayBuffer> {
  const staging = device.createBuffer({
    size: bytes,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  try {
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(src, 0, staging, 0, bytes);
    device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = staging.getMappedRange().slice(0);
    staging.unmap();
    return out;
  } finally {
    staging.destroy();
  }
}

// ---------------------------------------------------------------------------------------------- timing

/** How a timing is taken (the same defaults serve the app, the tuner and the bench). */
export interface TimingOptions {
  /** GPU time per timed batch, ms: the batch's run count is calibrated to it (>= 1 run). */
  targetMs: number;
  /** Timed batches; as many again (at most) while their slowest exceeds their fastest by BATCH_SPREAD_LIMIT. */
  batches: number;
  /** Most runs in one batch. */
  maxRuns?: number;
  /** Untimed work (ms) before the first batch, for GPUs that idle their clocks (0: none; clockWarmMs). */
  warmMs?: number;
  /** 'plan': every pass in order (what the op costs); a pass index: that pass alone. */
  passes?: 'plan' | number;
  /** One run's ms if already known (e.g. the correctness run's wall time): sizes the batch without a probe. */
  estimateMs?: number;
  /** Checked between batches (and warm-up batches): throws CancelledError. */
  cancelled?: () => boolean;
  /** After each timed batch: batches done and planned so far. */
  onBatch?: (done: number, planned: number) => void;
}

/** One timing. */
export interface Timing {
  /** The fastest batch's ms per run. */
  ms: number;
  /** Every batch's ms per run, in order. */
  samples: number[];
  /** Runs per batch. */
  runs: number;
  method: 'timestamp' | 'wall';
  /**
   * The timer's step, ns: for timestamps the largest step every raw value was a multiple of (Chrome
   * quantizes to 100 us unless developer flags are on, Dawn in Node to 65,536 ns unless its
   * timestamp_quantization toggle is off); for the wall clock the step performance.now() showed.
   */
  resolutionNs: number;
  /** The fastest batch lasted under 10 timer steps: the figure is no finer than the step. */
  coarse: boolean;
}

/** The defaults of every timing (app, tuner, bench): about 25 ms of work a batch, six batches. */
export const TIMING_DEFAULTS = { targetMs: 25, batches: 6 } as const;

/**
 * Batches whose slowest takes more than this times the fastest disagree, and as many batches again are
 * timed (see docs/decisions/0006-timing-method.md); a steady config's batches agree within 1%.
 */
export const BATCH_SPREAD_LIMIT = 1.1;

/** True when the batches' slowest is within BATCH_SPREAD_LIMIT of their fastest. */
export const batchesAgree = (samples: readonly number[]): boolean =>
  Math.max(...samples) <= BATCH_SPREAD_LIMIT * Math.min(...samples);

/**
 * Time `batches` batches with `batch()` (ms per run each), and as many again while they disagree
 * (batchesAgree); cancellation is checked before each batch. Every timing of the runner takes its
 * batches this way, and the bench's ONNX Runtime rows too.
 * @example const samples = await timedBatches(6, () => timeOneBatch()); Math.min(...samples)
 */
export async function timedBatches(
  batches: number,
  batch: () => Promise<number>,
  cancelled?: () => boolean,
  onBatch?: (done: number, planned: number) => void,
): Promise<number[]> {
  const samples: number[] = [];
  const planned = () => (samples.length < batches || batchesAgree(samples) ? batches : 2 * batches);
  while (samples.length < planned()) {
    checkCancelled(cancelled);
    samples.push(await batch());
    onBatch?.(samples.length, planned());
  }
  return samples;
}

/**
 * The least untimed GPU work (ms) before a timing on a hardware adapter: GPUs drop their clocks between
 * short bursts of work (docs/decisions/0006-timing-method.md). CPU adapters need none.
 */
export const CLOCK_WARM_MS = 150;

/** The clock warm-up a timing takes on an adapter: CLOCK_WARM_MS, or 0 on a CPU adapter. */
export const clockWarmMs = (caps: AdapterCaps): number => (isSoftwareAdapter(caps) ? 0 : CLOCK_WARM_MS);

/** When each device last finished timed work, to tell a short gap from a long idle. */
const lastBusy = new WeakMap<GPUDevice, number>();
/** Untimed work per warm-up batch. */
const WARM_BATCH_MS = 25;
/** Idle longer than this and a GPU may be at its idle clocks: warm four times as long. */
const IDLE_GAP_MS = 500;

function gcd(a: bigint, b: bigint): bigint {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The largest power-of-ten-or-two-ish step all raw timestamps share (1 ns when they share none). */
function timestampStep(values: readonly bigint[]): number {
  const g = values.reduce((acc, v) => gcd(acc, v), 0n);
  return g > 0n ? Number(g) : 1;
}

/** performance.now()'s step on this host, ns (browsers coarsen it; Node gives microseconds or better). */
function wallStepNs(): number {
  const a = performance.now();
  let b = a;
  for (let i = 0; i < 1e5 && b === a; i++) b = performance.now();
  return Math.max(1, Math.round((b - a) * 1e6));
}

// ---------------------------------------------------------------------------------------- prepared plan

export interface PrepareOptions {
  /** Replace the WGSL of a pass (index -> code), e.g. the user's edited kernel. */
  wgslOverride?: Readonly<Record<number, string>>;
  /** Shared, already uploaded buffers (by name; their banks rotate in timings). */
  resident?: ResidentBuffers;
  /** Cold weight banks to copy when there is no `resident` (default 1). */
  banks?: number;
}

export interface PreparedPlan {
  readonly plan: KernelPlan;
  readonly banks: number;
  /**
   * One run of every pass on bank 0: buffers without initial data (scratch, debug) are zeroed first and
   * an output without initial data is filled with NaN, so an element nothing wrote shows as NaN.
   */
  run(): Promise<void>;
  /** A buffer's contents (after run). */
  read(name: string): Promise<ArrayBuffer>;
  time(opts: TimingOptions): Promise<Timing>;
  /** Free the plan's own buffers (resident ones belong to their owner). */
  destroy(): void;
}

/**
 * Prepare a plan on a device: create (or take from `resident`) every buffer, compile every pass, bind
 * each pass once per weight bank. Throws WgslCompileError / GpuValidationError with the pass's label.
 * @example
 * const p = await preparePlan(device, plan);
 * try { await p.run(); out = new Float32Array(await p.read(plan.output)); t = await p.time(TIMING_DEFAULTS); }
 * finally { p.destroy(); }
 */
export async function preparePlan(
  device: GPUDevice,
  plan: KernelPlan,
  opts: PrepareOptions = {},
): Promise<PreparedPlan> {
  const own = new Map<string, GPUBuffer>();
  const zeroed: string[] = [];
  const resident = opts.resident;
  const local = resident
    ? undefined
    : uploadResident(
        device,
        plan.buffers.filter((b) => b.data),
        opts,
      );
  const banks = (resident ?? local)!.banks;
  const destroyOwn = () => {
    for (const b of own.values()) b.destroy();
    own.clear();
    local?.destroy();
  };
  try {
    for (const b of plan.buffers) {
      const shared = (resident ?? local)!.buffer(b.name);
      if (shared) {
        if (resident && b.data && shared.size < bufferBytes(b))
          throw new RangeError(
            `resident buffer ${b.name} has ${shared.size} bytes, the plan needs ${bufferBytes(b)}`,
          );
        continue;
      }
      if (b.data && resident) own.set(b.name, createBuffer(device, b, b.name));
      else if (!b.data) {
        own.set(b.name, createBuffer(device, b, b.name));
        if (b.kind !== 'uniform') zeroed.push(b.name);
      }
    }
    const bufferOf = (name: string, bank: number) => own.get(name) ?? (resident ?? local)!.buffer(name, bank);
    const steps: {
      pipeline: GPUComputePipeline;
      groups: GPUBindGroup[];
      workgroups: readonly [number, number, number];
    }[] = [];
    for (const [i, pass] of plan.passes.entries()) {
      const pipeline = await pipelineOf(device, pass, opts.wgslOverride?.[i] ?? pass.wgsl);
      const groups = await scoped(device, pass.label, () =>
        Array.from({ length: banks }, (_, bank) =>
          device.createBindGroup({
            label: `${pass.label} bank ${bank}`,
            layout: pipeline.getBindGroupLayout(0),
            entries: pass.bindings.map((name, binding) => {
              const buffer = bufferOf(name, bank);
              if (!buffer)
                throw new GpuValidationError(pass.label, `binds ${name}, which the plan does not have`);
              return { binding, resource: { buffer } };
            }),
          }),
        ),
      );
      steps.push({ pipeline, groups, workgroups: pass.workgroups });
    }
    return makePrepared(device, plan, steps, banks, bufferOf, zeroed, destroyOwn);
  } catch (e) {
    destroyOwn();
    throw e;
  }
}

type Step = {
  pipeline: GPUComputePipeline;
  groups: GPUBindGroup[];
  workgroups: readonly [number, number, number];
};

function makePrepared(
  device: GPUDevice,
  plan: KernelPlan,
  steps: readonly Step[],
  banks: number,
  bufferOf: (name: string, bank: number) => GPUBuffer | undefined,
  zeroed: readonly string[],
  destroyOwn: () => void,
): PreparedPlan {
  let destroyed = false;
  const live = () => {
    if (destroyed) throw new Error('prepared plan used after destroy()');
  };
  /** Encode `runs` runs of `which` steps into one compute pass, run i binding bank (start + i) % banks. */
  const encodeRuns = (
    enc: GPUCommandEncoder,
    which: readonly Step[],
    runs: number,
    ts?: GPUComputePassTimestampWrites,
  ) => {
    const cp = enc.beginComputePass(ts ? { timestampWrites: ts } : {});
    for (let i = 0; i < runs; i++)
      for (const s of which) {
        cp.setPipeline(s.pipeline);
        cp.setBindGroup(0, s.groups[i % s.groups.length]!);
        cp.dispatchWorkgroups(...s.workgroups);
      }
    cp.end();
  };
  const untimed = async (which: readonly Step[], runs: number) => {
    const enc = device.createCommandEncoder();
    encodeRuns(enc, which, runs);
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
  };
  const wallRun = async (which: readonly Step[], runs: number) => {
    const t0 = performance.now();
    await untimed(which, runs);
    return (performance.now() - t0) / runs;
  };
  /** Untimed batches until the clocks look settled: >= warmMs (4x after an idle gap), then until two
   * batches in a row ran no more than 2% faster per run than the one before, at most 10 x warmMs. */
  const warm = async (which: readonly Step[], perRun: number, warmMs: number, cancelled?: () => boolean) => {
    const t0 = performance.now();
    const idle = t0 - (lastBusy.get(device) ?? -Infinity) > IDLE_GAP_MS;
    const least = idle ? 4 * warmMs : warmMs;
    let settled = 0;
    for (;;) {
      checkCancelled(cancelled);
      const spent = performance.now() - t0;
      if (spent >= 10 * warmMs || (spent >= least && settled >= 2)) return;
      const runs = Math.max(1, Math.min(4096, Math.ceil(WARM_BATCH_MS / Math.max(perRun, 1e-3))));
      const now = await wallRun(which, runs);
      settled = now >= perRun * 0.98 ? settled + 1 : 0;
      perRun = now;
    }
  };
  return {
    plan,
    banks,
    async run() {
      live();
      await scoped(device, plan.passes[plan.mainPass]?.label ?? 'run', async () => {
        const enc = device.createCommandEncoder();
        for (const name of zeroed) if (name !== plan.output) enc.clearBuffer(bufferOf(name, 0)!);
        device.queue.submit([enc.finish()]);
        const out = bufferOf(plan.output, 0);
        if (!out) throw new GpuValidationError('run', `plan output ${plan.output} is not a buffer`);
        // An output without initial contents starts as NaN, so an element nothing wrote shows.
        if (zeroed.includes(plan.output)) {
          const chunk = Math.min(out.size / 4, 1 << 22);
          const nan = new Float32Array(chunk).fill(NaN);
          for (let off = 0; off < out.size; off += nan.byteLength)
            device.queue.writeBuffer(out, off, nan, 0, Math.min(chunk, (out.size - off) / 4));
        }
        const run = device.createCommandEncoder();
        // Each pass in its own compute pass, bank 0: exactly what a user's single run does.
        for (const s of steps) encodeRuns(run, [{ ...s, groups: [s.groups[0]!] }], 1);
        device.queue.submit([run.finish()]);
      });
      await device.queue.onSubmittedWorkDone();
    },
    async read(name) {
      live();
      const b = bufferOf(name, 0);
      if (!b) throw new RangeError(`the plan has no buffer ${name}`);
      return readBuffer(device, b);
    },
    async time(o) {
      live();
      const which = o.passes === undefined || o.passes === 'plan' ? steps : [steps[o.passes]!];
      if (!which.length || !which[0]) throw new RangeError(`no pass ${String(o.passes)} to time`);
      // One run per bank first (pipelines warm, every bank touched); its wall time is the estimate.
      const first = Math.max(1, Math.min(banks, 16));
      const probe = await wallRun(which, first);
      const estimate = o.estimateMs ?? probe;
      if (o.warmMs && o.warmMs > 0) await warm(which, estimate, o.warmMs, o.cancelled);
      const runs = Math.max(
        1,
        Math.min(o.maxRuns ?? 100_000, Math.round(o.targetMs / Math.max(estimate, 1e-4))),
      );
      const timestamps = device.features.has('timestamp-query');
      const raw: bigint[] = [];
      const samples: number[] = [];
      const batch = async (): Promise<number> => {
        if (!timestamps) return wallRun(which, runs);
        const qs = device.createQuerySet({ type: 'timestamp', count: 2 });
        const resolve = device.createBuffer({
          size: 16,
          usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
        });
        try {
          const enc = device.createCommandEncoder();
          encodeRuns(enc, which, runs, {
            querySet: qs,
            beginningOfPassWriteIndex: 0,
            endOfPassWriteIndex: 1,
          });
          enc.resolveQuerySet(qs, 0, 2, resolve, 0);
          device.queue.submit([enc.finish()]);
          const t = new BigUint64Array(await readBuffer(device, resolve, 16));
          raw.push(t[0]!, t[1]!);
          return Number(t[1]! - t[0]!) / 1e6 / runs;
        } finally {
          qs.destroy();
          resolve.destroy();
        }
      };
      samples.push(...(await timedBatches(o.batches, batch, o.cancelled, o.onBatch)));
      lastBusy.set(device, performance.now());
      const ms = Math.min(...samples);
      // A quantized timer can read a whole batch as 0: then the wall clock is the only honest figure.
      if (timestamps && ms <= 0) {
        const wall = await wallRun(which, runs);
        return { ms: wall, samples: [wall], runs, method: 'wall', resolutionNs: wallStepNs(), coarse: true };
      }
      const resolutionNs = timestamps ? timestampStep(raw) : wallStepNs();
      return {
        ms,
        samples,
        runs,
        method: timestamps ? 'timestamp' : 'wall',
        resolutionNs,
        coarse: ms * runs * 1e6 < 10 * resolutionNs,
      };
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      destroyOwn();
    },
  };
}

/** What runPlan returns: the output, the extra reads, and the timing when asked for. */
export interface RunResult {
  output: ArrayBuffer;
  reads: Record<string, ArrayBuffer>;
  timing?: Timing;
}

/**
 * Prepare, run once, read back, optionally time, destroy: the one-shot use of the runner (tests, CLI).
 * @example const r = await runPlan(device, buildMmqPlan(ds.inputs, 32, 64, 256, spec)); new Float32Array(r.output)
 */
export async function runPlan(
  device: GPUDevice,
  plan: KernelPlan,
  opts: PrepareOptions & { read?: readonly string[]; timing?: TimingOptions } = {},
): Promise<RunResult> {
  const p = await preparePlan(device, plan, opts);
  try {
    await p.run();
    const output = await p.read(plan.output);
    const reads: Record<string, ArrayBuffer> = {};
    for (const name of opts.read ?? []) reads[name] = await p.read(name);
    return { output, reads, ...(opts.timing ? { timing: await p.time(opts.timing) } : {}) };
  } finally {
    p.destroy();
  }
}
