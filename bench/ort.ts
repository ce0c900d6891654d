// ONNX Runtime's WebGPU MatMulNBits (4-bit, block 32) as a baseline beside the bench's own rows: the same
// dense shapes, timed in the same process and command. onnxruntime-node 1.30's Linux x64 binary carries a
// WebGPU execution provider with its own Dawn (Vulkan); the bench loads it from a folder outside
// node_modules (bench/install-ort.sh; MMQ_ORT_DIR on the lent GPU machine), so the app and CI never depend on
// it. When it is absent the bench says so and carries on without these rows.
//
// What an ORT row's `ms` is: ORT timed at its best, as a pipeline drives it. Wall-clock time on the CPU from
// before the first of `iters` `session.run()` calls, all queued back to back without awaiting any (every
// call feeds the next weight bank, so each reads weights the L2 has not seen; every output stays on the
// GPU), to after one more small run that reads the last output's first element back to the CPU (which
// cannot finish before the GPU has finished every run queued before it), divided by `iters`; the fastest
// of 6 (12 when they disagree by over 10%) such batches of about targetMs each. It holds 1/iters of one
// read-back (`ortSyncMs`, measured alone on an idle GPU, is recorded beside it and not subtracted).
// `ortGpuMs` is ORT's own profiler's GPU time per run (its timestamp queries around each dispatch), from one
// more pipelined batch in a profiled session after the timing, and `ortKernels` the programs it ran. Where
// ORT's per-run CPU work (binding, kernel selection, uniforms, encoding, submit) exceeds its GPU time the
// wall time shows it: bench/peers.ts then flags the row CPU-bound and makes no ratio from it.
//
// Quirks of 1.30 this file works around (seen on the H200): getData() on a 'gpu-buffer' tensor aborts the
// process, so it is never called; tensors move between the CPU and the GPU through small Identity sessions
// on the same EP (one WebGPU device per process, one queue).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { judge } from '../src/kernels/compare';
import { banksFor } from '../src/kernels/gpu/runner';
import { CLOCK_WARM_MS, timedBatches, TIMING_DEFAULTS } from '../src/kernels/gpu/timing';

import { fmt } from './format';
import { installCandidates, ORT_FAMILY, parseOrtProfile, peerRefusal, PIPELINED } from './peers';
import type { BenchRow, Correctness, Shape } from './result';
import {
  fromF16Words,
  nbitsActivations,
  nbitsRefAt,
  nbitsWeights,
  toF16Words,
  type NBitsWeights,
} from './nbits';
import {
  firstElementModel,
  identityModel,
  matMulNBitsModel,
  nbitsShapes,
  OnnxType,
  type MatMulNBitsSpec,
  type OnnxElem,
} from './onnx';
import { sampleIndices } from './oracle';

// ------------------------------------------------------------------ the part of ORT's API used here

/** An onnxruntime-common Tensor, as far as the bench touches it (never `getData()`: see the header). */
export interface OrtTensor {
  readonly type: string;
  readonly dims: readonly number[];
  readonly location: string;
  /** CPU tensors only: reading it on a GPU tensor throws. */
  readonly data: unknown;
  dispose(): void;
}

export interface OrtSessionOptions {
  executionProviders: (string | { name: string; [option: string]: unknown })[];
  preferredOutputLocation?: 'cpu' | 'gpu-buffer';
  enableProfiling?: boolean;
  profileFilePrefix?: string;
  logSeverityLevel?: number;
}

export interface OrtSession {
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
  endProfiling(): void;
}

/** The onnxruntime-node module, typed for what the bench calls. */
export interface OrtModule {
  InferenceSession: { create(model: Uint8Array, options: OrtSessionOptions): Promise<OrtSession> };
  Tensor: new (
    type: 'float32' | 'float16' | 'uint8',
    data: Float32Array | Uint16Array | Uint8Array,
    dims: readonly number[],
  ) => OrtTensor;
  env: { logLevel?: string; versions?: Record<string, string> };
  listSupportedBackends?: () => { name: string; bundled?: boolean }[];
}

// ------------------------------------------------------------------------------------------ loading

/** Where bench/install-ort.sh puts the package, relative to the repository root. */
export const ORT_INSTALL_DIR = 'bench/.ort';
export const ORT_ABSENT_NOTE = 'ONNX Runtime not installed (bench/install-ort.sh)';

/**
 * The folders to look in for onnxruntime-node, in order: $MMQ_ORT_DIR, the repository's bench/.ort (from the
 * working directory, then beside this module). Each may be a prefix holding node_modules/onnxruntime-node,
 * or the package folder itself.
 * @example ortCandidates({ MMQ_ORT_DIR: '/tmp/ort' }, '/repo')[0] // '/tmp/ort'
 */
export function ortCandidates(env: Record<string, string | undefined>, cwd: string): string[] {
  return installCandidates(env.MMQ_ORT_DIR, cwd, ORT_INSTALL_DIR, './.ort');
}

/** The package folder of onnxruntime-node under `dir`, or undefined. */
function packageDir(dir: string): string | undefined {
  for (const p of [join(dir, 'node_modules', 'onnxruntime-node'), dir]) {
    const pj = join(p, 'package.json');
    if (!existsSync(pj)) continue;
    try {
      if ((JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === 'onnxruntime-node') return p;
    } catch {
      // an unreadable package.json is not the package
    }
  }
  return undefined;
}

export type OrtLoad = { ort: OrtModule; dir: string; version: string } | { note: string };

/**
 * Load onnxruntime-node from the first candidate folder that has it (ortCandidates), or say why not: absent
 * (ORT_ABSENT_NOTE and where it looked), or present but failing to load (its error).
 * @example const r = loadOrt(ortCandidates(process.env, process.cwd())); if ('note' in r) console.log(r.note);
 */
export function loadOrt(candidates: readonly string[]): OrtLoad {
  for (const c of candidates) {
    const dir = packageDir(c);
    if (!dir) continue;
    try {
      const req = createRequire(join(dir, 'package.json'));
      const ort = req(dir) as OrtModule;
      const version = (req(join(dir, 'package.json')) as { version?: string }).version ?? '?';
      if (typeof ort.InferenceSession?.create !== 'function' || typeof ort.Tensor !== 'function')
        return { note: `onnxruntime-node at ${dir} does not look like onnxruntime-node` };
      return { ort, dir, version };
    } catch (e) {
      return { note: `onnxruntime-node at ${dir} failed to load: ${errorText(e)}` };
    }
  }
  return { note: `${ORT_ABSENT_NOTE}; looked in ${candidates.join(', ')}` };
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e)).trim().slice(0, 1000);

// ------------------------------------------------------------------------------------------- timing

export interface OrtTimeOpts {
  reps: number;
  /** Wall-clock ms a timed batch aims at (<= 0: exactly maxIters runs a batch). */
  targetMs: number;
  /** Untimed warm-up: at least this long, and until two consecutive chunks agree within 10%. */
  warmMs: number;
  maxIters: number;
  /** The clock (tests pass a fake). */
  now?: () => number;
}

export interface OrtTiming {
  ms: number;
  samples: number[];
  iters: number;
  /** Runs spent warming up (untimed). */
  warmRuns: number;
}

/**
 * Time back-to-back runs the way an ORT row is timed (see the header): warm up, size a batch to about
 * targetMs from the warm-up's last per-run time, then the runner's batches (timedBatches: `reps`, `reps`
 * more when they disagree); each batch is `iters` `run(i)` calls queued together, none awaited before the
 * next starts (i counts on across batches, so the caller rotates weight banks with it), then one awaited
 * `sync()`, which must not return before the GPU has finished them. Returns the fastest batch's ms per run.
 * @example const t = await timeOrtRuns((i) => runBank(i % banks), readBack, { reps: 6, targetMs: 25, warmMs: 150, maxIters: 1000 });
 */
export async function timeOrtRuns(
  run: (i: number) => Promise<void>,
  sync: () => Promise<void>,
  opts: OrtTimeOpts,
): Promise<OrtTiming> {
  const now = opts.now ?? (() => performance.now());
  let next = 0;
  const batch = async (n: number) => {
    const t0 = now();
    // Queued without awaiting each (onnxruntime-node runs each call on the main thread in its own
    // setImmediate): no await between two runs, as a pipeline that never reads an output back.
    const queued: Promise<void>[] = [];
    for (let i = 0; i < n; i++) queued.push(run(next++));
    await Promise.all(queued);
    await sync();
    return (now() - t0) / n;
  };
  const clampIters = (ms: number) =>
    Math.max(2, Math.min(opts.maxIters, Math.round(opts.targetMs / Math.max(ms, 1e-4))));
  // Warm-up in chunks of about half a batch: the clocks (and ORT's pipeline and buffer caches) settle
  // before anything is timed; a hard cap keeps a never-settling adapter from warming forever.
  const start = now();
  let est = await batch(2);
  let prev = Infinity;
  for (let chunk = 0; chunk < 64; chunk++) {
    const elapsed = now() - start;
    const settled = Math.abs(est - prev) <= 0.1 * Math.min(est, prev);
    if (elapsed >= opts.warmMs && (settled || elapsed >= 10 * Math.max(opts.warmMs, opts.targetMs))) break;
    prev = est;
    est = await batch(Math.max(2, Math.round(clampIters(est) / 2)));
  }
  const warmRuns = next;
  const iters = opts.targetMs > 0 ? clampIters(est) : Math.max(1, opts.maxIters);
  const samples = await timedBatches(opts.reps, () => batch(iters));
  return { ms: Math.min(...samples), samples, iters, warmRuns };
}

// ------------------------------------------------------------------------------------- the bench

/** An ORT variant: the activation type, and MatMulNBits' accuracy_level. */
export interface OrtVariant {
  arm: string;
  float: 'f16' | 'f32';
  accuracyLevel: number;
  /** The sampled check's gate, relative to the largest reference value. */
  tol: number;
}

/**
 * f16 activations (ORT takes SubgroupMatrixMatMulNBits where the adapter has f16 subgroup matrices, else its
 * other f16 kernels), and f32 at accuracy_level 4 (int8 activations: DP4AMatMulQuantize + DP4AMatMulNBits).
 */
export const ORT_VARIANTS: readonly OrtVariant[] = [
  { arm: 'f16', float: 'f16', accuracyLevel: 0, tol: 5e-2 },
  { arm: 'f32-al4', float: 'f32', accuracyLevel: 4, tol: 1e-3 },
];

/** f32 at accuracy_level 0 (ORT's MatMulNBitsWideTile family): not benched by default, on request. */
export const ORT_F32_VARIANT: OrtVariant = { arm: 'f32', float: 'f32', accuracyLevel: 0, tol: 1e-3 };

/**
 * Variants by arm name ("f16,f32-al4,f32"); throws on an unknown name.
 * @example ortVariants('f32-al4') // [{ arm: 'f32-al4', float: 'f32', accuracyLevel: 4, tol: 1e-3 }]
 */
export function ortVariants(list: string): OrtVariant[] {
  const all = [...ORT_VARIANTS, ORT_F32_VARIANT];
  return list.split(',').map((name) => {
    const v = all.find((x) => x.arm === name);
    if (!v) throw new Error(`unknown ORT variant ${name} (have ${all.map((x) => x.arm).join(', ')})`);
    return v;
  });
}

/** An ORT row: a BenchRow plus what only ORT rows have. */
export interface OrtRow extends BenchRow {
  /** WebGPU programs ORT ran for the node (from its profiler). */
  ortKernels?: string[];
  /** Each of `ortKernels`' GPU time per run, ms (its profiler's). */
  ortKernelMs?: number[];
  /** How `ms` was taken: PIPELINED (bench/peers.ts refuses a ratio from a row without it). */
  ortTiming?: string;
  /** ORT's profiler's GPU time per run, ms (its timestamps; no CPU time). */
  ortGpuMs?: number;
  /** One read-back of an output's first element on an idle GPU, ms (1/iters of it is inside `ms`). */
  ortSyncMs?: number;
  /** Untimed warm-up runs before the timed batches. */
  warmRuns?: number;
  /** Weight banks rotated. */
  banks?: number;
}

export interface BenchOrtOptions {
  /** CI-size run: no warm-up, short batches, two banks (checks the path, not speed). */
  quick?: boolean;
  reps?: number;
  targetMs?: number;
  warmMs?: number;
  maxIters?: number;
  /** L2 bytes the weight banks must overrun 4x (default 60 MiB, the H200's). */
  l2Bytes?: number;
  variants?: readonly OrtVariant[];
  /** Add MatMulNBits' zero_points input (random 4-bit zero points). */
  zeroPoints?: boolean;
  /** Profile a few runs in a separate session for ORT's kernels and GPU time (default true). */
  profile?: boolean;
  /** Options of ORT's WebGPU EP (default: enableRobustness false, ORT's own Release default, said aloud). */
  webgpu?: Record<string, unknown>;
  /** Where to look for onnxruntime-node (default ortCandidates(process.env, process.cwd())). */
  candidates?: readonly string[];
  /** ORT's log level ('warning' by default: errors and warnings). */
  logLevel?: 'verbose' | 'info' | 'warning' | 'error' | 'fatal';
  log?: (line: string) => void;
  /** Test hook: change bank 0's weights after the models' inputs are made, before the reference is taken
   * (e.g. scale one scale): the check must then fail. */
  corruptReference?: (w: NBitsWeights) => void;
}

export interface BenchOrtResult {
  rows: OrtRow[];
  /** Why there are no rows (not installed, no WebGPU EP, the EP could not start), or what was skipped. */
  note?: string;
  /** onnxruntime-node's version and folder, when it loaded. */
  ort?: { version: string; dir: string; webgpu: Record<string, unknown> };
}

const elemOf = (type: 'float16' | 'float32' | 'uint8'): OnnxElem =>
  type === 'float16' ? OnnxType.FLOAT16 : type === 'float32' ? OnnxType.FLOAT : OnnxType.UINT8;

/** Moves tensors between the CPU and ORT's WebGPU device through Identity sessions, made once per (type, rank). */
class OrtIo {
  private sessions = new Map<string, Promise<OrtSession>>();

  constructor(
    private readonly ort: OrtModule,
    private readonly ep: OrtSessionOptions['executionProviders'][number],
  ) {}

  private session(kind: 'up' | 'down' | 'first', elem: OnnxElem, rank: number): Promise<OrtSession> {
    const key = `${kind}/${elem}/${rank}`;
    let s = this.sessions.get(key);
    if (!s) {
      s = this.ort.InferenceSession.create(
        kind === 'first' ? firstElementModel(elem) : identityModel(elem, rank),
        {
          executionProviders: [this.ep],
          ...(kind === 'up' ? { preferredOutputLocation: 'gpu-buffer' as const } : {}),
        },
      );
      this.sessions.set(key, s);
    }
    return s;
  }

  /** A CPU tensor's copy on the GPU (a distinct allocation per call). */
  async upload(t: OrtTensor): Promise<OrtTensor> {
    const s = await this.session('up', elemOf(t.type as 'float32'), t.dims.length);
    const y = (await s.run({ X: t })).Y!;
    if (y.location !== 'gpu-buffer') throw new Error(`upload left the tensor on ${y.location}`);
    return y;
  }

  /** A GPU tensor's values on the CPU, as numbers (f16 decoded). */
  async download(t: OrtTensor): Promise<Float32Array> {
    const s = await this.session('down', elemOf(t.type as 'float32'), t.dims.length);
    return cpuValues((await s.run({ X: t })).Y!);
  }

  /** Read a 2-D GPU tensor's first element back: returns once the GPU has finished the work before it. */
  async first(t: OrtTensor): Promise<number> {
    const s = await this.session('first', elemOf(t.type as 'float32'), 2);
    return cpuValues((await s.run({ X: t })).Y!)[0]!;
  }

  async release() {
    for (const s of this.sessions.values()) await (await s).release();
    this.sessions.clear();
  }
}

function cpuValues(t: OrtTensor): Float32Array {
  const d = t.data;
  if (d instanceof Uint16Array) return fromF16Words(d);
  if (d instanceof Float32Array) return d;
  throw new Error(`unexpected ${t.type} data on the CPU`);
}

/** ORT's messages for a kernel the adapter cannot run (e.g. f16 programs on an adapter without shader-f16). */
const UNSUPPORTED = /does not support|not supported|unsupported/i;

/**
 * Time ORT's WebGPU MatMulNBits at every shape, in every variant (ORT_VARIANTS), and return BenchRow-shaped
 * rows (family 'ort-matmulnbits', role 'baseline', weights 'q4') for the bench's JSON; or no rows and a note
 * when ORT is not installed or its WebGPU EP cannot start. Each row is checked at sampled outputs of two
 * banks against nbitsRefAt; a wrong result marks it failed (its time is still recorded).
 * @example const { rows, note } = await benchOrt([{ m: 2048, n: 4096, k: 4096 }], { log: console.log });
 */
export async function benchOrt(
  shapes: readonly Shape[],
  opts: BenchOrtOptions = {},
): Promise<BenchOrtResult> {
  const log = opts.log ?? (() => {});
  const loaded = loadOrt(opts.candidates ?? ortCandidates(process.env, process.cwd()));
  if ('note' in loaded) return { rows: [], note: loaded.note };
  const { ort } = loaded;
  ort.env.logLevel = opts.logLevel ?? 'warning';
  const webgpu = opts.webgpu ?? { enableRobustness: false };
  const info = { version: loaded.version, dir: loaded.dir, webgpu };
  const backends = ort.listSupportedBackends?.().map((b) => b.name);
  if (backends && !backends.includes('webgpu'))
    return {
      rows: [],
      note: `onnxruntime-node ${loaded.version} has no WebGPU EP here (backends: ${backends.join(', ')})`,
      ort: info,
    };
  const ep = { name: 'webgpu', ...webgpu };
  const io = new OrtIo(ort, ep);
  // Start the EP (ORT creates its Dawn device with the first WebGPU session) on a tiny round trip.
  try {
    const probe = await io.upload(new ort.Tensor('float32', Float32Array.of(1, 2), [1, 2]));
    const back = await io.download(probe);
    probe.dispose();
    if (back[1] !== 2) throw new Error(`round trip returned ${Array.from(back).join(',')}`);
  } catch (e) {
    await io.release().catch(() => {});
    return { rows: [], note: `ONNX Runtime's WebGPU EP could not start: ${errorText(e)}`, ort: info };
  }
  log(
    `[ort] onnxruntime-node ${loaded.version} (${loaded.dir}), WebGPU EP options ${JSON.stringify(webgpu)}`,
  );
  const rows: OrtRow[] = [];
  for (const shape of shapes)
    for (const v of opts.variants ?? ORT_VARIANTS) {
      const row = await benchVariant(ort, io, ep, shape, v, opts);
      rows.push(row);
      log(ortRowLine(row));
    }
  await io.release();
  return { rows, ort: info };
}

async function benchVariant(
  ort: OrtModule,
  io: OrtIo,
  ep: OrtSessionOptions['executionProviders'][number],
  shape: Shape,
  v: OrtVariant,
  opts: BenchOrtOptions,
): Promise<OrtRow> {
  const { m, n, k } = shape;
  const row: OrtRow = {
    id: `ort-matmulnbits/${v.arm}/-`,
    family: ORT_FAMILY,
    weights: 'q4',
    arm: v.arm,
    role: 'baseline',
    tile: '-',
    m,
    n,
    k,
  };
  const spec: MatMulNBitsSpec = {
    k,
    n,
    float: v.float,
    accuracyLevel: v.accuracyLevel,
    ...(opts.zeroPoints ? { zeroPoints: true } : {}),
  };
  if (k % 32) return { ...row, skipped: `K=${k} is not a multiple of the block (32)` };
  const sh = nbitsShapes(spec);
  const scaleBytes = v.float === 'f16' ? 2 : 4;
  const bankBytes = (n * k) / 2 + sh.scales[0]! * scaleBytes + (spec.zeroPoints ? sh.zeroPoints[0]! : 0);
  const banks = opts.quick ? 2 : banksFor(bankBytes, opts.l2Bytes ?? 60 * 1024 * 1024);
  const floatTensor = (x: Float32Array, dims: readonly number[]) =>
    v.float === 'f16' ? new ort.Tensor('float16', toF16Words(x), dims) : new ort.Tensor('float32', x, dims);
  const owned: OrtTensor[] = [];
  const sessions: OrtSession[] = [];
  let profileDir: string | undefined;
  try {
    const model = matMulNBitsModel(spec);
    const session = await ort.InferenceSession.create(model, {
      executionProviders: [ep],
      preferredOutputLocation: 'gpu-buffer',
    });
    sessions.push(session);
    const a = nbitsActivations(m, k, 11);
    const A = await io.upload(floatTensor(a, [m, k]));
    owned.push(A);
    // Banks: distinct data and distinct allocations; bank 0's and the last bank's data kept for the check.
    const feeds: Record<string, OrtTensor>[] = [];
    const kept = new Map<number, NBitsWeights>();
    for (let b = 0; b < banks; b++) {
      const w = nbitsWeights(spec, 101 + 7 * b);
      if (b === 0 || b === banks - 1) kept.set(b, w);
      const feed: Record<string, OrtTensor> = {
        A,
        B: await io.upload(new ort.Tensor('uint8', w.b, sh.b)),
        scales: await io.upload(floatTensor(w.scales, sh.scales)),
      };
      if (w.zeroPoints)
        feed.zero_points = await io.upload(new ort.Tensor('uint8', w.zeroPoints, sh.zeroPoints));
      owned.push(...Object.values(feed).filter((t) => t !== A));
      feeds.push(feed);
    }
    // The check, on bank 0 and the last bank (a rotation that fed the wrong buffers shows there).
    const outs: [Float32Array, NBitsWeights][] = [];
    for (const [b, w] of kept) {
      const y = (await session.run(feeds[b]!)).Y!;
      outs.push([await io.download(y), w]);
      y.dispose();
      if (b === 0) opts.corruptReference?.(w);
    }
    row.correctness = checkNBits(spec, a, m, outs, v.tol, opts.quick ? 32 : 128);
    // Timing: every run's output stays on the GPU; the previous one is released as the next arrives.
    let last: OrtTensor | undefined;
    const run = async (i: number) => {
      const y = (await session.run(feeds[i % banks]!)).Y!;
      last?.dispose();
      last = y;
    };
    const sync = async () => {
      if (last) await io.first(last);
    };
    await run(0);
    await sync();
    const s0 = performance.now();
    await sync();
    row.ortSyncMs = performance.now() - s0;
    row.timedFrom = new Date().toISOString();
    const t = await timeOrtRuns(run, sync, {
      reps: opts.reps ?? (opts.quick ? 2 : TIMING_DEFAULTS.batches),
      targetMs: opts.targetMs ?? (opts.quick ? 5 : 25),
      warmMs: opts.warmMs ?? (opts.quick ? 0 : CLOCK_WARM_MS),
      maxIters: opts.maxIters ?? (opts.quick ? 4 : 1000),
    });
    row.at = new Date().toISOString();
    last?.dispose();
    last = undefined;
    Object.assign(row, {
      ms: t.ms,
      msSamples: t.samples,
      iters: t.iters,
      timing: 'wall',
      ortTiming: PIPELINED,
      tops: (2 * m * n * k) / (t.ms * 1e-3) / 1e12,
      weightGBs: bankBytes / (t.ms * 1e-3) / 1e9,
      warmRuns: t.warmRuns,
      banks,
    });
    if (opts.profile ?? true) {
      profileDir = mkdtempSync(join(tmpdir(), 'mmq-ort-prof-'));
      const prof = await ort.InferenceSession.create(model, {
        executionProviders: [ep],
        preferredOutputLocation: 'gpu-buffer',
        enableProfiling: true,
        profileFilePrefix: join(profileDir, 'ort'),
      });
      sessions.push(prof);
      // One run first (pipeline creation; parseOrtProfile leaves it out), then one batch queued as the
      // timed batches are, so the profile's GPU time is that of the runs the wall time measured.
      const runs = opts.quick ? 3 : 21;
      (await prof.run(feeds[0]!)).Y!.dispose();
      const queued: Promise<void>[] = [];
      for (let i = 1; i < runs; i++) queued.push(prof.run(feeds[i % banks]!).then((o) => o.Y!.dispose()));
      await Promise.all(queued);
      prof.endProfiling();
      const file = readdirSync(profileDir).find((f) => f.endsWith('.json'));
      if (file) {
        const p = parseOrtProfile(readFileSync(join(profileDir, file), 'utf8'), runs);
        row.ortKernels = p.kernels;
        row.ortKernelMs = p.kernelMs;
        if (p.dispatches) row.ortGpuMs = p.gpuMsPerRun;
      }
    }
  } catch (e) {
    const msg = errorText(e);
    // ORT's own words after its status prefix ("... Status Message: shader_helper.cc:416 GenerateSourceCode ").
    const said = msg
      .split('Status Message: ')
      .at(-1)!
      .replace(/^\S+\.cc:\d+ \S+ /, '');
    if (row.ms === undefined && UNSUPPORTED.test(msg)) row.skipped = `ORT: ${said}`;
    else row.error = msg;
  } finally {
    for (const t of owned) t.dispose();
    for (const s of sessions) await s.release().catch(() => {});
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  }
  return row;
}

/**
 * Check MatMulNBits outputs [m, N] (one per weight bank, each with its bank's weights) at sampled elements
 * against nbitsRefAt, gated relative to the largest reference value; the worst bank decides. allWritten
 * only says that no NaN/Inf came back (ORT's output buffer is not poisoned beforehand, as ours are).
 * @example const c = checkNBits(spec, a, m, [[out, w]], 1e-3, 128); c.pass
 */
export function checkNBits(
  spec: MatMulNBitsSpec,
  a: Float32Array,
  m: number,
  outs: readonly (readonly [Float32Array, NBitsWeights])[],
  tol: number,
  random: number,
): Correctness {
  const { n } = spec;
  const idx = sampleIndices(m, n, random);
  let worst: ReturnType<typeof judge> | undefined;
  let allWritten = true;
  for (const [out, w] of outs) {
    if (out.some((x) => !Number.isFinite(x))) allWritten = false;
    const want = Float32Array.from(idx, (i) => nbitsRefAt(spec, a, w, Math.floor(i / n), i % n));
    const got = Float32Array.from(idx, (i) => out[i]!);
    const verdict = judge(got, want, { kind: 'rel-to-max', tol });
    if (!worst || !verdict.pass || (worst.pass && verdict.relToMax > worst.relToMax)) worst = verdict;
  }
  return {
    pass: !!worst?.pass && allWritten,
    relToMax: worst?.relToMax ?? NaN,
    samples: idx.length * outs.length,
    allWritten,
    tol,
  };
}

/**
 * The same model, data and check on ORT's CPU EP: shows that the model bytes, the f16 conversions and the
 * reference agree with ORT's own MatMulNBits where the WebGPU EP cannot run a variant (SwiftShader has no
 * shader-f16). Returns the check, or throws ORT's error.
 * @example const c = await ortCpuCheck(ort, { m: 32, n: 64, k: 256 }, ORT_VARIANTS[0]!); c.pass
 */
export async function ortCpuCheck(
  ort: OrtModule,
  shape: Shape,
  v: OrtVariant,
  opts: Pick<BenchOrtOptions, 'zeroPoints' | 'corruptReference'> = {},
): Promise<Correctness> {
  const { m, n, k } = shape;
  const spec: MatMulNBitsSpec = {
    k,
    n,
    float: v.float,
    accuracyLevel: v.accuracyLevel,
    ...(opts.zeroPoints ? { zeroPoints: true } : {}),
  };
  const sh = nbitsShapes(spec);
  const floatTensor = (x: Float32Array, dims: readonly number[]) =>
    v.float === 'f16' ? new ort.Tensor('float16', toF16Words(x), dims) : new ort.Tensor('float32', x, dims);
  const session = await ort.InferenceSession.create(matMulNBitsModel(spec), { executionProviders: ['cpu'] });
  try {
    const a = nbitsActivations(m, k, 11);
    const w = nbitsWeights(spec, 101);
    const feed: Record<string, OrtTensor> = {
      A: floatTensor(a, [m, k]),
      B: new ort.Tensor('uint8', w.b, sh.b),
      scales: floatTensor(w.scales, sh.scales),
    };
    if (w.zeroPoints) feed.zero_points = new ort.Tensor('uint8', w.zeroPoints, sh.zeroPoints);
    const out = cpuValues((await session.run(feed)).Y!);
    opts.corruptReference?.(w);
    return checkNBits(spec, a, m, [[out, w]], v.tol, 128);
  } finally {
    await session.release();
  }
}

// ------------------------------------------------------------------------------------------- lines

/**
 * One ORT row as the bench's progress lines print it.
 * @example ortRowLine(row) // '  ok    ort-matmulnbits/f16/-  2048x4096x4096  0.5427 ms ...'
 */
export function ortRowLine(r: OrtRow): string {
  const shape = `${r.m}x${r.n}x${r.k}`.padEnd(16);
  if (r.skipped) return `  skip  ${r.id.padEnd(28)} ${shape} ${r.skipped.slice(0, 200)}`;
  if (r.error) return `  ERROR ${r.id.padEnd(28)} ${shape} ${r.error.slice(0, 300)}`;
  const c = r.correctness;
  const verdict = c ? (c.pass ? 'ok' : 'WRONG') : '?';
  const rel = c ? ` rel ${c.relToMax.toExponential(1)}` : '';
  return (
    `  ${verdict.padEnd(5)} ${r.id.padEnd(28)} ${shape} ${fmt(r.ms, 4).padStart(9)} ms ${fmt(r.tops, 2).padStart(7)} TOPS` +
    ` ${fmt(r.weightGBs, 0).padStart(6)} GB/s  gpu ${fmt(r.ortGpuMs, 4)} ms (${peerRefusal(r) ?? 'wall <= 1.1x it: usable'})` +
    `  sync ${fmt(r.ortSyncMs, 3)} ms` +
    `  ${r.iters ?? '-'} runs x ${r.msSamples?.length ?? '-'}, ${r.banks ?? '-'} banks${rel}  ${(r.ortKernels ?? []).join('+')}`
  );
}
