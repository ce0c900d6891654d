// bench/report.ts: several H200 commands merged into the docs' tables without mixing up which command a
// number came from (the headline and tuning from the first; torch from the command that benched a shape).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import {
  mergeBenches,
  renderDocTables,
  renderReport,
  renderSummary,
  replaceBlock,
  writeBlocks,
  type ReportFile,
} from '../bench/report';
import { headline } from '../bench/derive';
import { headlineLines } from '../bench/format';
import type { BenchRow, Correctness } from '../bench/result';
import { runProcess } from './cliProcess';

const pass: Correctness = { pass: true, relToMax: 1e-6, samples: 400, allWritten: true, tol: 2e-3 };

function row(
  id: string,
  family: string,
  [m, n, k]: number[],
  ms: number,
  extra: Partial<BenchRow> = {},
): BenchRow {
  return {
    id,
    family,
    weights: 'q4k',
    arm: 'subgroup-matrix',
    // As the bench writes them: the f32 GEMM is the baseline; the int8 MMQ families count int8 ops.
    role: family === 'gemm-f32' ? 'baseline' : 'fixed',
    arithmetic: family.startsWith('mmq') ? 'int8' : family === 'gemm-f32' ? 'f32' : 'f16',
    tile: '4,1,4,4',
    m: m!,
    n: n!,
    k: k!,
    ms,
    tops: 1,
    correctness: pass,
    ...extra,
  };
}

const intMm = (m: number, n: number, k: number, layout: string, ms: number) => ({
  m,
  n,
  k,
  layout,
  ms,
  tops: 1,
});

function bench(p: string, rows: BenchRow[], torch?: unknown): ReportFile {
  return { p: `docs/bench-results/${p}`, j: { date: p, rows, tuning: [], ...(torch ? { torch } : {}) } };
}

const H = [2048, 4096, 4096];
const S = [512, 4096, 4096];
const T = [32, 4096, 4096];

const first = bench('a.json', [row('coopmat/x', 'coopmat-f16', H, 0.3), row('gemm/x', 'gemm-f32', H, 2)], {
  int_mm: [
    intMm(2048, 4096, 4096, 'kn', 0.5),
    intMm(2048, 4096, 4096, 'nk_t', 0.1),
    intMm(32, 4096, 4096, 'nk_t', 0.02),
    intMm(512, 4096, 4096, 'nk_t', 0.05),
  ],
});
const second = bench(
  'b.json',
  [
    row('coopmat/x', 'coopmat-f16', H, 9), // the headline again: ignored, the first file has it
    row('coopmat/x', 'coopmat-f16', S, 0.2),
    row('coopmat/y', 'coopmat-f16', S, 0.1, {
      correctness: { ...pass, pass: false, relToMax: 1 },
    }),
    row('gemm/x', 'gemm-f32', S, 0.01), // the f32 baseline is never the "best quantized GEMM"
  ],
  { int_mm: [intMm(512, 4096, 4096, 'nk_t', 0.04), intMm(512, 4096, 4096, 'kn', 0.03)] },
);
const third = bench('c.json', [
  row('coopmat/x', 'coopmat-f16', T, 0.08),
  row('moe/x', 'moe-q4k-id', [64, 4096, 4096], 1, { experts: 8, topk: 2 }),
]);

describe('bench report over several commands', () => {
  it('takes each shape from the first command that benched it, and torch from that command when it ran torch', () => {
    const { b, torch } = mergeBenches([first, second, third]);
    expect(b.rows.filter((r) => r.m === 2048).map((r) => r.ms)).toEqual([0.3, 2]);
    expect(b.rows.filter((r) => r.m === 512)).toHaveLength(3);
    expect(b.rows.some((r) => r.experts === 8)).toBe(true);
    // 512: b.json ran torch, so its fastest layout (kn 0.03) wins over a.json's 0.05.
    expect(torch.get('512x4096x4096')).toMatchObject({ ms: 0.03, layout: 'kn' });
    expect(torch.get('512x4096x4096')?.from).toBe('b.json');
    // 32: c.json benched it but ran no torch, and a.json timed torch there but benched nothing: a ratio
    // pairs two rows of one command, so there is none.
    expect(torch.get('32x4096x4096')).toBeUndefined();
    expect(torch.get('2048x4096x4096')).toMatchObject({ ms: 0.1, layout: 'nk_t' });
  });

  it('adds a family another command benched at a shape the first has, torch following the fastest row', () => {
    const int8 = bench(
      'd.json',
      [row('mmq/x', 'mmq-q8-tile', H, 4.7), row('coopmat/x', 'coopmat-f16', H, 0.01)],
      {
        int_mm: [intMm(2048, 4096, 4096, 'nk_t', 0.2)],
      },
    );
    const { b, torch } = mergeBenches([first, int8]);
    // d.json's int8 row joins; its coopmat row does not (a.json has coopmat-f16 at the shape).
    expect(b.rows.filter((r) => r.m === 2048).map((r) => r.ms)).toEqual([0.3, 2, 4.7]);
    expect(torch.get('2048x4096x4096')).toMatchObject({ ms: 0.1, from: 'a.json' });
    // When the other command's row is the fastest, its own torch is the one it is set against.
    const faster = bench('e.json', [row('mmq/x', 'mmq-q8-tile', H, 0.25)], {
      int_mm: [intMm(2048, 4096, 4096, 'nk_t', 0.2)],
    });
    expect(mergeBenches([first, faster]).torch.get('2048x4096x4096')).toMatchObject({
      ms: 0.2,
      from: 'e.json',
    });
  });

  it('prints the per-shape torch ratio of the fastest passing quantized GEMM', () => {
    const md = renderReport([first, second, third]);
    const line = (shape: string) => md.split('\n').find((l) => l.startsWith(`| ${shape} | coopmat`));
    expect(line('2048x4096x4096')).toContain('| 0.1000 (nk_t) | 0.333 | a.json |');
    // The failing 0.1 ms row and the f32 baseline are skipped: 0.2 ms against b.json's 0.03 ms.
    expect(line('512x4096x4096')).toContain('| coopmat/x | 0.2000 |');
    expect(line('512x4096x4096')).toContain('| 0.0300 (kn) | 0.150 | b.json |');
    expect(line('32x4096x4096')).toContain('| - | - | - |');
    expect(md).toContain('### MoE (top-2; the int8 and f16 routes)');
    expect(md).toContain('the command of a.json');
    expect(md).toContain('the command of b.json');
    expect(md).not.toContain('the command of c.json');
  });

  it("renders the README's summary: headline rows and per-shape ratios, each against its own command's torch", () => {
    const head = { ...first, j: { ...first.j, headline: { shape: { m: 2048, n: 4096, k: 4096 } } } };
    const int8 = bench('d.json', [row('mmq/x', 'mmq-q8-tile', H, 4)], {
      int_mm: [intMm(2048, 4096, 4096, 'nk_t', 0.08)],
    });
    const md = renderSummary([head, int8, second, third]);
    const lines = md.split('\n');
    expect(lines.length).toBeLessThanOrEqual(25);
    // The best plan against a.json's torch (0.1 / 0.3), the int8 row against d.json's own (0.08 / 4).
    expect(md).toContain('| best quantized GEMM: coopmat/x | 0.3000 | 1.0 | 0.333 | a.json |');
    expect(md).toContain('| best int8 MMQ: mmq/x | 4.0000 | 1.0 | 0.020 | d.json |');
    expect(md).toContain('| torch._int_mm (B layout nk_t) | 0.1000 | 1.0 | 1.000 | a.json |');
    // m down, n x k across: 512 takes b.json's kn 0.03 against its 0.2 ms row; 32 has no command with both.
    expect(lines.filter((l) => l.startsWith('| m = '))).toEqual([
      '| m = 2048 | 0.333 |',
      '| m = 512 | 0.150 |',
    ]);
    // The MoE cases, each route's fastest row.
    expect(md).toMatch(
      /\| MoE top-2 \(experts x tokens\), ms \| int8 route \| f16 route \| dense plan at m = slots \|/,
    );
    expect(() => renderSummary([first])).toThrow(/no headline shape/);
  });

  it("renders docs/benchmarks.md's tables: the headline shape's every config and the first command's torch", () => {
    const head = { ...first, j: { ...first.j, headline: { shape: { m: 2048, n: 4096, k: 4096 } } } };
    const md = renderDocTables([head, second, third]);
    expect(md).toContain('### Every config at 2048x4096x4096');
    expect(md).not.toContain('### Every config at 512x4096x4096');
    expect(md).toContain('the command of a.json');
    expect(md).not.toContain('the command of b.json');
    // The full report keeps both.
    expect(renderReport([head, second, third])).toContain('the command of b.json');
  });

  it('refuses a set of files with no bench run in it', () => {
    expect(() => renderReport([{ p: 'notes.json', j: { rates: [] } }])).toThrow(/no bench JSON/);
  });
  it('states what the goal asks of the best plan and of its GEMM pass, and sets both against torch f16', () => {
    const shape = [2048, 4096, 4096];
    const torch = {
      int_mm: [intMm(2048, 4096, 4096, 'kn', 0.6), intMm(2048, 4096, 4096, 'nk_t', 0.1)],
      f16_mm: [{ m: 2048, n: 4096, k: 4096, ms: 0.11, tflops: 625 }],
    };
    const rows = [
      row('mmq-q8-tile/x', 'mmq-q8-tile', shape, 4.8),
      row('coopmat-f16/split', 'coopmat-f16', shape, 0.24, { passMs: [0.03, 0.21] }),
      // The f32 baseline and a wrong config never head the table.
      row('gemm-f32/x', 'gemm-f32', shape, 0.01),
      row('coopmat-f16/wrong', 'coopmat-f16', shape, 0.05, { correctness: { ...pass, pass: false } }),
    ];
    const at = { m: 2048, n: 4096, k: 4096 };
    const h = headline({ rows, torch }, at);
    expect(h.bestAny?.id).toBe('coopmat-f16/split');
    expect(h.ratioAny).toBeCloseTo(0.1 / 0.24, 12);
    expect(h.goalMs).toBeCloseTo(0.2, 12); // twice torch's fastest layout
    expect(h.gemmPassMs).toBe(0.21);
    expect(h.goalGemmPassMs).toBeCloseTo(0.17, 12); // 0.2 less the pre-pass's 0.03
    const lines = headlineLines(h);
    expect(lines).toContain(
      'GOAL 0.5x torch._int_mm needs the best plan at <= 0.2000 ms (now 0.2400): its GEMM pass at <= 0.1700 ms (now 0.2100) next to its other passes',
    );
    expect(lines).toContain(
      "torch f16 matmul at 2048x4096x4096: 0.1100 ms 625.0 TFLOP/s; best plan 2.18x it, its GEMM pass 1.91x, the goal's GEMM pass 1.55x",
    );
    // One-pass plans have no GEMM pass to single out; without torch there is no goal line.
    const onePass = headline({ rows: rows.slice(0, 1), torch }, at);
    expect(onePass.gemmPassMs).toBeUndefined();
    expect(headlineLines(onePass).find((l) => l.startsWith('GOAL'))).toMatch(
      /<= 0\.2000 ms \(now 4\.8000\)$/,
    );
    expect(headlineLines(headline({ rows, torch: undefined }, at)).some((l) => l.startsWith('GOAL'))).toBe(
      false,
    );
    // The report recomputes the headline from the files, so a JSON written before these lines gets them.
    const first = bench('old.json', rows, torch);
    first.j.headline = { shape: at }; // as written before the goal lines existed
    const md = renderReport([first]);
    expect(md).toContain('- GOAL 0.5x torch._int_mm needs the best plan at <= 0.2000 ms');
  });

  it('shows torch timed one call at a time next to its batched time when the file has both', () => {
    const shape = [2048, 4096, 4096];
    const at = { m: 2048, n: 4096, k: 4096 };
    const rows = [row('coopmat-f16/split', 'coopmat-f16', shape, 0.24, { passMs: [0.03, 0.21] })];
    const torch = {
      int_mm: [
        { ...intMm(2048, 4096, 4096, 'kn', 0.55), ms_call: 0.58 },
        { ...intMm(2048, 4096, 4096, 'nk_t', 0.09), ms_call: 0.107 },
      ],
      f16_mm: [{ m: 2048, n: 4096, k: 4096, ms: 0.1, tflops: 687, ms_call: 0.1244 }],
    };
    const lines = headlineLines(headline({ rows, torch }, at));
    // The ratio and the goal use the batched time (ms), never the one-at-a-time figure.
    expect(lines).toContain(
      'torch._int_mm at 2048x4096x4096 (B layout nk_t): 0.0900 ms 1.0 TOPS (one call at a time: 0.1070 ms)',
    );
    expect(lines).toContain('RATIO best WebGPU quantized GEMM (any arm) / torch._int_mm = 0.375');
    expect(lines.find((l) => l.startsWith('torch f16'))).toMatch(
      /^torch f16 matmul at 2048x4096x4096: 0\.1000 ms 687\.0 TFLOP\/s \(one call at a time: 0\.1244 ms\); best plan 2\.40x it/,
    );
    // A run with no dense plan at the shape (`--filter moe`) states torch's f16 time without a ratio.
    const f16Only = headlineLines(headline({ rows: [], torch }, at)).find((l) => l.startsWith('torch f16'));
    expect(f16Only).toBe(
      'torch f16 matmul at 2048x4096x4096: 0.1000 ms 687.0 TFLOP/s (one call at a time: 0.1244 ms)',
    );
    const md = renderReport([bench('new.json', rows, torch)]);
    expect(md).toContain('| W^T one call at a time ms |');
    expect(md).toContain('| 2048x4096x4096 | 0.5500 | 0.0900 | 1.0 | 0.1070 | 0.1000 | 687.0 | 0.1244 |');
    // A file from before the batched rule keeps the old table, byte for byte.
    const old = renderReport([
      bench('old.json', rows, { ...torch, int_mm: [intMm(2048, 4096, 4096, 'nk_t', 0.107)] }),
    ]);
    expect(old).not.toContain('one call at a time');
    expect(old).toContain(
      '| m x n x k | `_int_mm` B [k,n] ms | `_int_mm` B = W^T ms | TOPS (W^T) | f16 matmul ms | TFLOP/s |',
    );
  });

  it('times torch as the bench times a row (bench/torch_baseline.py --self-test, no GPU needed)', async () => {
    const r = await runProcess('python3', ['bench/torch_baseline.py', '--self-test']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('torch_baseline self-test: ok');
  });
});

describe('bench report --write: generated blocks rewritten in place', () => {
  const before = '# Doc\n\nHand-written text.\n\n';
  const after = '\n\n## Later\n\nMore text.\n';
  const doc = (inner: string) =>
    `${before}<!-- bench-report:begin tables -->\n\n${inner}\n\n<!-- bench-report:end tables -->${after}`;

  it('replaces exactly the marker block, and a second run changes nothing', () => {
    const once = replaceBlock(doc('old\ntables'), 'tables', '| a | b |\n| --- | --- |\n| 1 | 2 |\n');
    expect(once).toBe(doc('| a | b |\n| --- | --- |\n| 1 | 2 |'));
    expect(once.startsWith(`${before}<!-- bench-report:begin tables -->\n\n| a | b |`)).toBe(true);
    expect(once.endsWith(`<!-- bench-report:end tables -->${after}`)).toBe(true);
    expect(replaceBlock(once, 'tables', '| a | b |\n| --- | --- |\n| 1 | 2 |\n')).toBe(once);
    // Another block's markers are left alone.
    const two = `${doc('x')}<!-- bench-report:begin summary -->\ny\n<!-- bench-report:end summary -->\n`;
    expect(replaceBlock(two, 'summary', 'z')).toBe(
      `${doc('x')}<!-- bench-report:begin summary -->\n\nz\n\n<!-- bench-report:end summary -->\n`,
    );
  });

  it('fails clearly when a marker is missing or repeated', () => {
    expect(() => replaceBlock('# Doc\n', 'tables', 'x', 'docs/benchmarks.md')).toThrow(
      "docs/benchmarks.md: no '<!-- bench-report:begin tables -->' marker",
    );
    expect(() => replaceBlock('<!-- bench-report:begin tables -->\nx\n', 'tables', 'y', 'f.md')).toThrow(
      "f.md: '<!-- bench-report:begin tables -->' has no '<!-- bench-report:end tables -->' after it",
    );
    expect(() =>
      replaceBlock('<!-- bench-report:end tables -->\n<!-- bench-report:begin tables -->\n', 'tables', 'y'),
    ).toThrow(/has no '<!-- bench-report:end tables -->' after it/);
    expect(() => replaceBlock(`${doc('a')}${doc('b')}`, 'tables', 'y')).toThrow(/appears twice/);
  });

  it('writes the report into a file as prettier formats it, is idempotent, and leaves an unmarked file alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'report-'));
    try {
      const head = { ...first, j: { ...first.j, headline: { shape: { m: 2048, n: 4096, k: 4096 } } } };
      const path = join(dir, 'benchmarks.md');
      writeFileSync(path, doc('stale'));
      const files = [head, second, third];
      expect(await writeBlocks(path, { tables: renderDocTables(files) })).toBe(true);
      const written = readFileSync(path, 'utf8');
      expect(written.startsWith(`${before}<!-- bench-report:begin tables -->\n\n<!-- generated by`)).toBe(
        true,
      );
      expect(written.endsWith(`<!-- bench-report:end tables -->${after}`)).toBe(true);
      expect(written).toContain('### Every config at 2048x4096x4096');
      expect(await prettier.check(written, { parser: 'markdown', printWidth: 110 })).toBe(true);
      expect(await writeBlocks(path, { tables: renderDocTables(files) })).toBe(false);
      expect(readFileSync(path, 'utf8')).toBe(written);

      const bare = join(dir, 'README.md');
      writeFileSync(bare, '# Readme\n');
      await expect(writeBlocks(bare, { summary: renderSummary([head]) })).rejects.toThrow(
        `${bare}: no '<!-- bench-report:begin summary -->' marker`,
      );
      expect(readFileSync(bare, 'utf8')).toBe('# Readme\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
