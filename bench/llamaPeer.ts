// llama.cpp's Vulkan backend as a peer, the pure half (bench/llama.ts runs the harness): reading the
// harness's JSON lines and ggml-vulkan's perf-logger blocks (GGML_VK_PERF_LOGGER=1) and device line, the
// bench rows they make, and the ratio rule and table. A row's `ms` is its wall time per op (the fastest
// compute of a graph repeating the op), `llamaGpuMs` the perf logger's GPU time per op; a row whose wall
// time exceeds its GPU time by over 10% measured llama.cpp's host side (ggml-vulkan records every node's
// commands on the CPU per compute): it is CPU-bound and makes no wall ratio (bench/peers.ts
// cpuBoundRefusal, the rule ORT's rows meet). The GPU-time ratio (its kernels against ours, both from GPU
// timestamps) is printed beside it either way. Pure: no GPU, no child process; the report and the bench
// call it.
import { fmt } from './format';
import { cpuBoundRefusal, oursAt } from './peers';
import type { BenchRow, Correctness } from './result';

/** The `family` of the bench rows llama.cpp's Vulkan backend fills. */
export const LLAMA_FAMILY = 'llama-vulkan';

/** The `llamaTiming` of a row timed at its best (the op repeated in one graph, computed back to back). */
export const GRAPH_REPEAT = 'graph-repeat';

/** Q4_K: 144 bytes per 256 weights. */
const Q4K_BYTES_PER_WEIGHT = 144 / 256;

// ------------------------------------------------------------------------------------------- parsing

/** The harness's first line: the device ggml-vulkan opened and the ggml build. */
export interface HarnessHead {
  device: string;
  ggml: string;
  commit: string;
}

/** One check of the harness: NMSE against a float64 reference at sampled rows, and NaN left (unwritten). */
export interface HarnessCheck {
  pass: boolean;
  nmse: number;
  relToMax: number;
  samples: number;
  allWritten: boolean;
  /** The NMSE bound (test-backend-ops's for MUL_MAT and MUL_MAT_ID, 5e-4). */
  tol: number;
}

/** One case's JSON line of the harness (bench/llama/mmq-llama.c). */
export interface HarnessCase {
  case: string;
  kind: 'dense' | 'moe';
  m: number;
  n: number;
  k: number;
  experts?: number;
  tokens?: number;
  topk?: number;
  mode?: 'wall' | 'gpu-log';
  nodes?: number;
  banks?: number;
  bankBytes?: number;
  computes?: number;
  ms?: number;
  msMean?: number;
  computeMs?: number[];
  check?: HarnessCheck;
  checkAfter?: HarnessCheck;
  /** Pipelines bound while the timed graphs were recorded (--gpu-log), and how often. */
  pipelines?: { name: string; binds: number }[];
  error?: string;
}

export interface HarnessOutput {
  head?: HarnessHead;
  cases: HarnessCase[];
}

/**
 * The harness's stdout: one JSON object a line, the device line first, then one per case. Throws, naming
 * the line, on one that is not a JSON object of either kind.
 * @example parseHarnessOutput(stdout).cases.map((c) => `${c.case} ${c.ms} ms`)
 */
export function parseHarnessOutput(stdout: string): HarnessOutput {
  const out: HarnessOutput = { cases: [] };
  for (const line of stdout.split('\n')) {
    if (!line.trim()) continue;
    let j: unknown;
    try {
      j = JSON.parse(line);
    } catch {
      throw new Error(`mmq-llama printed a line that is not JSON: ${line.slice(0, 200)}`);
    }
    const o = j as Partial<HarnessHead & HarnessCase> | null;
    if (o && typeof o === 'object' && typeof o.case === 'string') out.cases.push(o as HarnessCase);
    else if (o && typeof o === 'object' && typeof o.device === 'string') out.head = o as HarnessHead;
    else
      throw new Error(
        `mmq-llama printed a JSON line that is neither its device nor a case: ${line.slice(0, 200)}`,
      );
  }
  return out;
}

/** One line of a "Vulkan Timings" block: an op's name (as ggml-vulkan's perf logger spells it), how many nodes, their total. */
export interface PerfOp {
  name: string;
  count: number;
  totalUs: number;
}

/** The perf logger's blocks (one per graph compute) between the harness's marks for one case. */
export interface PerfCase {
  label: string;
  nodes: number;
  blocks: PerfOp[][];
}

// "MUL_MAT q4_K m=4096 n=32 k=4096: 8 x 12.5 us = 100 us (10.7 GFLOPS/s)"
const PERF_LINE = /^(.+): (\d+) x (\S+) us = (\S+) us(?: \(.*\))?$/;
const TIMED_MARK = /^mmq-llama: timed (\S+) nodes=(\d+)$/;

/**
 * ggml-vulkan's perf logger output (GGML_VK_PERF_LOGGER=1: one "Vulkan Timings" block a compute, one
 * line per op name with the node count and total GPU microseconds, then "Total time") read case by case:
 * only the blocks between the harness's "mmq-llama: timed LABEL nodes=N" and "mmq-llama: end LABEL" marks
 * (the warm-up computes before them are left out).
 * @example parsePerfLog(stderr)[0]!.blocks[0] // [{ name: 'MUL_MAT q4_K m=64 n=32 k=256', count: 8, totalUs: 5328.33 }]
 */
export function parsePerfLog(stderr: string): PerfCase[] {
  const out: PerfCase[] = [];
  let cur: PerfCase | undefined;
  let block: PerfOp[] | undefined;
  for (const raw of stderr.split('\n')) {
    const line = raw.trimEnd();
    const timed = TIMED_MARK.exec(line);
    if (timed) {
      cur = { label: timed[1]!, nodes: Number(timed[2]), blocks: [] };
      out.push(cur);
      block = undefined;
    } else if (cur && line === `mmq-llama: end ${cur.label}`) {
      cur = undefined;
      block = undefined;
    } else if (!cur) continue;
    else if (line === 'Vulkan Timings:') {
      block = [];
      cur.blocks.push(block);
    } else if (line.startsWith('Total time:')) block = undefined;
    else if (block) {
      const m = PERF_LINE.exec(line);
      if (m) block.push({ name: m[1]!, count: Number(m[2]), totalUs: Number(m[4]) });
    }
  }
  return out;
}

/** A case's GPU time from its perf-logger blocks. */
export interface GpuTime {
  /** The op names the logger gave its nodes, e.g. 'MUL_MAT q4_K m=4096 n=2048 k=4096' (its m is our n). */
  ops: string[];
  /** The fastest block's GPU time per node, ms (the row's llamaGpuMs). */
  gpuMs: number;
  /** Every block's nodes together: total GPU time over node count, ms. */
  gpuMsMean: number;
  blocks: number;
  /** Nodes each block logged (the harness's graph size when every node was timed). */
  nodesPerBlock: number;
}

/**
 * The GPU time per op of one case: per block, its total microseconds over its node count; the fastest
 * block's, and the mean over all. Undefined when no block has a node.
 * @example gpuTimeOf(parsePerfLog(stderr)[0]!)?.gpuMs
 */
export function gpuTimeOf(p: PerfCase): GpuTime | undefined {
  const sums = p.blocks
    .map((b) => b.reduce((a, o) => ({ us: a.us + o.totalUs, n: a.n + o.count }), { us: 0, n: 0 }))
    .filter((s) => s.n > 0);
  if (!sums.length) return undefined;
  const ops = [...new Set(p.blocks.flat().map((o) => o.name))];
  const total = sums.reduce((a, s) => ({ us: a.us + s.us, n: a.n + s.n }), { us: 0, n: 0 });
  return {
    ops,
    gpuMs: Math.min(...sums.map((s) => s.us / s.n)) / 1000,
    gpuMsMean: total.us / total.n / 1000,
    blocks: sums.length,
    nodesPerBlock: Math.max(...sums.map((s) => s.n)),
  };
}

/** What ggml-vulkan's device line says of the device: what decides which shaders it picks. */
export interface VkDeviceInfo {
  name: string;
  /** 'NV_coopmat2', 'KHR_coopmat' or 'none'. */
  matrixCores?: string;
  intDot?: boolean;
  fp16?: boolean;
  warpSize?: number;
}

/**
 * ggml-vulkan's line for the device it opened ("ggml_vulkan: 0 = NAME (DRIVER) | uma: 0 | fp16: 1 | ... |
 * int dot: 1 | matrix cores: NV_coopmat2"), or undefined when the log has none.
 * @example parseVkDevice(stderr)?.matrixCores // 'NV_coopmat2'
 */
export function parseVkDevice(stderr: string): VkDeviceInfo | undefined {
  const m = /^ggml_vulkan: \d+ = (.*?) \| (.*)$/m.exec(stderr);
  if (!m) return undefined;
  const f = new Map(
    m[2]!.split(' | ').map((kv) => {
      const i = kv.indexOf(': ');
      return [kv.slice(0, i).trim(), kv.slice(i + 2).trim()] as const;
    }),
  );
  const num = (key: string) => (f.has(key) ? Number(f.get(key)) : undefined);
  const bool = (key: string) => (f.has(key) ? f.get(key) === '1' : undefined);
  const warp = num('warp size');
  const intDot = bool('int dot');
  const fp16 = bool('fp16');
  return {
    name: m[1]!,
    ...(f.has('matrix cores') ? { matrixCores: f.get('matrix cores')! } : {}),
    ...(intDot === undefined ? {} : { intDot }),
    ...(fp16 === undefined ? {} : { fp16 }),
    ...(warp === undefined ? {} : { warpSize: warp }),
  };
}

// ---------------------------------------------------------------------------------------------- rows

/** A bench row of llama.cpp's Vulkan backend (family LLAMA_FAMILY, role 'baseline'). */
export interface LlamaRow extends BenchRow {
  /** How `ms` was taken: GRAPH_REPEAT (a row without it makes no ratio). */
  llamaTiming?: string;
  /** ggml-vulkan's perf logger's GPU time per op, ms: the fastest compute's mean over its nodes. */
  llamaGpuMs?: number;
  /** The same over every timed compute. */
  llamaGpuMsMean?: number;
  /** test-backend-ops's figure: every timed compute's wall time over all their ops, ms. */
  msMean?: number;
  /** The perf logger's name of the op (MUL_MAT_VEC where ggml-vulkan took the matrix-vector path). */
  llamaOp?: string;
  /** The pipelines (shaders) bound per op in the timed graphs, e.g. quantize_q8_1 then matmul_q4_k_q8_1. */
  llamaPipelines?: { name: string; perOp: number }[];
  /** NMSE of the worse of the two checks (before and after the timing). */
  nmse?: number;
  /** The device ggml-vulkan ran it on (its Vulkan device name). */
  llamaDevice?: string;
  /** Nodes per graph, graphs timed, weight banks. */
  nodes?: number;
  computes?: number;
  banks?: number;
}

/** A row's problem as the llama.cpp table prints it: "MxNxK", or "moe E x T top-K NxK". */
export const llamaProblem = (r: Pick<BenchRow, 'm' | 'n' | 'k' | 'experts' | 'topk'>): string =>
  r.experts
    ? `moe ${r.experts}x${r.m / (r.topk ?? 1)} top-${r.topk ?? 1} ${r.n}x${r.k}`
    : `${r.m}x${r.n}x${r.k}`;

/** Both checks as one Correctness: it passes when both do; the worse figures. */
function correctnessOf(a: HarnessCheck | undefined, b: HarnessCheck | undefined): Correctness | undefined {
  const checks = [a, b].filter((c): c is HarnessCheck => !!c);
  if (!checks.length) return undefined;
  return {
    pass: checks.length === 2 && checks.every((c) => c.pass),
    relToMax: Math.max(...checks.map((c) => (c.relToMax < 0 ? Infinity : c.relToMax))),
    samples: checks.reduce((s, c) => s + c.samples, 0),
    allWritten: checks.every((c) => c.allWritten),
    tol: checks[0]!.tol,
  };
}

/** What a wall case alone cannot say: its GPU time and pipelines (the GPU pass) and the used experts' bytes. */
interface RowExtras {
  gpu?: GpuTime;
  gpuCase?: HarnessCase;
  device?: VkDeviceInfo;
  /** MoE: the experts its routing uses (their weights are what an op reads). */
  usedExperts?: number;
  /** The harness's device line. */
  head?: HarnessHead;
}

/**
 * A bench row from the harness's wall-pass line of a case and what the GPU pass measured of it.
 * @example llamaRow(wall.cases[0]!, { gpu, gpuCase, device }).llamaGpuMs
 */
export function llamaRow(c: HarnessCase, x: RowExtras = {}): LlamaRow {
  const arm = x.device?.matrixCores ?? 'vulkan';
  const moe = c.kind === 'moe';
  const row: LlamaRow = {
    id: `${LLAMA_FAMILY}/${arm}/-`,
    family: LLAMA_FAMILY,
    weights: 'q4k',
    arm,
    role: 'baseline',
    tile: '-',
    m: c.m,
    n: c.n,
    k: c.k,
    ...(moe ? { experts: c.experts!, topk: c.topk! } : {}),
  };
  if (c.error) return { ...row, error: c.error };
  const correctness = correctnessOf(c.check, c.checkAfter);
  const nmse = Math.max(c.check?.nmse ?? -1, c.checkAfter?.nmse ?? -1);
  const weightBytes = c.n * c.k * Q4K_BYTES_PER_WEIGHT * (moe ? (x.usedExperts ?? c.experts!) : 1);
  const perOp = (c.computes ?? 0) * (c.nodes ?? 0);
  const pipes = x.gpuCase?.pipelines;
  const gpuOps = (x.gpuCase?.computes ?? 0) * (x.gpuCase?.nodes ?? 0);
  return {
    ...row,
    ...(c.ms !== undefined
      ? { ms: c.ms, tops: (2 * c.m * c.n * c.k) / (c.ms * 1e9), weightGBs: weightBytes / (c.ms * 1e6) }
      : {}),
    ...(c.msMean !== undefined ? { msMean: c.msMean } : {}),
    ...(c.computeMs ? { msSamples: c.computeMs.map((t) => t / (c.nodes ?? 1)) } : {}),
    ...(c.nodes !== undefined ? { nodes: c.nodes, iters: c.nodes } : {}),
    ...(c.computes !== undefined ? { computes: c.computes } : {}),
    ...(c.banks !== undefined ? { banks: c.banks } : {}),
    ...(perOp ? { llamaTiming: GRAPH_REPEAT, timing: GRAPH_REPEAT } : {}),
    ...(x.head ? { llamaDevice: x.head.device } : {}),
    ...(correctness ? { correctness } : {}),
    ...(nmse >= 0 ? { nmse } : {}),
    ...(x.gpu
      ? { llamaGpuMs: x.gpu.gpuMs, llamaGpuMsMean: x.gpu.gpuMsMean, llamaOp: x.gpu.ops.join(' + ') }
      : {}),
    ...(pipes && gpuOps
      ? { llamaPipelines: pipes.map((p) => ({ name: p.name, perOp: p.binds / gpuOps })) }
      : {}),
  };
}

/**
 * Why a llama.cpp row may not make a wall ratio, or undefined when it may: not timed as a repeated graph,
 * or cpuBoundRefusal (no wall time, no GPU time, or CPU-bound).
 * @example llamaRefusal({ ms: 0.05, llamaGpuMs: 0.02, llamaTiming: GRAPH_REPEAT }) // 'CPU-bound: wall 2.50x its GPU time'
 */
export function llamaRefusal(r: Pick<LlamaRow, 'ms' | 'llamaGpuMs' | 'llamaTiming'>): string | undefined {
  if (r.ms === undefined || !Number.isFinite(r.ms)) return 'no wall time';
  if (r.llamaTiming !== GRAPH_REPEAT) return 'not timed as a repeated graph';
  return cpuBoundRefusal(r.ms, r.llamaGpuMs);
}

// -------------------------------------------------------------------------------------------- ratios

const passed = (r: BenchRow) => r.ms !== undefined && !!r.correctness?.pass;
const isLlama = (r: BenchRow) => r.family === LLAMA_FAMILY;

/** Our fastest passing MoE row of the llama row's case (same experts, slots, top-k, n, k; not a baseline). */
function oursMoeAt(rows: readonly BenchRow[], c: BenchRow): BenchRow | undefined {
  return rows
    .filter(
      (r) =>
        r.role !== 'baseline' &&
        r.experts === c.experts &&
        r.topk === c.topk &&
        r.m === c.m &&
        r.n === c.n &&
        r.k === c.k &&
        passed(r),
    )
    .reduce<BenchRow | undefined>((a, r) => (!a || r.ms! < a.ms! ? r : a), undefined);
}

/** One llama.cpp row against our fastest passing row of its problem. */
export interface LlamaRatio {
  problem: string;
  llamaId: string;
  llamaMs?: number;
  llamaGpuMs?: number;
  /** The shaders it ran, as the table prints them. */
  shaders: string;
  oursId?: string;
  oursMs?: number;
  /** llama.cpp's GPU time / our ms (both GPU timestamps; > 1 where ours is faster). */
  gpuRatio?: number;
  /** llama.cpp's wall time / our ms, only from a row llamaRefusal accepts. */
  wallRatio?: number;
  /** Why there is no wall ratio (or 'failed its check', which makes no ratio at all). */
  refused?: string;
}

/** The pipelines a row bound, with how often per op where that is not once. */
const shadersOf = (r: LlamaRow) =>
  r.llamaPipelines
    ?.map((p) => (Math.abs(p.perOp - 1) < 0.01 ? p.name : `${p.name} (${fmt(p.perOp, 1)} binds/op)`))
    .join(' + ') || '-';

/**
 * A Vulkan device name as Dawn's adapter info spells `device` (lower case, every run of other characters
 * one '-'), so ggml-vulkan's name and the bench's adapter compare.
 * @example deviceKey('NVIDIA H100 80GB HBM3') // 'nvidia-h100-80gb-hbm3'
 */
export const deviceKey = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, '-');

/**
 * Per llama.cpp row (one a dense shape or MoE case): its GPU-time ratio and, where its wall time is not
 * CPU-bound, its wall ratio, against our fastest passing row of the same problem. A row that failed its
 * check makes neither, nor does one that ran on another device than `oursDevice` (the bench adapter's
 * `adapterInfo.device`, when given).
 * @example llamaRatios(result.rows, 'nvidia-h100-80gb-hbm3').map((r) => `${r.problem}: ${r.gpuRatio} ${r.wallRatio ?? r.refused}`)
 */
export function llamaRatios(rows: readonly BenchRow[], oursDevice?: string): LlamaRatio[] {
  return rows
    .filter((r) => isLlama(r) && r.ms !== undefined)
    .map((x) => {
      const r = x as LlamaRow;
      const ours = r.experts ? oursMoeAt(rows, r) : oursAt(rows, r);
      const elsewhere =
        oursDevice !== undefined && r.llamaDevice !== undefined && deviceKey(r.llamaDevice) !== oursDevice;
      const ok = !!r.correctness?.pass && !elsewhere;
      const refused = elsewhere
        ? `ran on ${r.llamaDevice}, ours on ${oursDevice}`
        : ok
          ? llamaRefusal(r)
          : 'failed its check';
      return {
        problem: llamaProblem(r),
        llamaId: r.id,
        llamaMs: r.ms!,
        ...(r.llamaGpuMs !== undefined ? { llamaGpuMs: r.llamaGpuMs } : {}),
        shaders: shadersOf(r),
        ...(ours ? { oursId: ours.id, oursMs: ours.ms! } : {}),
        ...(ours && ok && r.llamaGpuMs !== undefined ? { gpuRatio: r.llamaGpuMs / ours.ms! } : {}),
        ...(ours && !refused ? { wallRatio: r.ms! / ours.ms! } : {}),
        ...(refused ? { refused } : {}),
      };
    });
}

/**
 * The llama.cpp peers table, one line per dense shape or MoE case: our best, the op and shaders llama.cpp
 * ran, its wall time (test-backend-ops's mean beside the fastest), its GPU time, and the ratios (peer ms /
 * ours ms; > 1 where ours is faster). A CPU-bound row shows why in place of its wall ratio; `oursDevice` as
 * llamaRatios takes it.
 * @example for (const l of llamaTable(result.rows, 'nvidia-h100-80gb-hbm3')) console.log(l);
 */
export function llamaTable(rows: readonly BenchRow[], oursDevice?: string): string[] {
  const out = [
    '| problem | ours ms (config) | llama.cpp op | shaders per op | llama wall ms (mean) | llama GPU ms | GPU / ours | wall / ours |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const ratios = llamaRatios(rows, oursDevice);
  const llama = rows.filter((r) => isLlama(r) && r.ms !== undefined) as LlamaRow[];
  llama.forEach((r, i) => {
    const q = ratios[i]!;
    const wall = q.wallRatio !== undefined ? fmt(q.wallRatio, 2) : `no ratio: ${q.refused}`;
    out.push(
      `| ${q.problem} | ${q.oursId ? `${fmt(q.oursMs, 4)} (${q.oursId})` : '-'} | ${r.llamaOp ?? '-'} | ${q.shaders} | ${fmt(r.ms, 4)} (${fmt(r.msMean, 4)}) | ${fmt(r.llamaGpuMs, 4)} | ${fmt(q.gpuRatio, 2)} | ${q.oursId ? wall : '-'} |`,
    );
  });
  return out.length > 2 ? out : [];
}

/**
 * The ratio lines the bench prints for llama.cpp, one per problem.
 * @example for (const l of llamaRatioLines(llamaRatios(rows))) console.log(l);
 */
export function llamaRatioLines(ratios: readonly LlamaRatio[]): string[] {
  return ratios.map(
    (r) =>
      `RATIO llama.cpp Vulkan / ours at ${r.problem}: GPU ${fmt(r.gpuRatio, 3)}, wall ` +
      `${r.wallRatio !== undefined ? fmt(r.wallRatio, 3) : `no ratio (${r.refused})`} ` +
      `(llama.cpp ${fmt(r.llamaGpuMs, 4)} ms GPU, ${fmt(r.llamaMs, 4)} ms wall, ${r.shaders}; ` +
      `${r.oursId ?? 'no row of ours'} ${fmt(r.oursMs, 4)} ms)`,
  );
}

/** One llama.cpp row as the bench's progress lines print it. */
export function llamaRowLine(r: LlamaRow): string {
  const p = llamaProblem(r).padEnd(28);
  if (r.skipped) return `  skip  ${r.id.padEnd(28)} ${p} ${r.skipped.slice(0, 200)}`;
  if (r.error) return `  ERROR ${r.id.padEnd(28)} ${p} ${r.error.slice(0, 300)}`;
  const c = r.correctness;
  const verdict = c ? (c.pass ? 'ok' : 'WRONG') : '?';
  return (
    `  ${verdict.padEnd(5)} ${r.id.padEnd(28)} ${p} ${fmt(r.ms, 4).padStart(9)} ms wall (mean ${fmt(r.msMean, 4)})` +
    `  gpu ${fmt(r.llamaGpuMs, 4)} ms (${llamaRefusal(r) ?? 'wall <= 1.1x it: usable'})` +
    `  ${r.nodes ?? '-'} ops x ${r.computes ?? '-'}, ${r.banks ?? '-'} banks, nmse ${fmt(r.nmse, 8)}  ${shadersOf(r)}`
  );
}
