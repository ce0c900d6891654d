// The register-tile schedule the tiled kernels share (the int8 MMQ tile kernel and the f16 twin): a
// wm x wn grid of planes, each owning rm x rn 16x16 subtiles, so BM = wm*rm*16 and BN = wn*rn*16.
// Light: the catalogs use it for controls and steps, the generators for geometry.
import type { FamilyParams, IntControl, KnobConstraint, TileDecl } from './family';

export interface TileParams {
  wm: number;
  wn: number;
  rm: number;
  rn: number;
}

export const TILE_KEYS = ['wm', 'wn', 'rm', 'rn'] as const;

/** The tile of a family's params (keys wm, wn, rm, rn). */
export function tileOf(params: FamilyParams): TileParams {
  const get = (k: (typeof TILE_KEYS)[number]) => Number(params[k]);
  return { wm: get('wm'), wn: get('wn'), rm: get('rm'), rn: get('rn') };
}

/** Block geometry of a tile. */
export function tileGeometry(tile: TileParams): { bm: number; bn: number; nwarp: number } {
  return { bm: tile.wm * tile.rm * 16, bn: tile.wn * tile.rn * 16, nwarp: tile.wm * tile.wn };
}

/**
 * "2,4,1,1": a tile as the bench, the CLI and the tuner's tables write it.
 * @example tileString({ wm: 8, wn: 1, rm: 2, rn: 8 }) === '8,1,2,8'
 */
export const tileString = (t: TileParams): string => `${t.wm},${t.wn},${t.rm},${t.rn}`;

const TILE_HINTS: Record<(typeof TILE_KEYS)[number], string> = {
  wm: 'plane-grid rows (planes down the block)',
  wn: 'plane-grid columns (planes across the block)',
  rm: '16x16 register subtiles per plane, down',
  rn: '16x16 register subtiles per plane, across',
};

/**
 * The four tile controls (1..16 each), searched by the tuner over WM in `wms`, WN in {1,2,4}, RM in
 * {1,2,4} and RN in {1,2,4,8} (with TILE_CONSTRAINTS).
 * @example tileControls([1, 2, 4]).map((c) => c.tune?.values) // [[1, 2, 4], [1, 2, 4], [1, 2, 4], [1, 2, 4, 8]]
 */
export const tileControls = (wms: readonly number[]): readonly IntControl[] =>
  TILE_KEYS.map((key) => ({
    kind: 'int',
    key,
    label: key,
    group: 'tile',
    hint: TILE_HINTS[key],
    min: 1,
    max: 16,
    step: () => 1,
    tune: { values: { wm: wms, wn: [1, 2, 4], rm: [1, 2, 4], rn: [1, 2, 4, 8] }[key] },
  }));

/**
 * The register tile's search bounds: at most 16 planes (WM*WN; 16 subgroups of 64 is the 1024-invocation
 * ceiling) and at most 16 accumulator fragments a plane (RM*RN; beyond it a compiler spills and the
 * tile cannot win).
 */
export const TILE_CONSTRAINTS: readonly KnobConstraint[] = [
  { label: 'WM*WN <= 16 planes', holds: (t) => Number(t.wm) * Number(t.wn) <= 16 },
  { label: 'RM*RN <= 16 accumulator fragments', holds: (t) => Number(t.rm) * Number(t.rn) <= 16 },
];

/**
 * The register tile as a family declares it (FamilyCatalog.tile): the four knobs, and the block
 * BM x BN over wm x wn planes they give.
 * @example REGISTER_TILE.block({ wm: 2, wn: 4, rm: 1, rn: 1 }) // { rows: 32, cols: 64, planes: 8 }
 */
export const REGISTER_TILE: TileDecl = {
  keys: TILE_KEYS,
  block(params) {
    const t = tileOf(params);
    if (![t.wm, t.wn, t.rm, t.rn].every((v) => Number.isInteger(v) && v >= 1)) return undefined;
    const g = tileGeometry(t);
    return { rows: g.bm, cols: g.bn, planes: g.nwarp };
  },
};
