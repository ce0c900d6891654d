// The bench's "best quantized GEMM" per shape as a pick across families: at each shape and weight format,
// each family's fastest passing row, the winner and its margin over the next family (bench/derive.ts
// familyWins, bench/report.ts familyWinTable). Baselines and peers never win; a failing row never counts;
// the MoE family's two routes are two entries.
import { describe, expect, it } from 'vitest';
import { familyWins } from '../bench/derive';
import { familyWinTable, renderReport } from '../bench/report';
import type { BenchRow } from '../bench/result';

const row = (family: string, ms: number, extra: Partial<BenchRow> = {}): BenchRow => ({
  id: `${family}/${extra.arm ?? 'dp4a'}/${ms}`,
  family,
  weights: 'q4k',
  arm: 'dp4a',
  role: 'fixed',
  arithmetic: family === 'coopmat-f16' ? 'f16' : 'int8',
  tile: '-',
  m: 512,
  n: 4096,
  k: 4096,
  ms,
  correctness: { pass: true, relToMax: 0, samples: 1, allWritten: true, tol: 0 },
  ...extra,
});

describe('familyWins', () => {
  it("each family's fastest passing row; the winner and the next family's time over it", () => {
    const wins = familyWins([
      row('mmq-q4k-tile', 1.2),
      row('mmq-q4k-tile', 0.9, { role: 'tuned' }),
      row('coopmat-f16', 0.3),
      row('coopmat-f16', 0.1, {
        correctness: { pass: false, relToMax: 1, samples: 1, allWritten: true, tol: 0 },
      }),
      row('mmq-q4k-rt', 2),
      row('ort-matmulnbits', 0.05, { role: 'baseline' }),
      row('gemm-f32', 0.01, { role: 'baseline', weights: 'f32' }),
      row('mmq-q8-tiled', 0.5, { weights: 'q8_0' }),
    ]);
    expect(wins).toEqual([
      {
        shape: '512x4096x4096',
        weights: 'q4k',
        ranked: [
          { family: 'coopmat-f16', id: 'coopmat-f16/dp4a/0.3', ms: 0.3 },
          { family: 'mmq-q4k-tile', id: 'mmq-q4k-tile/dp4a/0.9', ms: 0.9 },
          { family: 'mmq-q4k-rt', id: 'mmq-q4k-rt/dp4a/2', ms: 2 },
        ],
        margin: 3,
      },
      {
        shape: '512x4096x4096',
        weights: 'q8_0',
        ranked: [{ family: 'mmq-q8-tiled', id: 'mmq-q8-tiled/dp4a/0.5', ms: 0.5 }],
      },
    ]);
  });

  it("an MoE case stands apart, its family's int8 and f16 routes each an entry", () => {
    const moe = (arithmetic: 'int8' | 'f16', ms: number) =>
      row('moe-q4k-id', ms, { arithmetic, experts: 8, topk: 2, m: 128 });
    const [w] = familyWins([moe('int8', 0.55), moe('f16', 0.11), moe('f16', 0.2)]);
    expect(w!.shape).toBe('128x4096x4096 x8');
    expect(w!.ranked.map((r) => r.family)).toEqual(['moe-q4k-id f16', 'moe-q4k-id int8']);
    expect(w!.margin).toBeCloseTo(5);
  });
});

describe('the report', () => {
  it('a table of the winner, the next family and the margin per shape, in the report', () => {
    const rows = [row('coopmat-f16', 0.3), row('mmq-q4k-tile', 0.9), row('mmq-q4k-rt', 2)];
    expect(familyWinTable(rows).slice(2)).toEqual([
      '| 512x4096x4096 | q4k | coopmat-f16 (coopmat-f16/dp4a/0.3) | 0.3000 | mmq-q4k-tile | 0.9000 | 3.00x | mmq-q4k-rt 2.0000 |',
    ]);
    const report = renderReport([{ p: 'b.json', j: { date: 'd', rows, tuning: [] } }]);
    expect(report).toContain(
      '### Best quantized GEMM per shape: which family won, and by how much over the next family',
    );
    expect(report).toContain(
      '| coopmat-f16 (coopmat-f16/dp4a/0.3) | 0.3000 | mmq-q4k-tile | 0.9000 | 3.00x |',
    );
  });
});
