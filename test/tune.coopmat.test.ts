// The f16 coopmat twin's hunt on Dawn/SwiftShader (the seed's mmq_q4k_coopmat_space_search_cpu): the
// same GA over its space (the tiles plus WM = 8, times the four stagings) with the f16 evaluator (f32
// activation rounded to f16, the full-precision oracle, the 5e-2 gate), then the cache hit. Smaller than
// the int8 hunt: SwiftShader compiles a large register tile slowly.
import { describe, expect, it } from 'vitest';
import { useTestGpu } from './gpu';
import { COOPMAT_STAGINGS } from '../src/kernels/family';
import {
  coopmatTileSpace,
  Evolution,
  MemoryTuneCache,
  mmqQ4kIncumbent,
  stagingOf,
  tileConfig,
  tileSeeds,
  Tuner,
} from '../src/kernels/tune';
import { CoopmatF16Eval } from '../src/workers/tune';
import { HUNT } from './tuneHunt';

const gpu = useTestGpu();
const { shape } = HUNT;
const space = coopmatTileSpace();

describe('f16 coopmat tile hunt on SwiftShader', () => {
  it('f16 coopmat hunt over the same space: gated at 5e-2, cached', async () => {
    const { device, caps } = gpu();
    const t0 = performance.now();
    const ev = CoopmatF16Eval.create(device, caps, HUNT.evalOptions, space);
    const incumbent = tileConfig(space, mmqQ4kIncumbent(), 'one-pass'); // the scalar arm's default
    try {
      const tuner = new Tuner(new MemoryTuneCache());
      const small = new Evolution({ population: 4, generations: 2, measureIters: 1 });
      const seeds = tileSeeds(space, mmqQ4kIncumbent());
      expect(space.name(seeds[0]!)).toBe(space.name(incumbent));
      const r = await tuner.evolve('cpu', 'mmq_q4k_coopmat', shape, space, ev, small, 0xc0ffee, { seeds });
      const rep = r.report!;
      // Generation 0 is the incumbent tile at each staging: every staging is measured and gated.
      const gen0 = rep.measured.filter((e) => e.generation === 0).map((e) => stagingOf(space, e.values));
      expect(new Set(gen0)).toEqual(new Set(COOPMAT_STAGINGS));
      expect(rep.bestMs).toBeLessThan(Infinity);
      expect(space.feasible(space.parse(r.winner!)!)).toBe(true);
      expect(ev.worstRel).toBeLessThan(5e-2);
      console.log(
        `[coopmat hunt SwiftShader] ${ev.arm} winner=${r.winner} evaluated=${rep.evaluated} measured=${rep.measured.length} rejected=${rep.rejected.length} worst_rel=${ev.worstRel.toExponential(2)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      const r2 = await tuner.evolve('cpu', 'mmq_q4k_coopmat', shape, space, ev, small, 0xc0ffee);
      expect(r2.fromCache && r2.report === undefined && r2.winner === r.winner).toBe(true);
      // Every staging of one tile runs its whole plan through the evaluator and passes the gate.
      for (const staging of COOPMAT_STAGINGS) {
        const cfg = tileConfig(space, { wm: 1, wn: 2, rm: 1, rn: 1 }, staging);
        expect(stagingOf(space, cfg)).toBe(staging);
        expect(ev.staticCheck(cfg).kind).toBe('pass');
        const m = await ev.measure(cfg, 1);
        expect(m.worstRel).toBeLessThan(5e-2);
        expect(m.ms).toBeGreaterThan(0);
        expect(m.ms).toBeLessThan(Infinity);
      }
    } finally {
      ev.destroy();
    }
  });
});
