// The shape of an mmq subcommand; cli/mmq.ts keeps the table of them.
import { CliError } from './args';

/** Where a subcommand writes (the tests capture it). */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export interface Subcommand {
  name: string;
  /** One usage line. */
  usage: string;
  /** What it does, a few words. */
  summary: string;
  /** Resolves to the exit code; throws CliError (or GgufError) for expected failures. */
  run(args: readonly string[], io: CliIo): Promise<number>;
}

/**
 * A file that could not be opened, as one line: `cannot open x.gguf: no such file or directory`.
 * @example const src = await fileSource(path).catch((e: unknown) => { throw openError(path, e); });
 */
export function openError(path: string, e: unknown): CliError {
  const code = typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : '';
  const why: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EISDIR: 'is a directory',
  };
  return new CliError(`cannot open ${path}: ${why[code] ?? (e instanceof Error ? e.message : String(e))}`);
}
