// The GPU kit's `mmq model` (cli/modelKit.ts, bundled by bench/build-carry.sh as .gpu/bench/model.mjs and
// run by bench/h200.sh's `model` step with only `webgpu` beside it, no tsx): bundled the same way here, it
// runs a model on SwiftShader and writes the model-run JSON the docs are rendered from.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseModelRun } from '../src/kernels/models';
import { ROOT, runProcess } from './cliProcess';
import { tinyModelGguf } from './tinyModel';

const tmp = mkdtempSync(join(tmpdir(), 'mmq-kit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("the kit's mmq model bundle", () => {
  it('bundles with webgpu left out, and runs alone: a model run to JSON, the GPU in its own process', async () => {
    const built = await runProcess(
      join(ROOT, 'node_modules/.bin/esbuild'),
      [
        'cli/modelKit.ts',
        '--bundle',
        '--platform=node',
        '--format=esm',
        '--target=node20',
        '--external:webgpu',
        `--outfile=${join(tmp, 'model.mjs')}`,
        '--log-level=warning',
      ],
      { timeoutMs: 120_000 },
    );
    expect(built.status, built.stderr).toBe(0);
    // As h200.sh lays it out: the bundle, and webgpu in node_modules beside it.
    mkdirSync(join(tmp, 'node_modules'));
    symlinkSync(join(ROOT, 'node_modules/webgpu'), join(tmp, 'node_modules/webgpu'));
    writeFileSync(join(tmp, 'tiny.gguf'), tinyModelGguf());
    const r = await runProcess(
      process.execPath,
      [
        join(tmp, 'model.mjs'),
        '--json',
        join(tmp, 'model.json'),
        join(tmp, 'tiny.gguf'),
        '--decode',
        '--no-probe',
        '--guess',
      ],
      {
        cwd: tmp,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: tmp,
          VK_ICD_FILENAMES: '/usr/lib/chromium/vk_swiftshader_icd.json',
        },
        timeoutMs: 60_000,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^tiny-llama on google SwiftShader/);
    expect(parseModelRun(readFileSync(join(tmp, 'model.json'), 'utf8')).phases[0]!.m).toBe(1);
    // A bad flag is the CLI's one line, as `mmq model` gives it.
    const bad = await runProcess(
      process.execPath,
      [join(tmp, 'model.mjs'), join(tmp, 'tiny.gguf'), '--m', 'x'],
      {
        cwd: tmp,
        timeoutMs: 30_000,
      },
    );
    expect([bad.status, bad.stdout, bad.stderr]).toEqual([
      2,
      '',
      "mmq: model: --m must be a whole number from 1 to 131072, got 'x'\n",
    ]);
  }, 180_000);
});
