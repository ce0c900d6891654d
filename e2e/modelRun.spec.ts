// The model view in Chromium on SwiftShader: a preset's forward pass listed with its launches per pass
// (Llama-3.1-8B's five GEMM shapes) before anything runs; a tiny GGUF opened and run at prefill and
// decode, each GEMM's pick with its ms and the next family, the totals per pass, a weight no kernel takes
// said so; a half-typed field holds the run back; a guess says it is one; the run exported as JSON and
// imported beside itself as another adapter's; a file that is not a model run says why; a preset's run
// asks the guard first and a cancel stops it.
import { expect, test } from '@playwright/test';
import { tinyModelGguf } from '../test/tinyModel';
import { openApp } from './helpers';

test('the model view: a preset listed, a GGUF run at prefill and decode, exported and imported side by side', async ({
  page,
}) => {
  test.setTimeout(240_000);
  await openApp(page);
  await page.getByTestId('tab-model').click();
  const view = page.getByTestId('model-gemms');
  await expect(view).toBeVisible();
  // The first preset (Llama-3.1-8B), listed before anything runs.
  const pass = view.getByTestId('model-pass-gemm');
  await expect(pass).toHaveCount(5);
  await expect(pass.nth(0)).toContainText('attn_q x32, attn_output x32');
  await expect(pass.nth(0)).toContainText('Q4_K 4096x4096');
  await expect(pass.nth(3)).toContainText('ffn_down x32');
  await expect(pass.nth(4)).toContainText('Q4_K 128256x4096');
  await expect(pass.nth(4)).toContainText('the output head');

  // A guess runs nothing and says so.
  await view.getByTestId('model-run-guess').click();
  await expect(view.getByTestId('model-run-head')).toContainText('A GUESS: nothing was run');
  await expect(view.getByTestId('model-gemm')).toHaveCount(10);

  // A tiny GGUF: Q8_0 attention (one shape, two uses), a Q4_K ffn_down, a Q6_K head.
  await page.getByTestId('model-file-input').setInputFiles({
    name: 'tiny.gguf',
    mimeType: 'application/octet-stream',
    buffer: Buffer.from(tinyModelGguf()),
  });
  await expect(page.getByTestId('model-file')).toContainText('tiny.gguf');
  const source = view.getByTestId('model-run-source');
  await source.selectOption({ label: 'tiny.gguf (opened file)' });
  await expect(view.getByTestId('model-pass-gemm')).toHaveCount(3);
  // A half-typed row count holds the run back, and says why.
  const m = view.getByTestId('model-run-m');
  await m.fill('3x');
  await expect(view.getByTestId('model-run-m-problem')).toContainText("prefill tokens '3x' is not a number");
  await expect(view.getByTestId('model-run-go')).toBeDisabled();
  await m.fill('32');
  await expect(view.getByTestId('model-run-go')).toBeEnabled();

  await view.getByTestId('model-run-go').click();
  // SwiftShader is slow: the guard may ask first.
  const anyway = view.getByTestId('model-run-anyway');
  if (await anyway.isVisible().catch(() => false)) await anyway.click();
  await expect(view.getByTestId('model-run-progress')).toBeVisible();
  await expect(view.getByTestId('model-run-progress')).toBeHidden({ timeout: 200_000 });
  await expect(view.getByTestId('model-run-error')).toHaveCount(0);
  const prefill = view.getByTestId('model-phase-prefill');
  const rows = prefill.getByTestId('model-gemm');
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(0)).toHaveAttribute('data-winner', /^mmq-q8-(naive|tiled)$/);
  await expect(rows.nth(0)).toContainText(/mmq-q8-(naive|tiled) \d\.\d+x/);
  await expect(rows.nth(1)).toHaveAttribute('data-winner', /^(mmq-q4k-\w+|coopmat-f16)$/);
  await expect(rows.nth(2)).toContainText('none: no kernel takes Q6_K');
  await expect(view.getByTestId('model-total-prefill')).toContainText('6 of 7 launches covered');
  const decode = view.getByTestId('model-phase-decode');
  await expect(decode.getByTestId('model-gemm').nth(1)).toHaveAttribute('data-winner', /./);
  await expect(decode.getByTestId('model-no-pick').first()).toContainText('mmq-q8-naive refused');

  // Export, then import the same file as another adapter's run: the two side by side.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    view.getByTestId('model-run-export').click(),
  ]);
  const path = test.info().outputPath('model-run.json');
  await download.saveAs(path);
  await view.getByTestId('model-run-import-input').setInputFiles(path);
  await expect(view.getByTestId('model-compare-adapter')).toHaveCount(2);
  await expect(view.getByTestId('model-compare-row').first()).toContainText(/ms · /);
  // A file that is not a model run says why, and the comparison stays.
  await view.getByTestId('model-run-import-input').setInputFiles({
    name: 'nope.json',
    mimeType: 'application/json',
    buffer: Buffer.from('{"format": "something else"}'),
  });
  await expect(view.getByTestId('model-run-error')).toContainText(
    'not a model run (mmq-playground/model-run): format',
  );
  await expect(view.getByTestId('model-compare-adapter')).toHaveCount(2);
});

test("a preset's run asks the guard first, and a cancel stops it with the picks it has", async ({ page }) => {
  test.setTimeout(120_000);
  await openApp(page);
  await page.getByTestId('tab-model').click();
  const view = page.getByTestId('model-gemms');
  // Llama-3.1-8B at 512 prefill rows and decode: far past the guard's limit on SwiftShader.
  await view.getByTestId('model-run-go').click();
  await expect(view.getByTestId('model-run-estimate')).toContainText('This model run is estimated at');
  await expect(view.getByTestId('model-run-progress')).toHaveCount(0);
  await view.getByTestId('model-run-anyway').click();
  await expect(view.getByTestId('model-run-progress')).toBeVisible();
  await expect(view.getByTestId('model-gemm')).toHaveCount(10);
  await view.getByTestId('model-run-cancel').click();
  await expect(view.getByTestId('model-run-progress')).toBeHidden({ timeout: 10_000 });
  await expect(view.getByTestId('model-run-head')).toContainText('cancelled');
  await expect(view.getByTestId('model-run-go')).toBeEnabled();
});
