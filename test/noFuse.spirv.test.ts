// Behaviour where CI has no contracting compiler: SwiftShader never fuses a multiply into an add, so a
// kernel without no_fuse still matches its oracle here and only a GPU like the H200 would show the lost
// bit-exactness (docs/decisions/0002-no-fuse.md). What CI can check is what reaches the driver: the SPIR-V
// Dawn generates (dump_shaders). In every bit-exact family, on every arm this adapter runs, no float add
// or subtract may take its operand straight from a multiply; with no_fuse made the identity, the int8
// epilogues must show such pairs (the witness sees through the call), or the check would prove nothing.
import { describe, expect, it } from 'vitest';
import { KERNELS } from '../src/kernels';
import { resolveConfig } from '../src/kernels/arms';
import { SWIFTSHADER_CAPS } from '../src/kernels/gpu/testCaps';
import { compileToSpirv, contractibleAdds, type CompiledPass, type SpirvJob } from './spirv';

/** The no_fuse body as mmq.wgsl.ts emits it, and mutants of it a driver could see through. */
const NO_FUSE = 'return bitcast<f32>(bitcast<u32>(x) | nofuse_zero);';
const MUTANTS: Record<string, [string, string][]> = {
  identity: [[NO_FUSE, 'return x;']],
  'or with a literal 0': [[NO_FUSE, 'return bitcast<f32>(bitcast<u32>(x) | 0u);']],
  'zero set as a constant': [['nofuse_zero = nwg.z >> 31u;', 'nofuse_zero = 0u;']],
};

/** The families whose gate is bit-exact (built on SwiftShader's description: no GPU here). */
const exact = KERNELS.families.filter((f) => {
  const arm = f.arms.find((a) => !a.unavailable(SWIFTSHADER_CAPS, f.defaults))!.arm;
  const config = resolveConfig(
    { kernel: f.id, arm, data: { source: 'reference', seed: 0 }, params: f.defaults },
    SWIFTSHADER_CAPS,
  );
  return f.build(config, SWIFTSHADER_CAPS).facts.gate.kind === 'bit-exact';
});
const arms = (f: (typeof exact)[number]) =>
  f.arms.filter((a) => !a.unavailable(SWIFTSHADER_CAPS, f.defaults)).map((a) => a.arm);

const jobs: SpirvJob[] = exact.flatMap((f) => [
  ...arms(f).map((arm) => ({ id: `${f.id}/${arm}`, family: f.id, arm })),
  ...Object.entries(MUTANTS).map(([name, replace]) => ({
    id: `${f.id}/${arms(f)[0]!}/${name}`,
    family: f.id,
    arm: arms(f)[0]!,
    replace,
  })),
]);

describe('no_fuse in the SPIR-V Dawn hands to the driver (dump_shaders)', () => {
  let passes: CompiledPass[] = [];
  const of = (job: string) => passes.filter((p) => p.job === job);

  it('compiles every bit-exact family on every arm here, and its mutants, with SPIR-V for each pass', async () => {
    expect(exact.length).toBeGreaterThanOrEqual(3);
    passes = await compileToSpirv(jobs);
    for (const j of jobs) expect(of(j.id).length, j.id).toBeGreaterThan(0);
  });

  for (const f of exact)
    for (const arm of arms(f))
      it(`${f.id} [${arm}]: no float add takes a multiply's result unrounded`, () => {
        for (const p of of(`${f.id}/${arm}`)) {
          const bad = p.spirv.flatMap(contractibleAdds);
          expect(
            bad.map((b) => `${b.fn}: ${b.text}`),
            p.label,
          ).toEqual([]);
        }
      });

  it('the witness sees through a no_fuse that no longer guards: each mutant leaves contractible pairs', () => {
    const guarded = exact.filter((f) => of(`${f.id}/${arms(f)[0]!}`).some((p) => p.wgsl.includes(NO_FUSE)));
    // The int8 MMQ and MoE families guard their epilogues; the hello kernels have no float arithmetic.
    expect(guarded.length).toBeGreaterThanOrEqual(5);
    for (const f of guarded)
      for (const name of Object.keys(MUTANTS)) {
        const mutated = of(`${f.id}/${arms(f)[0]!}/${name}`).filter((p) => p.wgsl.includes('fn no_fuse'));
        expect(mutated.length, `${f.id} ${name}`).toBeGreaterThan(0);
        for (const p of mutated)
          expect(p.spirv.flatMap(contractibleAdds).length, `${f.id} ${name}: ${p.label}`).toBeGreaterThan(0);
      }
  });
});
