// The performance views in Chromium: the error drill-down names the k-block a broken kernel skips, the
// A/B tab compares a pinned run with an edited kernel (time, error maps, owners, WGSL diff) and lives in
// the permalink, and the shape sweep runs a list of m, refuses what the kernel cannot run with its
// reason, plots the rest with their % of the measured peaks and their roofline, is stored, and can be
// cancelled. Timing numbers are masked in the screenshots.
import { expect, test, type Page } from '@playwright/test';
import { openApp, pickKernel, runId, waitForNewRun, waitForRun } from './helpers';

const replaceInEditor = (page: Page, pattern: string, replacement: string) =>
  page.evaluate(([p, r]) => window.__mmq!.editor()!.replace(p!, r!), [pattern, replacement]);

/** Skip k-block 1 of the naive Q8_0 kernel's reduction: valid WGSL, every element one block short. */
const SKIP_BLOCK_1 = ['let k0w = kb \\* 8u;', 'if (kb == 1u) { continue; }\n    let k0w = kb * 8u;'] as const;

/** Double what lane 3 stores: wrong values on a quarter of the output, same owners. */
const LANE3_BUG = [
  'store_out\\(([^;]*?), ([^;]*)\\);',
  'store_out($1, ($2) * select(1.0, 2.0, lane == 3u));',
] as const;

async function naive(page: Page, k = 64) {
  await openApp(page);
  const size = await pickKernel(page, 'mmq-q8-naive', { m: 32, n: 32, k });
  await waitForRun(page, 'mmq-q8-naive', size);
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
}

test("the drill-down shows an element's k-blocks and names the block the kernel skipped", async ({
  page,
}) => {
  await naive(page, 128);
  const before = await runId(page);
  expect(await replaceInEditor(page, ...SKIP_BLOCK_1)).toBe(true);
  expect(await waitForNewRun(page, before)).toBe('done');
  await page.getByTestId('tab-errors').click();
  const canvas = page.getByTestId('heatmap-canvas');
  const cell = Number(await canvas.getAttribute('data-cell'));
  await canvas.click({ position: { x: cell * 5 + cell / 2, y: cell * 2 + cell / 2 } });
  await expect(page.getByTestId('inspector')).toContainText('element (2, 5)');
  await expect(page.getByTestId('drill-deviation')).toHaveText('k-block 1 is missing from the GPU sum');
  await expect(page.getByTestId('drill-table').locator('tbody tr')).toHaveCount(4);
  await expect(page.getByTestId('drill-row-1')).toHaveClass(/flag/);
  // The blocks that feed k-block 1: 32 activation and 32 weight codes, with their scales.
  await expect(page.getByTestId('operand-activation').locator('.codes span')).toHaveCount(32);
  await expect(page.getByTestId('operand-weight')).toContainText('Q8_0');
  await expect(page.getByTestId('operand-activation')).toContainText('d =');
  await page.getByTestId('drill-row-3').click();
  await expect(page.getByTestId('drill-operands')).toContainText('k-block 3 (k 96–127)');
  await expect(page.getByTestId('drill')).toHaveScreenshot('drill-down-skipped-block.png');
});

test('A/B: a pinned run against an edited kernel, side by side, and in the permalink', async ({ page }) => {
  await naive(page);
  await page.getByTestId('tab-ab').click();
  await page.getByTestId('ab-pin').click();
  await expect(page.getByTestId('ab-side-a')).toContainText('m=32 n=32 k=64');
  await expect(page.getByTestId('ab-side-b')).toContainText('the next run');
  const before = await runId(page);
  expect(await replaceInEditor(page, ...LANE3_BUG)).toBe(true);
  expect(await waitForNewRun(page, before)).toBe('done');
  await expect(page.getByTestId('ab-side-b')).toContainText('edited WGSL');
  await expect(page.getByTestId('ab-time')).toContainText('B/A');
  await expect(page.getByTestId('ab-ratio')).toContainText('B');
  await expect(page.getByTestId('ab-map-delta')).toBeVisible();
  await expect(page.getByTestId('ab-owner-diff')).toContainText('same owner');
  const diff = page.getByTestId('ab-wgsl-diff');
  await expect(diff.locator('.monaco-diff-editor')).toBeVisible();
  await expect(diff).toHaveAttribute('data-changes', '1');
  await expect(diff.locator('.line-insert, .char-insert').first()).toBeVisible();
  await page.getByTestId('ab-view').screenshot({ path: test.info().outputPath('ab-view-unmasked.png') });
  await expect(page.getByTestId('ab-view')).toHaveScreenshot('ab-view.png', {
    mask: [page.getByTestId('ab-time'), page.getByTestId('ab-ratio')],
  });

  // The link carries both sides; opened afresh, they are restored without runs, and nothing runs them.
  await page.waitForTimeout(400); // the hash is written debounced
  const hash = await page.evaluate(() => location.hash);
  await page.goto('/');
  await openApp(page, hash);
  await page.getByTestId('tab-ab').click();
  await expect(page.getByTestId('ab-side-a')).toContainText('from the link, not run here');
  await expect(page.getByTestId('ab-side-b')).toContainText('edited WGSL');
  await expect(page.getByTestId('ab-side-b')).toContainText('from the link, not run here');
  // Loading a side runs it here, and its run fills that side.
  const linked = await runId(page);
  await page.getByTestId('ab-load-b').click();
  await waitForNewRun(page, linked);
  await expect(page.getByTestId('ab-side-b')).not.toContainText('not run here');
  await expect(page.getByTestId('ab-side-a')).toContainText('not run here');
});

test('A/B: a new B while the WGSL diff is still computing throws nothing', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // Hold Monaco's editor worker back so the first diff is still being computed when the next run
  // replaces B (on a loaded machine this happens by itself; here it happens every time).
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route(/editor\.worker-[^/]*\.js$/, async (route) => {
    await held;
    await route.continue();
  });
  await openApp(page);
  const size = await pickKernel(page, 'mmq-q4k-tile');
  await waitForRun(page, 'mmq-q4k-tile', size);
  await page.getByTestId('tab-ab').click();
  await page.getByTestId('ab-pin').click();
  for (const [field, value] of [
    ['wm', 1],
    ['rm', 2],
  ] as const) {
    const before = await runId(page);
    await page.getByTestId(`param-${field}`).fill(String(value));
    expect(await waitForNewRun(page, before)).toBe('done');
    await expect(page.getByTestId('ab-wgsl-diff')).toBeVisible();
  }
  release();
  // The diff of the last B arrives, and the one it replaced was cancelled, not thrown.
  await expect(page.getByTestId('ab-wgsl-diff')).toHaveAttribute('data-changes', /^[1-9]/);
  await page.waitForTimeout(1000);
  expect(errors).toEqual([]);
});

test('the shape sweep runs a list of m, refuses what the kernel cannot run, and is stored', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await naive(page);
  await page.getByTestId('tab-sweep').click();
  await page.getByTestId('sweep-mode-list').check();
  await page.getByTestId('sweep-list').fill('8, 16, 32');
  await page.getByTestId('sweep-start').click();
  const current = page.getByTestId('sweep-current');
  await expect(current).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  await expect(page.getByTestId('sweep-why-8')).toContainText('m = 8 is not a multiple of 16');
  await expect(page.getByTestId('sweep-point-16')).toContainText('pass');
  await expect(page.getByTestId('sweep-point-32')).toContainText('pass');
  const chart = page.getByTestId('sweep-chart');
  await expect(chart).toHaveAttribute('data-points', '2');
  await expect(page.getByTestId('sweep-stored').locator('li')).toHaveCount(1);

  // No probe on this adapter yet: the sweep says so and offers it; once measured, every finished point
  // has a % of peak (table and chart line) and a place on the sweep's roofline, labelled with its m.
  const peaks = page.getByTestId('sweep-peaks');
  await expect(peaks).toHaveAttribute('data-use', 'no-probe');
  await expect(chart).toHaveAttribute('data-peak-points', '0');
  await expect(page.getByTestId('sweep-pct-16')).toHaveText('–');
  await expect(page.getByTestId('sweep-roofline')).toHaveCount(0);
  await page.getByTestId('sweep-probe').click();
  await expect(peaks).toHaveAttribute('data-use', 'measured', { timeout: 90_000 });
  await expect(peaks).toContainText(/[\d.]+ GB\/s copy/);
  for (const m of [16, 32]) await expect(page.getByTestId(`sweep-pct-${m}`)).toHaveText(/^[\d.e+-]+%$/);
  await expect(chart).toHaveAttribute('data-peak-points', '2');
  await expect(chart.locator('.recharts-legend-item', { hasText: '% of peak' })).toBeVisible();
  const roofline = page.getByTestId('sweep-roofline');
  await expect(roofline).toHaveAttribute('data-points', '2');
  await expect(roofline.locator('.recharts-scatter-symbol')).toHaveCount(2);
  for (const m of [16, 32])
    await expect(roofline.locator('.recharts-label-list text', { hasText: `m=${m}` })).toHaveCount(1);
  // The refused point keeps its reason and stays out of both charts.
  await expect(page.getByTestId('sweep-why-8')).toBeVisible();
  // The run's performance panel reads the same probe.
  await expect(page.getByTestId('perf')).toHaveAttribute('data-peaks', 'measured');

  // Unmasked, for readers (not a baseline: the curves and points are timing).
  await page
    .getByTestId('sweep-view')
    .screenshot({ path: test.info().outputPath('sweep-view-unmasked.png') });
  await expect(page.getByTestId('sweep-view')).toHaveScreenshot('sweep-view.png', {
    mask: [
      page.getByTestId('sweep-chart'),
      roofline.getByRole('application'),
      page.locator('.sweep-view .timing'),
    ],
  });

  // A bad list says why; a long sweep stops on cancel, keeping what it measured.
  await page.getByTestId('sweep-list').fill('16, x');
  await expect(page.getByTestId('sweep-error')).toHaveText("'x' is not a whole number >= 1");
  await page.getByTestId('sweep-list').fill('16, 32, 48, 64, 80, 96, 112, 128, 144, 160');
  await page.getByTestId('sweep-start').click();
  // A sweep estimated past the guard's limit (app/guard.ts) is asked about first; go ahead.
  await expect(page.getByTestId('sweep-cancel').or(page.getByTestId('run-estimate'))).toBeVisible();
  if (await page.getByTestId('run-estimate').isVisible()) {
    await expect(page.getByTestId('run-estimate')).toContainText(/This sweep is estimated at [\d.]+ (s|min)/);
    await page.getByTestId('start-anyway').click();
  }
  await expect(page.getByTestId('sweep-point-16')).toContainText('done', { timeout: 60_000 });
  await page.getByTestId('sweep-cancel').click();
  await expect(current).toHaveAttribute('data-status', 'cancelled', { timeout: 30_000 });
  await expect(page.getByTestId('sweep-point-160')).toContainText('cancelled');
  await expect(page.getByTestId('sweep-stored').locator('li')).toHaveCount(2);
});
