// A refactor that rewords a mutated line silently drops its mutant: scripts/mutate.ts reports it
// "stale" only when someone runs it, and scripts/mutate-hw.sh (the hardware tier's mutants, run only on a
// lent GPU) stops building at the first stale one. Each mutant's text must occur exactly once in its file.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MUTANTS } from '../scripts/mutate';

/** The MUTANTS array of scripts/mutate-hw.sh: NAME@@FILE@@FROM@@TO@@ROWS, each one quoted line. */
function hwMutants(script: string): { name: string; file: string; from: string; to: string }[] {
  const body = /\nMUTANTS=\(\n([\s\S]*?)\n\)\n/.exec(script)?.[1] ?? '';
  return body
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => !l.startsWith('#') && l.length > 0)
    .map((l) => {
      // Single- or double-quoted without escapes: the outer quote goes, the rest is literal.
      const [name = '', file = '', from = '', to = ''] = l.slice(1, -1).split('@@');
      return { name, file, from, to };
    });
}

/** The mutant's text occurs exactly once in its file, and the mutation changes it. */
function expectLiveMutant(m: { file: string; from: string; to: string }) {
  expect(readFileSync(m.file, 'utf8').split(m.from).length - 1).toBe(1);
  expect(m.to).not.toBe(m.from);
}

describe('the hardware mutants', () => {
  const mutants = hwMutants(readFileSync('scripts/mutate-hw.sh', 'utf8'));

  it('are read from the script (one per quoted line)', () => {
    expect(mutants.length).toBeGreaterThanOrEqual(7);
    expect(mutants.map((m) => m.name)).toContain('split-k-matrix-part');
  });

  it.each(mutants.map((m) => [m.name, m] as const))('%s: its text occurs once in its file', (_, m) =>
    expectLiveMutant(m),
  );
});

describe('the mutants of scripts/mutate.ts', () => {
  it.each(MUTANTS.map((m) => [m.id, m] as const))('%s: its text occurs once in its file', (_, m) =>
    expectLiveMutant(m),
  );
});
