// mmq: the MMQ Playground's command line (Node; `run` on Dawn's WebGPU). `npm run mmq -- <subcommand> ...`.
// Expected failures (a bad file, a bad flag) print one `mmq: ...` line to stderr and exit non-zero.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GgufError } from '../src/kernels/quant';
import { CliError } from './args';
import { inspect } from './inspect';
import { probe } from './probe';
import { quantize } from './quantize';
import { run } from './run';
import { tune } from './tune';
import type { CliIo, Subcommand } from './subcommand';

// The subcommand table: a new subcommand is one module exporting a Subcommand, added here.
export const SUBCOMMANDS: readonly Subcommand[] = [inspect, quantize, run, tune, probe];

function usage(subcommands: readonly Subcommand[]): string {
  const w = Math.max(...subcommands.map((s) => s.usage.length));
  return [
    'usage: mmq <subcommand> [args]',
    '',
    ...subcommands.map((s) => `  ${s.usage.padEnd(w)}  ${s.summary}`),
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
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage(subcommands));
    return 0;
  }
  const cmd = subcommands.find((s) => s.name === name);
  try {
    if (!cmd)
      throw new CliError(`unknown subcommand '${name}' (${subcommands.map((s) => s.name).join(', ')})`, 2);
    if (args.includes('--help') || args.includes('-h')) {
      io.stdout(`usage: ${cmd.usage}\n`);
      return 0;
    }
    return await cmd.run(args, io);
  } catch (e) {
    if (e instanceof CliError || e instanceof GgufError) {
      const msg = e.message.startsWith('mmq ') ? e.message.slice(4) : e.message;
      io.stderr(`mmq: ${msg}\n`);
      return e instanceof CliError ? e.exitCode : 1;
    }
    // Not expected: keep the stack, it is a bug report.
    io.stderr(`mmq: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return 70;
  }
}

const processIo: CliIo = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
};

// Run only as the entry point, so tests can import main().
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2), processIo);
}
