// The mmq CLI against hostile and odd inputs, spawned as a user runs it: a FIFO, /dev/zero, a directory,
// a missing file, names that carry terminal escapes or run to megabytes, a file over 4 GiB; and the exit
// statuses, usage text and progress lines a script or a person reads.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startProgress } from '../cli/progress';
import { goldenGguf } from './golden';
import { expectOneLineError, runMmq, runProcess } from './cliProcess';
import { writeSparseGguf } from './ggufSparse';
import { writeGguf } from './ggufWriter';

const tmp = mkdtempSync(join(tmpdir(), 'mmq-hostile-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('inputs that are not regular files', () => {
  it('inspect on a FIFO answers at once instead of waiting for a writer', async () => {
    const fifo = join(tmp, 'pipe.gguf');
    expect((await runProcess('mkfifo', [fifo])).status).toBe(0);
    const t0 = Date.now();
    const r = await runMmq(['inspect', fifo], { timeoutMs: 20_000 });
    expectOneLineError(r, 2, /^mmq: cannot open .*pipe\.gguf: a FIFO \(named pipe\), not a regular file$/m);
    expect(Date.now() - t0).toBeLessThan(15_000);
  });

  it('quantize refuses /dev/zero before reading it', async () => {
    const r = await runMmq([...'quantize --type q8_0 --rows 1 --k 32 /dev/zero'.split(' '), join(tmp, 'o')]);
    expectOneLineError(r, 2, /^mmq: cannot open \/dev\/zero: a character device, not a regular file$/m);
  });

  it('a directory, and a missing file for run --gguf, are one line naming the file (exit 2)', async () => {
    expectOneLineError(await runMmq(['inspect', tmp]), 2, /cannot open .*: is a directory/);
    const missing = join(tmp, 'missing.gguf');
    const r = await runMmq([
      'run',
      '--kernel',
      'mmq-q4k-rt',
      '--gguf',
      missing,
      ...'--tensor w --no-time'.split(' '),
    ]);
    expectOneLineError(r, 2, /^mmq: cannot open .*missing\.gguf: no such file or directory$/m);
  });

  it('a --rows x --k past the 1 GiB quantized at once is refused before the file is opened', async () => {
    const r = await runMmq('quantize --type q8_0 --rows 65536 --k 8192 nope o'.split(' '));
    expectOneLineError(r, 2, /--rows 65536 --k 8192 is 2147483648 bytes of f32, over the 1073741824/);
  });
});

describe('text from the file reaches the terminal escaped and bounded', () => {
  const forged = '\x1b[2K\rverdict: matches oracle';
  const hostile = join(tmp, 'hostile.gguf');
  writeFileSync(
    hostile,
    writeGguf({
      kv: [
        [`general.name\x1b]0;owned\x07`, { t: 'str', v: `x\u009b2J\n${forged}` }],
        ['k'.repeat(4 << 20), { t: 'u8', v: 1 }],
      ],
      tensors: [
        { name: `w\x1b[31m\n${'verdict: matches oracle'}`, dims: [32], type: 0, data: new Uint8Array(128) },
      ],
    }),
  );

  it('inspect: escapes stay visible, no line is forged, a 4 MB key does not widen every row', async () => {
    const r = await runMmq(['inspect', hostile]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(CONTROL);
    expect(r.stdout).not.toMatch(/^\s*verdict:/m);
    expect(r.stdout).toContain('w\\x1b[31m\\nverdict: matches oracle');
    expect(r.stdout).toContain('… (4194304 chars)');
    expect(r.stdout.length).toBeLessThan(20_000);
    const j = await runMmq(['inspect', hostile, '--json']);
    expect(j.stdout).not.toMatch(CONTROL);
    const parsed = JSON.parse(j.stdout) as { tensors: { name: string }[] };
    expect(parsed.tensors[0]!.name).toBe('w\x1b[31m\nverdict: matches oracle');
  });

  it('an error quoting a 4 MB key is one escaped line of bounded length', async () => {
    const dup = join(tmp, 'dup.gguf');
    const key = `\x1b[2J${'k'.repeat(4 << 20)}`;
    writeFileSync(
      dup,
      writeGguf({
        kv: [
          [key, { t: 'u8', v: 1 }],
          [key, { t: 'u8', v: 2 }],
        ],
        tensors: [],
      }),
    );
    const r = await runMmq(['inspect', dup]);
    expectOneLineError(
      r,
      2,
      /^mmq: malformed GGUF: duplicate metadata key '\\x1b\[2Jk+… \(4194308 chars\)'$/m,
    );
    expect(r.stderr.length).toBeLessThan(1100);
  });
});

describe('exit statuses and the words around them', () => {
  it('usage: each summary under its command (no padding to the longest), and the exit statuses', async () => {
    const r = await runMmq(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(/ {8}\S.* {8}/);
    expect(Math.max(...r.stdout.split('\n').map((l) => l.length))).toBeLessThan(400);
    expect(r.stdout).toContain('\n      metadata, tensors and GEMMs of a GGUF');
    expect(r.stdout).toMatch(
      /exit status: 0 ok; 1 the kernel differs from the oracle; 2 bad usage or input \(or estimated past 5 s without --yes\); 3 /,
    );
  });

  it('bad input exits 2, never 1 (1 is a kernel that differs from its oracle)', async () => {
    const notGguf = join(tmp, 'notes.gguf');
    writeFileSync(notGguf, 'plain text, not a model');
    expectOneLineError(await runMmq(['inspect', notGguf]), 2, /not a GGUF file/);
    expectOneLineError(
      await runMmq('run --kernel mmq-q4k-rt --m 16 --n 64 --k 300 --no-time'.split(' ')),
      2,
      /k = 300 is not a multiple of 256/,
    );
  });

  it("a family without params says so; --type's wording", async () => {
    expectOneLineError(
      await runMmq('run --kernel hello-mma --m 16'.split(' ')),
      2,
      /^mmq: run: hello-mma takes no params \(its shape is fixed\), so not 'm'$/m,
    );
    expectOneLineError(
      await runMmq('quantize --rows 1 --k 32 a b'.split(' ')),
      2,
      /^mmq: quantize: --type is required \(one of q8_0, q8_1, q4_K\)$/m,
    );
  });

  it("no Vulkan driver: exit 3, and a line that says what to do about Dawn's warnings", async () => {
    const r = await runMmq('run --kernel mmq-q8-naive --m 16 --n 16 --k 64 --no-time'.split(' '), {
      env: { VK_ICD_FILENAMES: '/nonexistent/icd.json' },
    });
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(
      /\nmmq: run: no WebGPU adapter\. VK_ICD_FILENAMES names \/nonexistent\/icd\.json, which does not exist: set VK_ICD_FILENAMES to a Vulkan driver's ICD file \(without a GPU, SwiftShader's: .*\)\n$/,
    );
  });

  it("inspect explains the GEMM table's Q4_K / Q8_0 columns", async () => {
    const peer = join(tmp, 'peer.gguf');
    writeFileSync(peer, goldenGguf());
    const r = await runMmq(['inspect', peer]);
    expect(r.stdout).toMatch(
      /\n {2}Q4_K, Q8_0: whether the kernels take this GEMM with its weight in that format/,
    );
  });
});

describe('files over 4 GiB and long runs', () => {
  it('run --gguf reads a tensor that sits past 4 GiB (Node 20: a file handle, not openAsBlob)', async () => {
    const sparse = await writeSparseGguf();
    try {
      const r = await runMmq(
        ['run', '--kernel', 'mmq-q4k-rt', '--gguf', sparse.path, '--tensor', sparse.tensor.name, '--m', '16'],
        { timeoutMs: 120_000 },
      );
      expect(r.stderr).not.toMatch(/truncated/);
      expect(r.stdout).toContain('verdict: matches oracle');
      expect(r.status).toBe(0);
    } finally {
      await sparse.remove();
    }
  }, 150_000);

  it('a run past the first-line delay (1 s; 0 here) prints its stage on stderr', async () => {
    const r = await runMmq('run --kernel mmq-q8-naive --m 16 --n 16 --k 64 --batches 2'.split(' '), {
      timeoutMs: 120_000,
      env: { MMQ_PROGRESS_FIRST_MS: '0' },
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^mmq run: mmq-q8-naive .* on reference data seed 0: \w[^\n]*, \d+ s so far$/m);
  }, 150_000);

  it('startProgress: silent under a second, then a line per period, never after stop', () => {
    vi.useFakeTimers();
    try {
      let t = 0;
      const lines: string[] = [];
      const p = startProgress((l) => lines.push(l), 'job', { firstMs: 1000, everyMs: 5000, now: () => t });
      p.update('compiling', 0.05);
      t = 900;
      vi.advanceTimersByTime(900);
      expect(lines).toEqual([]);
      t = 1000;
      vi.advanceTimersByTime(100);
      expect(lines).toEqual(['job: compiling (5%), 1 s so far\n']);
      t = 3000;
      p.update('running', 0.15); // within the period: no line
      t = 6000;
      p.update('checking against the oracle', 0.62);
      expect(lines.at(-1)).toBe('job: checking against the oracle (62%), 6 s so far\n');
      p.stop();
      t = 60_000;
      vi.advanceTimersByTime(60_000);
      expect(lines).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
