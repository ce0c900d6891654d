// The family registry: every kernel family by id, in one order. It has two halves keyed by the same ids:
// the light catalog (./catalog.ts: declarations only, what the app's main thread imports) and the heavy
// kernels (./index.ts: the same declarations plus build and search, for the worker, the CLI, the bench
// and the tests). kernelRegistry() refuses a heavy half that does not agree with the light one, so a
// family is added once in each, next to each other in meaning, and nowhere else.
import { ShapeError, type FamilyCatalog, type KernelFamily } from './family';

/** A config names a family the registry does not have (a 'shape' error: the config is wrong). */
export class UnknownFamilyError extends ShapeError {
  constructor(
    readonly id: string,
    readonly known: readonly string[],
  ) {
    super(`unknown kernel family '${id}' (${known.join(', ')})`);
    this.name = 'UnknownFamilyError';
  }
}

/** Families by id, in the registry's order. */
export interface Registry<F extends FamilyCatalog> {
  readonly families: readonly F[];
  readonly ids: readonly string[];
  /** The family of an id; throws UnknownFamilyError (listing the known ids) when there is none. */
  get(id: string): F;
  /** The family of an id, or undefined. */
  find(id: string): F | undefined;
}

/**
 * A registry of `families`; throws RangeError when two share an id.
 * @example const reg = createRegistry([helloWmmaCatalog, coopmatCatalog]); reg.get('coopmat-f16').title
 */
export function createRegistry<F extends FamilyCatalog>(families: readonly F[]): Registry<F> {
  const byId = new Map<string, F>();
  for (const f of families) {
    if (byId.has(f.id)) throw new RangeError(`two families are registered as '${f.id}'`);
    byId.set(f.id, f);
  }
  const ids = families.map((f) => f.id);
  return {
    families,
    ids,
    find: (id) => byId.get(id),
    get(id) {
      const f = byId.get(id);
      if (!f) throw new UnknownFamilyError(id, ids);
      return f;
    },
  };
}

/**
 * Where a heavy half disagrees with the light catalog: an id missing from either, another order, or a
 * kernel whose declarations are not its catalog entry's (each key of the catalog entry must hold the
 * same value in the kernel, as defineFamily() makes it). Empty = they agree.
 * @example registryMismatches(CATALOG, KERNELS.families) // []
 */
export function registryMismatches(
  catalog: Registry<FamilyCatalog>,
  kernels: readonly KernelFamily[],
): string[] {
  const out: string[] = [];
  const ids = kernels.map((k) => k.id);
  for (const id of catalog.ids) if (!ids.includes(id)) out.push(`'${id}' has a catalog entry but no kernel`);
  for (const id of ids) if (!catalog.find(id)) out.push(`'${id}' has a kernel but no catalog entry`);
  if (!out.length && ids.join() !== catalog.ids.join())
    out.push(
      `the kernels are in another order (${ids.join(', ')}) than the catalog (${catalog.ids.join(', ')})`,
    );
  for (const k of kernels) {
    const entry = catalog.find(k.id);
    if (!entry) continue;
    const differ = (Object.keys(entry) as (keyof FamilyCatalog)[]).filter((key) => entry[key] !== k[key]);
    if (differ.length) out.push(`'${k.id}' declares ${differ.join(', ')} otherwise than its catalog entry`);
  }
  return out;
}

/**
 * The heavy half of the registry, checked against the light catalog (registryMismatches): throws
 * RangeError listing every disagreement.
 * @example export const KERNELS = kernelRegistry(CATALOG, [helloWmmaFamily, coopmatF16Family]);
 */
export function kernelRegistry(
  catalog: Registry<FamilyCatalog>,
  kernels: readonly KernelFamily[],
): Registry<KernelFamily> {
  const problems = registryMismatches(catalog, kernels);
  if (problems.length)
    throw new RangeError(`the kernel registry disagrees with the catalog: ${problems.join('; ')}`);
  return createRegistry(kernels);
}
