// The family skeleton. A family supplies what is its own -- its catalog (declarations), and per builder its
// spec, data, plan, oracle, phases and facts (FamilyParts) -- and defineFamily() does what every family
// did the same way: validate the config (the catalog's rules and the real tensor's shape) once, make the
// data once per problem (from a real tensor when the config names one), check the plan against the
// adapter's limits, memoize the oracle and the analytic ownership, and refuse a phase the kernel does
// not have.
import {
  assertNoProblems,
  tensorProblems,
  type BuiltProblem,
  type FamilyCatalog,
  type KernelFamily,
  type OwnershipPhase,
  type ProblemFacts,
  type ResolvedConfig,
  type RunConfig,
  type TensorChoice,
  type TuningSearch,
  type WeightOperand,
} from './family';
import type { AdapterCaps } from './gpu/caps';
import type { OwnershipMap } from './gpu/instrument';
import { planLimitProblems, type KernelPlan } from './gpu/plan';
import { DatasetMemo, once } from './memo';
import { selectRows } from './oracle';
import type { ElementPartials } from './partials';

/** The facts a family states itself; the skeleton adds the oracle, the phases and the ownership. */
export type FamilyFacts = Omit<ProblemFacts, 'oracle' | 'phases' | 'analyticOwnership' | 'partials'>;

/** Output values of an oracle (as the plan's output type). */
export type OracleValues = Float32Array | Int32Array;

/**
 * What a family (or one builder of it) supplies to the skeleton, as functions of its generator spec
 * `Spec` and its operands `Data`. Every function gets a validated config's spec.
 */
export interface FamilyParts<Spec, Data, Extras extends object = object> {
  /** The generator spec of a validated config on this adapter. */
  spec(config: ResolvedConfig, caps: AdapterCaps): Spec;
  /**
   * What the operands depend on besides the config's data choice (its shape, its weight format), as
   * JSON-able values: the configs of one problem share one dataset (a tuner builds hundreds of them).
   */
  dataKey(spec: Spec): unknown;
  /** The generated operands. */
  data(spec: Spec, config: ResolvedConfig): Data;
  /** The operands with a real tensor as the weight (tensorProblems has checked it fits the config). */
  tensorData?(spec: Spec, weight: WeightOperand, tensor: TensorChoice, seed: number): Data;
  /** The plan on lazily made operands; `instrument` records who stores each output element. */
  plan(spec: Spec, data: () => Data, opts: { instrument: boolean; caps: AdapterCaps }): KernelPlan;
  /** The debug buffer the instrumented plan records ownership into. */
  ownerBuffer: string;
  /** The exact CPU oracle of every output row (memoized by the skeleton). */
  oracle(spec: Spec, data: Data): OracleValues;
  /**
   * The k-block breakdown of output element (row, col), computed with the oracle's arithmetic (its last
   * running sum is the oracle's value): the error drill-down. Absent: the drill-down says so.
   */
  partials?(spec: Spec, data: Data, row: number, col: number): ElementPartials;
  /** The oracle of some rows where that is cheaper than all of them (else rows are taken from oracle()). */
  oracleRows?(spec: Spec, data: Data, rows: readonly number[]): OracleValues;
  /** The phases that own output elements. */
  phases(spec: Spec): readonly OwnershipPhase[];
  /** The analytic owner of each element in one of `phases(spec)` (memoized per phase). */
  ownership(spec: Spec, phase: OwnershipPhase): OwnershipMap;
  /** The shape, gate, cost and the rest of the facts. */
  facts(spec: Spec, data: () => Data): FamilyFacts;
  /** What the built problem exposes besides BuiltProblem (e.g. its spec and data, for tests). */
  expose?(spec: Spec, data: () => Data): Extras;
}

/**
 * How a family builds a validated config: the skeleton around its parts. (A family whose configs run on
 * different generators, as MoE's int8 and f16 routes do, has one builder for each.)
 */
export interface FamilyBuilder<B extends BuiltProblem = BuiltProblem> {
  /** Build a config that validate() and tensorProblems() have passed. */
  buildValid(config: ResolvedConfig, caps: AdapterCaps, weight?: WeightOperand): B;
}

/**
 * The skeleton around a family's parts: memoized data (a real tensor's when the config names one), the
 * plan checked against the adapter's limits, the memoized oracle and ownership, the phase guard.
 * @example const int8 = familyBuilder('moe-q4k-id', int8Parts({}));
 */
export function familyBuilder<Spec, Data, Extras extends object = object>(
  id: string,
  parts: FamilyParts<Spec, Data, Extras>,
): FamilyBuilder<BuiltProblem & Extras> {
  const memo = new DatasetMemo<Data>();
  return {
    buildValid(config, caps, weight) {
      const spec = parts.spec(config, caps);
      const tensor = config.data.source === 'tensor' ? config.data.tensor : undefined;
      const data = () =>
        memo.get(JSON.stringify([parts.dataKey(spec), config.data]), () =>
          tensor && weight && parts.tensorData
            ? parts.tensorData(spec, weight, tensor, config.data.seed)
            : parts.data(spec, config),
        );
      const plan = parts.plan(spec, data, { instrument: false, caps });
      assertNoProblems(planLimitProblems(plan, caps.limits));
      const stated = parts.facts(spec, data);
      const full = once(() => parts.oracle(spec, data()));
      const phases = [...parts.phases(spec)];
      const owners = new Map<OwnershipPhase, OwnershipMap>();
      const facts: ProblemFacts = {
        ...stated,
        oracle: (rows) =>
          !rows
            ? full()
            : parts.oracleRows
              ? parts.oracleRows(spec, data(), rows)
              : selectRows(full(), rows, stated.cols),
        ...(parts.partials
          ? { partials: (row: number, col: number) => parts.partials!(spec, data(), row, col) }
          : {}),
        phases,
        analyticOwnership(phase) {
          if (!phases.includes(phase))
            throw new RangeError(
              `phase '${phase}' does not occur in ${id} (${config.arm} arm): it stores its output in ${phases.join(', ')}`,
            );
          let map = owners.get(phase);
          if (!map) owners.set(phase, (map = parts.ownership(spec, phase)));
          return map;
        },
      };
      const built: BuiltProblem = {
        config,
        plan,
        instrumentedPlan: () => parts.plan(spec, data, { instrument: true, caps }),
        ownerBuffer: parts.ownerBuffer,
        facts,
      };
      return { ...built, ...(parts.expose?.(spec, data) ?? ({} as Extras)) };
    },
  };
}

/**
 * Every problem of a config for a family, as one ShapeError (its catalog's rules, then the real tensor's
 * fit); nothing when it can be built.
 * @example assertValid(moeCatalog, config, caps, weight); // before a builder's buildValid
 */
export function assertValid(
  catalog: FamilyCatalog,
  config: RunConfig,
  caps: AdapterCaps,
  weight?: WeightOperand,
): void {
  assertNoProblems([
    ...new Set([...catalog.validate(config, caps), ...tensorProblems(catalog, config, weight)]),
  ]);
}

/** What defineFamily() takes: the declarations, how a validated config is built, and the search. */
export interface FamilyDefinition<B extends BuiltProblem> {
  catalog: FamilyCatalog;
  /** The family's builder, or the builder of a config (a family whose configs run on different generators). */
  builder: FamilyBuilder<B> | ((config: ResolvedConfig) => FamilyBuilder<B>);
  /** Its tuning search: required exactly when the catalog declares `tuning`. */
  search?: (base: RunConfig, caps: AdapterCaps) => TuningSearch;
}

/** A family defined by defineFamily(): build() returns its builder's problem type. */
export type DefinedFamily<B extends BuiltProblem> = Omit<KernelFamily, 'build'> & {
  build(config: ResolvedConfig, caps: AdapterCaps, weight?: WeightOperand): B;
};

/**
 * A kernel family from its catalog and builder(s): build() validates once (ShapeError listing every
 * problem), then builds with the config's builder. Throws RangeError when `search` and the catalog's
 * `tuning` do not come together.
 * @example export const coopmatF16Family = defineFamily({ catalog: coopmatCatalog, builder: familyBuilder('coopmat-f16', parts), search });
 */
export function defineFamily<B extends BuiltProblem>(def: FamilyDefinition<B>): DefinedFamily<B> {
  const { catalog, builder, search } = def;
  if (!!catalog.tuning !== !!search)
    throw new RangeError(
      catalog.tuning
        ? `${catalog.id} declares tuning (${catalog.tuning.op}) but no search`
        : `${catalog.id} has a search but declares no tuning`,
    );
  return {
    ...catalog,
    build(config, caps, weight) {
      assertValid(catalog, config, caps, weight);
      return (typeof builder === 'function' ? builder(config) : builder).buildValid(config, caps, weight);
    },
    ...(search ? { search } : {}),
  };
}
