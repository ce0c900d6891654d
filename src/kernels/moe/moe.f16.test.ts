// The MoE f16 route's GEMMs as text: coopmat's split and stream GEMMs with the experts' row map (each row
// tile one expert's rows, scattered to their slots), pinned for the arms SwiftShader cannot run; and the
// routings' shape (the skewed one really has a hot expert).
import { describe, expect, it } from 'vitest';
import { coopmatWgsl, type CoopmatSpec } from '../coopmat';
import { expertRowMap } from './moe.f16';
import { MOE_ROUTING_SEED, moeRouting, moeSkewedRouting } from './moe.plan';

const tile = (wm: number, wn: number, rm: number, rn: number) => ({ wm, wn, rm, rn });

describe('MoE f16 route: the routed GEMMs', () => {
  const routed = (t: ReturnType<typeof tile>, tiles: number, extra: Partial<CoopmatSpec>): CoopmatSpec => {
    const bm = t.wm * t.rm * 16;
    return {
      m: tiles * bm,
      n: 40,
      k: 512,
      tile: t,
      plane: 32,
      arm: 'subgroup-matrix',
      f16: 'native',
      staging: 'prepass',
      rowMap: expertRowMap(4, tiles, bm),
      ...extra,
    };
  };
  const cases: [string, CoopmatSpec][] = [
    ['subgroup-matrix.2x2x1x1.prepass', routed(tile(2, 2, 1, 1), 6, {})],
    [
      'scalar.2x2x1x1.in-gemm',
      routed(tile(2, 2, 1, 1), 6, { arm: 'scalar', f16: 'emulated', staging: 'in-gemm' }),
    ],
    ['subgroup-matrix.1x1x2x1.stream.ksplit2', routed(tile(1, 1, 2, 1), 6, { staging: 'stream', ksplit: 2 })],
  ];
  for (const [name, spec] of cases)
    it(`snapshot ${name}`, async () => {
      const text = coopmatWgsl(spec);
      // The map, not the generator, names the routing: the expert's tile is read uniformly, rows scatter.
      expect(text).toContain('let w_bank = workgroupUniformLoad(&tile_expert);');
      expect(text).toContain('let slot = groups[SLOTS_AT + orow];');
      await expect(text).toMatchFileSnapshot(`./__snapshots__/moe.f16.${name}.wgsl`);
    });

  it("the map's hooks take the GEMM's names and write only what they are given", () => {
    const map = expertRowMap(4, 6, 32);
    const calls: unknown[] = [];
    const spec = routed(tile(2, 2, 1, 1), 6, {
      rowMap: {
        ...map,
        rowBank: (names) => (calls.push(names), map.rowBank(names)),
        outSlot: (names) => (calls.push(names), map.outSlot(names)),
      },
    });
    const text = coopmatWgsl(spec);
    expect(calls).toContainEqual({ bank: 'w_bank', tile: 'wg.y', tid: 'tid' });
    expect(calls).toContainEqual({ row: 'orow', col: 'ocol' });
    // The GEMM reads the bank the hook declared, under the name it gave.
    expect(text).toContain('w0 = w_bank * NP;');
    expect(map.rowBank({ bank: 'b', tile: 'y', tid: 't' })).toContain(
      'if (t == 0u) { tile_expert = select(NONE, groups[1u + y], y < groups[0]); }',
    );
    expect(map.outSlot({ row: 'r', col: 'c' })).toEqual({
      lookup: 'let slot = groups[SLOTS_AT + r];',
      guard: 'slot != NONE && c < N',
      index: 'slot * N + c',
    });
  });
});

describe('MoE routings', () => {
  it('skewed: half the tokens take expert 0 first, every token keeps distinct experts, deterministic', () => {
    const [tokens, experts, topk] = [2048, 8, 2];
    const ids = moeSkewedRouting(tokens, experts, topk, MOE_ROUTING_SEED);
    expect([...ids]).toEqual([...moeSkewedRouting(tokens, experts, topk, MOE_ROUTING_SEED)]);
    let firsts = 0;
    for (let t = 0; t < tokens; t++) {
      const row = [...ids.subarray(t * topk, (t + 1) * topk)];
      expect(new Set(row).size).toBe(topk);
      if (row[0] === 0) firsts++;
    }
    // About half the tokens lead with expert 0 (a fair coin: 1024 +- 5 sigma of 22.6).
    expect(firsts).toBeGreaterThan(1024 - 115);
    expect(firsts).toBeLessThan(1024 + 115 + tokens / experts);
    const load = (v: Uint32Array) => v.filter((e) => e === 0).length;
    const even = moeRouting(tokens, experts, topk, MOE_ROUTING_SEED);
    // Expert 0 serves ~tokens * (1/2 + topk / (2 * experts)) = 1280 slots, against ~512 evenly.
    expect(load(ids)).toBeGreaterThan(2 * load(even));
    expect(load(ids)).toBeGreaterThan(1100);
  });
});
