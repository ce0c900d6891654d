// `npm run docs`: regenerate every generated doc from what the repository holds, so no doc states a number
// or a gate the code and the committed JSON do not.
//   README.md            the family table (`families` block, from the families' declarations) and the
//                        benchmark summary (`summary` block, from BENCH_JSON)
//   docs/benchmarks.md   its tables (`tables` block, from BENCH_JSON), the same-command peers (`peers`) and
//                        the model runs (`models` block, from MODEL_JSON: `mmq model --json` files)
//   docs/hardware.md     the whole page, from every hardware-tier JSON in docs/bench-results/: tier-ADAPTER.json
//                        is a run (one column per adapter), tier-ADAPTER-mut-NAME.json a mutant of it
// `npm run docs -- --check` writes nothing and fails, naming the files, when a generated doc is stale.
// Adding an adapter's tier is: copy its tier.json to docs/bench-results/tier-ADAPTER.json, `npm run docs`.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  formatMarkdown,
  renderDocTables,
  renderPeers,
  renderSummary,
  replaceBlock,
  type ReportFile,
} from '../bench/report';
import { KERNELS } from '../src/kernels';
import { modelRunTable, parseModelRun, phaseNotes, type ModelRun } from '../src/kernels/models';
import { renderHardware } from '../test/hw/render';
import type { TierSummary } from '../test/hw/tier';
import { familyTable } from './familyTable';

/** Where the JSON behind the generated docs lives. */
export const RESULTS_DIR = 'docs/bench-results';

/** The bench commands the benchmark tables and the README summary come from, in merge order (bench/report.ts). */
export const BENCH_JSON: readonly string[] = [
  `${RESULTS_DIR}/h100-peers-all.json`,
  `${RESULTS_DIR}/h100-moe-llama.json`,
];

/**
 * The same-command peer files (our rows, ORT and torch in one command each) docs/benchmarks.md's `peers`
 * block renders one by one, never merged (bench/report.ts renderPeers).
 */
export const PEERS_JSON: readonly string[] = [
  `${RESULTS_DIR}/h100-peers-all.json`,
  `${RESULTS_DIR}/h100-moe-llama.json`,
];

/** The model runs docs/benchmarks.md's `models` block renders (`mmq model --json`, on the lent GPU). */
export const MODEL_JSON: readonly string[] = [`${RESULTS_DIR}/h100-model-llama-3.1-8b.json`];

/**
 * One model run as markdown: the model and adapter, the measured peaks, then each phase's table (the
 * terminal's table from kernels/models/modelRun.ts) and its notes.
 * @example renderModelRun(run, 'docs/bench-results/h100-model-llama-3.1-8b.json').startsWith('#### ')
 */
export function renderModelRun(run: ModelRun, path: string): string {
  const cell = (v: string) => v.replace(/\|/g, '\\|');
  const peaks = run.peaks
    ? [
        `${run.peaks.bandwidthGBs.toFixed(0)} GB/s`,
        ...Object.entries(run.peaks.ops).map(([roof, ops]) => `${roof} ${(ops / 1e12).toFixed(0)} Tops/s`),
      ].join(', ')
    : 'none (no % of roof)';
  const took = run.durationMs === undefined ? '' : `, ${(run.durationMs / 1000).toFixed(0)} s`;
  const out = [
    `#### ${cell(run.model.name)} (${run.model.format}) on ${cell(run.adapter.name)}`,
    '',
    `From \`${path}\` (${run.startedAt.slice(0, 10)}${took}, every GEMM gated and timed in ${run.timing.batches} batches of ${run.timing.targetMs} ms); measured peaks: ${peaks}.`,
  ];
  if (run.notes.length) out.push('', ...run.notes.map((n) => `- ${cell(n)}`));
  run.phases.forEach((p, i) => {
    const [head, ...rows] = modelRunTable(run, i);
    out.push('', p.phase === 'decode' ? '**decode (m = 1)**' : `**prefill of ${p.m} tokens**`, '');
    out.push(`| ${head!.map(cell).join(' | ')} |`, `| ${head!.map(() => '---').join(' | ')} |`);
    for (const r of rows) out.push(`| ${r.map(cell).join(' | ')} |`);
    const notes = phaseNotes(run, i);
    if (notes.length) out.push('', ...notes.map((n) => `- ${cell(n)}`));
  });
  return out.join('\n');
}

/** A hardware-tier JSON's role, by its name: a run of an adapter, or a mutant's run. */
const TIER_RUN = /^tier-(?!.*-mut-)(.+)\.json$/;
const TIER_MUTANT = /^tier-.+-mut-(.+)\.json$/;

/**
 * The hardware-tier files of `dir`, by name: runs (every tier-ADAPTER.json, sorted) and mutants
 * (tier-ADAPTER-mut-NAME.json, as [NAME, file]).
 * @example tierFiles(['tier-h200.json', 'tier-h200-mut-a.json', 'h200-dense.json']) // { runs: ['tier-h200.json'], mutants: [['a', 'tier-h200-mut-a.json']] }
 */
export function tierFiles(names: readonly string[]): { runs: string[]; mutants: [string, string][] } {
  const sorted = [...names].sort();
  return {
    runs: sorted.filter((n) => TIER_RUN.test(n)),
    mutants: sorted.flatMap((n): [string, string][] => {
      const m = TIER_MUTANT.exec(n);
      return m ? [[m[1]!, n]] : [];
    }),
  };
}

const readJson = <T>(root: string, path: string) => JSON.parse(readFileSync(join(root, path), 'utf8')) as T;

/** Each generated file's path and its content as it should be, from the repository at `root`. */
export async function generatedDocs(root = '.'): Promise<Map<string, string>> {
  const bench: ReportFile[] = BENCH_JSON.map((p) => ({ p, j: readJson<Record<string, unknown>>(root, p) }));
  const out = new Map<string, string>();
  const blocks = async (path: string, named: Record<string, string>) => {
    let text = readFileSync(join(root, path), 'utf8');
    for (const [name, body] of Object.entries(named))
      text = replaceBlock(text, name, await formatMarkdown(body, path), path);
    out.set(path, text);
  };
  await blocks('README.md', { families: familyTable(KERNELS.families), summary: renderSummary(bench) });
  const peers: ReportFile[] = PEERS_JSON.map((p) => ({ p, j: readJson<Record<string, unknown>>(root, p) }));
  const models = MODEL_JSON.map((p) =>
    renderModelRun(parseModelRun(readFileSync(join(root, p), 'utf8')), p),
  ).join('\n\n');
  await blocks('docs/benchmarks.md', {
    tables: renderDocTables(bench),
    peers: renderPeers(peers),
    models,
  });
  const tiers = tierFiles(readdirSync(join(root, RESULTS_DIR)));
  if (!tiers.runs.length)
    throw new Error(`no tier-ADAPTER.json in ${RESULTS_DIR}: docs/hardware.md needs one`);
  const hardware = renderHardware(
    tiers.runs.map((n) => readJson<TierSummary>(root, `${RESULTS_DIR}/${n}`)),
    tiers.mutants.map(([name, n]) => [name, readJson<TierSummary>(root, `${RESULTS_DIR}/${n}`)]),
  );
  out.set('docs/hardware.md', await formatMarkdown(hardware, 'docs/hardware.md'));
  return out;
}

/**
 * The generated files whose content on disk differs from `docs` (what `--check` reports).
 * @example staleDocs(await generatedDocs()) // [] when every generated doc is current
 */
export function staleDocs(docs: ReadonlyMap<string, string>, root = '.'): string[] {
  return [...docs].filter(([path, text]) => readFileSync(join(root, path), 'utf8') !== text).map(([p]) => p);
}

async function main(argv: readonly string[]) {
  const check = argv.includes('--check');
  const unknown = argv.filter((a) => a !== '--check');
  if (unknown.length)
    throw new Error(`unknown argument ${unknown.join(' ')} (usage: npm run docs [-- --check])`);
  const docs = await generatedDocs();
  const stale = staleDocs(docs);
  if (check) {
    if (stale.length) {
      console.error(`stale generated docs: ${stale.join(', ')} (run \`npm run docs\` and commit the result)`);
      process.exit(1);
    }
    console.log(`generated docs current: ${[...docs.keys()].join(', ')}`);
    return;
  }
  for (const path of stale) writeFileSync(path, docs.get(path)!);
  for (const path of docs.keys()) console.log(`${path}: ${stale.includes(path) ? 'rewritten' : 'unchanged'}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
