// `npm run bench`: every kernel family at LLM prefill shapes on the local WebGPU adapter (Node + Dawn),
// side by side with baselines measured in the same run. See docs/benchmarks.md for the method.
//
//   npx tsx bench/bench.ts [--quick] [--json out.json] [--filter REGEX] [--torch torch.json]
//                          [--no-tune] [--tune-every-shape] [--reps N] [--sweeps N] [--target-ms T]
//                          [--shapes m,n,k;m,n,k] [--no-moe]
//                          [--dawn-toggles T1,T2] [--dawn-standalone]
//
// --quick: CI-size problems (seconds on SwiftShader): checks the harness, not speed.
// --reps N: timed batches a row (default BENCH_REPS = 6, N more when they disagree; the fastest counts).
// --sweeps N: time every passing row N times, in sweeps over each problem's rows; the fastest sweep counts
//             (default 1; MoE rows take one).
// --torch: a torch_baseline.py JSON from the same machine (bench/h200.sh writes one first), so the
//          bench can print the WebGPU : torch._int_mm ratio measured in the same command.
import { readFileSync, writeFileSync } from 'node:fs';
import { eachFlag } from './args';
import { adapterInfoRecord, dawnFlags, openBenchGpu, type BenchGpu } from './dawn';
import { BENCH_REPS } from './exec';
import { parseShapes, runBench, type BenchOptions } from './harness';

type CliOptions = BenchOptions & {
  json?: string;
  torchPath?: string;
  extraToggles?: string;
  standalone?: boolean;
};

function parseArgs(argv: string[]): CliOptions {
  const opts: CliOptions = {
    quick: false,
    tune: true,
    moe: true,
    reps: BENCH_REPS,
    targetMs: 25,
  };
  eachFlag(argv, (a, next) => {
    if (a === '--quick') opts.quick = true;
    else if (a === '--json') opts.json = next();
    else if (a === '--filter') opts.filter = new RegExp(next());
    else if (a === '--torch') opts.torchPath = next();
    else if (a === '--no-tune') opts.tune = false;
    // Tune coopmat-f16's tile and staging at every shape (the tuner's per-shape cache, as the app keys it).
    else if (a === '--tune-every-shape') opts.tuneEveryShape = true;
    else if (a === '--no-moe') opts.moe = false;
    else if (a === '--reps') opts.reps = Number(next());
    else if (a === '--sweeps') opts.sweeps = Number(next());
    else if (a === '--target-ms') opts.targetMs = Number(next());
    // Extra Dawn toggles, comma-separated (e.g. disable_robustness, to measure what the bounds checks cost).
    else if (a === '--dawn-toggles') opts.extraToggles = next();
    // Dawn standalone: without the toggles Chrome enables by default (see BROWSER_DEFAULT_TOGGLES).
    else if (a === '--dawn-standalone') opts.standalone = true;
    else if (a === '--shapes') opts.shapes = parseShapes(next());
    else throw new Error(`unknown argument ${a}`);
  });
  return opts;
}

async function main() {
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
  gpu.device.destroy();
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error('bench failed:', e);
    process.exit(1);
  },
);
