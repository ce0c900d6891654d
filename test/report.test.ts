// bench/report.ts: several H200 commands merged into the docs' tables without mixing up which command a
// number came from (the headline and tuning from the first; torch from the command that benched a shape).
import { describe, expect, it } from 'vitest';
import { mergeBenches, renderReport, type ReportFile } from '../bench/report';
import type { BenchRow, Correctness } from '../bench/harness';

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
    role: 'fixed',
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
    // 32: c.json ran no torch, so a.json's stays.
    expect(torch.get('32x4096x4096')?.from).toBe('a.json');
    expect(torch.get('2048x4096x4096')).toMatchObject({ ms: 0.1, layout: 'nk_t' });
  });

  it('prints the per-shape torch ratio of the fastest passing quantized GEMM', () => {
    const md = renderReport([first, second, third]);
    const line = (shape: string) => md.split('\n').find((l) => l.startsWith(`| ${shape} | coopmat`));
    expect(line('2048x4096x4096')).toContain('| 0.1000 (nk_t) | 0.333 | a.json |');
    // The failing 0.1 ms row and the f32 baseline are skipped: 0.2 ms against b.json's 0.03 ms.
    expect(line('512x4096x4096')).toContain('| coopmat/x | 0.2000 |');
    expect(line('512x4096x4096')).toContain('| 0.0300 (kn) | 0.150 | b.json |');
    expect(line('32x4096x4096')).toContain('| 0.0200 (nk_t) | 0.250 | a.json |');
    expect(md).toContain('### MoE (expert-indexed Q4_K MMQ, top-2)');
    expect(md).toContain('the command of a.json');
    expect(md).toContain('the command of b.json');
    expect(md).not.toContain('the command of c.json');
  });

  it('refuses a set of files with no bench run in it', () => {
    expect(() => renderReport([{ p: 'probe.json', j: { rates: [] } }])).toThrow(/no bench JSON/);
  });
});
