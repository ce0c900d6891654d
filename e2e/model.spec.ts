// Real model files in Chromium: llama.cpp gguf-py's peer file (gzip-compressed, inflated by the worker)
// opened by the file picker and by drag and drop, its tensors listed with the kernels that take them,
// blk.0.ffn_down.weight run through the int8 MMQ and the f16 twin and the expert bank through the MoE
// kernel, each matching its oracle; a permalink to a tensor asks for its file and says when the file
// picked is another one; a file that is not a GGUF gets one clear message, one cut short lists the tensor
// it cuts; a sparse file over 4 GiB opens from its header and its tensor past 2^32 runs.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect, test, type Page } from '@playwright/test';
import { GgmlType, quantizeQ4K, quantizeQ8_0 } from '../src/kernels/quant';
import { writeSparseGguf } from '../test/ggufSparse';
import { writeGguf } from '../test/ggufWriter';
import { openApp } from './helpers';

const PEER = 'test/golden/gguf/peer_default.gguf.gz';

/** Run the tensor of a row on a kernel; wait for the result of that config. */
async function runTensor(page: Page, tensor: string, kernel: string) {
  const row = page.locator(`[data-testid="tensor-row"][data-name="${tensor}"]`);
  await row.getByTestId(`run-on-${kernel}`).click();
  await expect
    .poll(
      () =>
        page.evaluate(() => {
          const s = window.__mmq!.status();
          return `${s.kernel} ${s.run} ${String(s.current)}`;
        }),
      { timeout: 60_000 },
    )
    .toBe(`${kernel} done true`);
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
}

async function dropFile(page: Page, bytes: Buffer, name: string) {
  const dt = await page.evaluateHandle(
    ({ b64, name }) => {
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const t = new DataTransfer();
      t.items.add(new File([data], name));
      return t;
    },
    { b64: bytes.toString('base64'), name },
  );
  await page.dispatchEvent('body', 'dragover', { dataTransfer: dt });
  await expect(page.getByTestId('dropzone')).toBeVisible();
  await page.dispatchEvent('body', 'drop', { dataTransfer: dt });
}

test('opens a .gguf.gz, lists its tensors, and runs its Q4_K matrix and expert bank through the kernels', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await openApp(page);
  await page.getByTestId('tab-model').click();
  await page.getByTestId('model-file-input').setInputFiles(PEER);
  await expect(page.getByTestId('model-file')).toContainText('peer_default.gguf.gz');
  await expect(page.getByTestId('model-file')).toContainText('GGUF v3');
  const rows = page.getByTestId('tensor-row');
  await expect(rows).toHaveCount(8);
  // Other types are listed, and say why they do not run.
  await expect(page.locator('[data-name="t.q4_0"]')).toContainText('not taken by these kernels (Q8_0, Q4_K)');
  await expect(page.locator('[data-name="t.bf16"]')).toContainText('not taken by these kernels (Q8_0, Q4_K)');
  // The filter box: by type, then by name.
  await page.getByTestId('tensor-filter').fill('q4_k');
  await expect(rows).toHaveCount(2);
  await page.getByTestId('tensor-filter').fill('ffn_down');
  await expect(rows).toHaveCount(2);
  await page.getByTestId('tensor-filter').fill('');
  const down = page.locator('[data-name="blk.0.ffn_down.weight"]');
  await expect(down).toContainText('Q4_K');
  await expect(down).toContainText('10 × 512');
  // The fixed 32x64 kernel takes Q4_K but says why it cannot run n = 10 as is.
  await expect(down).toContainText(/n = 10/);

  await page.getByTestId('model-rows').fill('16');
  await runTensor(page, 'blk.0.ffn_down.weight', 'mmq-q4k-rt');
  expect(await page.evaluate(() => window.__mmq!.status().params)).toMatchObject({ m: 16, n: 10, k: 512 });
  await expect(page.getByTestId('tensor-read')).toContainText('blk.0.ffn_down.weight');
  await expect(page.getByTestId('tensor-choice')).toContainText('blk.0.ffn_down.weight');
  await expect(page.getByTestId('data-tensor')).toHaveAttribute('aria-checked', 'true');

  await runTensor(page, 'blk.0.ffn_down.weight', 'coopmat-f16');
  await expect(page.getByTestId('timing')).toContainText('TFLOP/s');
  // The error split's "quantization" part is the weight's own quantization (f32 GEMM on the dequantized tensor).
  await expect(page.getByTestId('results-split-quant')).not.toHaveText('–');

  await runTensor(page, 'blk.0.ffn_down_exps.weight', 'moe-q4k-id');
  expect(await page.evaluate(() => window.__mmq!.status().params)).toMatchObject({
    tokens: 16,
    n: 8,
    k: 256,
    experts: 4,
  });
});

test('a kernel is offered for a tensor only at rows it runs: else it says which rows it needs', async ({
  page,
}) => {
  // A Q8_0 weight the tiled 32x64 kernel takes (n = 64), beside the peer file's narrow Q4_K one.
  const [n, k] = [64, 64];
  const { bytes } = quantizeQ8_0(
    new Float32Array(n * k).map((_, i) => Math.cos(i)),
    n,
    k,
  );
  const path = test.info().outputPath('q8.gguf');
  writeFileSync(
    path,
    writeGguf({
      kv: [['general.architecture', { t: 'str', v: 'llama' }]],
      tensors: [{ name: 'blk.0.attn_q.weight', dims: [k, n], type: GgmlType.Q8_0, data: bytes }],
    }),
  );
  await openApp(page);
  await page.getByTestId('tab-model').click();
  await page.getByTestId('model-file-input').setInputFiles(path);
  await page.getByTestId('model-rows').fill('16');
  const q8 = page.locator('[data-testid="tensor-row"][data-name="blk.0.attn_q.weight"]');
  // The tiled kernel's 32-row tile cannot take 16 rows (the run used to fail so after the click): the
  // offer says so and is for 32 rows; the naive kernel runs at 16.
  await expect(q8.getByTestId('offer-why-mmq-q8-tiled')).toHaveText(
    /^ \(not at 16 rows: m = 16 is not a multiple of 32/,
  );
  await expect(q8.getByTestId('run-on-mmq-q8-tiled')).toHaveText(/at 32 rows$/);
  await expect(q8.getByTestId('run-on-mmq-q8-naive')).toHaveAttribute('data-rows', '16');
  await runTensor(page, 'blk.0.attn_q.weight', 'mmq-q8-tiled');
  expect(await page.evaluate(() => window.__mmq!.status().params)).toMatchObject({ m: 32, n, k });
  await expect(page.getByTestId('model-rows')).toHaveValue('32');
  await expect(page.getByTestId('problems')).toHaveCount(0);

  // A problem no row count fixes (the fixed 32x64 kernel and n = 10): not offered, and says why.
  await page.getByTestId('model-file-input').setInputFiles(PEER);
  const down = page.locator('[data-testid="tensor-row"][data-name="blk.0.ffn_down.weight"]');
  await expect(down.getByTestId('run-on-mmq-q4k-blk')).toBeDisabled();
  await expect(down.getByTestId('offer-why-mmq-q4k-blk')).toContainText('n = 10 is not a multiple of 64');
});

test('a link to a tensor asks for its file, says when another file is picked, and runs with the right one', async ({
  page,
  browser,
}) => {
  test.setTimeout(180_000);
  await openApp(page);
  await page.getByTestId('tab-model').click();
  // Dropped on the page this time.
  await dropFile(page, readFileSync(PEER), 'peer_default.gguf.gz');
  await expect(page.getByTestId('tensor-row')).toHaveCount(8);
  await page.getByTestId('model-activation').selectOption('outliers');
  await runTensor(page, 'blk.0.ffn_down_exps.weight', 'moe-q4k-id');
  const expected = await page.evaluate(() => window.__mmq!.summary()!.outputHash);
  await expect.poll(() => page.evaluate(() => location.hash)).toMatch(/^#v=2&s=/);
  const link = await page.evaluate(() => location.href);

  const fresh = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  const other = await fresh.newPage();
  await other.goto(link);
  await expect(other.getByTestId('device-status')).toHaveAttribute('data-status', 'ready', {
    timeout: 30_000,
  });
  await other.getByTestId('link-accept').click();
  const wanted = other.getByTestId('wanted-file');
  await expect(wanted).toContainText('blk.0.ffn_down_exps.weight');
  await expect(wanted).toContainText('peer_default.gguf.gz');
  await expect(other.getByTestId('problems')).toContainText('is not open');
  await expect(other.getByTestId('run')).toBeDisabled();
  // The same model uncompressed is another file (another size): the app says so and keeps asking.
  const raw = test.info().outputPath('peer_default.gguf');
  writeFileSync(raw, gunzipSync(readFileSync(PEER)));
  await other.getByTestId('wanted-file-input').setInputFiles(raw);
  await expect(wanted).toContainText('is not the file this link names');
  await other.getByTestId('wanted-file-input').setInputFiles(PEER);
  await expect(wanted).toHaveCount(0);
  await expect
    .poll(
      () => other.evaluate(() => `${window.__mmq!.status().run} ${String(window.__mmq!.status().current)}`),
      {
        timeout: 60_000,
      },
    )
    .toBe('done true');
  await expect(other.getByTestId('verdict')).toContainText('matches oracle');
  expect(await other.evaluate(() => window.__mmq!.summary()!.outputHash)).toBe(expected);
  await fresh.close();
});

test('a file that is not a GGUF gets one clear message; one cut short lists its cut tensor', async ({
  page,
}) => {
  await openApp(page);
  await page.getByTestId('tab-model').click();
  const notes = test.info().outputPath('notes.gguf');
  writeFileSync(notes, 'hello world, not a model');
  await page.getByTestId('model-file-input').setInputFiles(notes);
  await expect(page.getByTestId('model-error')).toContainText('notes.gguf');
  await expect(page.getByTestId('model-error')).toContainText('not a GGUF file');
  const whole = gunzipSync(readFileSync(PEER));
  const cut = test.info().outputPath('cut.gguf');
  writeFileSync(cut, whole.subarray(0, whole.length - 100));
  // As gguf.cpp: a file cut inside its tensor data opens; only the tensor it cuts says why.
  await page.getByTestId('model-file-input').setInputFiles(cut);
  await expect(page.getByTestId('model-file')).toContainText('cut.gguf');
  const cutRows = page.getByTestId('tensor-row').filter({ hasText: 'cut short: truncated GGUF' });
  await expect(cutRows).toHaveCount(1);
  await expect(page.getByTestId('tensor-row')).toHaveCount(8);
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
});

test('two files with one header hash (a copy cut short) are listed apart and each can be shown', async ({
  page,
}) => {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await openApp(page);
  await page.getByTestId('tab-model').click();
  const whole = gunzipSync(readFileSync(PEER));
  const [wholePath, cutPath] = ['whole', 'cut'].map((dir) => test.info().outputPath(dir, 'peer.gguf'));
  mkdirSync(dirname(wholePath!), { recursive: true });
  mkdirSync(dirname(cutPath!), { recursive: true });
  writeFileSync(wholePath!, whole);
  writeFileSync(cutPath!, whole.subarray(0, whole.length - 100));
  await page.getByTestId('model-file-input').setInputFiles(wholePath!);
  await expect(page.getByTestId('tensor-row')).toHaveCount(8);
  await page.getByTestId('model-file-input').setInputFiles(cutPath!);
  const select = page.getByTestId('model-file-select');
  const options = select.locator('option');
  await expect(options).toHaveCount(2);
  const labels = await options.allTextContents();
  expect(new Set(labels).size).toBe(2);
  expect(labels.join(' | ')).toContain(`${whole.length.toLocaleString('en-US')} bytes`);
  // Each file can be picked and shows its own tensors: only the cut copy has a cut tensor.
  const cutRows = page.getByTestId('tensor-row').filter({ hasText: 'cut short' });
  for (const [i, cutTensors] of [
    [0, 1],
    [1, 0],
    [0, 1],
  ] as const) {
    await select.selectOption({ index: i });
    await expect(page.getByTestId('model-file')).toContainText(labels[i]!);
    await expect(cutRows).toHaveCount(cutTensors);
  }
  expect(errors.filter((e) => /same key/i.test(e))).toEqual([]);
});

test('names from the file are shown escaped: bidi overrides, BEL, ESC and newlines stay visible', async ({
  page,
}) => {
  const [rows, k] = [8, 256];
  const { bytes } = quantizeQ4K(
    new Float32Array(rows * k).map((_, i) => Math.sin(i)),
    rows,
    k,
  );
  // "blk.0.<RLO>evil.weight" would read "blk.0.thgiew.live" raw; the others ring, repaint, break the row.
  // The plain GEMM tensor gives the file a model preset, named from general.name.
  const names = ['blk.0.\u202eevil.weight', 'bell\x07esc\x1b[2J', 'two\nlines', 'blk.0.ffn_down.weight'];
  const hostile = test.info().outputPath('hostile.gguf');
  writeFileSync(
    hostile,
    writeGguf({
      kv: [
        ['general.architecture', { t: 'str', v: 'llama' }],
        ['general.name', { t: 'str', v: 'model\u202eevil' }],
      ],
      tensors: names.map((name) => ({ name, dims: [k, rows], type: GgmlType.Q4_K, data: bytes })),
    }),
  );
  await openApp(page);
  await page.getByTestId('tab-model').click();
  await page.getByTestId('model-file-input').setInputFiles(hostile);
  const table = page.getByTestId('tensor-table');
  await expect(page.getByTestId('tensor-row')).toHaveCount(4);
  await expect(table).toContainText('blk.0.\\u202eevil.weight');
  await expect(table).toContainText('bell\\x07esc\\x1b[2J');
  await expect(table).toContainText('two\\nlines');
  // No raw control or bidi character reaches the page: not in the table, not in the preset's name.
  // eslint-disable-next-line no-control-regex
  const raw = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
  expect(await table.textContent()).not.toMatch(raw);
  const presets = await page.getByTestId('shape-preset-model').locator('option').allTextContents();
  expect(presets.join('|')).toContain('model\\u202eevil');
  expect(presets.join('|')).not.toMatch(raw);
  // Each row is one line: the newline in a name does not break it.
  const heights = await page
    .getByTestId('tensor-row')
    .evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height));
  expect(new Set(heights).size).toBe(1);
  // Run one: the controls and the results name the weight escaped too.
  await page.getByTestId('model-rows').fill('16');
  await page.getByTestId('tensor-row').first().getByTestId('run-on-mmq-q4k-rt').click();
  await expect(page.getByTestId('tensor-read')).toContainText('blk.0.\\u202eevil.weight', {
    timeout: 60_000,
  });
  await expect(page.getByTestId('tensor-choice')).toContainText('blk.0.\\u202eevil.weight');
  for (const part of ['results', 'tensor-choice', 'runbar'])
    expect(await page.getByTestId(part).textContent()).not.toMatch(raw);
});

test('a GGUF over 4 GiB (a sparse file) opens at once and its tensor past 2^32 runs', async ({ page }) => {
  test.setTimeout(120_000);
  const sparse = await writeSparseGguf();
  try {
    await openApp(page);
    await page.getByTestId('tab-model').click();
    const t0 = Date.now();
    await page.getByTestId('model-file-input').setInputFiles(sparse.path);
    await expect(page.getByTestId('model-file')).toContainText('4.00 GiB');
    console.log(`[gguf] ${sparse.size} bytes opened in ${Date.now() - t0} ms`);
    // Only the head of the file was read to open it, not its 4 GiB.
    await expect(page.getByTestId('model-file')).toContainText(/ [\d.]+ (KiB|MiB) read to open it/);
    await expect(page.locator('[data-name="pad"]')).toContainText('not taken by these kernels (Q8_0, Q4_K)');
    await page.getByTestId('model-rows').fill('8');
    const t1 = Date.now();
    await runTensor(page, sparse.tensor.name, 'mmq-q4k-rt');
    console.log(`[gguf] its tensor past 2^32 ran in ${Date.now() - t1} ms`);
    expect(await page.evaluate(() => window.__mmq!.status().params)).toMatchObject({ m: 8, n: 2, k: 256 });
  } finally {
    await sparse.remove();
  }
});
