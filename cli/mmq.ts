// mmq: the MMQ Playground's command line (Node; `run` on Dawn's WebGPU). `npm run mmq -- <subcommand> ...`.
// Expected failures (a bad file, a bad flag) print one `mmq: ...` line to stderr and exit non-zero (EXIT).
// Text from files reaches the terminal escaped: no escape sequence or carriage return gets through.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { safeText } from '../src/kernels/quant';
import { inspect } from './inspect';
import { dispatch } from './main';
import { model } from './model';
import { probe } from './probe';
import { quantize } from './quantize';
import { run } from './run';
import { tune } from './tune';
import type { CliIo, Subcommand } from './subcommand';

// The subcommand table: a new subcommand is one module exporting a Subcommand, added here.
export const SUBCOMMANDS: readonly Subcommand[] = [inspect, quantize, run, tune, probe, model];

/**
 * Run the CLI on `argv` (without node and the script), writing through `io`; resolves to the exit code.
 * @example process.exitCode = await main(['inspect', 'model.gguf'], processIo);
 */
export function main(
  argv: readonly string[],
  io: CliIo,
  subcommands: readonly Subcommand[] = SUBCOMMANDS,
): Promise<number> {
  return dispatch(argv, io, subcommands);
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
