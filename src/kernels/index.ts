// The kernel registry: every family the worker, the app, the tuner and the bench can drive, in the
// seed's order. A family is added here once, from its folder's index.ts.
import { coopmatF16Family } from './coopmat';
import type { KernelFamily } from './family';
import { helloMmaFamily, helloWmmaFamily } from './hello';
import { mmqFamilies } from './mmq';
import { moeFamily } from './moe';

export const KERNEL_FAMILIES: KernelFamily[] = [
  helloWmmaFamily,
  helloMmaFamily,
  ...mmqFamilies,
  // MoE scatters rows through slot lists, so its output rows are not a grid of tiles: no outputTile.
  moeFamily,
  coopmatF16Family,
];
