// The dense MMQ kernel families: each catalog (./catalog.ts) plus its parts for the family skeleton
// (../define.ts) -- the preset's spec of the one generator, its plan on lazily built data, its oracle and
// ownership -- and, for the tile kernel, the search the tuner runs.
import type { Gate } from '../compare';
import { defineFamily, familyBuilder } from '../define';
import {
  intParam,
  type FamilyCatalog,
  type KernelFamily,
  type OwnershipPhase,
  type ResolvedConfig,
  type RunConfig,
  type TuningSearch,
} from '../family';
import type { AdapterCaps, Arm } from '../gpu/caps';
import { emptyOwnership, type OwnershipMap } from '../gpu/instrument';
import type { Config } from '../space';
import { knobSearch } from '../tune/knobs';
import type { TileParams } from '../tile';
import {
  MMQ_BLK_TILE,
  MMQ_CATALOGS,
  MMQ_PRESETS,
  presetTile,
  type MmqKernelId,
  type MmqSchedule,
} from './catalog';
import {
  activationRows,
  fullPrecisionOf,
  mmqDataset,
  mmqTensorDataset,
  mmqWeightBytes,
  type MmqDataset,
  type MmqInputs,
} from './mmq.data';
import { mmqQ4kPartials, mmqQ4kRef, mmqQ8Partials, mmqQ8Ref } from './mmq.oracle';
import type { ElementPartials } from '../partials';
import { buildMmqPlan, mmqAnalyticOwnership, OWNER_BUFFER } from './mmq.plan';
import { buildMmqKernel, type MmqSpec } from './mmq.wgsl';

export interface MmqPresetOptions {
  m: number;
  n: number;
  k: number;
  /** Used by 'mmq-q4k-tile' only; the other kernels have the reference's fixed tile. */
  tile?: TileParams;
  /** Used by 'mmq-q4k-tile' only (default: the seed's subtile schedule). */
  schedule?: MmqSchedule;
  arm: Arm;
  plane: number;
}

/**
 * The spec of a preset (./catalog.ts MMQ_PRESETS) for a shape, arm and plane.
 * @example buildMmqKernel(mmqPresetSpec('mmq-q4k-rt', { m: 17, n: 50, k: 512, arm: 'scalar', plane: 4 }))
 */
export function mmqPresetSpec(id: MmqKernelId, o: MmqPresetOptions): MmqSpec {
  const p = MMQ_PRESETS[id];
  // Keys in the order the specs were always written (arm, plane, indexed first): serialized specs stay equal.
  return {
    arm: o.arm,
    plane: o.plane,
    indexed: p.indexed,
    weights: p.weights,
    tile: p.tileIsParam ? (o.tile ?? p.tile) : p.tile,
    operands: p.operands,
    accumulator: p.accumulator,
    dims: p.dims === 'runtime' ? { kind: 'runtime' } : { kind: 'static', m: o.m, n: o.n, k: o.k },
    tails: p.tails,
    // Absent for the seed's schedule: the specs (and texts) of every existing config stay as they were.
    ...(p.tileIsParam && o.schedule === 'microtile' ? { schedule: o.schedule } : {}),
  };
}

/** The phases of a spec: the opaque fragment store (matrix arm), the scalar epilogue, the register accumulator. */
export function mmqPhases(spec: MmqSpec): OwnershipPhase[] {
  const phases: OwnershipPhase[] = [];
  if (spec.arm === 'subgroup-matrix') phases.push('fragment-store');
  phases.push('scalar-epilogue');
  if (spec.accumulator === 'register') phases.push('register-accumulator');
  return phases;
}

/**
 * The analytic owner map of one of a spec's phases (mmqPhases): the matrix fragment store's lane map is
 * opaque, so its map is all count 0; the other phases own by `analytic`.
 */
export function mmqOwnership(
  phase: OwnershipPhase,
  rows: number,
  cols: number,
  analytic: () => OwnershipMap,
): OwnershipMap {
  return phase === 'fragment-store' ? emptyOwnership(rows, cols) : analytic();
}

/** The oracle of a dataset's inputs: every row, or the rows listed (the gate of a large output samples). */
export function mmqOracle(
  inputs: MmqInputs,
  n: number,
  k: number,
  rows: number,
  rowList?: readonly number[],
) {
  if (!rowList)
    return inputs.weights === 'q8_0' ? mmqQ8Ref(inputs.data, rows, n, k) : mmqQ4kRef(inputs.data, rows, n, k);
  const picked = activationRows(inputs, rowList, k);
  return picked.weights === 'q8_0'
    ? mmqQ8Ref(picked.data, rowList.length, n, k)
    : mmqQ4kRef(picked.data, rowList.length, n, k);
}

/**
 * The k-block breakdown of output element (row, col) of either weight format (mmqQ8Partials,
 * mmqQ4kPartials); `wrow` is the weight row it reads (col, or expert*n + col of a bank).
 * @example mmqPartials(dataset.inputs, 3, 5, k).blocks.length === k / 32
 */
export function mmqPartials(
  inputs: MmqInputs,
  row: number,
  col: number,
  k: number,
  wrow = col,
): ElementPartials {
  const p =
    inputs.weights === 'q8_0'
      ? mmqQ8Partials(inputs.data, row, wrow, k)
      : mmqQ4kPartials(inputs.data, row, wrow, k);
  return { ...p, col };
}

/** Bit-exact: int8 sums are exact and the f32 epilogue runs in the oracle's order (no_fuse). */
const BIT_EXACT: Gate = { kind: 'bit-exact' };

/** The search's gate: exactness is checked on the winner's full output (the family's own gate) after it. */
export const INT8_TUNE_GATE: Gate = { kind: 'rel-to-max', tol: 1e-3 };

/** The tile kernel's tuning: (WM, WN, RM, RN) x schedule x the accelerated arms here (catalog.ts). */
function tileSearch(catalog: FamilyCatalog) {
  return (base: RunConfig, caps: AdapterCaps): TuningSearch => {
    const { space, apply, choiceOf, at: point, arms } = knobSearch(catalog, base, caps);
    const at = (tile: TileParams, arm: Arm, schedule: MmqSchedule) => point({ ...tile, arm, schedule });
    const incumbent = at(MMQ_BLK_TILE, arms.at(-1)!, 'subtile')!;
    // The micro-tile seeds: a 64x64 block of 4 planes of 32x32 on each arm.
    const micro = arms.map((a) => at({ wm: 2, wn: 2, rm: 2, rn: 2 }, a, 'microtile'));
    return {
      space,
      apply,
      choiceOf,
      incumbent,
      seeds: [...arms.map((a) => at(MMQ_BLK_TILE, a, 'subtile')), ...micro]
        .filter((c): c is Config => c !== undefined)
        .filter((c) => space.name(c) !== space.name(incumbent)),
      gate: INT8_TUNE_GATE,
    };
  };
}

/** A dense MMQ config's spec and shape: the runtime-dims kernels' spec does not hold m, n, k. */
interface DenseSpec {
  kernel: MmqSpec;
  m: number;
  n: number;
  k: number;
}

function denseFamily(catalog: FamilyCatalog) {
  const id = catalog.id as Exclude<MmqKernelId, 'mmq-q4k-id'>;
  const preset = MMQ_PRESETS[id];
  const plan = (s: DenseSpec, data: () => MmqDataset, instrument: boolean) =>
    buildMmqPlan(() => data().inputs, s.m, s.n, s.k, s.kernel, {
      label: instrument ? `${id} (instrumented)` : id,
      ...(instrument ? { instrument } : {}),
    });
  return defineFamily({
    catalog,
    builder: familyBuilder(id, {
      spec(config: ResolvedConfig): DenseSpec {
        const [m, n, k] = ['m', 'n', 'k'].map((key) => intParam(config.params, key)) as [
          number,
          number,
          number,
        ];
        const tile = presetTile(preset, config.params);
        const schedule = config.params.schedule === 'microtile' ? 'microtile' : 'subtile';
        return {
          kernel: mmqPresetSpec(id, { m, n, k, tile, schedule, arm: config.arm, plane: config.plane }),
          m,
          n,
          k,
        };
      },
      dataKey: (s) => [preset.weights, s.m, s.n, s.k],
      data: (s, config) => mmqDataset(preset.weights, s.m, s.n, s.k, config.data.source, config.data.seed),
      tensorData: (s, weight, tensor, seed) => mmqTensorDataset(weight, s.m, tensor.activation, seed),
      plan: (s, data, { instrument }) => plan(s, data, instrument),
      ownerBuffer: OWNER_BUFFER,
      oracle: (s, d) => mmqOracle(d.inputs, s.n, s.k, s.m),
      oracleRows: (s, d, rows) => mmqOracle(d.inputs, s.n, s.k, s.m, rows),
      partials: (s, d, row, col) => mmqPartials(d.inputs, row, col, s.k),
      phases: (s) => mmqPhases(s.kernel),
      ownership: (s, phase) => mmqOwnership(phase, s.m, s.n, () => mmqAnalyticOwnership(s.kernel, s.m, s.n)),
      facts(s, data) {
        const g = buildMmqKernel(s.kernel).geometry;
        return {
          rows: s.m,
          cols: s.n,
          fullPrecision: () => fullPrecisionOf(data(), s.n),
          gate: BIT_EXACT,
          ops: 2 * s.m * s.n * s.k,
          weightBytes: mmqWeightBytes(s.kernel.weights, s.n, s.k),
          outputTile: { rows: g.bm, cols: g.bn },
        };
      },
    }),
    ...(catalog.tuning ? { search: tileSearch(catalog) } : {}),
  });
}

/** The dense MMQ families, in the reference's order. */
export const mmqFamilies: KernelFamily[] = MMQ_CATALOGS.map(denseFamily);
