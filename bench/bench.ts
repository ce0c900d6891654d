// `npm run bench`: every kernel family at LLM prefill shapes on the local WebGPU adapter (Node + Dawn),
// through the same runner the app and the tuner use, side by side with baselines measured in the same
// run. See docs/benchmarks.md for the method.
//
//   npx tsx bench/bench.ts [--quick] [--json out.json] [--filter REGEX] [--torch torch.json]
//                          [--no-tune] [--tune-every-shape] [--reps N] [--sweeps N] [--target-ms T]
//                          [--shapes m,n,k;m,n,k] [--no-moe] [--moe-only] [--moe e,t,k;...]
//                          [--dawn-toggles T1,T2] [--dawn-standalone] [--no-ort] [--no-llama]
//
// --quick: CI-size problems (seconds on SwiftShader): checks the harness, not speed.
// --reps N: timed batches a row (default TIMING_DEFAULTS.batches; as many again when they disagree).
// --sweeps N: time every passing row N times, in sweeps over each problem's rows; the fastest counts.
// --tune-shapes m,n,k;...: tune the dense families at these shapes too (the headline shape always).
// --moe-tune e,t,k;...: tune the MoE family (route, arm, knobs) at these cases. --moe-dense: the dense f16
//   plan at m = slots beside each MoE case. --no-ort: skip ONNX Runtime (it runs when installed).
//   --no-llama: skip llama.cpp's Vulkan backend (bench/llama.ts; it runs when installed).
// --moe e,t,k;...: MoE cases as experts,tokens,top-k at n = k = 4096 (default: 8 and 64 experts x 32..2048 tokens, top-2).
// --torch: a torch_baseline.py JSON from the same machine (bench/h200.sh writes one first), so the
//          bench can print the ratios measured in the same command.
import { readFileSync, writeFileSync } from 'node:fs';
import { TIMING_DEFAULTS } from '../src/kernels/gpu/timing';
import { eachFlag } from './args';
import { adapterInfoRecord, dawnFlags, openBenchGpu, type BenchGpu } from './dawn';
import { parseShapes } from './cases';
import { runBench, type BenchOptions } from './harness';
import { benchLlama } from './llama';
import { llamaRatioLines, llamaRatios, llamaTable } from './llamaPeer';
import { benchOrt } from './ort';
import { ortRatioLines, ortRatios, peerTable } from './peers';
import type { MoeCase, Shape } from './result';

type CliOptions = BenchOptions & {
  /** Time ONNX Runtime's WebGPU MatMulNBits at the dense shapes (when installed; bench/ort.ts). */
  ort?: boolean;
  /** Time llama.cpp's Vulkan mul_mat / mul_mat_id at the dense shapes and MoE cases (when installed; bench/llama.ts). */
  llama?: boolean;
  json?: string;
  torchPath?: string;
  extraToggles?: string;
  standalone?: boolean;
};

/** A positive whole number from a flag, or an error naming the flag. */
function count(flag: string, v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1) throw new Error(`${flag} needs a positive whole number, got '${v}'`);
  return n;
}

function parseMoe(list: string): MoeCase[] {
  return list.split(';').map((s) => {
    const [experts, tokens, topk] = s.split(',').map((v) => count('--moe', v));
    if (experts === undefined || tokens === undefined || topk === undefined)
      throw new Error(`--moe: bad case "${s}" (want experts,tokens,top-k)`);
    return { experts, tokens, topk, n: 4096, k: 4096 };
  });
}

function parseArgs(argv: string[]): CliOptions {
  const opts: CliOptions = {
    quick: false,
    tune: true,
    moe: true,
    reps: TIMING_DEFAULTS.batches,
    targetMs: TIMING_DEFAULTS.targetMs,
  };
  eachFlag(argv, (a, next) => {
    if (a === '--quick') opts.quick = true;
    else if (a === '--json') opts.json = next();
    else if (a === '--filter') opts.filter = new RegExp(next());
    else if (a === '--torch') opts.torchPath = next();
    else if (a === '--no-tune') opts.tune = false;
    else if (a === '--tune-every-shape') opts.tuneEveryShape = true;
    else if (a === '--no-moe') opts.moe = false;
    else if (a === '--moe-only') opts.dense = false;
    else if (a === '--moe') opts.moeCases = parseMoe(next());
    else if (a === '--reps') opts.reps = count(a, next());
    else if (a === '--sweeps') opts.sweeps = count(a, next());
    else if (a === '--target-ms') opts.targetMs = count(a, next());
    // Extra Dawn toggles, comma-separated (e.g. disable_robustness, to measure what the bounds checks cost).
    else if (a === '--dawn-toggles') opts.extraToggles = next();
    // Dawn standalone: without the toggles Chrome enables by default (see BROWSER_DEFAULT_TOGGLES).
    else if (a === '--dawn-standalone') opts.standalone = true;
    else if (a === '--shapes') opts.shapes = parseShapes(next());
    else if (a === '--tune-shapes') opts.tuneShapes = parseShapes(next());
    else if (a === '--moe-tune')
      opts.moeTune = parseMoe(next()).map(({ experts, tokens }) => ({ experts, tokens }));
    else if (a === '--moe-dense') opts.moeDense = true;
    else if (a === '--no-ort') opts.ort = false;
    else if (a === '--no-llama') opts.llama = false;
    else throw new Error(`unknown argument ${a}`);
  });
  return opts;
}

async function main() {
  const started = performance.now();
  const opts = parseArgs(process.argv.slice(2));
  let torch: unknown;
  if (opts.torchPath) {
    try {
      torch = JSON.parse(readFileSync(opts.torchPath, 'utf8'));
    } catch (e) {
      console.warn(
        `[bench] no torch baseline at ${opts.torchPath}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }
  const flags = dawnFlags({
    ...(opts.standalone ? { standalone: true } : {}),
    ...(opts.extraToggles ? { extra: opts.extraToggles } : {}),
  });
  const gpu: BenchGpu = await openBenchGpu(flags);
  console.log(`[bench] Dawn flags: ${flags.join(' ')}`);
  const save = (r: unknown) => {
    if (opts.json) writeFileSync(opts.json, JSON.stringify(r, null, 1));
  };
  const result = await runBench(gpu, {
    ...opts,
    ...(torch ? { torch } : {}),
    log: (s) => console.log(s),
    onProgress: save,
  });
  result.adapterInfo = adapterInfoRecord(gpu.adapter);
  save(result);
  // ONNX Runtime beside ours, in this same command, at every dense shape the bench ran.
  const seen = new Map<string, Shape>();
  for (const r of result.rows)
    if (!r.experts && r.role !== 'baseline') seen.set(`${r.m}x${r.n}x${r.k}`, { m: r.m, n: r.n, k: r.k });
  // An MoE-only run has no dense shape for ORT: its EP is not even started.
  if (opts.ort !== false && seen.size) {
    const ort = await benchOrt([...seen.values()], {
      quick: opts.quick,
      ...(result.peak ? { l2Bytes: result.peak.l2Bytes } : {}),
      log: (line) => console.log(line),
    });
    if (ort.note) console.log(`[bench] ${ort.note}`);
    result.rows.push(...ort.rows);
    result.ort = {
      ...(ort.ort ? { version: ort.ort.version } : {}),
      ...(ort.note ? { note: ort.note } : {}),
    };
    for (const line of [
      ...peerTable(result.rows, torch),
      '',
      ...ortRatioLines(ortRatios(result.rows), torch),
    ])
      console.log(line);
    save(result);
  }
  // llama.cpp's Vulkan backend beside ours, in this same command, at every dense shape and MoE case the
  // bench ran (its rows are baselines: never ours).
  const moe = new Map<string, MoeCase>();
  for (const r of result.rows)
    if (r.experts && r.role !== 'baseline') {
      const c = { experts: r.experts, tokens: r.m / (r.topk ?? 1), topk: r.topk ?? 1, n: r.n, k: r.k };
      moe.set(JSON.stringify(c), c);
    }
  if (opts.llama !== false && (seen.size || moe.size)) {
    const llama = await benchLlama([...seen.values()], [...moe.values()], {
      quick: opts.quick,
      ...(result.peak ? { l2Bytes: result.peak.l2Bytes } : {}),
      log: (line) => console.log(line),
    });
    if (llama.note) console.log(`[bench] ${llama.note}`);
    result.rows.push(...llama.rows);
    result.llama = {
      ...(llama.llama ? { dir: llama.llama.dir, version: llama.llama.version } : {}),
      ...(llama.llama?.head ? { head: llama.llama.head } : {}),
      ...(llama.llama?.device ? { device: llama.llama.device } : {}),
      ...(llama.note ? { note: llama.note } : {}),
    };
    // Ratios only where ggml-vulkan ran on the bench's adapter (e.g. not lavapipe beside SwiftShader).
    const device = result.adapterInfo?.device as string | undefined;
    for (const line of [
      ...llamaTable(result.rows, device),
      '',
      ...llamaRatioLines(llamaRatios(result.rows, device)),
    ])
      console.log(line);
    save(result);
  }
  // The whole command's wall time and this process's CPU time: where a run's time goes (the MoE cases must
  // finish in 5 minutes on the H200; their data and oracles are the CPU side).
  const cpu = process.cpuUsage();
  result.wallS = (performance.now() - started) / 1000;
  result.cpuS = (cpu.user + cpu.system) / 1e6;
  save(result);
  console.log(
    `[bench] ${result.rows.length} rows in ${result.wallS.toFixed(1)} s wall, ${result.cpuS.toFixed(1)} s CPU`,
  );
  gpu.device.destroy();
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(`bench: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
