// Generated docs (scripts/docs.ts): every one is current (`npm run docs -- --check`), a stale one is named,
// the README's gate column is the gate the code applies, and a new adapter's tier JSON becomes a column of
// docs/hardware.md with no other change.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BENCH_JSON,
  generatedDocs,
  MODEL_JSON,
  PEERS_JSON,
  renderModelRun,
  RESULTS_DIR,
  staleDocs,
  tierFiles,
} from '../scripts/docs';
import { parseModelRun } from '../src/kernels/models';
import { familyGates } from '../scripts/familyTable';
import { KERNELS } from '../src/kernels';

const tmp = mkdtempSync(join(tmpdir(), 'mmq-docs-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('generated docs', () => {
  it('are current: README tables, docs/benchmarks.md and docs/hardware.md match `npm run docs`', async () => {
    const docs = await generatedDocs();
    expect([...docs.keys()]).toEqual(['README.md', 'docs/benchmarks.md', 'docs/hardware.md']);
    expect(staleDocs(docs), 'run `npm run docs` and commit the result').toEqual([]);
    // --check names a file whose generated block differs.
    const readme = docs.get('README.md')!;
    const edited = new Map(docs).set('README.md', readme.replace('| bit-exact', '| rel_to_max < 1e-6'));
    expect(staleDocs(edited)).toEqual(['README.md']);
  }, 60_000);

  it("takes the gate column from each arm's built problem", () => {
    expect(familyGates(KERNELS.get('mmq-q4k-tile'))).toBe('bit-exact');
    expect(familyGates(KERNELS.get('coopmat-f16'))).toBe(
      'scalar: rel_to_max < 1e-5, rel_to_max < 5e-2 vs full precision; ' +
        'subgroup-matrix: rel_to_max < 5e-4, rel_to_max < 5e-2 vs full precision',
    );
    expect(familyGates(KERNELS.get('moe-q4k-id'))).toMatch(
      /^scalar: bit-exact \(route int8\); rel_to_max < 1e-5 \(route f16\); dp4a: bit-exact; /,
    );
  });

  it("renders a model run's phases as tables, with its peaks and totals, a file's text escaped", () => {
    const run = parseModelRun(readFileSync(MODEL_JSON[0]!, 'utf8'));
    const md = renderModelRun({ ...run, model: { ...run.model, name: 'a|b' } }, 'x.json').split('\n');
    expect(md[0]).toBe(`#### a\\|b (Q4_K) on ${run.adapter.name}`);
    expect(md.filter((l) => /^\*\*(prefill of 512 tokens|decode \(m = 1\))\*\*$/.test(l))).toHaveLength(2);
    expect(md.find((l) => l.startsWith('From `x.json`'))).toMatch(/measured peaks: \d+ GB\/s, f16-matrix/);
    // Each table: a header, its rule, a row per GEMM and the totals, as many cells in each.
    const rows = md.filter((l) => l.startsWith('| '));
    expect(rows).toHaveLength(2 * (2 + run.gemms.length + 1));
    expect(new Set(rows.map((l) => l.split(' | ').length)).size).toBe(1);
    expect(rows.filter((l) => l.startsWith('| total per '))).toHaveLength(2);
  });

  it('renders every tier-ADAPTER.json as a column; adding one is copying it there', async () => {
    expect(
      tierFiles(['tier-h200.json', 'h200-dense.json', 'tier-h200-mut-a-b.json', 'tier-ss.json']),
    ).toEqual({
      runs: ['tier-h200.json', 'tier-ss.json'],
      mutants: [['a-b', 'tier-h200-mut-a-b.json']],
    });
    // A copy of the repository's generated docs and their JSON, plus one more adapter's tier.
    mkdirSync(join(tmp, RESULTS_DIR), { recursive: true });
    for (const p of [
      'README.md',
      'docs/benchmarks.md',
      'docs/hardware.md',
      ...BENCH_JSON,
      ...PEERS_JSON,
      ...MODEL_JSON,
    ])
      cpSync(p, join(tmp, p));
    const names = tierFiles(readdirSync(RESULTS_DIR).filter((n) => n.startsWith('tier-')));
    for (const n of [...names.runs, ...names.mutants.map(([, f]) => f)])
      cpSync(join(RESULTS_DIR, n), join(tmp, RESULTS_DIR, n));
    const tier = JSON.parse(readFileSync(join(RESULTS_DIR, names.runs[0]!), 'utf8')) as {
      adapter: Record<string, unknown>;
    };
    tier.adapter = {
      ...tier.adapter,
      vendor: 'nvidia',
      architecture: '',
      device: 'test-gpu-9000',
      description: 'Test GPU 9000',
    };
    writeFileSync(join(tmp, RESULTS_DIR, 'tier-test-gpu.json'), JSON.stringify(tier));
    const docs = await generatedDocs(tmp);
    expect(staleDocs(docs, tmp)).toEqual(['docs/hardware.md']);
    const header = docs
      .get('docs/hardware.md')!
      .split('\n')
      .find((l) => l.startsWith('| family'))!;
    expect(header).toMatch(/\| test-gpu-9000, Test GPU 9000 +\|/);
  }, 60_000);
});
