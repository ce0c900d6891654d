// The light registry: every family's declarations (ids, titles, arms, controls, defaults, validation,
// tuning), in the reference's order, for the app's main thread. Generators, oracles and quant code are
// loaded by the worker through the full registry (./index.ts), which lists the same families.
import { coopmatCatalog } from './coopmat/catalog';
import type { FamilyCatalog } from './family';
import { helloMmaCatalog, helloWmmaCatalog } from './hello/catalog';
import { MMQ_CATALOGS } from './mmq/catalog';
import { moeCatalog } from './moe/catalog';

export const FAMILY_CATALOG: readonly FamilyCatalog[] = [
  helloWmmaCatalog,
  helloMmaCatalog,
  ...MMQ_CATALOGS,
  moeCatalog,
  coopmatCatalog,
];

/** The catalog of a family id, or undefined. */
export const catalogOf = (id: string): FamilyCatalog | undefined => FAMILY_CATALOG.find((f) => f.id === id);
