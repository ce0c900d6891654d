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
  'exit status: 0 ok; 1 the kernel differs from the oracle; 2 bad usage or input; 3 this machine cannot run it (no WebGPU adapter, driver error); 70 internal error';

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
