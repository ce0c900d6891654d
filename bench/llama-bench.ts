// llama.cpp's Vulkan backend alone (bench/llama.ts), at the issue's shapes unless told others; `npm run
// bench` runs it beside its own rows at the shapes and MoE cases it ran.
//
//   npx tsx bench/llama-bench.ts [--shapes m,n,k;...] [--moe e,t,k;...] [--no-moe] [--quick] [--json out.json]
//                                [--l2-bytes B] [--target-ms T] [--min-ms M] [--max-nodes N]
//
// Default: m in {1, 8, 32, 128, 512, 2048} x (n, k) in {4096 x 4096, 4096 x 14336, 11008 x 4096}, and the
// bench's MoE cases (8 and 64 experts x 32..2048 tokens, top-2, 4096 x 4096). --quick: one small shape and
// one small MoE case, a few ops a graph (the path, not speed).
// Without a GPU: bench/install-llama.sh --lavapipe, then
//   VK_ICD_FILENAMES=bench/.llama/lavapipe/lvp_icd.json GGML_VK_VISIBLE_DEVICES=0 npx tsx bench/llama-bench.ts --quick
import { writeFileSync } from 'node:fs';
import { eachFlag } from './args';
import { moeCases, parseShapes } from './cases';
import { benchLlama, type BenchLlamaOptions } from './llama';
import { llamaRatioLines, llamaRatios, llamaTable } from './llamaPeer';
import type { MoeCase, Shape } from './result';

/** The issue's dense shapes: m = 1..2048 at 4096 x 4096, 4096 x 14336 and 11008 x 4096. */
const ISSUE_SHAPES: Shape[] = [1, 8, 32, 128, 512, 2048].flatMap((m) =>
  [
    [4096, 4096],
    [4096, 14336],
    [11008, 4096],
  ].map(([n, k]) => ({ m, n: n!, k: k! })),
);

/** A positive number from a flag, or an error naming it. */
function positive(flag: string, v: string): number {
  const x = Number(v);
  if (!(x > 0) || !Number.isFinite(x)) throw new Error(`${flag} needs a positive number, got '${v}'`);
  return x;
}

function parseArgs(argv: string[]) {
  const opts: BenchLlamaOptions & { shapes?: Shape[]; moe?: MoeCase[]; json?: string } = {};
  eachFlag(argv, (a, next) => {
    if (a === '--quick') opts.quick = true;
    else if (a === '--shapes') opts.shapes = parseShapes(next());
    else if (a === '--moe')
      opts.moe = next()
        .split(';')
        .map((s) => {
          const [experts, tokens, topk] = s.split(',').map((v) => positive('--moe', v));
          if (experts === undefined || tokens === undefined || topk === undefined)
            throw new Error(`--moe: bad case "${s}" (want experts,tokens,top-k)`);
          return { experts, tokens, topk, n: 4096, k: 4096 };
        });
    else if (a === '--no-moe') opts.moe = [];
    else if (a === '--json') opts.json = next();
    else if (a === '--l2-bytes') opts.l2Bytes = positive(a, next());
    else if (a === '--target-ms') opts.targetMs = positive(a, next());
    else if (a === '--min-ms') opts.minMs = positive(a, next());
    else if (a === '--max-nodes') opts.maxNodes = positive(a, next());
    else throw new Error(`unknown argument ${a}`);
  });
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const shapes = opts.shapes ?? (opts.quick ? [{ m: 32, n: 64, k: 256 }] : ISSUE_SHAPES);
  const moe = opts.moe ?? moeCases(!!opts.quick);
  const r = await benchLlama(shapes, moe, { ...opts, log: (s) => console.log(s) });
  if (r.note) console.log(`[llama] ${r.note}`);
  console.log('');
  for (const line of [...llamaTable(r.rows), '', ...llamaRatioLines(llamaRatios(r.rows))]) console.log(line);
  const failed = r.rows.filter((x) => x.error || (x.correctness && !x.correctness.pass));
  if (failed.length) console.log(`${failed.length} llama.cpp row(s) FAILED (error or wrong result)`);
  if (opts.json) writeFileSync(opts.json, JSON.stringify({ date: new Date().toISOString(), ...r }, null, 1));
  return failed.length || (r.note && !r.rows.length) ? 1 : 0;
}

main().then(
  (rc) => process.exit(rc),
  (e: unknown) => {
    console.error(`llama-bench: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
