// The playground in headless Chromium on SwiftShader: load, every kernel family against its oracle,
// validate() messages for a bad shape, progress + cancel, device loss and recovery.
import { expect, test } from '@playwright/test';
import { openApp, pickKernel, runId, SMALL, summary, waitForNewRun, waitForRun } from './helpers';

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => console.log(`[pageerror] ${e.message}`));
});

test('loads, highlights the generated WGSL and runs the default kernel', async ({ page }) => {
  await openApp(page);
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  await expect(page.getByTestId('generated-badge')).toBeVisible();
  // The Monarch tokenizer is live: attributes, keywords and types get their own token classes.
  const editor = page.getByTestId('editor');
  await expect(editor.locator('.view-line').first()).toBeVisible();
  const classes = await editor
    .locator('.view-lines span[class^="mtk"]')
    .evaluateAll((els) => new Set(els.map((e) => e.className)).size);
  expect(classes).toBeGreaterThanOrEqual(5);
  await expect(page.getByTestId('ms')).not.toHaveText('–');
  await expect(page.getByTestId('tops')).not.toHaveText('–');
});

test('runs every kernel family on SwiftShader and each matches its oracle', async ({ page }) => {
  test.setTimeout(240_000);
  await openApp(page);
  const kernels = await page.evaluate(() => window.__mmq!.kernels());
  expect(kernels.length).toBe(Object.keys(SMALL).length);
  for (const kernel of kernels) {
    await test.step(kernel, async () => {
      const s = await waitForRun(page, kernel, await pickKernel(page, kernel));
      await expect(page.getByTestId('verdict')).toContainText('matches oracle');
      expect(s.pass).toBe(true);
      // The instrumented run stored every element exactly once, as the analytic map says.
      expect(s.recorded).toMatchObject({ never: 0, twice: 0 });
      for (const [phase, a] of Object.entries(s.analytic)) {
        if (a.never < s.rows * s.cols)
          expect({ phase, diff: a.diffFromRecorded }).toEqual({ phase, diff: 0 });
      }
    });
  }
});

test('a shape that breaks the kernel preconditions shows validate() messages, not a blank page', async ({
  page,
}) => {
  await openApp(page);
  await pickKernel(page, 'mmq-q8-tiled', { m: 30 });
  const problems = page.getByTestId('problems');
  await expect(problems).toContainText('m = 30 is not a multiple of BM 32');
  await expect(page.getByTestId('run')).toBeDisabled();
  await problems.getByRole('button', { name: /defaults/ }).click();
  await expect(problems).toHaveCount(0);
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
});

test('a long run shows progress and can be cancelled', async ({ page }) => {
  await openApp(page);
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  await page.getByTestId('auto-run').uncheck();
  await page.getByTestId('iters').fill('150');
  const id = await runId(page);
  await page.getByTestId('run').click();
  await expect(page.getByTestId('progress')).toBeVisible();
  await page.getByTestId('cancel').click();
  await expect(page.getByTestId('run-cancelled')).toBeVisible();
  // The worker is still healthy: a normal run afterwards completes.
  expect(await waitForNewRun(page, id)).toBe('cancelled');
  await page.getByTestId('iters').fill('2');
  await page.getByTestId('run').click();
  expect(await waitForNewRun(page, id + 1)).toBe('done');
});

test('a lost device is reported and recovered', async ({ page }) => {
  await openApp(page);
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  const before = (await summary(page)).outputHash;
  const id = await runId(page);
  await page.locator('.menu summary').click();
  await page.getByTestId('lose-device').click();
  await expect(page.getByTestId('device-lost')).toContainText('The GPU device was lost');
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'lost');
  await page.getByTestId('recover').click();
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'ready');
  expect(await waitForNewRun(page, id)).toBe('done');
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  expect((await summary(page)).outputHash).toBe(before);
});
