// What the bench runs, without a GPU: on an H200-like adapter every family's candidates at the headline
// shape and at an MoE case are distinct configs (a seed equal to an arm's incumbent was gated and timed
// twice, which the MoE cases' time budget cannot afford), and no distinct seed is lost; torch times the
// bench's own MoE cases, so every case has a torch figure beside it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BENCHED, candidatesOf, moeCases } from '../bench/cases';
import { fakeCaps, H200_F16_CONFIGS, H200_INT8_CONFIGS } from '../src/kernels/gpu/testCaps';
import { shapeParams } from '../src/kernels/models';

const h200 = fakeCaps(
  { shaderF16: true, features: ['subgroups', 'shader-f16', 'chromium-experimental-subgroup-matrix'] },
  [...H200_INT8_CONFIGS, ...H200_F16_CONFIGS],
);
const key = (c: { arm: string; params: Record<string, unknown> }) =>
  JSON.stringify([c.arm, Object.entries(c.params).sort(([a], [b]) => a.localeCompare(b))]);

describe('bench candidates', () => {
  it('each config once, every distinct seed kept, at a dense shape and an MoE case', () => {
    for (const f of BENCHED) {
      const shape = f.takes!.bank
        ? { n: 4096, k: 4096, rows: 512, experts: 8, topk: 2 }
        : { n: 4096, k: 4096, rows: 2048 };
      const { list } = candidatesOf(h200, false, f, shapeParams(f, f.defaults, shape));
      const keys = list.map((c) => key(c.config));
      expect(new Set(keys).size, f.id).toBe(keys.length);
      const search = f.search?.(list[0]!.config, h200);
      for (const seed of search?.seeds ?? []) expect(keys, f.id).toContain(key(search!.apply(seed)));
    }
  });
});

describe('torch beside the bench', () => {
  it("torch_baseline.py's MoE cases are the bench's default cases", () => {
    const py = readFileSync(new URL('../bench/torch_baseline.py', import.meta.url), 'utf8');
    const list = /^MOE_CASES = \[(.*)\]$/m.exec(py)?.[1];
    const torch = [...(list ?? '').matchAll(/\((\d+), (\d+)\)/g)].map((m) => `${m[1]}x${m[2]}`);
    expect(torch).toEqual(moeCases(false).map((c) => `${c.experts}x${c.tokens}`));
    expect(py).toMatch(/^MOE_TOPK = 2$/m);
  });
});
