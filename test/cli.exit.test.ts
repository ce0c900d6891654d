// What a script sees of mmq without a GPU: how each kind of worker error exits (cli/gpuProcess.ts's
// resultOf), and how parseArgs reads `-` (a file name for stdin/stdout, not a flag) and `--k=value`.
import { describe, expect, it } from 'vitest';
import { CliError, EXIT, parseArgs } from '../cli/args';
import { resultOf } from '../cli/gpuProcess';
import type { WorkerResponse } from '../src/workers/protocol';

/** The CliError resultOf throws for `mine`, or undefined. */
function failure(mine: readonly WorkerResponse[]): CliError | undefined {
  try {
    resultOf('run', 'run', mine);
    return undefined;
  } catch (e) {
    if (e instanceof CliError) return e;
    throw e;
  }
}

describe('a worker error exits by whose fault it is', () => {
  it.each([
    ['shape', EXIT.input],
    ['validation', EXIT.input],
    ['file', EXIT.input],
    ['unsupported', EXIT.machine],
    ['internal', EXIT.internal],
  ] as const)('%s exits %i, its message after the command', (kind, code) => {
    const e = failure([
      { type: 'cancelled', id: 1 },
      { type: 'error', id: 1, kind, message: 'no good' },
    ]);
    expect(e?.exitCode).toBe(code);
    expect(e?.message).toBe('mmq run: no good');
  });

  it("a compile error is the machine's, with every message; otherwise the last response is the answer", () => {
    const e = failure([
      {
        type: 'compile-error',
        id: 1,
        messages: [
          { message: 'a', type: 'error', lineNum: 1, linePos: 1, offset: 0, length: 1 },
          { message: 'b', type: 'error', lineNum: 2, linePos: 1, offset: 0, length: 1 },
        ],
        code: '',
        editorLines: 1,
      } as WorkerResponse,
    ]);
    expect(e?.exitCode).toBe(EXIT.machine);
    expect(e?.message).toBe('mmq run: WGSL compile error: a; b');
    const last = { type: 'cancelled', id: 1 } as const;
    expect(resultOf('run', 'run', [{ type: 'cancelled', id: 1 }, last])).toBe(last);
    expect(() => resultOf('run', 'init', [])).toThrow("no answer to 'init'");
  });
});

describe('parseArgs', () => {
  const spec = { value: ['--out'], boolean: ['--json'] };
  it('takes `-` as a positional (stdin or stdout), not as a flag', () => {
    const p = parseArgs('quantize', ['-', '--out', '-'], spec);
    expect(p.positionals).toEqual(['-']);
    expect(p.values.get('--out')).toBe('-');
    expect(() => parseArgs('quantize', ['-x'], spec)).toThrow('mmq quantize: unknown flag -x');
  });

  it('reads --flag=value, and refuses a value on a boolean flag with a usage error', () => {
    expect(parseArgs('quantize', ['--out=a=b'], spec).values.get('--out')).toBe('a=b');
    const e = (() => {
      try {
        parseArgs('quantize', ['--json=1'], spec);
      } catch (x) {
        return x;
      }
    })();
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).message).toBe('mmq quantize: --json takes no value');
    expect((e as CliError).exitCode).toBe(EXIT.input);
    expect(() => parseArgs('quantize', ['--out'], spec)).toThrow('mmq quantize: --out needs a value');
  });
});
