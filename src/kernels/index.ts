// The kernel registry: every family the worker, the tuner, the bench and the CLI can build and run, in
// the reference's order (the same list as the light ./catalog.ts). A family is added here once, from its
// folder's index.ts.
import { coopmatF16Family } from './coopmat';
import type { KernelFamily } from './family';
import { helloMmaFamily, helloWmmaFamily } from './hello';
import { mmqFamilies } from './mmq';
import { moeFamily } from './moe';

export const KERNEL_FAMILIES: readonly KernelFamily[] = [
  helloWmmaFamily,
  helloMmaFamily,
  ...mmqFamilies,
  moeFamily,
  coopmatF16Family,
];

/** The family of an id, or undefined. */
export const familyOf = (id: string): KernelFamily | undefined => KERNEL_FAMILIES.find((f) => f.id === id);
