// The peaks probe and the roofline in Chromium (SwiftShader): a timed run shows its passes' spread,
// GB/s and intensity; "measure peaks" runs the probe in the worker, keeps it per adapter (a reload
// shows it without probing again), shows its method, and places the run on the roofline. The
// screenshot masks every figure that varies from run to run (timings, peaks, the plotted points).
import { expect, test } from '@playwright/test';
import { openApp, pickKernel, waitForRun } from './helpers';

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => console.log(`[pageerror] ${e.message}`));
});

test('measure peaks, then the run on the roofline', async ({ page }) => {
  test.setTimeout(180_000);
  await openApp(page);
  await expect(page.getByTestId('verdict')).toContainText('matches oracle', { timeout: 60_000 });
  const perf = page.getByTestId('perf');
  await expect(perf).toHaveAttribute('data-peaks', 'none');
  await expect(page.getByTestId('perf-row').first()).toContainText('whole plan');
  await expect(page.getByTestId('perf-roofline')).toHaveCount(0);

  await page.getByTestId('perf-probe').click();
  await expect(perf).toHaveAttribute('data-peaks', 'measured', { timeout: 60_000 });
  await expect(page.getByTestId('perf-peaks')).toContainText(/peaks: [\d.]+ GB\/s copy/);
  await expect(page.getByTestId('perf-row').first()).toContainText(/%/);
  const roofline = page.getByTestId('perf-roofline');
  await expect(roofline.getByRole('application')).toBeVisible();
  // Both axes say their unit, both roofs are named with their figure, and only series with points are
  // in the legend (one pass, no hunt: no passes, no tuner configs).
  await expect(roofline.locator('.recharts-label')).toContainText(['intensity, ops / byte', 'ops / s']);
  const legend = roofline.locator('.recharts-legend-item');
  await expect(legend).toContainText([
    /^compute roof [\d.]+ [GMT]? ?ops\/s$/,
    /^memory roof [\d.]+ GB\/s$/,
    'this run',
  ]);
  await expect(legend).toHaveCount(3);
  await page.getByTestId('perf-method-toggle').click();
  await expect(page.getByTestId('perf-method')).toContainText('grid-stride copy');
  await expect(page.getByTestId('perf-method')).toContainText('dot4I8Packed');
  await page.getByTestId('perf-histogram-toggle').click();
  await expect(page.getByTestId('perf-histogram').locator('svg')).toBeVisible();
  // Its axes say what they count.
  await expect(page.getByTestId('perf-histogram').locator('.recharts-label')).toContainText([
    'ms per run (a batch)',
    'batches',
  ]);

  await perf.scrollIntoViewIfNeeded();
  await expect(perf).toHaveScreenshot('perf-roofline.png', {
    mask: [
      page.getByTestId('perf-peaks'),
      page.getByTestId('perf-method').locator('td.num'),
      page.getByTestId('perf-method').locator('td .sub'),
      page.getByTestId('perf-table').locator('td.num'),
      page.getByTestId('perf-histogram'),
      page.getByTestId('perf-roofline').getByRole('application'),
    ],
  });

  // Kept per adapter: after a reload the peaks are there without a probe.
  await openApp(page);
  await expect(page.getByTestId('perf')).toHaveAttribute('data-peaks', 'measured', { timeout: 60_000 });

  // The f16 twin's scalar arm has no measured compute roof here (no shader-f16): no roofline, and no
  // "% of peak" that is its bandwidth share called memory-bound; what is missing is said instead.
  const size = await pickKernel(page, 'coopmat-f16');
  await waitForRun(page, 'coopmat-f16', size);
  await expect(page.getByTestId('perf-roofline')).toHaveAttribute('data-missing', 'compute-roof');
  await expect(page.getByTestId('perf-roofline')).toHaveText(
    /^No roofline: no f16-vector compute peak \(no shader-f16 on this adapter\)\. A roofline needs both roofs/,
  );
  await expect(page.getByTestId('perf-row').first().getByTestId('perf-peak')).toHaveText(/^–\s*no roof$/);
});
