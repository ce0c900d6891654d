// The register-tile search space the tunable families share (the int8 MMQ tile kernel and the f16 twin):
// the warp grid WM x WN and the per-warp register tile RM x RN. Device-independent feasibility only; a
// config's adapter limits are checked from its generated plan (gpu/plan.ts planLimitProblems).
import type { TileParams } from '../tile';
import { Space, type Config } from './space';

/**
 * The register-tile space over warp-grid rows `wms`: WN in {1,2,4}, RM in {1,2,4}, RN in {1,2,4,8},
 * at most 16 planes (WM*WN; 16 subgroups of 64 is the 1024-invocation ceiling) and at most 16
 * accumulator fragments a plane (RM*RN; beyond it a compiler spills and the tile cannot win).
 * @example tileSpace([1, 2, 4]).enumerate().length === 99
 */
export function tileSpace(wms: readonly number[]): Space {
  return new Space()
    .param('WM', wms)
    .param('WN', [1, 2, 4])
    .param('RM', [1, 2, 4])
    .param('RN', [1, 2, 4, 8])
    .constraint((c, s) => s.get(c, 'WM') * s.get(c, 'WN') <= 16, 'WM*WN <= 16 planes')
    .constraint((c, s) => s.get(c, 'RM') * s.get(c, 'RN') <= 16, 'RM*RN <= 16 accumulator fragments');
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
