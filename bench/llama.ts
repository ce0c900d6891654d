// llama.cpp's Vulkan backend as a peer beside the bench's rows: ggml_mul_mat on Q4_K weights at the dense
// shapes and ggml_mul_mat_id at the MoE cases, timed in the same command by the native harness
// bench/llama/mmq-llama.c (built by bench/install-llama.sh against the prebuilt ggml of
// @node-llama-cpp/linux-x64-vulkan; MMQ_LLAMA_DIR on the lent GPU machine). When it is absent the bench says
// so and carries on without these rows.
//
// Two runs of the harness over all the cases:
// - the wall pass: each op repeated in one graph as test-backend-ops `perf` repeats it (cold weight banks,
//   two activation tensors, one output address: every op reads cold weights, quantizes or converts its own
//   activations, and waits for the op before), `ggml_backend_graph_compute` until a second has passed; a
//   row's `ms` is the fastest compute's wall time per op (`msMean`: test-backend-ops's all-compute mean),
//   and its check (NMSE against a float64 reference on the dequantized weights, before and after timing);
// - the GPU pass, with GGML_VK_PERF_LOGGER=1: ggml-vulkan's own timestamps around each node (the activation
//   pass and the matmul of one op together), read from its "Vulkan Timings" blocks (`llamaGpuMs`: the
//   fastest compute's mean per op), and the pipelines each case bound (`llamaPipelines`, per op).
// bench/llamaPeer.ts reads both into rows and holds the ratio rule (a CPU-bound row makes no wall ratio).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MOE_ROUTING_SEED, moeRouting } from '../src/kernels/moe';
import { BENCH_DATA } from './cases';
import {
  gpuTimeOf,
  llamaRow,
  llamaRowLine,
  parseHarnessOutput,
  parsePerfLog,
  parseVkDevice,
  type HarnessCase,
  type HarnessHead,
  type LlamaRow,
  type VkDeviceInfo,
} from './llamaPeer';
import { installCandidates } from './peers';
import type { MoeCase, Shape } from './result';

/** Where bench/install-llama.sh installs the harness and the ggml libraries (relative to the repository). */
export const LLAMA_INSTALL_DIR = 'bench/.llama';

/** Why there are no llama.cpp rows when the harness is not installed. */
export const LLAMA_ABSENT_NOTE = 'llama.cpp Vulkan not installed (bash bench/install-llama.sh)';

// ------------------------------------------------------------------------------------------- running

/**
 * The folders to look for the harness in, first first: MMQ_LLAMA_DIR, then bench/.llama under `cwd`, then
 * beside this module.
 * @example llamaCandidates({ MMQ_LLAMA_DIR: '/tmp/llama' }, '/repo')[0] // '/tmp/llama'
 */
export function llamaCandidates(env: Record<string, string | undefined>, cwd: string): string[] {
  return installCandidates(env.MMQ_LLAMA_DIR, cwd, LLAMA_INSTALL_DIR, './.llama');
}

/** The expert ids (slot t*topk + j) the bench's MoE rows run for a case: moe.family's moeProblemOf ('even'
 * routing, seeded by streamSeed(BENCH_DATA.seed, MOE_ROUTING_SEED): the data seed unless it is 0). */
export function benchMoeIds(c: MoeCase): Uint32Array {
  const seed = BENCH_DATA.seed === 0 ? MOE_ROUTING_SEED : BigInt(BENCH_DATA.seed);
  return moeRouting(c.tokens, c.experts, c.topk, seed);
}

export interface BenchLlamaOptions {
  /** CI-size run: a few ops a graph, two computes (checks the path, not speed). */
  quick?: boolean;
  /** L2 bytes the weight banks must overrun 4x (default the harness's, 60 MiB). */
  l2Bytes?: number;
  /** Wall time a graph's ops take at least, ms (default the harness's, 25). */
  targetMs?: number;
  /** Wall pass: compute graphs until this many ms have passed (default the harness's, 1000). */
  minMs?: number;
  /** At most this many ops a graph (default the harness's, 8192). */
  maxNodes?: number;
  candidates?: readonly string[];
  /** The harness's environment (default process.env). */
  env?: Record<string, string | undefined>;
  /** Per pass, ms (default 300 s). */
  timeoutMs?: number;
  log?: (line: string) => void;
}

export interface BenchLlamaResult {
  rows: LlamaRow[];
  /** Why there are no rows (absent, failed to start), or what went wrong in a pass. */
  note?: string;
  llama?: { dir: string; version?: unknown; head?: HarnessHead; device?: VkDeviceInfo };
}

const tail = (s: string) => s.trim().split('\n').slice(-6).join(' / ').slice(0, 800);

interface HarnessRun {
  stdout: string;
  stderr: string;
  /** Why the run failed (could not start, exited non-zero, killed at the timeout); its output is kept. */
  failed?: string;
}

/** Run the harness once (not blocking: the bench's own device stays serviced). */
function runHarness(
  bin: string,
  args: string[],
  env: Record<string, string | undefined>,
  timeoutMs: number,
): Promise<HarnessRun> {
  return new Promise((done) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const finish = (failed: string | undefined) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      done({ stdout, stderr, ...(failed ? { failed: failed.replace('$TAIL', tail(stderr)) } : {}) });
    };
    child.on('error', (e) => finish(`could not run ${bin}: ${e.message}`));
    child.on('close', (code, signal) =>
      finish(
        timedOut
          ? `${bin} ran past ${timeoutMs / 1000} s and was killed: $TAIL`
          : code !== 0
            ? `${bin} ${signal ? `was killed (${signal})` : `exited with ${code}`}: $TAIL`
            : undefined,
      ),
    );
  });
}

/**
 * llama.cpp's Vulkan backend at `shapes` and `moe` cases: the harness's wall pass and GPU pass (see the
 * header), one row per problem (an error row for a case a pass lost). No rows and a note when the harness
 * is not installed.
 * @example const r = await benchLlama([{ m: 32, n: 4096, k: 4096 }], [], { log: console.log }); r.rows[0]?.llamaGpuMs
 */
export async function benchLlama(
  shapes: readonly Shape[],
  moe: readonly MoeCase[],
  opts: BenchLlamaOptions = {},
): Promise<BenchLlamaResult> {
  const log = opts.log ?? (() => {});
  const dir = (opts.candidates ?? llamaCandidates(process.env, process.cwd())).find((d) =>
    existsSync(join(d, 'bin', 'mmq-llama')),
  );
  if (!dir) return { rows: [], note: LLAMA_ABSENT_NOTE };
  const bin = join(dir, 'bin', 'mmq-llama');
  let version: unknown;
  try {
    version = JSON.parse(readFileSync(join(dir, 'VERSION.json'), 'utf8'));
  } catch {
    // a kit without its VERSION.json still runs; the harness's own line names the ggml build
  }
  const tmp = mkdtempSync(join(tmpdir(), 'mmq-llama-'));
  try {
    const rows: LlamaRow[] = [];
    const args: string[] = [];
    const used = new Map<string, number>();
    for (const s of shapes) {
      if (s.k % 256)
        rows.push({
          ...llamaRow({ case: '', kind: 'dense', ...s }),
          skipped: 'k is not a multiple of 256 (Q4_K blocks)',
        });
      else args.push(`dense:${s.m},${s.n},${s.k}`);
    }
    moe.forEach((c, i) => {
      const slots = c.tokens * c.topk;
      if (c.k % 256) {
        const x = {
          case: '',
          kind: 'moe' as const,
          m: slots,
          n: c.n,
          k: c.k,
          experts: c.experts,
          topk: c.topk,
        };
        rows.push({ ...llamaRow(x), skipped: 'k is not a multiple of 256 (Q4_K blocks)' });
        return;
      }
      const ids = benchMoeIds(c);
      const file = join(tmp, `ids${i}.bin`);
      writeFileSync(file, Buffer.from(Int32Array.from(ids).buffer));
      used.set(`${c.experts},${slots},${c.topk},${c.n},${c.k}`, new Set(ids).size);
      args.push(`moe:${c.experts},${c.tokens},${c.topk},${c.n},${c.k}@${file}`);
    });
    if (!args.length) return { rows, llama: { dir, version } };
    // Quick: a few ops a graph and two computes; otherwise the harness's own sizes (test-backend-ops's).
    const targetMs = opts.targetMs ?? (opts.quick ? 1 : undefined);
    const maxNodes = opts.maxNodes ?? (opts.quick ? 4 : undefined);
    const minMs = opts.minMs ?? (opts.quick ? 1 : undefined);
    const common = [
      ...(opts.l2Bytes ? ['--l2-bytes', String(opts.l2Bytes)] : []),
      ...(targetMs ? ['--target-ms', String(targetMs)] : []),
      ...(maxNodes ? ['--max-nodes', String(maxNodes)] : []),
    ];
    const quickComputes = opts.quick ? ['--min-computes', '2'] : [];
    const baseEnv = { ...(opts.env ?? process.env) };
    // The wall pass runs as users run llama.cpp: no perf logger, no debug markers.
    delete baseEnv.GGML_VK_PERF_LOGGER;
    delete baseEnv.GGML_VK_DEBUG_MARKERS;
    const timeout = opts.timeoutMs ?? 300_000;
    log(`[llama] ${bin}: wall pass over ${args.length} problems`);
    const wallRun = await runHarness(
      bin,
      [...common, ...(minMs ? ['--min-ms', String(minMs)] : []), ...quickComputes, ...args],
      baseEnv,
      timeout,
    );
    log(`[llama] GPU pass (GGML_VK_PERF_LOGGER=1)`);
    const gpuRun = await runHarness(
      bin,
      ['--gpu-log', '--no-check', ...common, '--min-ms', String(minMs ?? 200), ...quickComputes, ...args],
      { ...baseEnv, GGML_VK_PERF_LOGGER: '1', GGML_VK_PERF_LOGGER_FREQUENCY: '1' },
      timeout,
    );
    const wall = parseHarnessOutput(wallRun.stdout);
    const gpu = parseHarnessOutput(gpuRun.stdout);
    const perf = parsePerfLog(gpuRun.stderr);
    const device = parseVkDevice(gpuRun.stderr) ?? parseVkDevice(wallRun.stderr);
    if (!wall.head && wallRun.failed)
      return {
        rows,
        note: `llama.cpp's harness could not start: ${wallRun.failed}`,
        llama: { dir, version },
      };
    for (const c of wall.cases) {
      const gpuCase = gpu.cases.find((g) => g.case === c.case);
      const p = perf.find((x) => x.label === c.case);
      const g = p && gpuTimeOf(p);
      const usedExperts = used.get(`${c.experts},${c.m},${c.topk},${c.n},${c.k}`);
      const row = llamaRow(c, {
        ...(g ? { gpu: g } : {}),
        ...(gpuCase ? { gpuCase } : {}),
        ...(device ? { device } : {}),
        ...(usedExperts ? { usedExperts } : {}),
        ...(wall.head ? { head: wall.head } : {}),
      });
      rows.push(row);
      log(llamaRowLine(row));
    }
    // A case the wall pass never reached (it crashed or timed out): an error row, so the table says so.
    const reached = wall.cases.length;
    const lost = args.length - reached;
    if (lost > 0)
      for (const a of args.slice(reached)) {
        const [kind, spec] = a.split(':') as ['dense' | 'moe', string];
        const nums = spec.split('@')[0]!.split(',').map(Number);
        const c: HarnessCase =
          kind === 'dense'
            ? { case: a, kind, m: nums[0]!, n: nums[1]!, k: nums[2]! }
            : {
                case: a,
                kind,
                experts: nums[0]!,
                tokens: nums[1]!,
                topk: nums[2]!,
                m: nums[1]! * nums[2]!,
                n: nums[3]!,
                k: nums[4]!,
              };
        rows.push(llamaRow({ ...c, error: wallRun.failed ?? 'the harness printed no line for it' }));
      }
    const notes = [
      wallRun.failed && `wall pass: ${wallRun.failed}`,
      gpuRun.failed && `GPU pass: ${gpuRun.failed}`,
    ].filter(Boolean);
    return {
      rows,
      ...(notes.length ? { note: notes.join('; ') } : {}),
      llama: { dir, version, ...(wall.head ? { head: wall.head } : {}), ...(device ? { device } : {}) },
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
