// The mmq CLI, spawned as a user runs it (node + tsx): each subcommand, and each kind of bad input giving
// one `mmq: ...` line on stderr and a non-zero exit, within a timeout (nothing hangs).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../cli/mmq';
import { goldenBytes, goldenGguf, goldenGgufView, goldenPath, goldenQuantCases } from './golden';
import { expectOneLineError, runMmq } from './cliProcess';
import { writeSparseGguf } from './ggufSparse';

const tmp = mkdtempSync(join(tmpdir(), 'mmq-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Run `mmq ...args` in a child process (30 s at most), without blocking this worker. */
const mmq = (...args: string[]) => runMmq(args);

const gguf = join(tmp, 'peer.gguf');
const whole = goldenGguf();
writeFileSync(gguf, whole);

describe('mmq inspect', () => {
  it('prints the header as a table: metadata (long arrays summarised), tensors, GEMMs', async () => {
    const r = await mmq('inspect', gguf);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`${gguf}: GGUF v3, ${whole.length} bytes, 8 tensors, 24 metadata keys`);
    expect(r.stdout).toContain(
      'alignment 32, data at 99520, header 99490 bytes, header hash 26405835ce3f8093',
    );
    expect(r.stdout).toMatch(/tokenizer\.ggml\.tokens +ARRAY\[STRING\] +\[\.\.\.\] \(5000 elements\)/);
    expect(r.stdout).toMatch(
      /blk\.0\.ffn_down_exps\.weight +Q4_K +\[256, 8, 4\] +\[4, 8, 256\] +108576 +4608/,
    );
    expect(r.stdout).toMatch(/ffn_down_exps +8 +256 +4 +yes +yes/);
  });

  it("--json gives gguf-py's tensors and metadata types", async () => {
    const r = await mmq('inspect', gguf, '--json');
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout) as {
      dataOffset: number;
      headerHash: string;
      metadata: Record<string, { type: string; elementType?: string; length?: number; value: unknown }>;
      tensors: { name: string; type: string; ne: number[]; offset: number; bytes: number }[];
    };
    const view = goldenGgufView();
    expect(j.dataOffset).toBe(view.data_offset);
    expect(j.headerHash).toBe('26405835ce3f8093');
    expect(j.tensors.map((t) => [t.name, t.type, t.ne, t.offset, t.bytes])).toEqual(
      view.tensors.map((t) => [t.name, t.type, t.ne, t.offset, t.nbytes]),
    );
    for (const [key, m] of Object.entries(view.meta)) expect(j.metadata[key]!.type, key).toBe(m.type);
    expect(j.metadata['test.u64']!.value).toBe('9223372036854775813');
    expect(j.metadata['tokenizer.ggml.tokens']).toMatchObject({ elementType: 'STRING', length: 5000 });
  });

  it('opens a sparse file over 4 GiB by its header alone (the tensor past 2^32 is listed)', async () => {
    const sparse = await writeSparseGguf();
    try {
      const r = await mmq('inspect', sparse.path, '--json');
      expect(r.stderr).toBe('');
      const j = JSON.parse(r.stdout) as { size: number; tensors: { name: string; offset: number }[] };
      expect(j.size).toBeGreaterThan(2 ** 32);
      expect(j.tensors[1]).toMatchObject({ name: sparse.tensor.name, offset: sparse.tensor.offset });
    } finally {
      await sparse.remove();
    }
  });
});

describe('mmq quantize', () => {
  const cases = goldenQuantCases();
  const TYPES = ['q8_0', 'q8_1', 'q4_K'] as const;

  it('spawned: writes ggml bytes equal to ggml reference output (one golden case per type)', async () => {
    for (const [type, c] of [
      ['q8_0', cases[0]!],
      ['q8_1', cases[3]!],
      ['q4_K', cases[8]!],
    ] as const) {
      const out = join(tmp, `${c.name}.${type}`);
      const r = await mmq(
        'quantize',
        '--type',
        type,
        '--rows',
        String(c.rows),
        '--k',
        String(c.k),
        goldenPath(`quant/${c.name}.f32`),
        out,
      );
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^${type}: ${c.rows} x ${c.k} f32 -> \\d+ blocks`));
      expect(readFileSync(out).equals(goldenBytes(`quant/${c.name}.ggml.${type}`))).toBe(true);
    }
  });

  it('in process (same main()): every golden case, every type, byte for byte', async () => {
    for (const c of cases) {
      for (const type of TYPES) {
        const out = join(tmp, `all.${c.name}.${type}`);
        const io = { stdout: () => {}, stderr: (t: string) => expect.fail(t) };
        const args = [
          '--type',
          type,
          '--rows',
          String(c.rows),
          `--k=${c.k}`,
          goldenPath(`quant/${c.name}.f32`),
          out,
        ];
        expect(await main(['quantize', ...args], io)).toBe(0);
        expect(
          readFileSync(out).equals(goldenBytes(`quant/${c.name}.ggml.${type}`)),
          `${c.name} ${type}`,
        ).toBe(true);
      }
    }
  });
});

describe('bad input: one line on stderr, a non-zero exit, no hang', () => {
  const notGguf = join(tmp, 'readme.gguf');
  writeFileSync(notGguf, 'this is a text file, not a model\n');
  const headerCut = join(tmp, 'cut-header.gguf');
  writeFileSync(headerCut, whole.subarray(0, 5000));
  const dataCut = join(tmp, 'cut-data.gguf');
  writeFileSync(dataCut, whole.subarray(0, 110_000));
  const f32 = goldenPath('quant/normal.f32'); // 4 x 1024

  it('a non-GGUF file', async () => {
    expectOneLineError(
      await mmq('inspect', notGguf),
      2,
      /^mmq: not a GGUF file: expected magic 'GGUF', found 'this'/,
    );
  });
  it('a missing file (inspect and quantize)', async () => {
    expectOneLineError(
      await mmq('inspect', join(tmp, 'nope.gguf')),
      2,
      /cannot open .*nope\.gguf: no such file or directory/,
    );
    const r = await mmq(
      'quantize',
      '--type',
      'q8_0',
      '--rows',
      '1',
      '--k',
      '32',
      join(tmp, 'nope.f32'),
      join(tmp, 'o'),
    );
    expectOneLineError(r, 2, /cannot open .*nope\.f32: no such file or directory/);
  });
  it('a directory', async () => {
    expectOneLineError(await mmq('inspect', tmp), 2, /cannot open .*: is a directory/);
  });
  it('a file cut inside its header', async () => {
    expectOneLineError(
      await mmq('inspect', headerCut),
      2,
      /^mmq: truncated GGUF: .* but the file ends at 5000/,
    );
  });
  it('a file cut inside its tensor data: listed, the cut tensors say why', async () => {
    const r = await mmq('inspect', dataCut);
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(
      /\n {2}truncated GGUF: tensor 'blk\.0\.ffn_down_exps\.weight' needs bytes \[108576, 113184\) .* \(3184 bytes missing\)\n/,
    );
  });
  it('an unknown subcommand, and none at all', async () => {
    expectOneLineError(
      await mmq('frobnicate'),
      2,
      /^mmq: unknown subcommand 'frobnicate' \(inspect, quantize, run, tune, probe, model\)/,
    );
    const r = await mmq();
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^usage: mmq <subcommand>/);
  });
  it('an unknown flag, a missing value, a wrong arity', async () => {
    expectOneLineError(await mmq('inspect', gguf, '--verbose'), 2, /^mmq: inspect: unknown flag --verbose/);
    expectOneLineError(
      await mmq('quantize', '--type', 'q8_0', '--rows', '4', f32, join(tmp, 'o'), '--k'),
      2,
      /--k needs a value/,
    );
    expectOneLineError(await mmq('inspect', gguf, gguf), 2, /expected one FILE\.gguf, got 2/);
    expectOneLineError(
      await mmq('quantize', '--type', 'q5_K', '--rows', '4', '--k', '1024', f32, join(tmp, 'o')),
      2,
      /'q5_K' is not one of/,
    );
  });
  it("half-typed numbers: '12x', '3.5', '1e3', '0' for --rows", async () => {
    for (const bad of ['12x', '3.5', '1e3', '0', '-4']) {
      const r = await mmq('quantize', '--type', 'q8_0', `--rows=${bad}`, '--k', '1024', f32, join(tmp, 'o'));
      expectOneLineError(
        r,
        2,
        new RegExp(`--rows must be a positive whole number, got '${bad.replace('.', '\\.')}'`),
      );
    }
  });
  it('IN.f32 whose size is not rows x k x 4, and a k that is not a whole number of blocks', async () => {
    const r = await mmq('quantize', '--type', 'q4_K', '--rows', '2', '--k', '1024', f32, join(tmp, 'o'));
    expectOneLineError(r, 2, /normal\.f32 has 16384 bytes, but --rows 2 --k 1024 needs 2 x 1024 x 4 = 8192/);
    const k = await mmq('quantize', '--type', 'q4_K', '--rows', '16', '--k', '256', f32, join(tmp, 'o'));
    expect(k.status).toBe(0); // 16 x 256 is the same 16384 bytes: fine
    expectOneLineError(
      await mmq('quantize', '--type', 'q4_K', '--rows', '32', '--k', '128', f32, join(tmp, 'o')),
      2,
      /--k 128 is not a multiple of q4_K's 256-wide block/,
    );
  });
});

describe('mmq run', () => {
  it('runs a real tensor of a GGUF through the engine the app uses: verdict, bytes read, time, throughput', async () => {
    const r = await mmq(
      'run',
      '--kernel',
      'mmq-q4k-rt',
      '--gguf',
      gguf,
      '--tensor',
      'blk.0.ffn_down.weight',
      '--m',
      '16',
      '--arm',
      'scalar',
      '--target-ms',
      '2',
      '--batches',
      '2',
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /^mmq-q4k-rt \(scalar arm\) m=16 n=10 k=512.* on blk\.0\.ffn_down\.weight of peer\.gguf, normal activation seed 0\n/,
    );
    expect(r.stdout).toContain('verdict: matches oracle (bit-exact; rel_to_max 0.00e+0)');
    expect(r.stdout).toMatch(/read 2880 bytes of blk\.0\.ffn_down\.weight/);
    expect(r.stdout).toMatch(/time: \d+\.\d+ ms per run \((timestamp|wall)/);
    expect(r.stdout).toMatch(/throughput: [\d.e+-]+ int8 TOPS/);
  });

  it('--json on generated data, the expert bank through MoE, the f16 twin with its pass timings', async () => {
    const j = await mmq(
      ...'run --kernel mmq-q8-naive --m 16 --n 16 --k 64 --arm scalar --no-time --json'.split(' '),
    );
    expect(j.status).toBe(0);
    const o = JSON.parse(j.stdout) as {
      verdict: { pass: boolean };
      rows: number;
      cols: number;
      adapter: string;
    };
    expect([o.verdict.pass, o.rows, o.cols]).toEqual([true, 16, 16]);
    expect(o.adapter).toMatch(/\S/);
    const moe = await mmq(
      'run',
      '--kernel',
      'moe-q4k-id',
      '--gguf',
      gguf,
      '--tensor',
      'blk.0.ffn_down_exps.weight',
      '--m',
      '8',
      '--arm',
      'scalar',
      '--activation',
      'outliers',
      '--no-time',
    );
    expect(moe.status).toBe(0);
    expect(moe.stdout).toMatch(/tokens=8 n=8 k=256 experts=4 .*outliers activation/);
    expect(moe.stdout).toContain('verdict: matches oracle');
    const f16 = await mmq(
      'run',
      '--kernel',
      'coopmat-f16',
      '--gguf',
      gguf,
      '--tensor',
      'blk.0.ffn_down.weight',
      '--m',
      '16',
      '--arm',
      'scalar',
      '--set',
      'staging=prepass',
      '--target-ms',
      '2',
      '--batches',
      '2',
    );
    expect(f16.status).toBe(0);
    expect(f16.stdout).toContain('verdict: matches oracle (rel_to_max < 1e-5');
    expect(f16.stdout).toMatch(/passes: .*weight Q4_K to f16 \d/);
    expect(f16.stdout).toMatch(/TFLOP\/s/);
  });

  it('bad input: one line each (unknown kernel, tensor, a type no kernel takes, a bank on a dense kernel, a bad shape)', async () => {
    expectOneLineError(
      await mmq('run', '--kernel', 'mmq-q5'),
      2,
      /unknown kernel family 'mmq-q5' \(hello-wmma, .*moe-q4k-id/,
    );
    expectOneLineError(await mmq('run', '--m', '16'), 2, /--kernel is required/);
    expectOneLineError(
      await mmq('run', '--kernel', 'mmq-q4k-rt', '--gguf', gguf, '--tensor', 'nope', '--no-time'),
      2,
      /no tensor 'nope' in peer\.gguf \(it has 8: /,
    );
    expectOneLineError(
      await mmq('run', '--kernel', 'mmq-q4k-rt', '--gguf', gguf, '--tensor', 't.q4_0', '--no-time'),
      2,
      /t\.q4_0 \(Q4_0, ne \[.*\]\) is not taken by these kernels \(Q8_0, Q4_K\)/,
    );
    expectOneLineError(
      await mmq(
        'run',
        '--kernel',
        'mmq-q4k-rt',
        '--gguf',
        gguf,
        '--tensor',
        'blk.0.ffn_down_exps.weight',
        '--no-time',
      ),
      2,
      /mmq-q4k-rt does not take blk\.0\.ffn_down_exps\.weight .*; these do: moe-q4k-id/,
    );
    expectOneLineError(
      await mmq(
        'run',
        '--kernel',
        'mmq-q4k-rt',
        '--gguf',
        gguf,
        '--tensor',
        'blk.0.ffn_down.weight',
        '--n',
        '64',
      ),
      2,
      /--n comes from the tensor's shape/,
    );
    expectOneLineError(
      await mmq('run', '--kernel', 'mmq-q4k-rt', '--m', '16', '--n', '64', '--k', '300', '--no-time'),
      2,
      /k = 300 is not a multiple of 256/,
    );
    expectOneLineError(
      await mmq('run', '--kernel', 'mmq-q4k-rt', '--m', '1x6'),
      2,
      /--m must be a positive whole number, got '1x6'/,
    );
    expectOneLineError(
      await mmq('run', '--kernel', 'mmq-q4k-rt', '--arm', 'tensor'),
      2,
      /--arm must be one of scalar, /,
    );
    const notGguf = join(tmp, 'notes.gguf');
    writeFileSync(notGguf, 'hello, not a model at all');
    expectOneLineError(
      await mmq('run', '--kernel', 'mmq-q4k-rt', '--gguf', notGguf, '--tensor', 'x', '--no-time'),
      2,
      /not a GGUF file/,
    );
  });
});
