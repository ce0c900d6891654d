// The kernel registry: every family the worker, the app, the tuner and the bench can drive, in the
// seed's order. A family is added here once, from its folder's index.ts.
import { coopmatF16Family } from './coopmat';
import type { KernelFamily } from './family';
import { helloMmaFamily, helloWmmaFamily } from './hello';
import { mmqFamilies } from './mmq';
import { moeFamily } from './moe';

export const KERNEL_FAMILIES: KernelFamily[] = [helloWmmaFamily, helloMmaFamily, ...mmqFamilies, moeFamily, coopmatF16Family];
