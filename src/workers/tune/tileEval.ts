// The GPU fitness shared by the tile tuners (the seed's MmqQ4kEval / CoopmatF16Eval discipline):
//   - RESIDENT device buffers, created once per (shape, data): the inputs, an output, and the weight
//     uploaded as several distinct "cold" banks that timed dispatches rotate through, so each dispatch
//     reads its weight cold (the memory-bound regime prefill runs in) instead of from a warm cache;
//   - the oracle computed once, on bank 0, and a correctness gate folded into fitness: bank 0 is
//     dispatched, read back and judged scale-relative (rel_to_max); a tile that diverges is infinitely
//     slow, so it can never win. The output is NaN-filled first so a tile that skips elements fails.
//     For shapes whose JS oracle would take long (> ORACLE_MAC_BUDGET multiply-adds) the oracle covers a
//     sample of rows that visits every row position of a 16-row subtile and the last row (gateRows);
//     every other element must still be finite;
//   - a free static tier (src/kernels/tune/staticTiers.ts: adapter invocations / workgroup storage of the
//     REAL kernel / register tile, plus the generator's own adapter checks) that rejects before compiling;
//   - timing: warm-up, then `iters` dispatches rotating the banks, timestamp queries when the device has
//     them (timeDispatches), and the MINIMUM over `repeats` (the least drift-polluted time);
//   - a config is a plan of one or more passes (the coopmat split plan: pre-passes, then the GEMM); the
//     gate and the timing run every pass, so a staging that skips a pre-pass is compared fairly;
//   - compiled pipelines cached per config; the scratch buffers between passes (tens of MB at LLM
//     shapes) exist for one config at a time.
import { judge, type Gate, type Verdict } from '../../kernels/compare';
import type { PassSpec } from '../../kernels/gpu/plan';
import {
  compileWgsl,
  encodeSteps,
  GpuValidationError,
  readBuffer,
  timePasses,
  uploadBuffer,
  type DispatchStep,
} from '../../kernels/gpu/run';
import {
  TuneCancelledError,
  type Config,
  type Evaluator,
  type Measurement,
  type Space,
  type StaticVerdict,
} from '../../kernels/tune';

/** What the evaluator launches for one config: passes in order, the last one writing the output. */
export interface TilePlan {
  label: string;
  /** Complete, compilable passes (host suffix included), bindings by buffer name. */
  passes: readonly PassSpec[];
  /** Buffers the passes hand each other (zero-filled): names the resident set does not have. */
  scratch?: readonly { name: string; bytes: number }[];
}

/**
 * The plan of one pass.
 * @example onePass(mmqPass(kern, kern.workgroups(m, n), false, label))
 */
export const onePass = (pass: PassSpec): TilePlan => ({ label: pass.label, passes: [pass] });

export interface TileEvalSetup {
  device: GPUDevice;
  space: Space;
  /** 'mmq_q4k_tile' etc., for labels and messages. */
  label: string;
  gate: Gate;
  /** Inputs other than the rotated weight, by binding name (uniforms named in `uniforms`). */
  resident: Readonly<Record<string, ArrayBufferView>>;
  uniforms?: readonly string[];
  /** Binding name of the bank-rotated weight, and the banks (banks[0] is what the oracle used). */
  bankBinding: string;
  banks: readonly ArrayBufferView[];
  outputBinding: string;
  /** Output shape [rows, cols] (row-major f32). */
  rows: number;
  cols: number;
  /** Oracle of the rows in `oracleRows` ([oracleRows.length, cols]), or of every row when that is absent. */
  oracle: Float32Array;
  /** Sampled output rows the oracle covers (see gateRows); every other element must still be finite. */
  oracleRows?: readonly number[];
  /** Timed passes per measurement; the minimum wins. */
  repeats: number;
  /** Untimed work (ms) before each timing, for GPUs that drop their clocks when idle (0: none). */
  warmMs?: number;
  kernelFor(cfg: Config): TilePlan;
  /** The free static tier (e.g. mmqQ4kStaticTier(caps, ...).check): limits, real workgroup storage, registers. */
  staticCheck(cfg: Config): StaticVerdict;
  cancelled?: () => boolean;
}

interface Compiled {
  plan: TilePlan;
  pipelines: GPUComputePipeline[];
}

/** A compiled config bound to buffers: its steps (one bind group per bank each) and its scratch. */
interface Bound {
  name: string;
  plan: TilePlan;
  steps: DispatchStep[];
  scratch: GPUBuffer[];
}

/** Multiply-adds the CPU oracle may spend (~1-2 s of JS): above it the gate samples rows. */
export const ORACLE_MAC_BUDGET = 2 ** 28;

/**
 * The output rows the oracle covers for an m x n x k problem: all of them when m*n*k fits the budget,
 * else about budget/(n*k) rows (at least 18) spread over m, stepping through every position within a 16-row subtile
 * (so every lane row of a fragment is checked somewhere), always including row 0 and the last row (tails).
 * @example gateRows(16, 16, 256) // undefined: every row
 */
export function gateRows(m: number, n: number, k: number, budget = ORACLE_MAC_BUDGET): number[] | undefined {
  if (m * n * k <= budget) return undefined;
  // At least 16 + 2 rows so the i % 16 walk reaches every subtile row besides rows 0 and m-1.
  const count = Math.min(m, Math.max(18, Math.floor(budget / (n * k))));
  const rows = new Set<number>([0, m - 1]);
  for (let i = 0; rows.size < count && i < m; i++) {
    const base = Math.floor((i * m) / count);
    rows.add(Math.min(m - 1, base - (base % 16) + (i % 16)));
  }
  return [...rows].sort((a, b) => a - b);
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Run `fn` in a validation scope; a reported error becomes GpuValidationError(label). */
async function scoped<T>(device: GPUDevice, label: string, fn: () => T | Promise<T>): Promise<T> {
  device.pushErrorScope('validation');
  let out: T;
  try {
    out = await fn();
  } catch (e) {
    await device.popErrorScope();
    throw e instanceof GpuValidationError ? e : new GpuValidationError(label, message(e));
  }
  const err = await device.popErrorScope();
  if (err) throw new GpuValidationError(label, err.message);
  return out;
}

/**
 * A tile fitness on a GPUDevice; subclasses (MmqQ4kEval, CoopmatF16Eval) supply data, oracle and kernel.
 * Call `destroy()` when done: it frees the resident buffers.
 */
export class TileEvaluator implements Evaluator {
  readonly device: GPUDevice;
  readonly space: Space;
  readonly gate: Gate;
  private readonly setup: TileEvalSetup;
  private readonly buffers = new Map<string, GPUBuffer>();
  private readonly bankBuffers: GPUBuffer[];
  private readonly out: GPUBuffer;
  private readonly outBytes: number;
  private readonly nanFill: Float32Array<ArrayBuffer>;
  private readonly compiled = new Map<string, Promise<Compiled>>();
  private bound: Bound | undefined;
  private worst = 0;
  private lastTiming: 'timestamp' | 'wall' | undefined;
  private destroyed = false;

  constructor(setup: TileEvalSetup) {
    if (setup.banks.length === 0) throw new RangeError(`${setup.label}: needs at least one weight bank`);
    if (!Number.isInteger(setup.repeats) || setup.repeats < 1)
      throw new RangeError(`${setup.label}: repeats = ${setup.repeats}: need >= 1`);
    this.setup = setup;
    this.device = setup.device;
    this.space = setup.space;
    this.gate = setup.gate;
    const maxBinding = this.device.limits.maxStorageBufferBindingSize;
    const check = (name: string, bytes: number) => {
      if (bytes > maxBinding)
        throw new RangeError(
          `${setup.label}: buffer ${name} is ${bytes} bytes > maxStorageBufferBindingSize ${maxBinding}`,
        );
    };
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC;
    for (const [name, data] of Object.entries(setup.resident)) {
      const uniform = setup.uniforms?.includes(name) ?? false;
      if (!uniform) check(name, data.byteLength);
      this.buffers.set(
        name,
        uploadBuffer(this.device, data, uniform ? GPUBufferUsage.UNIFORM : storage, `${setup.label}:${name}`),
      );
    }
    this.bankBuffers = setup.banks.map((b, i) => {
      check(`${setup.bankBinding}[${i}]`, b.byteLength);
      return uploadBuffer(this.device, b, storage, `${setup.label}:${setup.bankBinding}[${i}]`);
    });
    const want = (setup.oracleRows?.length ?? setup.rows) * setup.cols;
    if (setup.oracle.length !== want)
      throw new RangeError(`${setup.label}: oracle has ${setup.oracle.length} values, expected ${want}`);
    this.outBytes = Math.max(4, setup.rows * setup.cols * 4);
    check(setup.outputBinding, this.outBytes);
    this.out = this.device.createBuffer({
      size: this.outBytes,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      label: `${setup.label}:${setup.outputBinding}`,
    });
    this.nanFill = new Float32Array(setup.rows * setup.cols).fill(NaN);
  }

  /** The worst rel_to_max any dispatched config showed (the correctness witness). */
  get worstRel(): number {
    return this.worst;
  }

  /** How the last timing was taken. */
  get timing(): 'timestamp' | 'wall' | undefined {
    return this.lastTiming;
  }

  /** Output rows the gate checks when it samples (undefined: every row). */
  get gatedRows(): number | undefined {
    return this.setup.oracleRows?.length;
  }

  /** Number of resident weight banks. */
  get banks(): number {
    return this.bankBuffers.length;
  }

  staticCheck(cfg: Config): StaticVerdict {
    return this.setup.staticCheck(cfg);
  }

  /** Gate on bank 0, then time; Infinity when the gate fails. */
  async measure(cfg: Config, iters: number): Promise<Measurement> {
    const v = await this.check(cfg);
    if (!v.pass) {
      const tol = this.gate.kind === 'rel-to-max' ? this.gate.tol.toExponential(0) : 'bit-exact';
      return {
        ms: Infinity,
        worstRel: v.relToMax,
        reason: `rel_to_max ${v.relToMax.toExponential(2)} > ${tol} gate (${v.mismatches} elements off, bank 0 vs oracle${this.setup.oracleRows ? ` on ${this.setup.oracleRows.length} sampled rows` : ''})`,
      };
    }
    const t = await this.time(cfg, iters);
    return { ms: t.ms, worstRel: v.relToMax, timing: t.timing };
  }

  /** Dispatch bank 0 (every pass of the config) into a NaN-filled output and judge it against the oracle. */
  async check(cfg: Config): Promise<Verdict> {
    const b = await this.bind(cfg);
    await scoped(this.device, b.plan.label, () => {
      this.device.queue.writeBuffer(this.out, 0, this.nanFill);
      const enc = this.device.createCommandEncoder();
      const pass = enc.beginComputePass({ label: b.plan.label });
      encodeSteps(pass, b.steps, 0);
      pass.end();
      this.device.queue.submit([enc.finish()]);
    });
    const { rows, cols, oracleRows } = this.setup;
    const out = new Float32Array(await readBuffer(this.device, this.out, this.outBytes), 0, rows * cols);
    let v: Verdict;
    if (!oracleRows) {
      v = judge(out, this.setup.oracle, this.gate);
    } else {
      const sampled = new Float32Array(oracleRows.length * cols);
      oracleRows.forEach((r, i) => sampled.set(out.subarray(r * cols, (r + 1) * cols), i * cols));
      v = judge(sampled, this.setup.oracle, this.gate);
      // Rows the oracle skips must still have been written (the output starts NaN-filled).
      let bad = 0;
      for (let i = 0; i < out.length; i++) if (!Number.isFinite(out[i]!)) bad++;
      if (bad > 0) v = { ...v, pass: false, relToMax: Infinity, mismatches: Math.max(v.mismatches, bad) };
    }
    this.worst = Math.max(this.worst, v.relToMax);
    return v;
  }

  /**
   * Minimum ms per run of the config's passes over `repeats` timings of `iters` bank-rotated runs (each
   * warmed up): a multi-pass plan is charged all its passes.
   */
  async time(cfg: Config, iters: number): Promise<{ ms: number; timing: 'timestamp' | 'wall' }> {
    const b = await this.bind(cfg);
    let best = Infinity;
    let timing: 'timestamp' | 'wall' = 'wall';
    for (let r = 0; r < this.setup.repeats; r++) {
      if (this.setup.cancelled?.()) throw new TuneCancelledError();
      // Warm before the first repeat only: the others follow it back to back.
      const warm = r === 0 ? this.setup.warmMs : 0;
      const t = await scoped(this.device, b.plan.label, () =>
        timePasses(this.device, b.steps, Math.max(1, iters), this.setup.cancelled, warm),
      );
      best = Math.min(best, t.ms);
      timing = t.timing;
    }
    this.lastTiming = timing;
    return { ms: best, timing };
  }

  /** Free the resident buffers and the bound config's scratch (compiled pipelines are garbage-collected). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.release();
    for (const b of this.buffers.values()) b.destroy();
    for (const b of this.bankBuffers) b.destroy();
    this.out.destroy();
  }

  private release(): void {
    for (const b of this.bound?.scratch ?? []) b.destroy();
    this.bound = undefined;
  }

  private bufferFor(name: string, bank: number, scratch: ReadonlyMap<string, GPUBuffer>): GPUBuffer {
    if (name === this.setup.bankBinding) return this.bankBuffers[bank]!;
    if (name === this.setup.outputBinding) return this.out;
    const b = this.buffers.get(name) ?? scratch.get(name);
    if (!b)
      throw new Error(`${this.setup.label}: the kernel binds "${name}" but the evaluator has no such buffer`);
    return b;
  }

  private compile(cfg: Config): Promise<Compiled> {
    if (this.destroyed) throw new Error(`${this.setup.label}: evaluator used after destroy()`);
    const name = this.space.name(cfg);
    let hit = this.compiled.get(name);
    if (!hit) {
      hit = this.build(this.setup.kernelFor(cfg));
      this.compiled.set(name, hit);
    }
    return hit;
  }

  private async build(plan: TilePlan): Promise<Compiled> {
    if (plan.passes.length === 0) throw new RangeError(`${plan.label}: a plan needs at least one pass`);
    const pipelines: GPUComputePipeline[] = [];
    for (const pass of plan.passes) {
      const module = await compileWgsl(this.device, pass.wgsl, pass.label);
      pipelines.push(
        await scoped(this.device, pass.label, () =>
          this.device.createComputePipelineAsync({
            label: pass.label,
            layout: 'auto',
            compute: { module, entryPoint: pass.entryPoint },
          }),
        ),
      );
    }
    return { plan, pipelines };
  }

  /** The config's steps, bound to the resident buffers and to fresh scratch (the previous config's is freed). */
  private async bind(cfg: Config): Promise<Bound> {
    const name = this.space.name(cfg);
    const c = await this.compile(cfg);
    if (this.bound?.name === name) return this.bound;
    this.release();
    const scratch = new Map<string, GPUBuffer>();
    for (const s of c.plan.scratch ?? []) {
      scratch.set(
        s.name,
        this.device.createBuffer({
          size: Math.max(4, Math.ceil(s.bytes / 4) * 4),
          usage: GPUBufferUsage.STORAGE,
          label: `${c.plan.label}:${s.name}`,
        }),
      );
    }
    let steps: DispatchStep[];
    try {
      steps = await scoped(this.device, c.plan.label, () =>
        c.plan.passes.map((pass, i) => ({
          pipeline: c.pipelines[i]!,
          workgroups: pass.workgroups,
          groups: this.bankBuffers.map((_, bank) =>
            this.device.createBindGroup({
              label: `${pass.label} bank ${bank}`,
              layout: c.pipelines[i]!.getBindGroupLayout(0),
              entries: pass.bindings.map((b, binding) => ({
                binding,
                resource: { buffer: this.bufferFor(b, bank, scratch) },
              })),
            }),
          ),
        })),
      );
    } catch (e) {
      for (const b of scratch.values()) b.destroy();
      throw e;
    }
    // Bound only once every bind group exists: a failed bind leaves nothing half-made to reuse.
    const bound: Bound = { name, plan: c.plan, steps, scratch: [...scratch.values()] };
    this.bound = bound;
    return bound;
  }
}
