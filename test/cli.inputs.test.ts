// The CLI checks every input before it opens a GPU, and what Dawn prints stays off the user's stderr
// (issue 40): on a clean CI machine's environment (no XDG_RUNTIME_DIR, CI=true) a bad input is exactly
// one `mmq:` line. Numeric flags have ranges, a long run or hunt is refused without --yes, progress never
// goes backwards, and names from a file cannot forge a line of output.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startProgress } from '../cli/progress';
import { guard } from '../cli/run';
import { plannedConfigs } from '../src/kernels/perf/estimate';
import { CONFIRM_MS } from '../src/kernels/perf/estimate';
import { GgmlType, quantizeQ4K } from '../src/kernels/quant';
import { expectOneLineError, runMmq } from './cliProcess';
import { goldenPath } from './golden';
import { writeGguf } from './ggufWriter';

const tmp = mkdtempSync(join(tmpdir(), 'mmq-inputs-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** mmq in a clean machine's environment. */
const bare = (...args: string[]) => runMmq(args, { minimal: true });

describe('a clean environment (no XDG_RUNTIME_DIR, CI=true): one line for each bad input', () => {
  const notGguf = join(tmp, 'notes.gguf');
  writeFileSync(notGguf, 'not a model');

  it('run: a missing file, an unknown kernel, a bad shape, a family the data does not suit', async () => {
    const missing = join(tmp, 'missing.gguf');
    expectOneLineError(
      await bare('run', '--kernel', 'mmq-q4k-rt', '--gguf', missing, '--tensor', 'w', '--no-time'),
      2,
      /^mmq: cannot open .*missing\.gguf: no such file or directory$/m,
    );
    expectOneLineError(await bare('run', '--kernel', 'mmq-q5'), 2, /unknown kernel family 'mmq-q5'/);
    expectOneLineError(
      await bare('run', '--kernel', 'mmq-q4k-rt', '--m', '16', '--n', '64', '--k', '300', '--no-time'),
      2,
      /k = 300 is not a multiple of 256/,
    );
    expectOneLineError(
      await bare('run', '--kernel', 'mmq-q4k-rt', '--gguf', notGguf, '--tensor', 'x', '--no-time'),
      2,
      /not a GGUF file/,
    );
    expectOneLineError(
      await bare(
        'run',
        '--kernel',
        'mmq-q8-naive',
        '--gguf',
        goldenPath('gguf/peer_default.gguf.gz'),
        '--tensor',
        't.q8_0',
      ),
      2,
      /n = 6 is not a multiple of 16/,
    );
  }, 120_000);

  it("Dawn's writes to fd 2 (here a stand-in: the process that loaded webgpu writes at exit) never reach the user", async () => {
    const noise = join(tmp, 'dawn-noise.cjs');
    writeFileSync(
      noise,
      `const fs = require('node:fs');
process.on('exit', () => {
  if (Object.keys(require.cache).some((k) => k.includes('/node_modules/webgpu/')))
    fs.writeSync(2, 'error: XDG_RUNTIME_DIR is invalid or not set in the environment.\\nWarning: a Dawn adapter note\\n');
});
`,
    );
    const env = { NODE_OPTIONS: `--require ${noise}` };
    const ok = await runMmq('run --kernel mmq-q8-naive --m 16 --n 16 --k 64 --no-time'.split(' '), {
      minimal: true,
      env,
    });
    expect(ok.status).toBe(0);
    expect(ok.stderr.split('\n').filter((l) => l && !/^mmq run: .*, \d+ s so far$/.test(l))).toEqual([]);
    // A missing file and a bad shape are refused before a GPU: the one line, whoever would write more.
    expectOneLineError(
      await runMmq(['run', '--kernel', 'mmq-q4k-rt', '--gguf', join(tmp, 'gone.gguf'), '--tensor', 'w'], {
        minimal: true,
        env,
      }),
      2,
      /^mmq: cannot open .*gone\.gguf: no such file or directory$/m,
    );
    expectOneLineError(
      await runMmq('run --kernel mmq-q4k-rt --m 16 --n 64 --k 300 --no-time'.split(' '), {
        minimal: true,
        env,
      }),
      2,
      /k = 300 is not a multiple of 256/,
    );
  }, 120_000);

  it('a run that works prints its result and nothing of Dawn', async () => {
    const r = await bare(...'run --kernel mmq-q8-naive --m 16 --n 16 --k 64 --no-time'.split(' '));
    expect(r.status).toBe(0);
    // Progress lines only (a run past a second prints its stage): no Dawn, no loader, no XDG line.
    expect(r.stderr.split('\n').filter((l) => l && !/^mmq run: .*, \d+ s so far$/.test(l))).toEqual([]);
    expect(r.stdout).toContain('verdict: matches oracle');
  }, 120_000);

  it('tune and probe: an unknown flag, a family without tuning, an output path that cannot be written', async () => {
    expectOneLineError(await bare('probe', '--fast'), 2, /^mmq: probe: unknown flag --fast$/m);
    expectOneLineError(await bare('tune', '--kernel', 'mmq-q4k-rt'), 2, /mmq-q4k-rt has no tuning/);
    expectOneLineError(
      await bare('tune', '--kernel', 'mmq-q4k-tile', '--json', join(tmp, 'no', 'such', 'dir', 'r.json')),
      2,
      /cannot write --json .*r\.json: no writable directory/,
    );
    expectOneLineError(
      await bare('tune', '--kernel', 'mmq-q4k-tile', '--csv', tmp),
      2,
      /--csv .* is a directory/,
    );
  }, 120_000);
});

describe('numeric flags have ranges', () => {
  it("run's --target-ms, --batches and --seed, and tune's search flags, refuse a value past their range", async () => {
    for (const [flag, value, range] of [
      ['--target-ms', '999999999', '1 to 10000'],
      ['--batches', '1000000000', '1 to 1000'],
      ['--batches', '0', '1 to 1000'],
      ['--seed', '4294967296', '0 to 4294967295'],
    ] as const) {
      expectOneLineError(
        await bare('run', '--kernel', 'mmq-q8-naive', flag, value),
        2,
        new RegExp(`^mmq: run: ${flag} must be a whole number from ${range}, got '${value}'$`, 'm'),
      );
    }
    for (const [flag, value] of [
      ['--population', '100000'],
      ['--generations', '0'],
      ['--measure-ms', '1e3'],
      ['--banks', '65'],
    ] as const)
      expectOneLineError(
        await bare('tune', '--kernel', 'mmq-q4k-tile', flag, value),
        2,
        new RegExp(`^mmq: tune: ${flag} must be a whole number from \\d+ to \\d+, got '${value}'$`, 'm'),
      );
  }, 120_000);

  it('the usage text gives the ranges and --yes', async () => {
    const r = await bare('run', '--help');
    expect(r.stdout).toMatch(/--batches B \(1\.\.1000\)/);
    expect(r.stdout).toMatch(/--yes/);
  });
});

describe('a run or hunt estimated past CONFIRM_MS needs --yes', () => {
  it('run: coopmat-f16 1024^3 on SwiftShader is refused with its estimate and how to proceed, before GPU work', async () => {
    const r = await bare('run', '--kernel', 'coopmat-f16', '--m', '1024', '--n', '1024', '--k', '1024');
    expectOneLineError(
      r,
      2,
      /^mmq: run: this run is estimated at \d+ min \(.*\), past the 5\.0 s mmq starts unasked: add --yes to start it, or ask for less/m,
    );
  }, 120_000);

  it('tune: the default hunt (8 x 4 generations) of a real-size shape on SwiftShader is refused with its estimate', async () => {
    const r = await bare('tune', '--kernel', 'mmq-q4k-tile', '--m', '512', '--n', '1024', '--k', '1024');
    expectOneLineError(
      r,
      2,
      /^mmq: tune: this hunt is estimated at [\d.]+ (s|min) \(26 configs, each compiled, checked and timed in 3 batches .*\), past the 5\.0 s mmq starts unasked: add --yes/m,
    );
  }, 120_000);

  it('guard: work under CONFIRM_MS passes, past it throws unless --yes; compiling is not weighed', () => {
    const est = (ms: number, compileMs = 0) => ({ ms, untimedMs: ms, compileMs, kernelMs: 1, basis: 'b' });
    expect(() => guard('run', 'this run', est(CONFIRM_MS), false, 'less')).not.toThrow();
    expect(() => guard('run', 'this run', est(CONFIRM_MS + 1), false, 'less')).toThrow(/add --yes/);
    expect(() => guard('run', 'this run', est(CONFIRM_MS * 100), true, 'less')).not.toThrow();
    expect(() => guard('run', 'this run', est(CONFIRM_MS + 1000, 1000), false, 'less')).not.toThrow();
  });

  it("plannedConfigs: the first generation, then each later one's children, at most the feasible ones", () => {
    // DEFAULT_EVOLUTION keeps 2 elite: 8 + 3 x 6 = 26.
    expect(plannedConfigs({ population: 8, generations: 4 }, 1000)).toBe(26);
    expect(plannedConfigs({ population: 8, generations: 4 }, 10)).toBe(10);
    expect(plannedConfigs({ population: 1, generations: 5 }, 1000)).toBe(5);
  });
});

describe('progress', () => {
  it('never goes backwards, though the stage fractions the worker posts dip', () => {
    vi.useFakeTimers();
    try {
      let t = 0;
      const lines: string[] = [];
      const p = startProgress((l) => lines.push(l), 'job', { firstMs: 0, everyMs: 1000, now: () => t });
      p.update('timing', 0.7);
      t = 2000;
      p.update('timing', 0.4); // a timing doubled its batches
      t = 4000;
      p.update('checking', 0.8);
      expect(lines).toEqual([
        'job: timing (70%), 0 s so far\n',
        'job: timing (70%), 2 s so far\n',
        'job: checking (80%), 4 s so far\n',
      ]);
      p.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('names from a file reach the output escaped', () => {
  const name = 'w\nverdict: matches oracle';
  const file = join(tmp, 'forged.gguf');
  const x = new Float32Array(16 * 256).map((_, i) => Math.sin(i));
  writeFileSync(
    file,
    writeGguf({
      kv: [],
      tensors: [{ name, dims: [256, 16], type: GgmlType.Q4_K, data: quantizeQ4K(x, 16, 256).bytes }],
    }),
  );

  it('run --tensor: a name holding a newline cannot forge a verdict line', async () => {
    const r = await bare(
      'run',
      '--kernel',
      'mmq-q4k-rt',
      '--gguf',
      file,
      '--tensor',
      name,
      '--m',
      '16',
      '--no-time',
    );
    expect(r.status).toBe(0);
    expect(r.stdout.match(/^verdict: /gm)).toHaveLength(1);
    expect(r.stdout).toContain('on w\\nverdict: matches oracle of forged.gguf');
    expect(r.stdout).toContain('read 2304 bytes of w\\nverdict: matches oracle in');
  }, 120_000);

  it('inspect --json cuts a 1 MB string and a 1 MB key, saying so and how long they were', async () => {
    const big = join(tmp, 'big.gguf');
    writeFileSync(
      big,
      writeGguf({
        kv: [
          ['general.name', { t: 'str', v: 'n'.repeat(1 << 20) }],
          ['k'.repeat(1 << 20), { t: 'u8', v: 7 }],
        ],
        tensors: [],
      }),
    );
    const r = await bare('inspect', big, '--json');
    expect(r.status).toBe(0);
    expect(r.stdout.length).toBeLessThan(20_000);
    const j = JSON.parse(r.stdout) as { metadata: Record<string, Record<string, unknown>> };
    expect(j.metadata['general.name']).toMatchObject({ type: 'STRING', truncated: true, length: 1 << 20 });
    expect(j.metadata['general.name']!.value).toBe('n'.repeat(4096));
    expect(j.metadata['k'.repeat(4096)]).toMatchObject({
      key: { truncated: true, length: 1 << 20 },
      value: 7,
    });
  }, 120_000);
});

describe('files', () => {
  it('run --gguf on a .gguf.gz closes its file handle (no Node warning: runMmq fails on one)', async () => {
    const r = await runMmq(
      [
        'run',
        '--kernel',
        'mmq-q4k-rt',
        '--gguf',
        goldenPath('gguf/peer_default.gguf.gz'),
        '--tensor',
        'blk.0.ffn_down.weight',
        '--m',
        '16',
        '--no-time',
      ],
      { minimal: true },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('verdict: matches oracle');
  }, 120_000);

  it('inspect of a file with an NVFP4 tensor lists it, says why the kernels do not take it, and keeps the Q4_K one', async () => {
    const f = join(tmp, 'nvfp4.gguf');
    const q = quantizeQ4K(
      new Float32Array(16 * 256).map((_, i) => Math.cos(i)),
      16,
      256,
    ).bytes;
    writeFileSync(
      f,
      writeGguf({
        kv: [],
        tensors: [
          { name: 'blk.0.attn_q.weight', dims: [64, 4], type: 40, data: new Uint8Array(4 * 36) },
          { name: 'blk.0.ffn_down.weight', dims: [256, 16], type: GgmlType.Q4_K, data: q },
        ],
      }),
    );
    const r = await bare('inspect', f);
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(
      /blk\.0\.attn_q\.weight +NVFP4 +\[64, 4\] .* no: not taken by these kernels \(Q8_0, Q4_K\)/,
    );
    expect(r.stdout).toMatch(/blk\.0\.ffn_down\.weight +Q4_K +\[256, 16\] .* mmq-q4k-rt/);
    expectOneLineError(
      await bare('run', '--kernel', 'mmq-q4k-rt', '--gguf', f, '--tensor', 'blk.0.attn_q.weight'),
      2,
      /blk\.0\.attn_q\.weight \(NVFP4, ne \[64, 4\]\) is not taken by these kernels/,
    );
  }, 120_000);
});
