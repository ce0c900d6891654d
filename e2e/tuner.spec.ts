// The tuner in the browser: a small hunt on SwiftShader, its charts, the hunt going on while another tab
// is shown, a run asked for meanwhile queued behind it (and said so), every measured config saved as it
// arrives, so a reload mid-hunt lists the run as interrupted and 'resume' finishes it without measuring
// again what was measured; importing a Kernel Tuner cache file says what it read.
import { writeFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { ktExport } from '../src/app/tuner/ktExport';
import { tileEntry, tileReport } from '../test/tileReport';
import { openApp } from './helpers';

async function fillHunt(page: Page, evo: Record<string, string>) {
  for (const [id, v] of Object.entries({ 'param-m': '32', 'param-n': '64', 'param-k': '256', ...evo }))
    await page.getByTestId(`tuner-${id}`).fill(v);
}

test('a small hunt runs, charts its configs, keeps going behind other tabs, and is listed after a reload', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await openApp(page);
  await page.getByTestId('tab-tuner').click();
  await expect(page.getByTestId('tuner-dashboard')).toBeVisible();
  await fillHunt(page, { population: '4', generations: '2', measureMs: '2', batches: '1', banks: '1' });
  await page.getByTestId('tuner-rehunt').click();
  await expect(page.getByTestId('tuner-running')).toBeVisible();
  // Another tab while it hunts; the hunt goes on, and a run waits behind it, saying so.
  await page.getByTestId('tab-ownership').click();
  await expect(page.getByTestId('tab-tuner')).toContainText('hunting');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('run-queued')).toContainText("Queued behind the tuner's hunt");
  await page.getByTestId('tab-tuner').click();
  // Coming back shows the same hunt (its form kept), and its result when it ends.
  await expect(page.getByTestId('tuner-population')).toHaveValue('4');
  await expect(page.getByTestId('tuner-summary')).toBeVisible({ timeout: 150_000 });
  const winner = await page.getByTestId('tuner-summary').getAttribute('data-winner');
  expect(winner).toBeTruthy();
  // A fresh hunt's winner beat the incumbent measurably, or is the incumbent (said without a ratio).
  const kind = await page.getByTestId('tuner-summary').getAttribute('data-kind');
  expect(kind).toMatch(/^(challenger|incumbent)$/);
  if (kind === 'incumbent') await expect(page.getByTestId('tuner-versus')).not.toContainText(/\dx\b/);
  const finals = page.getByTestId('tuner-finals');
  await expect(finals).toBeVisible();
  await expect(finals.locator(`[data-config="${winner}"]`)).toHaveCount(1);
  await expect(finals).toContainText(/; \d+\.\d s in all\)/);
  await expect(page.getByTestId('tuner-convergence')).toHaveAttribute('data-winner-retimed', /^\d/);
  await expect(page.getByTestId('tuner-scatter')).toBeVisible();
  await expect(page.getByTestId('tuner-row').first()).toBeVisible();
  await expect(page.getByTestId('tuner-history-row')).toHaveCount(1);
  await expect(page.getByTestId('tuner-history-row')).toHaveAttribute('data-status', 'complete');
  // The queued run ran after the hunt.
  await expect.poll(() => page.evaluate(() => window.__mmq!.status().run)).toBe('done');

  // Loading the winner goes to the playground; coming back shows the hunt, not "no generations yet".
  await page.getByTestId('tuner-load-winner').click();
  await expect(page.getByTestId('tab-ownership')).toHaveAttribute('aria-selected', 'true');
  await page.getByTestId('tab-tuner').click();
  await expect(page.getByTestId('tuner-summary')).toHaveAttribute('data-winner', winner!);

  await page.reload();
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'ready', {
    timeout: 30_000,
  });
  await page.getByTestId('tab-tuner').click();
  await expect(page.getByTestId('tuner-history-row')).toHaveCount(1);
  await expect(page.getByTestId('tuner-history-row').first()).toContainText(winner!);
  // The last run is shown again after the reload.
  await expect(page.getByTestId('tuner-summary')).toHaveAttribute('data-winner', winner!);
});

test('a reload mid-hunt keeps what was measured: the run is listed interrupted and resumes', async ({
  page,
}) => {
  test.setTimeout(240_000);
  await openApp(page);
  await page.getByTestId('tab-tuner').click();
  await fillHunt(page, { population: '4', generations: '3', measureMs: '2', batches: '1', banks: '1' });
  await page.getByTestId('tuner-rehunt').click();
  // Reload once a few configs were measured (each is saved to IndexedDB as it arrives).
  await expect
    .poll(() => page.evaluate(() => window.__mmq!.tuner().entries), { timeout: 120_000 })
    .toBeGreaterThanOrEqual(3);
  const measured = await page.evaluate(() => window.__mmq!.tuner().entries);
  await page.reload();
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'ready', {
    timeout: 30_000,
  });
  await page.getByTestId('tab-tuner').click();
  await expect(page.getByTestId('tuner-history-row')).toHaveAttribute('data-status', 'interrupted');
  await expect(page.getByTestId('tuner-status')).toHaveAttribute('data-state', 'interrupted');
  const kept = await page.evaluate(() => window.__mmq!.tuner().runs[0]!.entries);
  expect(kept).toBeGreaterThanOrEqual(measured - 1); // the last entry may still have been in flight
  await expect(page.getByTestId('tuner-row')).toHaveCount(kept);

  await page.getByTestId('tuner-resume').click();
  await expect(page.getByTestId('tuner-running')).toContainText(`(${kept} replayed from before)`);
  await expect(page.getByTestId('tuner-summary')).toBeVisible({ timeout: 200_000 });
  await expect(page.getByTestId('tuner-history-row')).toHaveAttribute('data-status', 'complete');
  expect(await page.evaluate(() => window.__mmq!.tuner().runs[0]!.entries)).toBeGreaterThan(kept);
});

test('importing a Kernel Tuner cache file says what it read and what had no timing, and why', async ({
  page,
}) => {
  const report = tileReport(
    [
      tileEntry(2, 'measured', 1.5),
      tileEntry(1, 'measured', 1.2),
      tileEntry(4, 'rejected', Infinity, 'workgroup storage 40 KiB > 32 KiB'),
    ],
    'elsewhere#plane32',
  );
  const path = test.info().outputPath('run.kt.json');
  writeFileSync(path, ktExport(report, 'json'));
  await openApp(page);
  await page.getByTestId('tab-tuner').click();
  await page.getByTestId('tuner-import-file').setInputFiles(path);
  await expect(page.getByTestId('tuner-import-read')).toHaveText(
    'read run.kt.json (Kernel Tuner cache): 1 run, 3 configs, 2 measured; without a timing: 1 config (workgroup storage 40 KiB > 32 KiB); nothing skipped',
  );
  await expect(page.getByTestId('tuner-history-row')).toHaveCount(1);
  // A file that is not one says so, and no stale summary stays beside the error.
  const bad = test.info().outputPath('notes.json');
  writeFileSync(bad, '{"hello": 1}');
  await page.getByTestId('tuner-import-file').setInputFiles(bad);
  await expect(page.getByTestId('tuner-import-error')).toContainText(
    'not an MMQ Playground tune-runs export',
  );
  await expect(page.getByTestId('tuner-import-read')).toHaveCount(0);
});
