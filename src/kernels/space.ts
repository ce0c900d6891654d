// A tuning search space: named integer parameters, each with a finite list of values, plus
// device-independent feasibility constraints (the seed's `tune::Space`). A point of the space is a
// `Config`, the chosen value of every parameter in declaration order. Configs have a canonical name
// ("WM=2,WN=4,RM=1,RN=1") that is the cache key of a tuned winner, so `name` and `parse` round-trip.

/** One point of a Space: the value of each parameter, in the Space's declaration order. */
export type Config = readonly number[];

export interface SpaceParam {
  readonly name: string;
  readonly values: readonly number[];
  /**
   * The value a name without this parameter parses to: a parameter added to a space after winners were
   * stored under names without it (their configs ran at this value). Absent: the parameter is required.
   */
  readonly absent?: number;
}

/** A feasibility predicate over a config; `label` is what a violation reports. */
export interface SpaceConstraint {
  readonly label: string;
  readonly test: (cfg: Config, space: Space) => boolean;
}

const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INTEGER = /^-?\d+$/;

/**
 * An immutable search space built with `param` and `constraint` (each returns a new Space).
 * @example
 * const s = new Space().param('WM', [1, 2]).param('WN', [1, 2]).constraint((c, s) => s.get(c, 'WM') <= s.get(c, 'WN'), 'WM <= WN');
 * s.enumerate().map((c) => s.name(c)); // ['WM=1,WN=1', 'WM=1,WN=2', 'WM=2,WN=2']
 */
export class Space {
  readonly params: readonly SpaceParam[];
  readonly constraints: readonly SpaceConstraint[];

  constructor(params: readonly SpaceParam[] = [], constraints: readonly SpaceConstraint[] = []) {
    this.params = params;
    this.constraints = constraints;
  }

  /**
   * Add a parameter. Names are identifiers, unique; values are distinct integers (at least one).
   * `absent`: the value a name without it parses to (a parameter added after names were stored).
   */
  param(name: string, values: readonly number[], opts: { absent?: number } = {}): Space {
    if (!PARAM_NAME.test(name)) throw new RangeError(`parameter name "${name}" is not an identifier`);
    if (this.params.some((p) => p.name === name)) throw new RangeError(`parameter ${name} is declared twice`);
    if (values.length === 0) throw new RangeError(`parameter ${name} has no values`);
    if (!values.every((v) => Number.isSafeInteger(v)))
      throw new RangeError(`parameter ${name}: values must be integers`);
    if (new Set(values).size !== values.length) throw new RangeError(`parameter ${name} lists a value twice`);
    if (opts.absent !== undefined && !values.includes(opts.absent))
      throw new RangeError(`parameter ${name}: its absent value ${opts.absent} is not one of its values`);
    const param = {
      name,
      values: [...values],
      ...(opts.absent !== undefined ? { absent: opts.absent } : {}),
    };
    return new Space([...this.params, param], this.constraints);
  }

  /** Add a feasibility constraint (the label names it in `violations`). */
  constraint(
    test: (cfg: Config, space: Space) => boolean,
    label = `constraint ${this.constraints.length + 1}`,
  ): Space {
    return new Space(this.params, [...this.constraints, { label, test }]);
  }

  /** Index of a parameter; throws on an unknown name (a programming error, not bad input). */
  indexOf(name: string): number {
    const i = this.params.findIndex((p) => p.name === name);
    if (i < 0)
      throw new RangeError(
        `unknown parameter ${name} (space has ${this.params.map((p) => p.name).join(', ')})`,
      );
    return i;
  }

  /** The value of parameter `name` in `cfg`. */
  get(cfg: Config, name: string): number {
    const v = cfg[this.indexOf(name)];
    if (v === undefined)
      throw new RangeError(`config has ${cfg.length} values, space has ${this.params.length}`);
    return v;
  }

  /** Number of points of the full cartesian product (feasible or not). */
  get size(): number {
    return this.params.reduce((n, p) => n * p.values.length, 1);
  }

  /** Whether `cfg` has one listed value per parameter (constraints not checked). */
  wellFormed(cfg: Config): boolean {
    return cfg.length === this.params.length && this.params.every((p, i) => p.values.includes(cfg[i]!));
  }

  /** Labels of the constraints `cfg` violates (empty when feasible); malformed configs report that. */
  violations(cfg: Config): string[] {
    if (!this.wellFormed(cfg)) return ['not a point of the space'];
    return this.constraints.filter((c) => !c.test(cfg, this)).map((c) => c.label);
  }

  /** Well-formed and every constraint holds. */
  feasible(cfg: Config): boolean {
    return this.wellFormed(cfg) && this.constraints.every((c) => c.test(cfg, this));
  }

  /** Every feasible config, in lexicographic order of value indices (first parameter slowest). */
  enumerate(): Config[] {
    const out: Config[] = [];
    const idx = this.params.map(() => 0);
    if (this.params.length === 0) return out;
    for (;;) {
      const cfg = this.params.map((p, i) => p.values[idx[i]!]!);
      if (this.feasible(cfg)) out.push(cfg);
      let d = this.params.length - 1;
      while (d >= 0 && ++idx[d]! === this.params[d]!.values.length) idx[d--] = 0;
      if (d < 0) return out;
    }
  }

  /** Canonical name, e.g. "WM=2,WN=4,RM=1,RN=1". */
  name(cfg: Config): string {
    if (!this.wellFormed(cfg)) throw new RangeError(`[${cfg.join(', ')}] is not a point of this space`);
    return this.params.map((p, i) => `${p.name}=${cfg[i]}`).join(',');
  }

  /**
   * Parse a config name. Every parameter must appear exactly once (any order, spaces around tokens
   * allowed) with one of its listed values, or be missing and have an `absent` value; anything else --
   * unknown or missing parameter, duplicate, non-integer, unlisted value -- is undefined. Feasibility
   * is not checked (see `feasible`).
   */
  parse(name: string): Config | undefined {
    const cfg: (number | undefined)[] = this.params.map(() => undefined);
    const parts = name.split(',');
    if (parts.length > this.params.length) return undefined;
    for (const part of parts) {
      const eq = part.indexOf('=');
      if (eq < 0) return undefined;
      const key = part.slice(0, eq).trim();
      const raw = part.slice(eq + 1).trim();
      const i = this.params.findIndex((p) => p.name === key);
      if (i < 0 || cfg[i] !== undefined || !INTEGER.test(raw)) return undefined;
      const v = Number(raw);
      if (!this.params[i]!.values.includes(v)) return undefined;
      cfg[i] = v;
    }
    this.params.forEach((p, i) => (cfg[i] ??= p.absent));
    return cfg.every((v) => v !== undefined) ? (cfg as number[]) : undefined;
  }

  /** Build a config from named values; undefined when a parameter is missing or a value unlisted. */
  config(values: Readonly<Record<string, number>>): Config | undefined {
    const cfg = this.params.map((p) => values[p.name]);
    if (Object.keys(values).length !== this.params.length) return undefined;
    if (!cfg.every((v, i) => v !== undefined && this.params[i]!.values.includes(v))) return undefined;
    return cfg as number[];
  }

  /** The config as a name -> value record. */
  record(cfg: Config): Record<string, number> {
    return Object.fromEntries(this.params.map((p, i) => [p.name, cfg[i]!]));
  }
}
