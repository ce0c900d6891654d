// The tuner in the browser: a small hunt on SwiftShader, its charts, and the run still there after a
// reload (IndexedDB).
import { expect, test } from '@playwright/test';
import { openApp } from './helpers';

test('a small hunt runs, charts its configs, and is still listed after a reload', async ({ page }) => {
  test.setTimeout(180_000);
  await openApp(page);
  await page.getByTestId('tab-tuner').click();
  const dash = page.getByTestId('tuner-dashboard');
  await expect(dash).toBeVisible();
  for (const [id, v] of [
    ['m', '32'],
    ['n', '64'],
    ['k', '256'],
    ['population', '4'],
    ['generations', '2'],
    ['iters', '2'],
    ['repeats', '1'],
    ['banks', '1'],
  ] as const) {
    await page.getByTestId(`tuner-${id}`).fill(v);
  }
  await page.getByTestId('tuner-hunt').click();
  await expect(page.getByTestId('tuner-summary')).toBeVisible({ timeout: 150_000 });
  const winner = await page.getByTestId('tuner-summary').getAttribute('data-winner');
  expect(winner).toBeTruthy();
  // The finalists' re-timings: the winner is one of them, next to at least one other (the incumbent).
  const finals = page.getByTestId('tuner-finals');
  await expect(finals).toBeVisible();
  await expect(finals.locator(`[data-config="${winner}"]`)).toHaveCount(1);
  // What the re-timings added to the hunt, clocked.
  await expect(finals).toContainText(/; \d+\.\d s in all\)/);
  expect(await finals.locator('[data-config]').count()).toBeGreaterThanOrEqual(2);
  await expect(page.getByTestId('tuner-convergence')).toHaveAttribute('data-winner-retimed', /^\d/);
  await expect(page.getByTestId('tuner-scatter')).toBeVisible();
  await expect(page.getByTestId('tuner-convergence')).toBeVisible();
  await expect(page.getByTestId('tuner-row').first()).toBeVisible();
  await expect(page.getByTestId('tuner-history-row')).toHaveCount(1);

  await page.reload();
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'ready', {
    timeout: 30_000,
  });
  await page.getByTestId('tab-tuner').click();
  await expect(page.getByTestId('tuner-history-row')).toHaveCount(1);
  await expect(page.getByTestId('tuner-history-row').first()).toContainText(winner!);
});
