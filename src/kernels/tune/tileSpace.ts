// The register-tile search space the tunable families share (the int8 MMQ tile kernel and the f16 twin):
// the warp grid WM x WN and the per-warp register tile RM x RN. Device-independent feasibility only; a
// config's adapter limits are checked from its generated plan (gpu/plan.ts planLimitProblems).
import { TILE_CONSTRAINTS, tileControls, type TileParams } from '../tile';
import { Space, type Config } from '../space';

/**
 * The register-tile space alone, as the tiled families declare it (tile.ts tileControls and
 * TILE_CONSTRAINTS) with warp-grid rows `wms`.
 * @example tileSpace([1, 2, 4]).enumerate().length === 99
 */
export function tileSpace(wms: readonly number[]): Space {
  let space = new Space();
  for (const c of tileControls(wms)) space = space.param(c.key.toUpperCase(), c.tune!.values!);
  for (const c of TILE_CONSTRAINTS)
    space = space.constraint((cfg, s) => c.holds({ ...tileFromSpace(s, cfg) }), c.label);
  return space;
}

/** The tile of a config of tileSpace() (or a space extending it). */
export function tileFromSpace(space: Space, cfg: Config): TileParams {
  return {
    wm: space.get(cfg, 'WM'),
    wn: space.get(cfg, 'WN'),
    rm: space.get(cfg, 'RM'),
    rn: space.get(cfg, 'RN'),
  };
}

/**
 * A tile as tileSpace() values.
 * @example space.config({ ...tileValues(tile), ARM: 0 })
 */
export const tileValues = (t: TileParams): Record<'WM' | 'WN' | 'RM' | 'RN', number> => ({
  WM: t.wm,
  WN: t.wn,
  RM: t.rm,
  RN: t.rn,
});
