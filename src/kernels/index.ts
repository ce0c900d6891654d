// The heavy half of the family registry (./registry.ts): every family the worker, the tuner, the bench
// and the CLI can build and run, keyed by the same ids and in the same order as the light ./catalog.ts
// (kernelRegistry refuses a list that disagrees). A family is added here once, from its folder's index.ts.
import { CATALOG } from './catalog';
import { coopmatF16Family } from './coopmat';
import { helloMmaFamily, helloWmmaFamily } from './hello';
import { matvecQ4kFamily } from './matvec';
import { mmqFamilies } from './mmq';
import { moeFamily } from './moe';
import { kernelRegistry } from './registry';

export const KERNELS = kernelRegistry(CATALOG, [
  helloWmmaFamily,
  helloMmaFamily,
  ...mmqFamilies,
  matvecQ4kFamily,
  moeFamily,
  coopmatF16Family,
]);
