// Strict argument parsing for the mmq subcommands: every flag declared, numbers whole or refused,
// and one CliError line for anything else.

/**
 * mmq's exit statuses: a script tells a kernel that is wrong (1) from a command that was wrong (2) and a
 * machine that could not run it (3).
 */
export const EXIT = {
  ok: 0,
  /** `run`: the kernel's output differs from the oracle. */
  differs: 1,
  /** Bad usage or bad input: a flag, a shape, a file that is missing, not a GGUF, too large. */
  input: 2,
  /** This machine cannot run it: no WebGPU adapter, or the GPU/driver refused (compile, unsupported). */
  machine: 3,
  /** A bug in mmq (the message keeps its stack). */
  internal: 70,
} as const;

/** One line for the usage text: what each exit status means. */
export const EXIT_LEGEND =
  'exit status: 0 ok; 1 the kernel differs from the oracle; 2 bad usage or input (or estimated past 5 s without --yes); 3 this machine cannot run it (no WebGPU adapter, driver error); 70 internal error';

/** An expected failure: printed as one `mmq: ...` line, never with a stack. Bad usage or input exits 2. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: (typeof EXIT)['input' | 'machine' | 'internal'] = EXIT.input,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Flags a subcommand takes: `value` flags carry an argument (`--k 256` or `--k=256`), `boolean` ones do not. */
export interface FlagSpec {
  value?: readonly string[];
  boolean?: readonly string[];
}

export interface ParsedArgs {
  values: Map<string, string>;
  booleans: Set<string>;
  positionals: string[];
}

/**
 * Split `args` into declared flags and positionals. Unknown flags, missing values and repeats are usage
 * errors; `--` ends the flags.
 * @example parseArgs('quantize', ['--k', '256', 'in.f32'], { value: ['--k'] }).values.get('--k') === '256'
 */
export function parseArgs(cmd: string, args: readonly string[], spec: FlagSpec): ParsedArgs {
  const values = new Map<string, string>();
  const booleans = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const flag = eq > 0 ? a.slice(0, eq) : a;
    if (spec.boolean?.includes(flag)) {
      if (eq > 0) throw new CliError(`mmq ${cmd}: ${flag} takes no value`, 2);
      if (booleans.has(flag)) throw new CliError(`mmq ${cmd}: ${flag} given twice`, 2);
      booleans.add(flag);
    } else if (spec.value?.includes(flag)) {
      const v = eq > 0 ? a.slice(eq + 1) : args[++i];
      if (v === undefined) throw new CliError(`mmq ${cmd}: ${flag} needs a value`);
      if (values.has(flag)) throw new CliError(`mmq ${cmd}: ${flag} given twice`);
      values.set(flag, v);
    } else {
      throw new CliError(`mmq ${cmd}: unknown flag ${flag}`);
    }
  }
  return { values, booleans, positionals };
}

/**
 * A positive whole number written in plain decimal digits: '12x', '3.5', '1e3', '0x10', '' and 0 are refused.
 * @example positiveInt('quantize', '--rows', '16') === 16
 */
export function positiveInt(cmd: string, flag: string, text: string): number {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new CliError(`mmq ${cmd}: ${flag} must be a positive whole number, got '${text}'`);
  }
  return n;
}

/** The whole numbers a flag takes, both ends included. */
export interface IntRange {
  min: number;
  max: number;
}

/**
 * The range of every numeric flag that is not a shape (shapes are held to their family's controls): wide
 * enough for any real use, narrow enough that a typo cannot ask for days of work.
 */
export const FLAG_RANGES = {
  /** A data or search seed. */
  seed: { min: 0, max: 2 ** 32 - 1 },
  /** ms each timed batch aims at (run --target-ms, tune --measure-ms). */
  batchMs: { min: 1, max: 10_000 },
  /** Timed batches of one run. */
  batches: { min: 1, max: 1000 },
  /** Timed batches of each config a hunt measures. */
  huntBatches: { min: 1, max: 100 },
  population: { min: 1, max: 256 },
  generations: { min: 1, max: 100 },
  /** Weight banks a hunt rotates through (cold-cache timing). */
  banks: { min: 1, max: 64 },
} as const satisfies Record<string, IntRange>;

/** A range as usage text writes it: `1..1000`. */
export const rangeText = (r: IntRange) => `${r.min}..${r.max}`;

/**
 * A whole number in plain decimal digits inside `range`, else one CliError line naming the range.
 * @example intInRange('run', '--batches', '6', FLAG_RANGES.batches) === 6
 */
export function intInRange(cmd: string, flag: string, text: string, range: IntRange): number {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < range.min || n > range.max) {
    throw new CliError(
      `mmq ${cmd}: ${flag} must be a whole number from ${range.min} to ${range.max}, got '${text}'`,
    );
  }
  return n;
}
