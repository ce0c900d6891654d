// The kernel registry: every family the worker, the app, the tuner and the bench can drive, in the
// seed's order. A family is added here once, from its folder's index.ts.
import { coopmatF16Family, coopmatGeometry, type CoopmatPrepared } from './coopmat';
import type { KernelFamily, PreparedProblem } from './family';
import { helloMmaFamily, helloWmmaFamily } from './hello';
import { mmqFamilies, mmqGeometry, type MmqPreparedProblem } from './mmq';
import { moeFamily } from './moe';

/**
 * State a dense-tiled family's workgroup tile (BM x BN) on its prepared problems, so the views can draw
 * the tile grid and hatch the tail past m/n. A family that sets `outputTile` itself is left as it is.
 */
function withOutputTile<P extends PreparedProblem>(
  family: KernelFamily,
  tileOf: (p: P) => { rows: number; cols: number },
): KernelFamily {
  return {
    ...family,
    prepare(config, caps) {
      const p = family.prepare(config, caps) as P;
      return p.outputTile ? p : { ...p, outputTile: tileOf(p) };
    },
  };
}

const mmqTile = (p: MmqPreparedProblem) => {
  const g = mmqGeometry(p.spec);
  return { rows: g.bm, cols: g.bn };
};

const coopmatTile = (p: CoopmatPrepared) => {
  const g = coopmatGeometry(p.spec);
  return { rows: g.bm, cols: g.bn };
};

export const KERNEL_FAMILIES: KernelFamily[] = [
  helloWmmaFamily,
  helloMmaFamily,
  ...mmqFamilies.map((f) => withOutputTile(f, mmqTile)),
  // MoE scatters rows through slot lists, so its output rows are not a grid of tiles.
  moeFamily,
  withOutputTile(coopmatF16Family, coopmatTile),
];
