// The one runner: every plan the app, the tuner, the bench and the CLI execute goes through here, and
// this is the only module that creates compute pipelines. A plan is PREPARED once (buffers uploaded,
// cold weight banks copied, pipelines compiled, bind groups made), then run, read back and timed as often
// as needed, and destroyed. Timing has one method everywhere, in ./timing.ts.
import { CancelledError, checkCancelled } from '../cancel';
import {
  firstSliceCount,
  GRID_SLICE_BINDING,
  GRID_SLICE_BYTES,
  gridSliceData,
  nextGridBox,
  nextSliceCount,
  type Grid,
} from './gridSlice';
import { bufferBytes, bufferData, type BufferSpec, type KernelPlan, type PassSpec } from './plan';
import { timeWork, type Timing, type TimingOptions } from './timing';

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
    throw e instanceof GpuValidationError || e instanceof WgslCompileError || e instanceof CancelledError
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

// ---------------------------------------------------------------------------------------- prepared plan

export interface PrepareOptions {
  /** Replace the WGSL of a pass (index -> code), e.g. the user's edited kernel. */
  wgslOverride?: Readonly<Record<number, string>>;
  /** Shared, already uploaded buffers (by name; their banks rotate in timings). */
  resident?: ResidentBuffers;
  /** Cold weight banks to copy when there is no `resident` (default 1). */
  banks?: number;
  /** Checked between submissions of every run and timing of the plan: throws CancelledError. */
  cancelled?: () => boolean;
}

/** How a single run goes: its progress, and what it was expected to take (sizes the first slices). */
export interface RunOptions {
  /** The whole run's expected ms, if known: the first slice of each long pass is sized from it. */
  estimateMs?: number;
  /**
   * Before each submission: the fraction of the run's workgroups submitted before it, and the ms the
   * submission is expected to take on the GPU (undefined when nothing says yet).
   */
  onSubmit?: (fraction: number, expectedMs: number | undefined) => void;
}

export interface PreparedPlan {
  readonly plan: KernelPlan;
  readonly banks: number;
  /**
   * One run of every pass on bank 0: buffers without initial data (scratch, debug) are zeroed first and
   * an output without initial data is filled with NaN, so an element nothing wrote shows as NaN. A pass
   * that reads the grid slice runs as slices of at most about SUBMIT_BUDGET_MS each, the cancel checked
   * between them. Resolves with each pass's wall ms.
   */
  run(opts?: RunOptions): Promise<number[]>;
  /** A buffer's contents (after run). */
  read(name: string): Promise<ArrayBuffer>;
  /**
   * Time the plan or a pass (TimingOptions). The last run's wall time of what is timed bounds one run
   * (`upperMs`): a run longer than the submission budget is timed one sliced run a batch.
   */
  time(opts: TimingOptions): Promise<Timing>;
  /** Whether pass `i` runs in slices (false: the user's text does not read the grid slice). */
  sliced(i: number): boolean;
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
    const steps: Step[] = [];
    for (const [i, pass] of plan.passes.entries()) {
      const pipeline = await pipelineOf(device, pass, opts.wgslOverride?.[i] ?? pass.wgsl);
      const sliceAt = pass.bindings.indexOf(GRID_SLICE_BINDING);
      const slice =
        sliceAt < 0 ? undefined : createSliceUniform(device, pass.workgroups, `${pass.label} grid slice`);
      if (slice) own.set(`${GRID_SLICE_BINDING}#${i}`, slice);
      const groupsOf = (withSlice: boolean) =>
        scoped(device, pass.label, () =>
          Array.from({ length: banks }, (_, bank) =>
            device.createBindGroup({
              label: `${pass.label} bank ${bank}`,
              layout: pipeline.getBindGroupLayout(0),
              entries: pass.bindings.flatMap((name, binding) => {
                if (binding === sliceAt) return withSlice ? [{ binding, resource: { buffer: slice! } }] : [];
                const buffer = bufferOf(name, bank);
                if (!buffer)
                  throw new GpuValidationError(pass.label, `binds ${name}, which the plan does not have`);
                return [{ binding, resource: { buffer } }];
              }),
            }),
          ),
        );
      let groups: GPUBindGroup[];
      let sliced = slice !== undefined;
      try {
        groups = await groupsOf(sliced);
      } catch (e) {
        if (!sliced) throw e;
        // An edited kernel that no longer reads the grid slice has no such binding: it runs whole.
        groups = await groupsOf(false).catch(() => Promise.reject(e));
        sliced = false;
      }
      steps.push({
        pipeline,
        groups,
        workgroups: pass.workgroups,
        ...(sliced ? { slice: slice! } : {}),
      });
    }
    return makePrepared(device, plan, steps, banks, bufferOf, zeroed, destroyOwn, opts.cancelled);
  } catch (e) {
    destroyOwn();
    throw e;
  }
}

/** The slice uniform of a pass, holding (base 0, its grid): what a whole dispatch reads. */
function createSliceUniform(device: GPUDevice, grid: Grid, label: string): GPUBuffer {
  const buf = device.createBuffer({
    size: GRID_SLICE_BYTES,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    mappedAtCreation: true,
    label,
  });
  new Uint32Array(buf.getMappedRange()).set(gridSliceData([0, 0, 0], grid));
  buf.unmap();
  return buf;
}

type Step = {
  pipeline: GPUComputePipeline;
  groups: GPUBindGroup[];
  workgroups: readonly [number, number, number];
  /** The pass's slice uniform, when it runs in slices. */
  slice?: GPUBuffer;
};

const workgroupsOf = (s: Step) => s.workgroups[0] * s.workgroups[1] * s.workgroups[2];

function makePrepared(
  device: GPUDevice,
  plan: KernelPlan,
  steps: readonly Step[],
  banks: number,
  bufferOf: (name: string, bank: number) => GPUBuffer | undefined,
  zeroed: readonly string[],
  destroyOwn: () => void,
  cancelled: (() => boolean) | undefined,
): PreparedPlan {
  let destroyed = false;
  /** Each step's wall ms in the last run (sizes the timings that follow it). */
  let lastStepMs: number[] | undefined;
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
  const submit = async (encode: (enc: GPUCommandEncoder) => void) => {
    const enc = device.createCommandEncoder();
    encode(enc);
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
  };

  /**
   * One run of `which` (bank 0), each step in slices where it reads the grid slice: submitted one at a
   * time, the cancel checked between them. The first slice's timestamp write opens `ts`, the last one's
   * closes it. Returns each step's wall ms.
   */
  const runSliced = async (
    which: readonly Step[],
    o: RunOptions & { ts?: { querySet: GPUQuerySet }; cancelled?: () => boolean } = {},
  ): Promise<number[]> => {
    const stop = o.cancelled ?? cancelled;
    const total = which.reduce((a, s) => a + workgroupsOf(s), 0);
    let submitted = 0;
    const stepMs: number[] = [];
    const tsFor = (first: boolean, last: boolean): GPUComputePassTimestampWrites | undefined =>
      o.ts && (first || last)
        ? {
            querySet: o.ts.querySet,
            ...(first ? { beginningOfPassWriteIndex: 0 } : {}),
            ...(last ? { endOfPassWriteIndex: 1 } : {}),
          }
        : undefined;
    for (const [si, s] of which.entries()) {
      const t0 = performance.now();
      const firstStep = si === 0;
      const lastStep = si === which.length - 1;
      const one = { ...s, groups: [s.groups[0]!] };
      checkCancelled(stop);
      const slice = s.slice;
      if (!slice) {
        o.onSubmit?.(submitted / total, lastStepMs?.[si]);
        await submit((enc) => encodeRuns(enc, [one], 1, tsFor(firstStep, lastStep)));
        submitted += workgroupsOf(s);
      } else {
        const n = workgroupsOf(s);
        const share = o.estimateMs !== undefined ? (o.estimateMs * n) / total : lastStepMs?.[si];
        let want = firstSliceCount(n, share);
        let expected: number | undefined = share !== undefined ? (share * want) / n : undefined;
        for (let done = 0; done < n;) {
          checkCancelled(stop);
          const box = nextGridBox(s.workgroups, done, want);
          const last = done + box.count >= n;
          device.queue.writeBuffer(slice, 0, gridSliceData(box.base, s.workgroups));
          o.onSubmit?.((submitted + done) / total, expected);
          const t = performance.now();
          const ts = tsFor(firstStep && done === 0, lastStep && last);
          await submit((enc) => {
            const cp = enc.beginComputePass(ts ? { timestampWrites: ts } : {});
            cp.setPipeline(one.pipeline);
            cp.setBindGroup(0, one.groups[0]!);
            cp.dispatchWorkgroups(...box.size);
            cp.end();
          });
          const ms = performance.now() - t;
          done += box.count;
          want = nextSliceCount(box.count, ms);
          expected = (ms * want) / box.count;
        }
        // Later whole dispatches (timed batches) read base 0 again.
        device.queue.writeBuffer(slice, 0, gridSliceData([0, 0, 0], s.workgroups));
        submitted += n;
      }
      stepMs.push(performance.now() - t0);
    }
    return stepMs;
  };

  return {
    plan,
    banks,
    sliced: (i) => steps[i]?.slice !== undefined,
    async run(o = {}) {
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
      });
      // Each pass in its own compute pass, bank 0: exactly what a user's single run does.
      const stepMs = await scoped(device, plan.passes[plan.mainPass]?.label ?? 'run', () =>
        runSliced(steps, o),
      );
      lastStepMs = stepMs;
      return stepMs;
    },
    async read(name) {
      live();
      const b = bufferOf(name, 0);
      if (!b) throw new RangeError(`the plan has no buffer ${name}`);
      return readBuffer(device, b);
    },
    async time(o) {
      live();
      const whole = o.passes === undefined || o.passes === 'plan';
      const which = whole ? steps : [steps[o.passes as number]!];
      if (!which.length || !which[0]) throw new RangeError(`no pass ${String(o.passes)} to time`);
      const upperMs = whole ? lastStepMs?.reduce((a, b) => a + b, 0) : lastStepMs?.[o.passes as number];
      const stop = o.cancelled ?? cancelled;
      return timeWork(
        {
          device,
          probeRuns: Math.max(1, Math.min(banks, 16)),
          encode: (enc, runs, ts) => encodeRuns(enc, which, runs, ts),
          read: (buffer, bytes) => readBuffer(device, buffer, bytes),
          runSliced: async (ts) => {
            await runSliced(which, { ...(ts ? { ts } : {}), ...(stop ? { cancelled: stop } : {}) });
          },
        },
        {
          ...o,
          ...(upperMs !== undefined && o.upperMs === undefined ? { upperMs } : {}),
          ...(stop ? { cancelled: stop } : {}),
        },
      );
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
