// mmq: the MMQ Playground's command line (Node; `run` on Dawn's WebGPU). `npm run mmq -- <subcommand> ...`.
// Expected failures (a bad file, a bad flag) print one `mmq: ...` line to stderr and exit non-zero (EXIT).
// Text from files reaches the terminal escaped: no escape sequence or carriage return gets through.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { excerpt, GgufError, safeText } from '../src/kernels/quant';
import { CliError, EXIT, EXIT_LEGEND } from './args';
import { inspect } from './inspect';
import { model } from './model';
import { probe } from './probe';
import { quantize } from './quantize';
import { run } from './run';
import { tune } from './tune';
import type { CliIo, Subcommand } from './subcommand';

// The subcommand table: a new subcommand is one module exporting a Subcommand, added here.
export const SUBCOMMANDS: readonly Subcommand[] = [inspect, quantize, run, tune, probe, model];

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
 * Run the CLI on `argv` (without node and the script), writing through `io`; resolves to the exit code.
 * @example process.exitCode = await main(['inspect', 'model.gguf'], processIo);
 */
export async function main(
  argv: readonly string[],
  io: CliIo,
  subcommands: readonly Subcommand[] = SUBCOMMANDS,
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

// The last guard: whatever a subcommand prints, a control character reaches the terminal as an escape.
const processIo: CliIo = {
  stdout: (t) => process.stdout.write(safeText(t, { keepNewlines: true })),
  stderr: (t) => process.stderr.write(safeText(t, { keepNewlines: true })),
};

// Run only as the entry point, so tests can import main().
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2), processIo);
}
