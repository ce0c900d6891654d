// Visual regression of the ownership view and the error heatmap (element screenshots against committed
// baselines, fixed viewport, DPR 1, animations off), plus numeric snapshots of the computed ownership and
// error buffers (hashes and summaries from window.__mmq), so a pixel difference between machines is
// never the only evidence.
import { expect, test, type Page } from '@playwright/test';
import { openApp, pickKernel, summary, waitForRun } from './helpers';

async function snapshotRun(page: Page, name: string) {
  const s = await summary(page);
  expect(JSON.stringify(s, null, 2)).toMatchSnapshot(`${name}.json`);
  return s;
}

test('ownership view: scalar epilogue of the naive Q8_0 kernel at plane 4, then 16', async ({ page }) => {
  await openApp(page);
  const size = await pickKernel(page, 'mmq-q8-naive');
  await page.getByTestId('arm-scalar').check();
  await waitForRun(page, 'mmq-q8-naive', size);
  const canvas = page.getByTestId('ownership-canvas');
  await expect(canvas).toHaveScreenshot('ownership-q8-naive-plane4.png');
  const p4 = await snapshotRun(page, 'ownership-q8-naive-plane4');
  expect(p4.recorded).toMatchObject({ lanes: 4, planes: 1, never: 0, twice: 0 });

  await page.getByTestId('view-plane-select').selectOption('16');
  await expect.poll(async () => (await summary(page)).recorded?.lanes).toBe(16);
  await expect(canvas).toHaveScreenshot('ownership-q8-naive-plane16.png');
  const p16 = await snapshotRun(page, 'ownership-q8-naive-plane16');
  expect(p16.recorded!.hash).not.toBe(p4.recorded!.hash);
  // Hover names the owner of the element under the pointer.
  const cell = Number(await canvas.getAttribute('data-cell'));
  await canvas.hover({ position: { x: cell * 5 + cell / 2, y: cell * 3 + cell / 2 } });
  await expect(page.getByTestId('ownership-hover')).toHaveText(
    /^\(3, 5\) → workgroup 0, plane 0, lane 3, element #5 of its lane/,
  );
});

test('ownership view: register accumulator of the tunable Q4_K tile, with the tail outside m x n', async ({
  page,
}) => {
  await openApp(page);
  await pickKernel(page, 'mmq-q4k-tile', { m: 20, n: 40, k: 256 });
  await page.getByTestId('param-wm').fill('1');
  await page.getByTestId('param-wn').fill('2');
  await page.getByTestId('param-rm').fill('2');
  await page.getByTestId('param-rn').fill('1');
  await page.getByTestId('arm-scalar').check();
  await expect
    .poll(async () => await page.evaluate(() => window.__mmq?.summary()?.tile))
    .toEqual({ tileRows: 32, tileCols: 32, paddedRows: 32, paddedCols: 64 });
  await page.getByTestId('ownership-source').selectOption('register-accumulator');
  await expect(page.getByTestId('ownership-canvas')).toHaveScreenshot('ownership-q4k-tile-tail.png');
  await snapshotRun(page, 'ownership-q4k-tile-tail');
  const canvas = page.getByTestId('ownership-canvas');
  const cell = Number(await canvas.getAttribute('data-cell'));
  await canvas.hover({ position: { x: cell * 45 + cell / 2, y: cell * 25 + cell / 2 } });
  await expect(page.getByTestId('ownership-hover')).toContainText('outside the 20×40 output');
});

test('error heatmap: the f16 coopmat GEMM, its quantization error against full precision, log scale', async ({
  page,
}) => {
  await openApp(page);
  const size = await pickKernel(page, 'coopmat-f16');
  await waitForRun(page, 'coopmat-f16', size);
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  await page.getByTestId('tab-errors').click();
  // On SwiftShader the kernel equals its f16-emulating oracle bit for bit; the error worth a log scale is
  // the quantization's, against the f32 GEMM on the unquantized activation and the dequantized weight.
  await page.getByTestId('error-mode-quantization').click();
  await expect(page.getByTestId('heatmap-canvas')).toHaveScreenshot('heatmap-coopmat-f16-quantization.png');
  await expect(page.getByTestId('heatmap-legend')).toContainText('1e-7');
  const s = await snapshotRun(page, 'heatmap-coopmat-f16');
  expect(s.pass).toBe(true);
  expect(s.errorSplit!.quantization).toBeGreaterThan(0);
});
