// The CLI's dispatcher: a subcommand from a table, its errors as one `mmq: ...` line. Apart from
// cli/mmq.ts (the entry point) so a bundle of one subcommand (the GPU kit's, cli/modelKit.ts) runs it
// without mmq.ts's own entry check, which a bundle's shared import.meta.url would trip.
import { excerpt, GgufError } from '../src/kernels/quant';
import { CliError, EXIT, EXIT_LEGEND } from './args';
import type { CliIo, Subcommand } from './subcommand';

// An error line is cut here: a message may quote a file's bytes.
const MAX_ERROR_CHARS = 1000;

function usage(subcommands: readonly Subcommand[]): string {
  // Each summary under its usage line: one long usage (run's) would pad every other line to its width.
  return [
    'usage: mmq <subcommand> [args]',
    '',
    ...subcommands.flatMap((s) => [`  ${s.usage}`, `      ${s.summary}`]),
    '',
    EXIT_LEGEND,
    '',
  ].join('\n');
}

/**
 * Run `subcommands` on `argv` (without node and the script), writing through `io`; resolves to the exit code.
 * @example process.exitCode = await dispatch(['inspect', 'model.gguf'], processIo, SUBCOMMANDS);
 */
export async function dispatch(
  argv: readonly string[],
  io: CliIo,
  subcommands: readonly Subcommand[],
): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined) {
    io.stderr(usage(subcommands));
    return EXIT.input;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage(subcommands));
    return EXIT.ok;
  }
  const cmd = subcommands.find((s) => s.name === name);
  try {
    if (!cmd)
      throw new CliError(
        `unknown subcommand '${excerpt(name)}' (${subcommands.map((s) => s.name).join(', ')})`,
      );
    if (args.includes('--help') || args.includes('-h')) {
      io.stdout(`usage: ${cmd.usage}\n      ${cmd.summary}\n${EXIT_LEGEND}\n`);
      return EXIT.ok;
    }
    return await cmd.run(args, io);
  } catch (e) {
    if (e instanceof CliError || e instanceof GgufError) {
      const msg = e.message.startsWith('mmq ') ? e.message.slice(4) : e.message;
      io.stderr(`mmq: ${excerpt(msg, MAX_ERROR_CHARS)}\n`);
      return e instanceof CliError ? e.exitCode : EXIT.input;
    }
    // Not expected: keep the stack, it is a bug report.
    io.stderr(`mmq: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT.internal;
  }
}
