// A family's tuning space derived from its declarations (family.ts): the controls that declare `tune`
// are the space's parameters, in the order its `tuning.knobs` gives, with the arm among them; a config
// is in the space when the family's own rules accept it (validate, adapter aside), the search's bounds
// keep it, its arm runs fast here and every hidden knob rests at its first value. apply and choiceOf
// read the same declarations, so a knob is declared once, where the app draws it.
import {
  ARM_KNOB,
  type ChoiceControl,
  type ControlDecl,
  type FamilyCatalog,
  type FamilyParams,
  type ParamValue,
  type RunConfig,
} from '../family';
import { fastArms } from '../arms';
import type { AdapterCaps, Arm } from '../gpu/caps';
import { Space, type Config } from '../space';

/** A searched control and how its space parameter reads. */
interface Knob {
  control: ControlDecl;
  name: string;
  /** The space values: an int control's own, a choice control's option indices. */
  values: readonly number[];
  /** The param value of a space value. */
  param(v: number): ParamValue;
  /** The space value of a param value; undefined when it has none. */
  value(p: ParamValue | undefined): number | undefined;
}

function knobOf(control: ControlDecl, defaults: FamilyParams): Knob {
  const name = control.tune?.name ?? control.key.toUpperCase();
  if (control.kind === 'int') {
    const values = control.tune?.values;
    if (!values?.length) throw new RangeError(`the searched int control ${control.key} lists no values`);
    return {
      control,
      name,
      values,
      param: (v) => v,
      value: (p) => (typeof p === 'number' && values.includes(p) ? p : undefined),
    };
  }
  const options = (control as ChoiceControl).options;
  const index = (p: ParamValue | undefined) => {
    const i = options.findIndex((o) => o.value === p);
    return i < 0 ? undefined : i;
  };
  return {
    control,
    name,
    values: options.map((_, i) => i),
    param: (v) => options[v]!.value,
    // A control added after configs were stored: its absence means the family's default.
    value: (p) => index(p === undefined && control.optional ? defaults[control.key] : p),
  };
}

/** A family's search space over one base config, and its configs read both ways. */
export interface KnobSearch {
  space: Space;
  /** The arms the space's ARM indexes. */
  arms: readonly Arm[];
  apply(cfg: Config): RunConfig;
  /** The space point of a config; undefined when it has none, or it is not feasible. */
  choiceOf(config: RunConfig): Config | undefined;
  /**
   * The point of these knob values (control keys, and `arm`; a knob left out at its first value, the arm
   * at the fastest); undefined when a value is not one of the space's (feasibility not checked).
   * @example search.at({ wm: 2, wn: 4, rm: 1, rn: 1, staging: 'prepass' })
   */
  at(values: Readonly<Record<string, ParamValue>>): Config | undefined;
}

/**
 * The tuning space a family declares (FamilyCatalog.tuning and its controls' `tune`) over `base`'s
 * problem on this adapter. Throws RangeError when the declarations disagree.
 * @example const { space, apply, choiceOf, at } = knobSearch(coopmatCatalog, base, caps);
 */
export function knobSearch(catalog: FamilyCatalog, base: RunConfig, caps: AdapterCaps): KnobSearch {
  const tuning = catalog.tuning;
  if (!tuning) throw new RangeError(`${catalog.id} declares no tuning`);
  const controls = new Map(catalog.controls.map((c) => [c.key, c]));
  const searched = catalog.controls.filter((c) => c.tune).map((c) => c.key);
  const listed = tuning.knobs.filter((k) => k !== ARM_KNOB);
  const unlisted = [
    ...searched.filter((k) => !listed.includes(k)),
    ...listed.filter((k) => !searched.includes(k)),
  ];
  if (unlisted.length)
    throw new RangeError(
      `${catalog.id}: tuning.knobs (${tuning.knobs.join(', ')}) must list exactly the controls that declare tune (${searched.join(', ')})`,
    );
  const knobs = listed.map((key) => knobOf(controls.get(key)!, catalog.defaults));
  const follow = (tuning.armsFollow ?? []).map((key) => knobs.find((k) => k.control.key === key)!);
  // The arms: the base's own where the arm is not searched; else the base's fast arms, or where a knob
  // decides which arms run, every arm that runs here for one of its values (each config then held to its
  // own fast arms).
  const searchesArm = tuning.knobs.includes(ARM_KNOB);
  const runnable = (params: FamilyParams) =>
    catalog.arms.filter((a) => !a.unavailable(caps, params)).map((a) => a.arm);
  const arms = !searchesArm
    ? [base.arm]
    : follow.length
      ? [
          ...new Set(
            follow.flatMap((k) =>
              k.values.flatMap((v) => runnable({ ...base.params, [k.control.key]: k.param(v) })),
            ),
          ),
        ]
      : fastArms(catalog, caps, base.params);

  let space = new Space();
  for (const key of tuning.knobs) {
    if (key === ARM_KNOB) {
      space = space.param(
        'ARM',
        arms.map((_, i) => i),
      );
      continue;
    }
    const k = knobs.find((n) => n.control.key === key)!;
    const absent = k.control.kind === 'choice' && k.control.optional ? k.value(undefined) : undefined;
    space = space.param(k.name, k.values, absent !== undefined ? { absent } : {});
  }
  /** The params every knob of `cfg` sets. */
  const knobParams = (cfg: Config): FamilyParams =>
    Object.fromEntries(knobs.map((k) => [k.control.key, k.param(space.get(cfg, k.name))]));
  const armOf = (cfg: Config) => (searchesArm ? arms[space.get(cfg, 'ARM')]! : base.arm);
  const apply = (cfg: Config): RunConfig => ({
    ...base,
    arm: armOf(cfg),
    params: { ...base.params, ...knobParams(cfg) },
  });
  const hidden = (k: Knob, params: FamilyParams) => !(k.control.visible?.(params) ?? true);
  for (const c of tuning.constraints ?? [])
    space = space.constraint((cfg) => c.holds(knobParams(cfg)), c.label);
  if (follow.length)
    space = space.constraint(
      (cfg) => fastArms(catalog, caps, apply(cfg).params).includes(armOf(cfg)),
      `an arm of the ${follow.map((k) => k.control.label).join(' and ')}, here`,
    );
  space = space
    .constraint((cfg) => {
      const params = apply(cfg).params;
      return knobs.every((k) => !hidden(k, params) || space.get(cfg, k.name) === k.values[0]);
    }, 'a hidden knob rests at its first value')
    .constraint((cfg) => {
      // The family's own rules on any adapter: the adapter's are checked from the plan when it runs.
      const { plane: _plane, ...config } = apply(cfg);
      return catalog.validate(config).length === 0;
    }, `the rules of ${catalog.id}`);

  /** The point of each knob's space value and the arm's; undefined where one has none. */
  const point = (value: (k: Knob) => number | undefined, arm: Arm): Config | undefined => {
    if (!arms.includes(arm)) return undefined;
    const named: Record<string, number> = searchesArm ? { ARM: arms.indexOf(arm) } : {};
    for (const k of knobs) {
      const v = value(k);
      if (v === undefined) return undefined;
      named[k.name] = v;
    }
    return space.config(named);
  };
  return {
    space,
    arms,
    apply,
    at: (values) =>
      point(
        (k) => (values[k.control.key] === undefined ? k.values[0] : k.value(values[k.control.key])),
        (values[ARM_KNOB] as Arm | undefined) ?? arms.at(-1)!,
      ),
    choiceOf(config) {
      // A hidden knob is read at its resting value, whatever the params hold.
      const cfg = point(
        (k) => (hidden(k, config.params) ? k.values[0] : k.value(config.params[k.control.key])),
        config.arm,
      );
      return cfg && space.feasible(cfg) ? cfg : undefined;
    },
  };
}
