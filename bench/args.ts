// Command-line walking shared by the bench's scripts.

/**
 * Call `handle(flag, next)` for each flag of `argv` in order; `next()` consumes and returns the flag's
 * value, or throws "<flag> needs a value" at the end of the line.
 * @example eachFlag(['--json', 'out.json'], (f, next) => { if (f === '--json') json = next(); });
 */
export function eachFlag(argv: readonly string[], handle: (flag: string, next: () => string) => void): void {
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    handle(flag, () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    });
  }
}
