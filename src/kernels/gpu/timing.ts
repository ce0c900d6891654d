// How every plan is timed (docs/decisions/0006-timing-method.md): back-to-back runs between two GPU
// timestamps (wall clock where the device has none), the batch length calibrated to a target duration,
// several batches, the fastest counting, and untimed warm-up on GPUs that idle their clocks. The runner
// (./runner.ts) hands a prepared plan's runs here as TimedWork; the bench's ONNX Runtime rows take their
// batches through timedBatches.
import { checkCancelled } from '../cancel';
import { isSoftwareAdapter, type AdapterCaps } from './caps';
import { SUBMIT_BUDGET_MS } from './gridSlice';

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
  /**
   * One run's wall ms at most (the last run's, submission and wait included): a run past SUBMIT_BUDGET_MS
   * is timed in slices, and the probe is skipped where its runs would pass the budget. The runner sets it.
   */
  upperMs?: number;
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
  // Stryker disable next-line ConditionalExpression,EqualityOperator: all-zero timestamps read 0 ms, and a 0 ms timing takes the wall clock's step instead
  return g > 0n ? Number(g) : 1;
}

/** performance.now()'s step on this host, ns (browsers coarsen it; Node gives microseconds or better). */
function wallStepNs(): number {
  const a = performance.now();
  let b = a;
  for (let i = 0; i < 1e5 && b === a; i++) b = performance.now();
  return Math.max(1, Math.round((b - a) * 1e6));
}

/** What a timing needs of a prepared plan: its device and a way to encode runs of the passes timed. */
export interface TimedWork {
  readonly device: GPUDevice;
  /** Runs of the untimed probe before everything else (one per weight bank, so every bank is touched). */
  readonly probeRuns: number;
  /** Encode `runs` back-to-back runs into one compute pass, with `timestampWrites` around it when given. */
  encode(enc: GPUCommandEncoder, runs: number, timestampWrites?: GPUComputePassTimestampWrites): void;
  /** The first `bytes` of a GPU buffer, read back (the resolved timestamps). */
  read(buffer: GPUBuffer, bytes: number): Promise<ArrayBuffer>;
  /**
   * One run in bounded submissions (./gridSlice.ts), waited for, timestamps 0 and 1 of `ts` written at
   * its start and end: how a run longer than SUBMIT_BUDGET_MS is timed, so a cancel never waits for
   * more than one slice. Absent: every run is submitted whole.
   */
  runSliced?(ts?: { querySet: GPUQuerySet }): Promise<void>;
}

/**
 * Time `work` as TimingOptions say: a probe run per bank (its wall time sizes the batch unless
 * `estimateMs` is given), the clock warm-up, then timedBatches of calibrated length, the fastest counting.
 * @example const t = await timeWork({ device, probeRuns: 1, encode, read }, TIMING_DEFAULTS);
 */
export async function timeWork(work: TimedWork, o: TimingOptions): Promise<Timing> {
  const { device } = work;
  const untimed = async (runs: number) => {
    const enc = device.createCommandEncoder();
    work.encode(enc, runs);
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
  };
  const wallRun = async (runs: number) => {
    const t0 = performance.now();
    await untimed(runs);
    return (performance.now() - t0) / runs;
  };
  /** Untimed batches until the clocks look settled: >= warmMs (4x after an idle gap), then until two
   * batches in a row ran no more than 2% faster per run than the one before, at most 10 x warmMs. */
  const warm = async (perRun: number, warmMs: number) => {
    const t0 = performance.now();
    const idle = t0 - (lastBusy.get(device) ?? -Infinity) > IDLE_GAP_MS;
    const least = idle ? 4 * warmMs : warmMs;
    let settled = 0;
    for (;;) {
      checkCancelled(o.cancelled);
      const spent = performance.now() - t0;
      if (spent >= 10 * warmMs || (spent >= least && settled >= 2)) return;
      const runs = Math.max(1, Math.min(4096, Math.ceil(WARM_BATCH_MS / Math.max(perRun, 1e-3))));
      const now = await wallRun(runs);
      settled = now >= perRun * 0.98 ? settled + 1 : 0;
      perRun = now;
    }
  };
  // A run longer than a submission may take is timed one sliced run a batch: no probe (the caller's
  // estimate stands for it), no warm-up (such a run keeps the clocks up itself).
  const known = o.estimateMs ?? o.upperMs;
  const long = work.runSliced !== undefined && known !== undefined && known > SUBMIT_BUDGET_MS;
  const runSliced = long ? work.runSliced : undefined;
  // The probe: pipelines warm, every bank touched; its wall time is the estimate. Skipped where one run
  // is known to be long enough that the probe's runs together would pass the budget.
  const probeToo = known === undefined || known * work.probeRuns <= SUBMIT_BUDGET_MS;
  const probe = !long && probeToo ? await wallRun(work.probeRuns) : undefined;
  const estimate = o.estimateMs ?? probe ?? known!;
  if (!long && o.warmMs && o.warmMs > 0) await warm(estimate, o.warmMs);
  const runs = runSliced
    ? 1
    : Math.max(1, Math.min(o.maxRuns ?? 100_000, Math.round(o.targetMs / Math.max(estimate, 1e-4))));
  const timestamps = device.features.has('timestamp-query');
  const raw: bigint[] = [];
  const wallBatch = async (): Promise<number> => {
    if (!runSliced) return wallRun(runs);
    const t0 = performance.now();
    await runSliced();
    return performance.now() - t0;
  };
  const batch = async (): Promise<number> => {
    if (!timestamps) return wallBatch();
    const qs = device.createQuerySet({ type: 'timestamp', count: 2 });
    const resolve = device.createBuffer({
      size: 16,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    try {
      if (runSliced) await runSliced({ querySet: qs });
      const enc = device.createCommandEncoder();
      if (!runSliced)
        work.encode(enc, runs, { querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 });
      enc.resolveQuerySet(qs, 0, 2, resolve, 0);
      device.queue.submit([enc.finish()]);
      const t = new BigUint64Array(await work.read(resolve, 16));
      raw.push(t[0]!, t[1]!);
      return Number(t[1]! - t[0]!) / 1e6 / runs;
    } finally {
      qs.destroy();
      resolve.destroy();
    }
  };
  const samples = await timedBatches(o.batches, batch, o.cancelled, o.onBatch);
  lastBusy.set(device, performance.now());
  const ms = Math.min(...samples);
  // A quantized timer can read a whole batch as 0: then the wall clock is the only honest figure, taken
  // over the same batches (sliced when the run is long: a fallback must not submit a long run whole).
  if (timestamps && ms <= 0) {
    const wall = await timedBatches(o.batches, wallBatch, o.cancelled);
    const wallMs = Math.min(...wall);
    return { ms: wallMs, samples: wall, runs, method: 'wall', resolutionNs: wallStepNs(), coarse: true };
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
}
