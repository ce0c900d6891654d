// Resident execution for the bench: a problem's buffers are uploaded ONCE and shared by every config
// (kernel variant) benched on it; the weight buffers get extra bank copies so consecutive timed
// dispatches read a cold weight (banks together several times the L2), and each config is run once
// for correctness on bank 0 into a NaN-poisoned output before it is timed.
import { bufferBytes, checkGrid, type BufferSpec, type PassSpec } from '../src/kernels/gpu/plan';
import { CLOCK_WARM_MS, compileWgsl, readBuffer, timeDispatches, uploadBuffer } from '../src/kernels/gpu/run';

export interface Resident {
  device: GPUDevice;
  buffers: Map<string, GPUBuffer>;
  /** Bank copies per rotated buffer name; index 0 is the uploaded original. */
  banks: Map<string, GPUBuffer[]>;
  bankCount: number;
  /** Bytes of one bank of the rotated buffers. */
  bankBytes: number;
  /** Buffers that start as zeros (sized, no data): cleared before every correctness run. */
  zeroed: string[];
  destroy(): void;
}

// Read lazily: GPUBufferUsage is a Dawn global that exists only once the bench has installed `globals`.
const usage = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/**
 * Upload a problem's buffers; give each `rotate` buffer enough GPU-side copies that `bankCount`
 * banks exist (copies are distinct allocations, so a rotation reads memory the L2 has not seen).
 * @example const res = makeResident(device, plan.buffers, ['wq', 'wd'], banksFor(weightBytes, 60 << 20));
 */
export function makeResident(
  device: GPUDevice,
  specs: readonly BufferSpec[],
  rotate: readonly string[],
  bankCount: number,
): Resident {
  const buffers = new Map<string, GPUBuffer>();
  const banks = new Map<string, GPUBuffer[]>();
  const zeroed: string[] = [];
  const maxBinding = device.limits.maxStorageBufferBindingSize;
  for (const b of specs) {
    const bytes = bufferBytes(b);
    if (b.kind !== 'uniform' && bytes > maxBinding) {
      throw new RangeError(`buffer ${b.name} is ${bytes} B > maxStorageBufferBindingSize ${maxBinding}`);
    }
    const use = b.kind === 'uniform' ? GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST : usage();
    const buf = b.data
      ? uploadBuffer(device, b.data, use, b.name)
      : device.createBuffer({ size: bytes, usage: use, label: b.name });
    if (!b.data) zeroed.push(b.name);
    buffers.set(b.name, buf);
  }
  let bankBytes = 0;
  const enc = device.createCommandEncoder();
  for (const name of rotate) {
    const src = buffers.get(name);
    if (!src) throw new Error(`rotated buffer ${name} is not in the problem`);
    bankBytes += src.size;
    const list = [src];
    for (let i = 1; i < bankCount; i++) {
      const copy = device.createBuffer({ size: src.size, usage: usage(), label: `${name}#${i}` });
      enc.copyBufferToBuffer(src, 0, copy, 0, src.size);
      list.push(copy);
    }
    banks.set(name, list);
  }
  device.queue.submit([enc.finish()]);
  return {
    device,
    buffers,
    banks,
    bankCount: Math.max(1, bankCount),
    bankBytes,
    zeroed,
    destroy() {
      for (const b of buffers.values()) b.destroy();
      for (const list of banks.values()) list.slice(1).forEach((b) => b.destroy());
    },
  };
}

/** Banks needed so `count` consecutive dispatches read >= 4x the L2 of distinct weight bytes (1..16). */
export function banksFor(bytesPerBank: number, l2Bytes: number): number {
  return Math.max(1, Math.min(16, Math.ceil((4 * l2Bytes) / Math.max(1, bytesPerBank))));
}

export interface PreparedPasses {
  pipelines: GPUComputePipeline[];
  /** groups[pass][bank] */
  groups: GPUBindGroup[][];
}

/** Compile every pass and bind it once per bank (the rotated names resolve to that bank's copy). */
export async function preparePasses(res: Resident, passes: readonly PassSpec[]): Promise<PreparedPasses> {
  const { device } = res;
  const pipelines: GPUComputePipeline[] = [];
  const groups: GPUBindGroup[][] = [];
  for (const pass of passes) {
    checkGrid(pass, device.limits.maxComputeWorkgroupsPerDimension);
    const module = await compileWgsl(device, pass.wgsl, pass.label);
    device.pushErrorScope('validation');
    const pipeline = await device.createComputePipelineAsync({
      label: pass.label,
      layout: 'auto',
      compute: { module, entryPoint: pass.entryPoint },
    });
    const perBank: GPUBindGroup[] = [];
    for (let bank = 0; bank < res.bankCount; bank++) {
      perBank.push(
        device.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: pass.bindings.map((name, binding) => {
            const buf = res.banks.get(name)?.[bank] ?? res.buffers.get(name);
            if (!buf) throw new Error(`${pass.label}: unknown buffer ${name}`);
            return { binding, resource: { buffer: buf } };
          }),
        }),
      );
    }
    const err = await device.popErrorScope();
    if (err) throw new Error(`${pass.label}: ${err.message}`);
    pipelines.push(pipeline);
    groups.push(perBank);
  }
  return { pipelines, groups };
}

const POISON_CHUNK = 1 << 22; // floats per poison write (16 MiB)

/**
 * Run every pass once on bank 0 after zeroing the sized buffers and poisoning `output` with NaN; read
 * the output back. A NaN left in it means an element was never written.
 */
export async function runOnce(
  res: Resident,
  passes: readonly PassSpec[],
  prepared: PreparedPasses,
  output: string,
): Promise<Float32Array> {
  const { device } = res;
  const out = res.buffers.get(output);
  if (!out) throw new Error(`output ${output} is not a buffer`);
  const enc0 = device.createCommandEncoder();
  for (const name of res.zeroed) enc0.clearBuffer(res.buffers.get(name)!);
  device.queue.submit([enc0.finish()]);
  const nan = new Float32Array(Math.min(POISON_CHUNK, out.size / 4)).fill(NaN);
  for (let off = 0; off < out.size; off += nan.byteLength) {
    device.queue.writeBuffer(out, off, nan, 0, Math.min(nan.length, (out.size - off) / 4));
  }
  device.pushErrorScope('validation');
  const enc = device.createCommandEncoder();
  passes.forEach((pass, i) => {
    const cp = enc.beginComputePass({ label: pass.label });
    cp.setPipeline(prepared.pipelines[i]!);
    cp.setBindGroup(0, prepared.groups[i]![0]!);
    cp.dispatchWorkgroups(...pass.workgroups);
    cp.end();
  });
  device.queue.submit([enc.finish()]);
  const err = await device.popErrorScope();
  if (err) throw new Error(`dispatch: ${err.message}`);
  return new Float32Array(await readBuffer(device, out, out.size));
}

/**
 * Batches whose slowest takes more than this times the fastest disagree, and the row gets as many batches
 * again. On the H200 a config's batches ran several times slower for seconds at a time, then recovered
 * within the same row, some at full SM clock; a steady config's batches agree within 1%
 * (docs/decisions/0006-timing-method.md).
 */
export const BATCH_SPREAD_LIMIT = 1.1;

/**
 * Timed batches a full run's row takes first (`npm run bench --reps`): on the H200 a row's first one to
 * three batches ran several times slower after its warm-up and then recovered, and three slow batches can
 * agree with each other, so three were too few to see past them (docs/decisions/0006-timing-method.md).
 */
export const BENCH_REPS = 6;

/** True when the batches' slowest is within BATCH_SPREAD_LIMIT of their fastest. */
export const batchesAgree = (samples: readonly number[]): boolean =>
  Math.max(...samples) <= BATCH_SPREAD_LIMIT * Math.min(...samples);

/**
 * Time `reps` batches, then `reps` more when they disagree (batchesAgree); `batch(first)` times one batch
 * (the first one warms the clocks) and returns its ms per dispatch.
 */
export async function timedBatches(
  reps: number,
  batch: (first: boolean) => Promise<number>,
): Promise<number[]> {
  const samples: number[] = [];
  for (let r = 0; r < reps || (r < 2 * reps && !batchesAgree(samples)); r++)
    samples.push(await batch(r === 0));
  return samples;
}

export interface Timing {
  /** The fastest repetition's mean ms per dispatch (a disturbance only adds time). */
  ms: number;
  /** Every repetition's mean ms. */
  samples: number[];
  iters: number;
  timing: 'timestamp' | 'wall';
}

/**
 * Time the main pass, rotating weight banks: a short estimate decides the batch size (about
 * `targetMs` of GPU time per batch, 2..maxIters dispatches), then `reps` batches, and `reps` more when
 * they disagree (batchesAgree); the fastest batch is the row's time.
 */
export async function timeMainPass(
  res: Resident,
  pass: PassSpec,
  prepared: PreparedPasses,
  mainIndex: number,
  opts: { reps: number; targetMs: number; maxIters: number; warmMs?: number },
): Promise<Timing> {
  const pipeline = prepared.pipelines[mainIndex]!;
  const groups = prepared.groups[mainIndex]!;
  const warmMs = opts.warmMs ?? CLOCK_WARM_MS;
  // targetMs <= 0: exactly maxIters dispatches per batch (CI-size runs, the tuner's measure).
  const est =
    opts.targetMs > 0 ? await timeDispatches(res.device, pipeline, groups, pass.workgroups, 2) : undefined;
  const iters = est
    ? Math.max(2, Math.min(opts.maxIters, Math.round(opts.targetMs / Math.max(est.ms, 1e-3))))
    : Math.max(1, opts.maxIters);
  // Keep the clocks up: on the H200 the SM clock fell from 1980 to 345 MHz between short bursts of work
  // and stayed there for whole configs (nvidia-smi; docs/decisions/0006-timing-method.md), so each config
  // first runs untimed work right before its timed batches: timePasses' warm-up before the first batch,
  // at least warmMs and until the per-run times settle (longer after an idle gap), as the worker's tuner
  // does. The batches after it follow back to back.
  let timing: Timing['timing'] = 'wall';
  const samples = await timedBatches(opts.reps, async (first) => {
    const t = await timeDispatches(
      res.device,
      pipeline,
      groups,
      pass.workgroups,
      iters,
      undefined,
      first ? warmMs : 0,
    );
    timing = t.timing;
    return t.ms;
  });
  return { ms: Math.min(...samples), samples, iters, timing };
}
