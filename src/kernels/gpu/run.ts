// Execute a KernelPlan on a GPUDevice: upload, compile (with compilation messages surfaced), dispatch,
// time (timestamp queries when the device has them, else wall clock over N dispatches), read back.
import { isSoftwareAdapter, type AdapterCaps } from './caps';
import { bufferBytes, checkGrid, type KernelPlan, type PassSpec } from './plan';

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

export interface RunOptions {
  /** Replace the WGSL of a pass (index -> code), e.g. the user's edited shader. */
  wgslOverride?: Readonly<Record<number, string>>;
  /** Timed repetitions of the main pass (and, for a multi-pass plan, of each pass and the whole plan)
   * after the first (correctness) run; 0 = no timing. */
  iters?: number;
  /** Extra buffers to read back besides the output (e.g. an ownership debug buffer). */
  read?: readonly string[];
  /** Called between timed batches; return true to stop early (cancellation). */
  cancelled?: () => boolean;
  /** Untimed warm-up before each timing (timePasses; clockWarmMs(caps) on hardware, 0 = none). */
  warmMs?: number;
}

export interface RunResult {
  output: ArrayBuffer;
  reads: Record<string, ArrayBuffer>;
  /** Mean ms per dispatch of the main pass over `iters`, when timed. */
  msPerDispatch?: number;
  timing?: 'timestamp' | 'wall';
  /**
   * A plan of several passes, timed: ms per run of ALL its passes back to back (what the op costs), and
   * each pass alone in plan order. Absent for one-pass plans (msPerDispatch is the whole plan).
   */
  planMs?: number;
  passMs?: readonly { label: string; ms: number }[];
  warnings: WgslMessage[];
}

const moduleCache = new WeakMap<GPUDevice, Map<string, GPUShaderModule>>();

/** Compile WGSL, returning the module or throwing WgslCompileError with positioned messages. */
export async function compileWgsl(device: GPUDevice, code: string, label: string): Promise<GPUShaderModule> {
  let cache = moduleCache.get(device);
  if (!cache) moduleCache.set(device, (cache = new Map()));
  const hit = cache.get(code);
  if (hit) return hit;
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code, label });
  const info = await module.getCompilationInfo();
  const scoped = await device.popErrorScope();
  const messages: WgslMessage[] = info.messages.map((m) => ({
    type: m.type,
    message: m.message,
    lineNum: m.lineNum,
    linePos: m.linePos,
    offset: m.offset,
    length: m.length,
  }));
  if (messages.some((m) => m.type === 'error') || scoped) {
    if (!messages.length && scoped)
      messages.push({ type: 'error', message: scoped.message, lineNum: 0, linePos: 0, offset: 0, length: 0 });
    throw new WgslCompileError(label, messages, code);
  }
  cache.set(code, module);
  return module;
}

const pipelineCache = new WeakMap<GPUDevice, Map<string, Promise<GPUComputePipeline>>>();

/**
 * The compute pipeline of (code, entry point), created once per device: pipeline creation is where a
 * driver compiles (seconds per kernel on SwiftShader), and a layout-'auto' pipeline is reusable with
 * fresh bind groups. A failed creation is not cached, so its error is reported again next time.
 */
function makePipeline(device: GPUDevice, pass: PassSpec, code: string): Promise<GPUComputePipeline> {
  let cache = pipelineCache.get(device);
  if (!cache) pipelineCache.set(device, (cache = new Map()));
  const key = `${pass.entryPoint}\n${code}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const made = createPipeline(device, pass, code);
  cache.set(key, made);
  made.catch(() => cache.delete(key));
  return made;
}

async function createPipeline(device: GPUDevice, pass: PassSpec, code: string): Promise<GPUComputePipeline> {
  const module = await compileWgsl(device, code, pass.label);
  device.pushErrorScope('validation');
  let pipeline: GPUComputePipeline;
  try {
    pipeline = await device.createComputePipelineAsync({
      label: pass.label,
      layout: 'auto',
      compute: { module, entryPoint: pass.entryPoint },
    });
  } catch (e) {
    await device.popErrorScope();
    throw new GpuValidationError(pass.label, e instanceof Error ? e.message : String(e));
  }
  const err = await device.popErrorScope();
  if (err) throw new GpuValidationError(pass.label, err.message);
  return pipeline;
}

function usageOf(kind: string): number {
  const base = GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  return kind === 'uniform' ? base | GPUBufferUsage.UNIFORM : base | GPUBufferUsage.STORAGE;
}

/** Read a GPU buffer back to the host. */
export async function readBuffer(device: GPUDevice, src: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
  const staging = device.createBuffer({
    size: bytes,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(src, 0, staging, 0, bytes);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = staging.getMappedRange().slice(0);
  staging.unmap();
  staging.destroy();
  return out;
}

/** Upload a typed array into a new buffer of the given usage. */
export function uploadBuffer(
  device: GPUDevice,
  data: ArrayBufferView,
  usage: number,
  label?: string,
): GPUBuffer {
  const size = Math.max(4, Math.ceil(data.byteLength / 4) * 4);
  const buf = device.createBuffer({
    size,
    usage: usage | GPUBufferUsage.COPY_DST,
    mappedAtCreation: true,
    ...(label ? { label } : {}),
  });
  new Uint8Array(buf.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  buf.unmap();
  return buf;
}

/**
 * Run a plan once for correctness, then optionally time `iters` dispatches of its main pass.
 * @example const r = await runPlan(device, mmqQ8Plan(data, spec)); new Float32Array(r.output)
 */
export async function runPlan(
  device: GPUDevice,
  plan: KernelPlan,
  opts: RunOptions = {},
): Promise<RunResult> {
  const maxDim = device.limits.maxComputeWorkgroupsPerDimension;
  plan.passes.forEach((p) => checkGrid(p, maxDim));
  const buffers = new Map<string, { buf: GPUBuffer; bytes: number }>();
  const warnings: WgslMessage[] = [];
  try {
    for (const b of plan.buffers) {
      const bytes = bufferBytes(b);
      if (bytes > device.limits.maxStorageBufferBindingSize) {
        throw new RangeError(
          `buffer ${b.name} is ${bytes} bytes > maxStorageBufferBindingSize ${device.limits.maxStorageBufferBindingSize}`,
        );
      }
      const buf = b.data
        ? uploadBuffer(device, b.data, usageOf(b.kind), b.name)
        : device.createBuffer({ size: bytes, usage: usageOf(b.kind), label: b.name });
      buffers.set(b.name, { buf, bytes });
    }
    const pipelines: GPUComputePipeline[] = [];
    const groups: GPUBindGroup[] = [];
    for (const [i, pass] of plan.passes.entries()) {
      const code = opts.wgslOverride?.[i] ?? pass.wgsl;
      const pipeline = await makePipeline(device, pass, code);
      device.pushErrorScope('validation');
      const group = device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: pass.bindings.map((name, binding) => {
          const b = buffers.get(name);
          if (!b) throw new Error(`${pass.label}: unknown buffer ${name}`);
          return { binding, resource: { buffer: b.buf } };
        }),
      });
      const err = await device.popErrorScope();
      if (err) throw new GpuValidationError(pass.label, err.message);
      pipelines.push(pipeline);
      groups.push(group);
    }
    const encodeAll = (enc: GPUCommandEncoder) => {
      plan.passes.forEach((pass, i) => {
        const cp = enc.beginComputePass({ label: pass.label });
        cp.setPipeline(pipelines[i]!);
        cp.setBindGroup(0, groups[i]!);
        cp.dispatchWorkgroups(...pass.workgroups);
        cp.end();
      });
    };
    device.pushErrorScope('validation');
    const enc = device.createCommandEncoder();
    encodeAll(enc);
    device.queue.submit([enc.finish()]);
    const err = await device.popErrorScope();
    if (err) throw new GpuValidationError('dispatch', err.message);
    const out = buffers.get(plan.output);
    if (!out) throw new Error(`plan output ${plan.output} is not a buffer`);
    const output = await readBuffer(device, out.buf, out.bytes);
    const reads: Record<string, ArrayBuffer> = {};
    for (const name of opts.read ?? []) {
      const b = buffers.get(name);
      if (b) reads[name] = await readBuffer(device, b.buf, b.bytes);
    }
    const result: RunResult = { output, reads, warnings };
    const iters = opts.iters ?? 0;
    if (iters > 0) {
      const steps = plan.passes.map((pass, i) => ({
        pipeline: pipelines[i]!,
        groups: [groups[i]!],
        workgroups: pass.workgroups,
      }));
      // One timing at a time: the wall-clock fallback must not see another timing's work. The warm-up
      // goes before the first; the rest follow it back to back.
      const alone: { ms: number; timing: 'timestamp' | 'wall' }[] = [];
      for (const [i, step] of steps.entries())
        alone.push(await timePasses(device, [step], iters, opts.cancelled, i === 0 ? (opts.warmMs ?? 0) : 0));
      const t = alone[plan.mainPass]!;
      result.msPerDispatch = t.ms;
      result.timing = t.timing;
      if (steps.length > 1) {
        result.passMs = alone.map((p, i) => ({ label: plan.passes[i]!.label, ms: p.ms }));
        result.planMs = (await timePasses(device, steps, iters, opts.cancelled)).ms;
      }
    }
    return result;
  } finally {
    for (const { buf } of buffers.values()) buf.destroy();
  }
}

/** One dispatch of a timed sequence: its pipeline, the bind groups it rotates through, its grid. */
export interface DispatchStep {
  pipeline: GPUComputePipeline;
  /** Iteration i binds groups[i % groups.length] (e.g. cold weight banks). */
  groups: readonly GPUBindGroup[];
  workgroups: readonly [number, number, number];
}

/**
 * Record one run of `steps` into a compute pass, iteration `i` binding each step's groups[i % length].
 * @example encodeSteps(pass, steps, 0); // every pass of a plan on bank 0
 */
export function encodeSteps(pass: GPUComputePassEncoder, steps: readonly DispatchStep[], i: number): void {
  for (const s of steps) {
    pass.setPipeline(s.pipeline);
    pass.setBindGroup(0, s.groups[i % s.groups.length]!);
    pass.dispatchWorkgroups(...s.workgroups);
  }
}

/**
 * The least untimed GPU work (ms) before a config's timed runs on a hardware adapter (timePasses'
 * warm-up): on the H200 the SM clock fell from 1980 to 345 MHz between short bursts of work and stayed
 * there for whole configs (docs/benchmarks.md, "Follow-up 3"). The bench and the worker's tuner use it.
 */
export const CLOCK_WARM_MS = 150;

/** The clock warm-up a tuner's timings take on an adapter: CLOCK_WARM_MS, or 0 on a CPU adapter. */
export function clockWarmMs(caps: AdapterCaps): number {
  return isSoftwareAdapter(caps) ? 0 : CLOCK_WARM_MS;
}

/**
 * Time `iters` dispatches of one pipeline, rotating through `groups` (e.g. cold weight banks).
 * Uses timestamp queries around one compute pass when the device has them, else wall clock.
 */
export function timeDispatches(
  device: GPUDevice,
  pipeline: GPUComputePipeline,
  groups: readonly GPUBindGroup[],
  workgroups: readonly [number, number, number],
  iters: number,
  cancelled?: () => boolean,
  warmMs = 0,
): Promise<{ ms: number; timing: 'timestamp' | 'wall' }> {
  return timePasses(device, [{ pipeline, groups, workgroups }], iters, cancelled, warmMs);
}

/** When each device last finished timed work (timePasses), to tell a short gap from a long idle. */
const lastBusy = new WeakMap<GPUDevice, number>();
/** Untimed work per warm-up batch: long enough for its wall time per run to mean something. */
const WARM_BATCH_MS = 25;
/**
 * Idle longer than this and a GPU may be at its idle clocks: on the H200, a few seconds of CPU-only
 * work (the gate's oracle) left the SM clock at 345 MHz, and 150 ms of work did not bring it back: the
 * autokernel then timed the tuned plan at 0.81 ms against 0.236 ms in the hunt (docs/benchmarks.md,
 * "Follow-up 10").
 */
const IDLE_GAP_MS = 500;

/**
 * Untimed batches until the clocks look settled: at least `warmMs` (4x after an idle gap), then until two
 * batches in a row ran no more than 2% faster per run than the one before (a clock still ramping up shows
 * as runs getting faster), at most 10 x warmMs.
 */
async function warmUntilSettled(
  device: GPUDevice,
  untimed: (runs: number) => Promise<void>,
  perRunMs: number,
  warmMs: number,
  cancelled?: () => boolean,
): Promise<void> {
  const t0 = performance.now();
  const idle = t0 - (lastBusy.get(device) ?? -Infinity) > IDLE_GAP_MS;
  const least = idle ? 4 * warmMs : warmMs;
  let perRun = perRunMs;
  let settled = 0;
  while (!cancelled?.()) {
    const spent = performance.now() - t0;
    if (spent >= 10 * warmMs || (spent >= least && settled >= 2)) break;
    const n = Math.max(1, Math.min(4096, Math.ceil(WARM_BATCH_MS / Math.max(perRun, 1e-3))));
    const t1 = performance.now();
    await untimed(n);
    const now = (performance.now() - t1) / n;
    settled = now >= perRun * 0.98 ? settled + 1 : 0;
    perRun = now;
  }
}

/**
 * Time `iters` runs of a sequence of dispatches (a multi-pass plan: pre-passes, then the GEMM), each run
 * dispatching every step in order; ms per run. All runs go in one compute pass: WebGPU makes each
 * dispatch's storage writes visible to the next, so the passes chain as they do in runPlan.
 * @example const t = await timePasses(device, [prePass, gemm], 20); // t.ms = pre-pass + GEMM
 * @example await timePasses(device, steps, 20, undefined, CLOCK_WARM_MS); // clocks ramped up first
 */
export async function timePasses(
  device: GPUDevice,
  steps: readonly DispatchStep[],
  iters: number,
  cancelled?: () => boolean,
  warmMs = 0,
): Promise<{ ms: number; timing: 'timestamp' | 'wall' }> {
  if (steps.length === 0) throw new RangeError('timePasses: no dispatch to time');
  const banks = Math.max(...steps.map((s) => s.groups.length));
  const encodeBatch = (
    enc: GPUCommandEncoder,
    n: number,
    start: number,
    ts?: GPUComputePassTimestampWrites,
  ) => {
    const cp = enc.beginComputePass(ts ? { timestampWrites: ts } : {});
    for (let i = 0; i < n; i++) encodeSteps(cp, steps, start + i);
    cp.end();
  };
  const untimed = async (n: number) => {
    const enc = device.createCommandEncoder();
    encodeBatch(enc, n, 0);
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
  };
  // Warm-up: one run per bank group; then, with warmMs > 0 (CLOCK_WARM_MS on hardware), untimed
  // batches of about WARM_BATCH_MS until the clocks look settled (see warmUntilSettled).
  const t0w = performance.now();
  const first = Math.max(2, banks);
  await untimed(first);
  if (warmMs > 0)
    await warmUntilSettled(device, untimed, (performance.now() - t0w) / first, warmMs, cancelled);
  if (device.features.has('timestamp-query')) {
    const qs = device.createQuerySet({ type: 'timestamp', count: 2 });
    const resolve = device.createBuffer({
      size: 16,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    try {
      const enc = device.createCommandEncoder();
      encodeBatch(enc, iters, 0, { querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 });
      enc.resolveQuerySet(qs, 0, 2, resolve, 0);
      device.queue.submit([enc.finish()]);
      const raw = new BigUint64Array(await readBuffer(device, resolve, 16));
      const ns = Number(raw[1]! - raw[0]!);
      lastBusy.set(device, performance.now());
      if (ns > 0) return { ms: ns / 1e6 / iters, timing: 'timestamp' };
    } finally {
      qs.destroy();
      resolve.destroy();
    }
  }
  const batch = Math.max(1, Math.min(iters, 16));
  const t0 = performance.now();
  let done = 0;
  while (done < iters) {
    if (cancelled?.()) break;
    const n = Math.min(batch, iters - done);
    const enc = device.createCommandEncoder();
    encodeBatch(enc, n, done);
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    done += n;
  }
  lastBusy.set(device, performance.now());
  return { ms: (performance.now() - t0) / Math.max(1, done), timing: 'wall' };
}
