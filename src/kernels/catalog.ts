// The light half of the family registry (./registry.ts): every family's declarations (ids, titles, arms,
// controls, defaults, validation, tuning), in the reference's order, for the app's main thread.
// Generators, oracles and quant code are loaded by the worker through the heavy half (./index.ts), which
// must list the same families in the same order (kernelRegistry checks it when it loads).
import { coopmatCatalog } from './coopmat/catalog';
import { helloMmaCatalog, helloWmmaCatalog } from './hello/catalog';
import { matvecQ4kCatalog } from './matvec/catalog';
import { MMQ_CATALOGS } from './mmq/catalog';
import { moeCatalog } from './moe/catalog';
import { createRegistry } from './registry';

export const CATALOG = createRegistry([
  helloWmmaCatalog,
  helloMmaCatalog,
  ...MMQ_CATALOGS,
  matvecQ4kCatalog,
  moeCatalog,
  coopmatCatalog,
]);
