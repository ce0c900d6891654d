// The family registry: its light and heavy halves agree (ids, order, declarations), a disagreement is
// refused when the heavy half loads, an unknown id is a typed error that lists the known ones, and a
// family cannot declare tuning without a search (or the reverse).
import { describe, expect, it } from 'vitest';
import { CATALOG } from './catalog';
import { defineFamily, familyBuilder } from './define';
import { ShapeError, type FamilyCatalog, type KernelFamily } from './family';
import { KERNELS } from './index';
import { createRegistry, kernelRegistry, registryMismatches, UnknownFamilyError } from './registry';

describe('the family registry', () => {
  it('the heavy half lists the catalog families, in its order, with their own declarations', () => {
    expect(registryMismatches(CATALOG, KERNELS.families)).toEqual([]);
    expect(KERNELS.ids).toEqual(CATALOG.ids);
    for (const id of CATALOG.ids) expect(KERNELS.get(id).title).toBe(CATALOG.get(id).title);
  });

  it('refuses a heavy half that disagrees: a missing or extra kernel, another order, other declarations', () => {
    const [a, b] = KERNELS.families as [KernelFamily, KernelFamily];
    const two = createRegistry([CATALOG.get(a.id), CATALOG.get(b.id)]);
    expect(registryMismatches(two, [a])).toEqual([`'${b.id}' has a catalog entry but no kernel`]);
    expect(registryMismatches(createRegistry([CATALOG.get(a.id)]), [a, b])).toEqual([
      `'${b.id}' has a kernel but no catalog entry`,
    ]);
    expect(registryMismatches(two, [b, a]).join()).toMatch(/another order/);
    const retitled: KernelFamily = { ...b, title: 'another title' };
    expect(registryMismatches(two, [a, retitled])).toEqual([
      `'${b.id}' declares title otherwise than its catalog entry`,
    ]);
    expect(() => kernelRegistry(two, [a])).toThrow(/disagrees with the catalog: .* no kernel/);
  });

  it('get() throws UnknownFamilyError (a ShapeError) naming the known ids; find() answers undefined', () => {
    expect(() => KERNELS.get('nope')).toThrow(UnknownFamilyError);
    expect(() => CATALOG.get('nope')).toThrow(ShapeError);
    expect(() => KERNELS.get('nope')).toThrow(`unknown kernel family 'nope' (${CATALOG.ids.join(', ')})`);
    expect(KERNELS.find('nope')).toBeUndefined();
    const one = CATALOG.families[0]!;
    expect(() => createRegistry([one, one])).toThrow(/two families are registered as/);
  });

  it('defineFamily: tuning and a search come together', () => {
    const builder = familyBuilder<number, number>('x', {
      spec: () => 0,
      dataKey: () => 0,
      data: () => 0,
      plan: () => ({ buffers: [], passes: [], output: 'out', outputType: 'f32', mainPass: 0 }),
      ownerBuffer: 'owner',
      oracle: () => new Float32Array(),
      phases: () => [],
      ownership: () => {
        throw new Error('no phase');
      },
      facts: () => ({ rows: 0, cols: 0, gate: { kind: 'bit-exact' }, ops: 0, weightBytes: 0 }),
    });
    const tunable = CATALOG.families.find((c) => c.tuning)!;
    const plain: FamilyCatalog = CATALOG.families.find((c) => !c.tuning)!;
    expect(() => defineFamily({ catalog: tunable, builder })).toThrow(/declares tuning .* but no search/);
    const search = KERNELS.get(tunable.id).search!;
    expect(() => defineFamily({ catalog: plain, builder, search })).toThrow(
      /has a search but declares no tuning/,
    );
  });
});
