// The contract every kernel family implements. A family DECLARES what generic code needs to know -- its
// arms and why one is unavailable here, its controls (fields, labels, steps, ranges), its defaults, its
// validation and its tuning -- and generic code (the app, the worker, the tuner, the bench, the CLI)
// reads the declarations: outside a family's folder and the registries no code names a family.
//
// Two layers, so the app's main thread stays light:
//   FamilyCatalog  (<family>/catalog.ts): declarations and validation only, no generator, oracle or quant code;
//   KernelFamily   (<family>/index.ts): the catalog plus build(), which generates the plan and its oracle.
import type { Work } from './work';
import type { Gate } from './compare';
import type { AdapterCaps, Arm } from './gpu/caps';
import type { OwnershipMap } from './gpu/instrument';
import type { KernelPlan } from './gpu/plan';
import type { ElementPartials } from './partials';
import type { Config, Space } from './space';

export type { Arm } from './gpu/caps';

/** A family id ('mmq-q4k-rt', ...): the registries list them; generic code treats them as opaque. */
export type KernelId = string;

export type ParamValue = number | string;
/** A family's parameters, keyed by its controls' keys (shape, tile, staging, routing...). */
export type FamilyParams = Readonly<Record<string, ParamValue>>;

/**
 * Where a run's operands come from: 'reference' = the reference module's deterministic generators
 * (its xorshift streams, bit for bit); 'random' = f32 data put through ggml's quantizers, so the
 * unquantized tensors exist for the error split; 'synthetic' = fast random codes and scales in the
 * reference's ranges, for prefill-size shapes (quant/synthetic.ts); 'tensor' = a real model tensor as
 * the weight (DataChoice.tensor), with a generated activation quantized as ggml does.
 */
export type DataSource = 'reference' | 'random' | 'synthetic' | 'tensor';
export const DATA_SOURCES: readonly DataSource[] = ['reference', 'random', 'synthetic', 'tensor'];

/** A GGUF file as a config names it: enough to recognise the same file when it is picked again. */
export interface GgufFileRef {
  name: string;
  size: number;
  /** A hash of the file's header bytes (quant/gguf.ts headerHash). */
  headerHash: string;
}

/** A real model tensor as the weight operand: which file, which tensor, and the generated activation. */
export interface TensorChoice {
  file: GgufFileRef;
  tensor: string;
  /** The activation the tensor multiplies: N(0, 1), or N(0, 1) with a few outlier channels. */
  activation: 'normal' | 'outliers';
}

export interface DataChoice {
  source: DataSource;
  /** The data seed: 0 = the reference generator's own constant; otherwise another stream. */
  seed: number;
  /** Source 'tensor': the real tensor (Q8_0 / Q4_K) that is the weight; `seed` drives the activation. */
  tensor?: TensorChoice;
}

/**
 * A weight operand from outside the config (a real tensor, read by the worker or the CLI), in the
 * kernels' split layout: a Q8_0 or Q4_K matrix [n, k], or an expert bank [experts, n, k].
 */
export type WeightOperand = { n: number; k: number; experts: number; name: string } & (
  | { type: 'Q8_0'; weight: { q: Int8Array; d: Float32Array } }
  | { type: 'Q4_K'; weight: { qs: Uint32Array; scales: Uint32Array; d: Float32Array; dmin: Float32Array } }
);

/** Everything that determines a run; a permalink encodes it (plus edited WGSL). */
export interface RunConfig {
  kernel: KernelId;
  arm: Arm;
  /** Logical plane width to partition by; absent = the adapter's (resolveConfig). */
  plane?: number;
  data: DataChoice;
  params: FamilyParams;
}

/** A config whose plane is resolved against an adapter: what families build from. */
export interface ResolvedConfig extends RunConfig {
  plane: number;
}

/** An arm of a family and whether this adapter (and these params) can run it. */
export interface ArmDecl {
  arm: Arm;
  label: string;
  /** Why this arm cannot run here; undefined when it can. */
  unavailable(caps: AdapterCaps, params: FamilyParams): string | undefined;
}

interface ControlBase {
  /** The params key. */
  key: string;
  label: string;
  /** Where the controls show it. */
  group: 'shape' | 'tile' | 'route';
  /** One line on what it is (tooltips, the CLI's help). */
  hint?: string;
  /** Shown only when this holds for the current params (e.g. a staging's own knob). */
  visible?: (params: FamilyParams) => boolean;
  /**
   * A knob the tuner searches (the family's `tuning.knobs` places it in the space). Where it is hidden
   * (`visible` false) a searched config holds it at its first value.
   */
  tune?: KnobDecl;
}

/** How the tuner searches a control: a parameter of the tuning space (tune/knobs.ts derives it). */
export interface KnobDecl {
  /** The space parameter's name, which stored winners are named by (default: the key in capitals). */
  name?: string;
  /** An int control's values, first the one it rests at; a choice control searches its options by index. */
  values?: readonly number[];
}

/** A bound the search keeps to beyond the family's rules (e.g. at most 16 planes: more cannot win). */
export interface KnobConstraint {
  label: string;
  /** Whether a config's knob values (params keyed by control key) keep it. */
  holds(knobs: FamilyParams): boolean;
}

/** The arm's place among a family's knobs (TuningCatalog.knobs): the space parameter ARM. */
export const ARM_KNOB = 'arm';

export interface IntControl extends ControlBase {
  kind: 'int';
  min: number;
  max: number;
  /** The value's valid step at these params (k by the quant block, m/n by the tile where required). */
  step(params: FamilyParams): number;
}

export interface ChoiceControl extends ControlBase {
  kind: 'choice';
  options: readonly { value: string; label: string }[];
  /**
   * Absent means the family's default: a control added after configs were stored and linked (their
   * params do not have it) leaves them valid.
   */
  optional?: boolean;
}

export type ControlDecl = IntControl | ChoiceControl;

/** The output block one workgroup computes: rows x cols of the output, over `planes` planes. */
export interface OutputBlock {
  rows: number;
  cols: number;
  planes: number;
}

/**
 * A family whose tile is a knob declares it: generic code (the app's tile summary, the tuner's charts,
 * `mmq run --tile`) reads this instead of guessing a tile from param keys.
 */
export interface TileDecl {
  /** The int controls that make the tile, in the order `--tile` and tables write them. */
  keys: readonly string[];
  /** The block one workgroup computes at these params; undefined where no tile is in play (or a knob is not a whole number). */
  block(params: FamilyParams): OutputBlock | undefined;
}

/**
 * The tuning a family offers: what the app lists, and the search space's declaration. The space's
 * parameters are the controls that declare `tune` plus the arm (tune/knobs.ts); its configs are those
 * the family's own rules (validate) accept and `constraints` keep.
 */
export interface TuningCatalog {
  /** Cache key of its winners (the reference module's op name, e.g. 'mmq_q4k_tile'). */
  op: string;
  label: string;
  /**
   * The searched knobs in the space's order (the order names its configs: keep it): keys of controls
   * that declare `tune`, and ARM_KNOB for the arm.
   */
  knobs: readonly string[];
  /** Bounds the search keeps to beyond the family's rules. */
  constraints?: readonly KnobConstraint[];
  /**
   * Choice knobs whose value decides which arms run (MoE's route): the space's arms are then every arm
   * that runs here for one of their values, each config held to the fast arms of its own. Absent: the
   * fast arms of the base config.
   */
  armsFollow?: readonly string[];
}

/**
 * A conformance shape: the hardware tier (`npm run test:gpu`, test/hw/tier.ts) runs it on every arm the
 * family declares and every value of every choice control, and compares the FULL output with the
 * family's gate. `params` are merged over the family's defaults; the tier sets the choice params itself.
 */
export interface ConformanceCheck {
  /** What the shape exercises, e.g. 'm and n tails, a 4 x 5 grid'. */
  label: string;
  params: FamilyParams;
  /** Only with these values of choice controls (e.g. split-K exists on the split stagings alone). */
  choices?: Readonly<Record<string, readonly string[]>>;
}

/**
 * Whether a check runs with these choice-control values (its `choices` allow each of them).
 * @example checkApplies({ label: 'split-K', params: {}, choices: { staging: ['prepass'] } }, { staging: 'one-pass' }) // false
 */
export function checkApplies(check: ConformanceCheck, choice: Readonly<Record<string, string>>): boolean {
  return Object.entries(check.choices ?? {}).every(([key, values]) => values.includes(choice[key] ?? ''));
}

/** What a family declares: the app's main thread imports only these (see catalog.ts). */
export interface FamilyCatalog {
  id: KernelId;
  title: string;
  /** One line on what it computes and which reference kernel it twins. */
  summary: string;
  /** The reference module's name for it. */
  reference: string;
  /** What its operations are, for the throughput unit: int8 TOPS or f16 TFLOP/s. */
  arithmetic: 'int8' | 'f16';
  arms: readonly ArmDecl[];
  controls: readonly ControlDecl[];
  defaults: FamilyParams;
  /**
   * A small shape (params over the defaults) that runs in a second or two on every arm, even on a CPU
   * adapter: what the app's end-to-end walks and the worker's Dawn tests run of each family.
   */
  small: Readonly<Record<string, number>>;
  /**
   * Why this config cannot run (one message per problem, in the user's terms); caps absent = only what
   * is wrong on any adapter. Resource limits are checked from the generated plan (planLimitProblems).
   */
  validate(config: RunConfig, caps?: AdapterCaps): string[];
  tuning?: TuningCatalog;
  /** Its tile, where the tile is a knob (TileDecl). */
  tile?: TileDecl;
  /**
   * The real-tensor weights (and model GEMM shapes) it takes: the format, whether an expert bank
   * ([k, n, experts]), and the param that counts activation rows (`m`, or `tokens` for a routed GEMM).
   * Its params `n` and `k` (and `experts` for a bank) then come from the tensor's shape.
   */
  takes?: { format: 'Q8_0' | 'Q4_K'; bank: boolean; rows: string };
  /** What a config moves and computes (run estimates); absent: a fixed-size demo. */
  work?: (params: FamilyParams) => Work;
  /**
   * Shapes the hardware tier runs on every arm x every choice value (ConformanceCheck). Together they
   * should hold a multi-workgroup grid and, where the kernel has tail guards, an m/n tail; they must
   * validate on any adapter that offers the arm (test/hw/checks.test.ts holds them to it). Plain data:
   * the app's main thread imports it.
   */
  checks?: readonly ConformanceCheck[];
  /** A config's knobs in a few characters, for tables and row ids (default: knobLabel's generic form). */
  knobLabel?: (params: FamilyParams) => string;
}

/**
 * A config's knobs (the visible 'tile' controls) as tables print them: the family's own label, else the
 * values joined, e.g. "2,4,1,1" or "8,1,2,8,fused-prepass"; "-" when it has none.
 * @example knobLabel(CATALOG.get('coopmat-f16'), config.params)
 */
export function knobLabel(
  family: Pick<FamilyCatalog, 'controls' | 'knobLabel'>,
  params: FamilyParams,
): string {
  if (family.knobLabel) return family.knobLabel(params);
  const parts = family.controls
    .filter((c) => c.group === 'tile' && (c.visible?.(params) ?? true))
    .map((c) => String(params[c.key]));
  return parts.join(',') || '-';
}

/** A phase of a kernel that assigns output elements to lanes (for the ownership view). */
export type OwnershipPhase = 'fragment-store' | 'scalar-epilogue' | 'register-accumulator';

/** What a built problem knows besides its plan: oracle, gate, ownership, cost. */
export interface ProblemFacts {
  /** Logical output [rows, cols] (m x n; slots x n for MoE). */
  rows: number;
  cols: number;
  /** The exact CPU oracle of output rows `rowList` ([rowList.length, cols]), or of every row. */
  oracle(rowList?: readonly number[]): Float32Array | Int32Array;
  /** f32 GEMM on the dequantized weight and the unquantized activation (the error split's reference). */
  fullPrecision?(): Float32Array;
  /**
   * The gate the output also meets against fullPrecision(), where the family has one (the f16 twin: its
   * reference's rel_to_max < 5e-2); absent where quantization error is what fullPrecision() shows.
   */
  fullPrecisionGate?: Gate;
  /** The family's own gate against the oracle (bit-exact for the int8 kernels). */
  gate: Gate;
  /** Phases that own output elements, and the analytic owner of each element per phase. */
  phases: OwnershipPhase[];
  analyticOwnership(phase: OwnershipPhase): OwnershipMap;
  /**
   * The k-block breakdown of output element (row, col) from the oracle's own arithmetic (the error
   * drill-down); absent where the family does not break its sum down.
   */
  partials?(row: number, col: number): ElementPartials;
  /** Multiply-adds x 2 the op performs (2mnk): throughput = ops / time. */
  ops: number;
  /** Bytes of weight the op reads once (for GB/s). */
  weightBytes: number;
  /** The output tile one workgroup covers, when the grid tiles the output (views hatch the tail). */
  outputTile?: { rows: number; cols: number };
  /** The arithmetic of this config when a family has routes of both kinds (else the family's). */
  arithmetic?: 'int8' | 'f16';
  /**
   * Configs of one problem whose inputs and oracle are the same share a key (a family with routes on
   * different operands gives each route its own): a tuning session uploads and checks once per key.
   */
  dataKey?: string;
}

export interface BuiltProblem {
  config: ResolvedConfig;
  plan: KernelPlan;
  /** The same plan with the ownership-recording suffix and its debug buffer (`ownerBuffer`). */
  instrumentedPlan(): KernelPlan;
  ownerBuffer: string;
  facts: ProblemFacts;
}

/** A tuning search over one base config (its shape and data fixed; see KernelFamily.search). */
export interface TuningSearch {
  /** The parameters searched (integers; a choice is an index into its options). */
  space: Space;
  /** The config a choice stands for. */
  apply(choice: Config): RunConfig;
  /** The choice of a config (undefined when it is not in the space). */
  choiceOf(config: RunConfig): Config | undefined;
  /** The config the winner is compared with: the family's default on this adapter. */
  incumbent: Config;
  /** Generation 0 after the incumbent: configs that won some shape class before. */
  seeds: readonly Config[];
  /** The search's gate against the (sampled) oracle; the winner is then held to the family's own gate. */
  gate: Gate;
}

export interface KernelFamily extends FamilyCatalog {
  /**
   * Validate (ShapeError listing every problem) and build the plan, the oracle and the facts. A config
   * whose data names a tensor needs that tensor as `weight` (the worker reads it from the file).
   */
  build(config: ResolvedConfig, caps: AdapterCaps, weight?: WeightOperand): BuiltProblem;
  /** A family that declares `tuning`: its search over `base`'s problem on this adapter. */
  search?(base: RunConfig, caps: AdapterCaps): TuningSearch;
}

/** A config that breaks a kernel's preconditions, rejected before any dispatch. */
export class ShapeError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'ShapeError';
  }
}

/**
 * Throw ShapeError with every problem, joined, when the list is non-empty (before any dispatch).
 * @example assertNoProblems(family.validate(config, caps))
 */
export function assertNoProblems(problems: readonly string[]): void {
  if (problems.length) throw new ShapeError(problems.join('; '));
}

/**
 * `name = v must be a positive integer` for every entry that is not one (Number.isSafeInteger: the
 * values size host allocations).
 * @example positiveIntegerProblems({ m: 0, n: 16 }) // ['m = 0 must be a positive integer']
 */
export function positiveIntegerProblems(values: Readonly<Record<string, number>>): string[] {
  return Object.entries(values)
    .filter(([, v]) => !Number.isSafeInteger(v) || v < 1)
    .map(([name, v]) => `${name} = ${v} must be a positive integer`);
}

/**
 * Problems of a config's params against its controls: each present, integers in range, choices known.
 * A family's own validate() adds its rules after these.
 * @example controlProblems(catalog.controls, { m: 0, n: 64, k: 256 }) // ['m = 0 must be at least 1']
 */
export function controlProblems(controls: readonly ControlDecl[], params: FamilyParams): string[] {
  const out: string[] = [];
  for (const c of controls) {
    const v = params[c.key];
    if (c.kind === 'int') {
      if (typeof v !== 'number' || !Number.isFinite(v)) out.push(`${c.label} is missing`);
      else if (!Number.isInteger(v)) out.push(`${c.label} = ${v} must be a whole number`);
      else if (v < c.min) out.push(`${c.label} = ${v} must be at least ${c.min}`);
      else if (v > c.max) out.push(`${c.label} = ${v} must be at most ${c.max}`);
    } else if (v === undefined && c.optional) {
      continue;
    } else if (typeof v !== 'string' || !c.options.some((o) => o.value === v)) {
      out.push(`${c.label} '${String(v)}' is not one of ${c.options.map((o) => o.value).join(', ')}`);
    }
  }
  return out;
}

/**
 * Why a config's data choice is invalid for a family: the source and seed, and a tensor the family does
 * not take (what only the file knows -- format, shape -- is tensorProblems'). Empty = fine.
 * @example dataProblems({ source: 'random', seed: -1 }) // ['data seed -1 must be a whole number >= 0']
 */
export function dataProblems(data: DataChoice, family?: Pick<FamilyCatalog, 'title' | 'takes'>): string[] {
  const p: string[] = [];
  if (!DATA_SOURCES.includes(data.source)) p.push(`unknown data source '${String(data.source)}'`);
  if (!Number.isSafeInteger(data.seed) || data.seed < 0)
    p.push(`data seed ${data.seed} must be a whole number >= 0`);
  if (data.source === 'tensor' && !data.tensor) p.push('no model tensor is chosen');
  if (data.source === 'tensor' && family && !family.takes)
    p.push(`${family.title} runs on generated data only, not on a model tensor`);
  return p;
}

/**
 * Why a family cannot take the config's tensor: a family that takes no real weights, another format, a
 * bank where a matrix is taken (or the reverse), or n / k / experts that differ from the tensor's.
 * `tensor` is the tensor's shape as its file lists it (the catalog cannot read files). Empty = fine.
 * @example tensorProblems(catalog, config, { type: 'Q4_K', n: 10, k: 512, experts: 1 })
 */
export function tensorProblems(
  family: Pick<FamilyCatalog, 'title' | 'takes'>,
  config: RunConfig,
  tensor: { type: string; n: number; k: number; experts: number } | undefined,
): string[] {
  const t = config.data.source === 'tensor' ? config.data.tensor : undefined;
  if (!t) return [];
  const takes = family.takes;
  if (!takes) return [`${family.title} runs on generated data only, not on a model tensor`];
  if (!tensor) return [`tensor ${t.tensor} is not open (pick the file ${t.file.name} again)`];
  if (tensor.type !== takes.format)
    return [`${t.tensor} is ${tensor.type}; ${family.title} takes ${takes.format} weights`];
  if (!takes.bank && tensor.experts > 1)
    return [`${t.tensor} is an expert bank of ${tensor.experts}; ${family.title} takes one matrix`];
  const want: [string, number][] = [
    ['n', tensor.n],
    ['k', tensor.k],
    ...(takes.bank ? ([['experts', tensor.experts]] as [string, number][]) : []),
  ];
  return want
    .filter(([key, v]) => config.params[key] !== v)
    .map(([key, v]) => `${key} = ${String(config.params[key])} but the tensor ${t.tensor} has ${key} = ${v}`);
}

/**
 * An integer param of a validated config (validate() has checked it is one).
 * @example const m = intParam(config.params, 'm');
 */
export function intParam(params: FamilyParams, key: string): number {
  const v = params[key];
  if (typeof v !== 'number') throw new ShapeError(`${key} is missing`);
  return v;
}

/**
 * A choice param of a validated config.
 * @example const staging = choiceParam(config.params, 'staging', STAGINGS);
 */
export function choiceParam<T extends string>(params: FamilyParams, key: string, values: readonly T[]): T {
  const v = params[key];
  if (typeof v !== 'string' || !values.includes(v as T))
    throw new ShapeError(`${key} '${String(v)}' is unknown`);
  return v as T;
}
