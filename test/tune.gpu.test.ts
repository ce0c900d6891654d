// The tuner on a real WebGPU device (Dawn on SwiftShader): both tunable families' hunts at the
// reference's small shape through the PlanEvaluator (each config built by its family and run by the one
// runner), the cache hit on a second hunt, the gate failing a wrong kernel, the row-sampled gate of a
// large shape, and the winner held to the family's own gate on its whole output.
import { describe, expect, it } from 'vitest';
import { KERNELS } from '../src/kernels';
import type { KernelFamily, RunConfig } from '../src/kernels/family';
import { resolveConfig } from '../src/kernels/arms';
import { deviceId } from '../src/kernels/gpu/caps';
import {
  Evolution,
  MemoryTuneCache,
  Tuner,
  tuneProblemKey,
  type Config,
  type Evaluator,
} from '../src/kernels/tune';
import { PlanEvaluator } from '../src/kernels/tune/session';
import { getFastTestGpu, useTestGpu } from './gpu';

const gpu = useTestGpu(getFastTestGpu);
const family = (id: string) => KERNELS.get(id);
const base = (id: string, params: Record<string, number | string> = {}): RunConfig => ({
  kernel: id,
  arm: 'scalar',
  data: { source: 'reference', seed: 0 },
  params: { ...family(id).defaults, m: 16, n: 16, k: 256, ...params },
});
const evo = new Evolution({ population: 6, generations: 2, measureMs: 1 });

/** Counts what the GA asks of an evaluator. */
function counting(ev: Evaluator) {
  const calls = { staticCheck: 0, measure: 0 };
  const wrapped: Evaluator = {
    staticCheck: (c: Config) => (calls.staticCheck++, ev.staticCheck(c)),
    measure: (c: Config, ms: number) => (calls.measure++, ev.measure(c, ms)),
  };
  return { wrapped, calls };
}

describe('hunts on SwiftShader', () => {
  for (const id of ['mmq-q4k-tile', 'coopmat-f16']) {
    it(`${id}: a feasible winner that passes the family's own gate on its whole output; the second hunt hits the cache`, async () => {
      const { device, caps } = gpu();
      const f = family(id);
      const search = f.search!(base(id), caps);
      const ev = new PlanEvaluator(device, caps, f, search, { banks: 2, batches: 1, warmMs: 0 });
      try {
        const { wrapped, calls } = counting(ev);
        const tuner = new Tuner(new MemoryTuneCache());
        const key = [deviceId(caps), f.tuning!.op, tuneProblemKey(f, base(id))] as const;
        const t0 = performance.now();
        const r = await tuner.evolve(...key, search.space, wrapped, evo, 0xc0ffee, {
          seeds: [search.incumbent, ...search.seeds],
        });
        const rep = r.report!;
        expect(r.fromCache).toBe(false);
        expect(rep.bestMs).toBeLessThan(Infinity);
        const win = search.space.parse(r.winner!)!;
        expect(ev.staticCheck(win).kind).toBe('pass');
        expect(rep.failedGate).toEqual([]);
        expect(rep.measured.every((e) => e.ms > 0)).toBe(true);
        expect(rep.entries[0]!.config).toBe(search.space.name(search.incumbent));
        // The winner as a playground config passes the family's own gate on its whole output.
        const v = await ev.verify(win);
        expect(v.pass, `${id} winner ${r.winner}: ${v.relToMax}`).toBe(true);
        expect(v.gate).toEqual(f.build(resolveConfig(search.apply(win), caps), caps).facts.gate);
        console.log(
          `[hunt ${id}] winner ${r.winner} (${search.apply(win).arm}) ${rep.bestMs.toFixed(4)} ms, ${rep.evaluated} evaluated, ${rep.rejected.length} rejected, worst rel ${ev.worstRel.toExponential(2)}, ${ev.timing}, ${((performance.now() - t0) / 1000).toFixed(1)} s`,
        );
        const before = { ...calls };
        const r2 = await tuner.evolve(...key, search.space, wrapped, evo, 0xc0ffee);
        expect(r2).toMatchObject({ fromCache: true, winner: r.winner });
        expect(calls).toEqual(before);
      } finally {
        ev.destroy();
      }
    });
  }

  it("the search's gate fails a wrong kernel (dropped - M*xsum) and one that skips a row; the finite check catches unsampled rows", async () => {
    const { device, caps } = gpu();
    const real = family('mmq-q4k-tile');
    /** The family with its main pass edited: what a miscompiled or wrong config would do. */
    const edited = (edit: (wgsl: string) => string): KernelFamily => ({
      ...real,
      build(c, a) {
        const b = real.build(c, a);
        const main = b.plan.passes[b.plan.mainPass]!;
        return { ...b, plan: { ...b.plan, passes: [{ ...main, wgsl: edit(main.wgsl) }] } };
      },
    });
    const noMin = edited((w) => w.replace(' - no_fuse(wmm * xsm)', ''));
    const search = real.search!(base('mmq-q4k-tile', { m: 48, n: 64 }), caps);
    const ev = new PlanEvaluator(device, caps, noMin, search, { banks: 1, batches: 1, warmMs: 0 });
    try {
      const m = await ev.measure(search.incumbent, 1);
      expect(m.ms).toBe(Infinity);
      expect(m.reason).toMatch(/rel_to_max .* > 1e-3 gate/);
    } finally {
      ev.destroy();
    }
    // A large shape (here: a tiny oracle budget) gates on sampled rows; a kernel that never writes the
    // last row still fails through the NaN-filled output, whichever rows the oracle covers.
    const skip = edited((w) =>
      w.replace(
        'fn store_out(i: u32, v: f32) { out[i] = v; }',
        'fn store_out(i: u32, v: f32) { if (i < 47u * 64u) { out[i] = v; } }',
      ),
    );
    const sampled = new PlanEvaluator(device, caps, skip, search, {
      banks: 1,
      batches: 1,
      warmMs: 0,
      oracleMacBudget: 8 * 64 * 256,
    });
    try {
      expect(sampled.gatedRows).toBeGreaterThanOrEqual(18);
      expect(sampled.gatedRows).toBeLessThan(48);
      const m = await sampled.measure(search.incumbent, 1);
      expect(m.ms).toBe(Infinity);
    } finally {
      sampled.destroy();
    }
  });
});
