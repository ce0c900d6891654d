// The f16 coopmat twin's hunt on Dawn/SwiftShader (the seed's mmq_q4k_coopmat_space_search_cpu): the
// same GA over the same tile space with the f16 evaluator (f32 activation rounded to f16 in the kernel,
// the full-precision oracle, the 5e-2 gate), then the cache hit. Smaller than the int8 hunt: SwiftShader
// compiles a large register tile slowly.
import { describe, expect, it } from 'vitest';
import { useTestGpu } from './gpu';
import { Evolution, MemoryTuneCache, Tuner } from '../src/kernels/tune';
import { CoopmatF16Eval } from '../src/workers/tune';
import { HUNT } from './tuneHunt';

const gpu = useTestGpu();
const { space, incumbent, shape } = HUNT;

describe('f16 coopmat tile hunt on SwiftShader', () => {
  it('f16 coopmat hunt over the same space: gated at 5e-2, cached', async () => {
    const { device, caps } = gpu();
    const t0 = performance.now();
    const ev = CoopmatF16Eval.create(device, caps, HUNT.evalOptions);
    try {
      const tuner = new Tuner(new MemoryTuneCache());
      const small = new Evolution({ population: 4, generations: 2, measureIters: 1 });
      const r = await tuner.evolve('cpu', 'mmq_q4k_coopmat', shape, space, ev, small, 0xc0ffee, {
        seeds: [incumbent],
      });
      const rep = r.report!;
      expect(rep.bestMs).toBeLessThan(Infinity);
      expect(space.feasible(space.parse(r.winner!)!)).toBe(true);
      expect(ev.worstRel).toBeLessThan(5e-2);
      console.log(
        `[coopmat hunt SwiftShader] ${ev.arm} winner=${r.winner} evaluated=${rep.evaluated} measured=${rep.measured.length} rejected=${rep.rejected.length} worst_rel=${ev.worstRel.toExponential(2)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      const r2 = await tuner.evolve('cpu', 'mmq_q4k_coopmat', shape, space, ev, small, 0xc0ffee);
      expect(r2.fromCache && r2.report === undefined && r2.winner === r.winner).toBe(true);
    } finally {
      ev.destroy();
    }
  });
});
