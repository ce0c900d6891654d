// Peers timed at their best, and the only ratios the bench may print against them. A peer row (ONNX
// Runtime's MatMulNBits) carries two figures: its pipelined wall time per run (bench/ort.ts: n
// `session.run()` queued back to back, outputs on the GPU, one sync) and its own profiler's GPU time per
// run. Where the wall time exceeds the GPU time by more than CPU_BOUND_MARGIN the row measured ORT's host
// side, not its kernel: it is flagged CPU-bound and makes no ratio. A row without a profiler figure cannot
// be cross-checked and makes none either. Pure: no GPU, no ORT; the report and the bench call it.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt } from './format';
import type { BenchRow, Shape } from './result';

/** The `family` of the bench rows ONNX Runtime fills. */
export const ORT_FAMILY = 'ort-matmulnbits';

/** How far a peer's wall time may exceed its own GPU time before the row counts as CPU-bound. */
export const CPU_BOUND_MARGIN = 0.1;

/** One event of ORT's profile (Chrome trace JSON), as far as parseOrtProfile reads it. */
interface ProfileEvent {
  cat?: string;
  name?: string;
  dur?: number;
}

export interface OrtProfileSummary {
  /** The WebGPU programs ORT ran for the node, in first-seen order (e.g. DP4AMatMulQuantize, DP4AMatMulNBits). */
  kernels: string[];
  /** Each program's GPU time per run, ms, in the order of `kernels`. */
  kernelMs: number[];
  /** Their GPU time per run, ms: the profile's dispatch durations summed over the runs after the first. */
  gpuMsPerRun: number;
  dispatches: number;
}

/**
 * Read the WebGPU EP's dispatches out of an ORT profile (onnxruntime's Chrome-trace JSON: an array of
 * events). The EP writes one event of category "Api" per dispatch, named "<node>&<op>&<program>", whose
 * `dur` (microseconds) comes from its GPU timestamp queries; "Node" and "Session" events are CPU time and
 * are ignored. The first run's dispatches (pipeline creation, first touches) are left out of the time when
 * the dispatch count divides evenly into `runs`.
 * @example parseOrtProfile(readFileSync(file, 'utf8'), 21).kernels // ['DP4AMatMulQuantize', 'DP4AMatMulNBits']
 */
export function parseOrtProfile(json: string, runs: number): OrtProfileSummary {
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed)) throw new Error('an ORT profile is a JSON array of trace events');
  const api = (parsed as ProfileEvent[]).filter((e) => e?.cat === 'Api' && typeof e.name === 'string');
  const perRun = api.length % runs === 0 ? api.length / runs : 0;
  const skipFirst = perRun > 0 && runs > 1;
  const timed = skipFirst ? api.slice(perRun) : api;
  const timedRuns = Math.max(1, skipFirst ? runs - 1 : runs);
  const kernels: string[] = [];
  const us: number[] = [];
  for (const e of api) {
    const program = e.name!.split('&').at(-1)!;
    if (!kernels.includes(program)) kernels.push(program);
  }
  for (const e of timed) {
    const i = kernels.indexOf(e.name!.split('&').at(-1)!);
    us[i] = (us[i] ?? 0) + (e.dur ?? 0);
  }
  const kernelMs = kernels.map((_, i) => (us[i] ?? 0) / 1000 / timedRuns);
  return {
    kernels,
    kernelMs,
    gpuMsPerRun: kernelMs.reduce((a, b) => a + b, 0),
    dispatches: api.length,
  };
}

/** What the CPU-bound rule reads of a peer row. */
export interface PeerTiming {
  /** Pipelined wall time per run, ms. */
  ms?: number;
  /** The peer's own profiler's GPU time per run, ms. */
  ortGpuMs?: number;
  /** How the wall time was taken: 'pipelined' (runs queued back to back); absent in files from before. */
  ortTiming?: string;
}

/** The ortTiming of a row timed at its best (bench/ort.ts). */
export const PIPELINED = 'pipelined';

/**
 * Why a peer row may not make a ratio, or undefined when it may: no wall time, a wall time not taken
 * pipelined (a file from before: each run awaited), no profiler GPU time to cross-check it against, or a
 * wall time over (1 + CPU_BOUND_MARGIN) x the GPU time (CPU-bound).
 * @example peerRefusal({ ms: 1.6, ortGpuMs: 1.04, ortTiming: 'pipelined' }) // 'CPU-bound: wall 1.54x its GPU time'
 */
export function peerRefusal(r: PeerTiming): string | undefined {
  if (r.ms === undefined || !Number.isFinite(r.ms)) return 'no wall time';
  if (r.ortTiming !== PIPELINED) return 'not timed pipelined (each run awaited)';
  return cpuBoundRefusal(r.ms, r.ortGpuMs);
}

/**
 * The rule every peer's wall time meets before it makes a ratio: why a wall time `wallMs` (ms per run) may
 * not, against the peer's own profiler's GPU time `gpuMs`, or undefined when it may: no wall time, no GPU
 * time to cross-check it against, or a wall time over (1 + CPU_BOUND_MARGIN) x the GPU time (the peer's
 * host side, not its kernels, set the pace: CPU-bound).
 * @example cpuBoundRefusal(1.6, 1.04) // 'CPU-bound: wall 1.54x its GPU time'
 */
export function cpuBoundRefusal(wallMs: number | undefined, gpuMs: number | undefined): string | undefined {
  if (wallMs === undefined || !Number.isFinite(wallMs)) return 'no wall time';
  if (gpuMs === undefined || !(gpuMs > 0)) return 'no profiler GPU time to cross-check';
  if (wallMs > (1 + CPU_BOUND_MARGIN) * gpuMs) return `CPU-bound: wall ${fmt(wallMs / gpuMs)}x its GPU time`;
  return undefined;
}

/** A dense shape's ORT ratio: ORT's fastest usable row against this project's fastest passing row. */
export interface OrtRatio {
  shape: Shape;
  /** ORT's fastest passing row that may make a ratio (absent when none may). */
  ortId?: string;
  ortMs?: number;
  /** Why no ORT row at this shape makes a ratio (each passing row's refusal). */
  refused?: string;
  oursId?: string;
  oursMs?: number;
  /** ORT best ms / our best ms: > 1 where ours is faster; only from a row peerRefusal accepts. */
  ratio?: number;
}

const shapeKey = (r: Shape) => `${r.m}x${r.n}x${r.k}`;
const passed = (r: BenchRow) => r.ms !== undefined && !!r.correctness?.pass;
const isOrt = (r: BenchRow) => r.family === ORT_FAMILY && !r.experts;

/**
 * Our fastest passing dense row at `shape` (every row that is not a baseline: the quantized plans the
 * headline's `bestAny` ranges over).
 */
export function oursAt(rows: readonly BenchRow[], shape: Shape): BenchRow | undefined {
  return rows
    .filter((r) => r.role !== 'baseline' && !r.experts && passed(r) && shapeKey(r) === shapeKey(shape))
    .reduce<BenchRow | undefined>((a, r) => (!a || r.ms! < a.ms! ? r : a), undefined);
}

/** ORT's passing rows at the shape `key` (m x n x k). */
const ortAt = (rows: readonly BenchRow[], key: string) =>
  rows.filter((r) => isOrt(r) && passed(r) && shapeKey(r) === key).map((r) => r as BenchRow & PeerTiming);

/**
 * Why a usable ORT wall time still may not make a ratio: a refused (CPU-bound) variant among `at` whose
 * kernels alone (its profiler's GPU time) beat that wall time. ORT at its best is then faster than the
 * usable row, and a ratio from it would flatter us.
 */
function fasterRefused(at: readonly (BenchRow & PeerTiming)[], wallMs: number): string | undefined {
  const q = at.find((r) => peerRefusal(r) && r.ortGpuMs !== undefined && r.ortGpuMs < wallMs);
  return (
    q && `${q.arm}'s kernels take ${fmt(q.ortGpuMs, 4)} ms, under this wall time, but it is ${peerRefusal(q)}`
  );
}

/**
 * ORT at the shape `key`: its fastest row that may make a ratio (accepted by peerRefusal and not beaten by
 * a refused variant's kernels), or why none may.
 */
function ortVerdict(rows: readonly BenchRow[], key: string): { row: BenchRow } | { refused: string } {
  const at = ortAt(rows, key);
  const row = at
    .filter((r) => !peerRefusal(r))
    .reduce<BenchRow | undefined>((a, r) => (!a || r.ms! < a.ms! ? r : a), undefined);
  if (!row) return { refused: at.map((r) => `${r.arm} ${peerRefusal(r)}`).join('; ') };
  const faster = fasterRefused(at, row.ms!);
  return faster ? { refused: faster } : { row };
}

/** ORT's fastest row at the shape `key` (m x n x k) that may make a ratio (ortVerdict). */
export function usableOrt(rows: readonly BenchRow[], key: string): BenchRow | undefined {
  const v = ortVerdict(rows, key);
  return 'row' in v ? v.row : undefined;
}

/**
 * Per dense shape with a passing ORT row: ORT's fastest row that may make a ratio over our best ms.
 * A shape whose every ORT row is refused (CPU-bound, or not cross-checked), or whose usable row a refused
 * variant's kernels beat, gets no ratio and says why.
 * @example ortRatios(result.rows).map((r) => `${r.shape.m}: ${r.ratio ?? r.refused}`)
 */
export function ortRatios(rows: readonly BenchRow[]): OrtRatio[] {
  const shapes = new Map<string, Shape>();
  for (const r of rows) if (isOrt(r) && passed(r)) shapes.set(shapeKey(r), { m: r.m, n: r.n, k: r.k });
  return [...shapes].map(([key, shape]) => {
    const v = ortVerdict(rows, key);
    const row = 'row' in v ? v.row : undefined;
    const ours = oursAt(rows, shape);
    return {
      shape,
      ...('row' in v ? { ortId: v.row.id, ortMs: v.row.ms! } : { refused: v.refused }),
      ...(ours ? { oursId: ours.id, oursMs: ours.ms! } : {}),
      ...(row && ours ? { ratio: row.ms! / ours.ms! } : {}),
    };
  });
}

/** What the peer lines read of a torch_baseline.py JSON. */
interface TorchDense {
  int_mm?: { m: number; n: number; k: number; ms: number }[];
  f16_mm?: { m: number; n: number; k: number; ms: number; layout?: string }[];
}

/** torch's fastest entry of `list` at shape `s`, ms. */
function torchAt(list: { m: number; n: number; k: number; ms: number }[] | undefined, s: Shape) {
  const ms = list?.filter((x) => x.m === s.m && x.n === s.n && x.k === s.k).map((x) => x.ms);
  return ms?.length ? Math.min(...ms) : undefined;
}

/**
 * The ratio lines the bench prints: per shape, ORT's best usable row against ours (or why there is no
 * ratio), and beside it torch's (the fastest _int_mm layout and the f16 matmul, each torch ms / our best
 * ms, as the headline's ratio is) when a torch_baseline.py JSON is given.
 * @example for (const l of ortRatioLines(ortRatios(rows), torchJson)) console.log(l);
 */
export function ortRatioLines(ratios: readonly OrtRatio[], torch?: unknown): string[] {
  const t = torch as TorchDense | undefined;
  return ratios.map((r) => {
    const ours = r.oursMs;
    const intMm = torchAt(t?.int_mm, r.shape);
    const f16 = torchAt(t?.f16_mm, r.shape);
    const ort =
      r.ortId !== undefined
        ? `${fmt(r.ratio, 3)} (${r.ortId} ${fmt(r.ortMs, 4)} ms, `
        : `no ratio (${r.refused ?? 'no usable ORT row'}; `;
    return (
      `RATIO ORT MatMulNBits / ours at ${shapeKey(r.shape)}: ${ort}` +
      `${r.oursId ?? 'no row of ours'} ${fmt(ours, 4)} ms)` +
      (ours !== undefined && intMm !== undefined ? `; torch._int_mm / ours ${fmt(intMm / ours, 3)}` : '') +
      (ours !== undefined && f16 !== undefined ? `; torch f16 / ours ${fmt(f16 / ours, 3)}` : '')
    );
  });
}

/**
 * The peers table, one line per dense shape and ORT variant: our best, ORT's pipelined wall time, its
 * profiler's GPU time, the programs it ran, torch's f16 matmul (fastest weight layout), and the ratios
 * (peer ms / ours ms; > 1 where ours is faster). A CPU-bound or unchecked ORT row shows why in place of
 * its ratio. Rows come from one command (the same-command rule); `torch` is that command's JSON.
 * @example for (const l of peerTable(result.rows, torch)) console.log(l);
 */
export function peerTable(rows: readonly BenchRow[], torch?: unknown): string[] {
  const t = torch as TorchDense | undefined;
  const out = [
    '| m x n x k | ours ms (config) | ORT variant | ORT pipelined wall ms | ORT profiler GPU ms | ORT kernels | ORT / ours | torch f16 ms | torch f16 / ours |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const ort = rows.filter((r) => isOrt(r) && r.ms !== undefined);
  for (const key of [...new Set(ort.map(shapeKey))]) {
    const at = ort.filter((r) => shapeKey(r) === key);
    const shape = { m: at[0]!.m, n: at[0]!.n, k: at[0]!.k };
    const ours = oursAt(rows, shape);
    const f16 = torchAt(t?.f16_mm, shape);
    for (const r of at) {
      const p = r as BenchRow & PeerTiming & { ortKernels?: string[] };
      const why = p.correctness?.pass
        ? (peerRefusal(p) ?? fasterRefused(ortAt(rows, key), p.ms!))
        : 'failed its check';
      const ratio = why ? `no ratio: ${why}` : ours ? fmt(p.ms! / ours.ms!, 2) : '-';
      out.push(
        `| ${key} | ${ours ? `${fmt(ours.ms, 4)} (${ours.id})` : '-'} | ${r.arm} | ${fmt(p.ms, 4)} | ${fmt(p.ortGpuMs, 4)} | ${(p.ortKernels ?? []).join(' + ') || '-'} | ${ratio} | ${fmt(f16, 4)} | ${ours && f16 !== undefined ? fmt(f16 / ours.ms!, 3) : '-'} |`,
      );
    }
  }
  return out.length > 2 ? out : [];
}

/**
 * The folders to look for a peer's install in, first first: the `override` (its MMQ_*_DIR), then
 * `installDir` under `cwd`, then `besideName` beside the bench's modules (a carried bundle).
 * @example installCandidates('/tmp/ort', '/repo', 'bench/.ort', './.ort')[0] // '/tmp/ort'
 */
export function installCandidates(
  override: string | undefined,
  cwd: string,
  installDir: string,
  besideName: string,
): string[] {
  const dirs = [override, resolve(cwd, installDir)];
  try {
    dirs.push(fileURLToPath(new URL(besideName, import.meta.url)));
  } catch {
    // not a file: URL (a bundle loaded some other way)
  }
  return [...new Set(dirs.filter((d): d is string => !!d))];
}
