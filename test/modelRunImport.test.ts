// The model run the lead committed from the lent H100 (docs/bench-results, written by `mmq model --json`)
// is what the model view imports beside this adapter's run: it must parse as one and line up with itself.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compareModelRuns, parseModelRun, phaseTotals } from '../src/kernels/models/modelRun';

const FILE = 'docs/bench-results/h100-model-llama-3.1-8b.json';

describe('the committed H100 model run', () => {
  it('imports as a model run: both phases, every GEMM picked, side by side with another run', () => {
    const run = parseModelRun(readFileSync(FILE, 'utf8'));
    expect(run.model.name).toBe('Llama-3.1-8B');
    expect(run.phases.map((p) => [p.phase, p.m])).toEqual([
      ['prefill', 512],
      ['decode', 1],
    ]);
    for (const [i] of run.phases.entries()) expect(phaseTotals(run, i).missing).toEqual([]);
    const rows = compareModelRuns([run, run]);
    expect(rows).toHaveLength(2 * run.gemms.length);
    expect(rows.every((r) => r.cells.every((c) => c !== undefined && c.ms > 0))).toBe(true);
  });
});
