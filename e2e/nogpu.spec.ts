// Without WebGPU the page still works: one banner says what is missing and how to get it in each browser,
// the generated WGSL and the CPU oracle's output are shown, Run is disabled with the reason, and only the
// portable arm can be picked. Two ways in: Chromium without --enable-unsafe-webgpu (WebGPU exposed, no
// adapter), and a test build asked to hide navigator.gpu from the worker.
import { expect, test, type Page } from '@playwright/test';

async function expectNoGpuPage(page: Page, cause: RegExp) {
  const banner = page.getByTestId('no-webgpu');
  await expect(banner).toBeVisible({ timeout: 30_000 });
  await expect(banner).toContainText(cause);
  // One banner, its advice once.
  await expect(banner).toHaveCount(1);
  expect(((await banner.textContent()) ?? '').split('--enable-unsafe-webgpu').length - 1).toBe(1);
  await expect(banner).toContainText('Firefox');
  await expect(banner).toContainText('Safari 26');
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'unavailable');
  await expect(page.getByTestId('run')).toBeDisabled();
  await expect(page.getByTestId('run-blocked')).toContainText('WebGPU is not available here');
  // The kernel is generated anyway (for the spec's minimum adapter) and shown.
  await expect(page.getByTestId('generated-note')).toContainText('No GPU device');
  await expect
    .poll(() => page.evaluate(() => window.__mmq?.editor()?.getValue() ?? ''))
    .toContain('@compute');
  // The CPU oracle's output.
  await expect(page.getByTestId('oracle-preview')).toContainText('CPU oracle output');
  await expect(page.getByTestId('oracle-preview').locator('td').first()).not.toBeEmpty();
  // Only the portable arm; the others say why.
  await expect(page.getByTestId('arm-scalar')).toBeEnabled();
  await expect(page.getByTestId('arm-dp4a')).toBeDisabled();
  await expect(page.getByTestId('arm-picker')).toContainText('no WebGPU adapter here');
  await expect(page.getByTestId('plane-select').locator('option').first()).toHaveText(/no adapter here/);
  // Another family: its WGSL and its oracle follow.
  const before = await page.evaluate(() => window.__mmq!.editor()!.getValue());
  await page.getByTestId('kernel-select').selectOption('mmq-q4k-rt');
  await expect.poll(() => page.evaluate(() => window.__mmq?.editor()?.getValue() ?? '')).not.toBe(before);
  await expect
    .poll(() => page.evaluate(() => window.__mmq?.editor()?.getValue() ?? ''))
    .toContain('@compute');
  await expect(page.getByTestId('oracle-preview')).toContainText('50 × 100');
}

test('Chromium without --enable-unsafe-webgpu: no adapter, the page says so and still shows WGSL and oracle', async ({
  playwright,
}) => {
  const browser = await playwright.chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--font-render-hinting=none'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.goto(`http://127.0.0.1:${process.env.MMQ_E2E_PORT ?? 4173}/`);
    await expectNoGpuPage(page, /offers no adapter/);
  } finally {
    await browser.close();
  }
});

test('a page whose worker has no navigator.gpu says the browser does not expose WebGPU', async ({ page }) => {
  await page.goto('/?hide=webgpu');
  await expectNoGpuPage(page, /does not expose WebGPU/);
});
