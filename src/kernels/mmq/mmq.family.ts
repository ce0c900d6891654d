// The dense MMQ kernel families: each catalog (./catalog.ts) plus build() -- the preset's spec of the one
// generator, its plan on lazily built data, its oracle and ownership -- and, for the tile kernel, the
// tuning declaration the tuner reads.
import type { Gate } from '../compare';
import {
  assertNoProblems,
  intParam,
  type BuiltProblem,
  type FamilyCatalog,
  type KernelFamily,
  type OwnershipPhase,
  type ResolvedConfig,
  type RunConfig,
  type TuningSearch,
  type WeightOperand,
  tensorProblems,
} from '../family';
import type { AdapterCaps, Arm } from '../gpu/caps';
import { emptyOwnership, type OwnershipMap } from '../gpu/instrument';
import { planLimitProblems } from '../gpu/plan';
import type { Config } from '../tune/space';
import { tileFromSpace, tileSpace, tileValues } from '../tune/tileSpace';
import { tileOf, type TileParams } from '../tile';
import { MMQ_BLK_TILE, MMQ_CATALOGS, MMQ_PRESETS, presetTile, type MmqKernelId } from './catalog';
import { DatasetMemo } from '../memo';
import {
  activationRows,
  fullPrecisionOf,
  mmqDataset,
  mmqTensorDataset,
  mmqWeightBytes,
  type MmqDataset,
  type MmqInputs,
} from './mmq.data';
import { mmqQ4kRef, mmqQ8Ref } from './mmq.oracle';
import { buildMmqPlan, mmqAnalyticOwnership, OWNER_BUFFER } from './mmq.plan';
import { buildMmqKernel, type MmqSpec } from './mmq.wgsl';

export interface MmqPresetOptions {
  m: number;
  n: number;
  k: number;
  /** Used by 'mmq-q4k-tile' only; the other kernels have the reference's fixed tile. */
  tile?: TileParams;
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
    staging: p.staging,
    accumulator: p.accumulator,
    dims: p.dims === 'runtime' ? { kind: 'runtime' } : { kind: 'static', m: o.m, n: o.n, k: o.k },
    tails: p.tails,
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
 * An ownership accessor over the phases a spec has; the matrix fragment store's lane map is opaque,
 * so its analytic map is all count 0.
 */
export function ownershipAccessor(
  spec: MmqSpec,
  rows: number,
  cols: number,
  analytic: () => OwnershipMap,
): (phase: OwnershipPhase) => OwnershipMap {
  const phases = mmqPhases(spec);
  return (phase) => {
    if (!phases.includes(phase))
      throw new RangeError(`phase ${phase} does not occur in this kernel (${phases.join(', ')})`);
    return phase === 'fragment-store' ? emptyOwnership(rows, cols) : analytic();
  };
}

/** The oracle of a dataset's inputs: every row, or the rows listed (the gate of a large output samples). */
export function mmqOracle(inputs: MmqInputs, n: number, k: number, rows: number) {
  let full: Float32Array | undefined;
  return (rowList?: readonly number[]): Float32Array => {
    if (!rowList) {
      full ??=
        inputs.weights === 'q8_0' ? mmqQ8Ref(inputs.data, rows, n, k) : mmqQ4kRef(inputs.data, rows, n, k);
      return full;
    }
    const picked = activationRows(inputs, rowList, k);
    return picked.weights === 'q8_0'
      ? mmqQ8Ref(picked.data, rowList.length, n, k)
      : mmqQ4kRef(picked.data, rowList.length, n, k);
  };
}

/** Bit-exact: int8 sums are exact and the f32 epilogue runs in the oracle's order (no_fuse). */
const BIT_EXACT: Gate = { kind: 'bit-exact' };

/** The search's gate: exactness is checked on the winner's full output (the family's own gate) after it. */
export const INT8_TUNE_GATE: Gate = { kind: 'rel-to-max', tol: 1e-3 };

/** The tile kernel's tuning: (WM, WN, RM, RN) x the accelerated arms this adapter has. */
function tileSearch(catalog: FamilyCatalog) {
  return (base: RunConfig, caps: AdapterCaps): TuningSearch => {
    const runnable = catalog.arms.filter((a) => !a.unavailable(caps, base.params)).map((a) => a.arm);
    // The scalar arm is the portable reference, never the fastest where another runs.
    const arms = runnable.length > 1 ? runnable.filter((a) => a !== 'scalar') : runnable;
    const space = tileSpace([1, 2, 4]).param(
      'ARM',
      arms.map((_, i) => i),
    );
    const apply = (cfg: Config): RunConfig => ({
      ...base,
      arm: arms[space.get(cfg, 'ARM')]!,
      params: { ...base.params, ...tileFromSpace(space, cfg) },
    });
    const at = (tile: TileParams, arm: Arm) => space.config({ ...tileValues(tile), ARM: arms.indexOf(arm) })!;
    const incumbent = at(MMQ_BLK_TILE, arms.at(-1)!);
    return {
      space,
      apply,
      choiceOf(config) {
        const i = arms.indexOf(config.arm);
        return i < 0 ? undefined : space.config({ ...tileValues(tileOf(config.params)), ARM: i });
      },
      incumbent,
      seeds: arms.map((a) => at(MMQ_BLK_TILE, a)).filter((c) => space.name(c) !== space.name(incumbent)),
      gate: INT8_TUNE_GATE,
    };
  };
}

function denseFamily(catalog: FamilyCatalog): KernelFamily {
  const id = catalog.id as Exclude<MmqKernelId, 'mmq-q4k-id'>;
  const preset = MMQ_PRESETS[id];
  const memo = new DatasetMemo<MmqDataset>();
  const family: KernelFamily = {
    ...catalog,
    build(config: ResolvedConfig, caps: AdapterCaps, weight?: WeightOperand): BuiltProblem {
      assertNoProblems([...catalog.validate(config, caps), ...tensorProblems(catalog, config, weight)]);
      const [m, n, k] = ['m', 'n', 'k'].map((key) => intParam(config.params, key)) as [
        number,
        number,
        number,
      ];
      const spec = mmqPresetSpec(id, {
        m,
        n,
        k,
        tile: presetTile(preset, config.params),
        arm: config.arm,
        plane: config.plane,
      });
      const tensor = config.data.tensor;
      const dataset = () =>
        memo.get(JSON.stringify([preset.weights, m, n, k, config.data]), () =>
          config.data.source === 'tensor' && weight && tensor
            ? mmqTensorDataset(weight, m, tensor.activation, config.data.seed)
            : mmqDataset(preset.weights, m, n, k, config.data.source, config.data.seed),
        );
      const plan = buildMmqPlan(() => dataset().inputs, m, n, k, spec, { label: id });
      assertNoProblems(planLimitProblems(plan, caps.limits));
      const kernel = buildMmqKernel(spec);
      let oracle: ((rows?: readonly number[]) => Float32Array) | undefined;
      let analytic: OwnershipMap | undefined;
      return {
        config,
        plan,
        instrumentedPlan: () =>
          buildMmqPlan(() => dataset().inputs, m, n, k, spec, {
            label: `${id} (instrumented)`,
            instrument: true,
          }),
        ownerBuffer: OWNER_BUFFER,
        facts: {
          rows: m,
          cols: n,
          oracle: (rows) => (oracle ??= mmqOracle(dataset().inputs, n, k, m))(rows),
          fullPrecision: () => fullPrecisionOf(dataset(), n),
          gate: BIT_EXACT,
          phases: mmqPhases(spec),
          analyticOwnership: ownershipAccessor(
            spec,
            m,
            n,
            () => (analytic ??= mmqAnalyticOwnership(spec, m, n)),
          ),
          ops: 2 * m * n * k,
          weightBytes: mmqWeightBytes(spec.weights, n, k),
          outputTile: { rows: kernel.geometry.bm, cols: kernel.geometry.bn },
        },
      };
    },
  };
  if (catalog.tuning) family.search = tileSearch(catalog);
  return family;
}

/** The dense MMQ families, in the reference's order. */
export const mmqFamilies: KernelFamily[] = MMQ_CATALOGS.map(denseFamily);
