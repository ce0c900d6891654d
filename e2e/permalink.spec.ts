// Permalinks: the whole config and the edited WGSL in the URL hash; a fresh browser opening it sees the
// same state (same numbers); a corrupt or old link gives a clear message and the default config.
import { expect, test } from '@playwright/test';
import LZString from 'lz-string';
import { openApp, pickKernel, runId, summary, waitForNewRun, waitForRun } from './helpers';

const { compressToEncodedURIComponent } = LZString;

test('a copied link restores kernel, shape, plane, data, tab and the edited WGSL in a fresh browser', async ({
  page,
  browser,
}) => {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await openApp(page);
  const size = await pickKernel(page, 'mmq-q4k-rt', { m: 17, n: 50, k: 256 });
  await page.getByTestId('arm-scalar').check();
  await page.getByTestId('plane-select').selectOption('8');
  await page.getByTestId('data-random').click();
  await page.getByTestId('data-seed-number').fill('7');
  await waitForRun(page, 'mmq-q4k-rt', size);
  const before = await runId(page);
  // A harmless edit (a comment) so the link carries edited WGSL.
  await page.evaluate(() => window.__mmq!.editor()!.replace('^', '// shared via permalink\n'));
  expect(await waitForNewRun(page, before)).toBe('done');
  await page.getByTestId('tab-errors').click();
  const expected = await summary(page);
  const text = await page.evaluate(() => window.__mmq!.editor()!.getValue());
  await page.getByTestId('copy-link').click();
  await expect(page.getByTestId('copy-link')).toHaveText('link copied');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  expect(link).toMatch(/#v=1&s=/);

  const fresh = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  const other = await fresh.newPage();
  await other.goto(link);
  await expect(other.getByTestId('device-status')).toHaveAttribute('data-status', 'ready', {
    timeout: 30_000,
  });
  await waitForRun(other, 'mmq-q4k-rt');
  await expect(other.getByTestId('kernel-select')).toHaveValue('mmq-q4k-rt');
  await expect(other.getByTestId('shape-m')).toHaveValue('17');
  await expect(other.getByTestId('shape-n')).toHaveValue('50');
  await expect(other.getByTestId('plane-select')).toHaveValue('8');
  await expect(other.getByTestId('data-seed-number')).toHaveValue('7');
  await expect(other.getByTestId('data-random')).toHaveAttribute('aria-checked', 'true');
  await expect(other.getByTestId('arm-scalar')).toBeChecked();
  await expect(other.getByTestId('tab-errors')).toHaveAttribute('aria-selected', 'true');
  await expect(other.getByTestId('edited-badge')).toBeVisible();
  await expect.poll(() => other.evaluate(() => window.__mmq!.editor()?.getValue())).toBe(text);
  const got = await summary(other);
  expect({ ...got, edited: true }).toEqual({ ...expected, edited: true });
  await fresh.close();
});

test('a corrupt link shows a clear message and the default config still runs', async ({ page }) => {
  await openApp(page, '#v=1&s=NobodyCompressedThis');
  await expect(page.getByTestId('link-error')).toContainText('corrupt');
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  await page.getByTestId('link-error').getByRole('button', { name: 'Dismiss' }).click();
  await expect(page.getByTestId('link-error')).toHaveCount(0);
});

test('an old-version or invalid link says what is wrong', async ({ page }) => {
  await openApp(page, `#v=0&s=${compressToEncodedURIComponent('{}')}`);
  await expect(page.getByTestId('link-error')).toContainText('format v=0; this build reads v=1');
  const bad = {
    c: {
      kernel: 'mmq-q8-naive',
      m: -4,
      n: 16,
      k: 32,
      experts: 1,
      topk: 1,
      ytiles: 1,
      tile: { wm: 1, wn: 1, rm: 1, rn: 1 },
      arm: 'scalar',
      plane: 0,
      dataSource: 'seed',
      dataSeed: 0,
    },
  };
  await page.goto(`/#v=1&s=${compressToEncodedURIComponent(JSON.stringify(bad))}`);
  await expect(page.getByTestId('link-error')).toContainText('config.m must be an integer in 1..16384');
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
});

test('a coopmat staging runs its split plan, shows the whole-plan time, and the link keeps it', async ({
  page,
}) => {
  await openApp(page);
  const size = await pickKernel(page, 'coopmat-f16');
  await waitForRun(page, 'coopmat-f16', size);
  // The scalar arm's default is one pass: no plan figures, the seed's kernel in the editor.
  await expect(page.getByTestId('staging-select')).toHaveValue('');
  await expect(page.getByTestId('plan-ms')).toHaveCount(0);
  const before = await runId(page);
  const hashBefore = await page.evaluate(() => location.hash);
  await page.getByTestId('staging-select').selectOption('in-gemm');
  expect(await waitForNewRun(page, before)).toBe('done');
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  // Two passes (activation tiles, then the GEMM that decodes B), each timed, and the whole plan.
  await expect(page.getByTestId('pass-ms')).toHaveText(/= [\d.e+-]+ \+ [\d.e+-]+ alone/);
  await expect
    .poll(() => page.evaluate(() => window.__mmq!.editor()?.getValue() ?? ''))
    .toContain('coopmat-f16 split plan, pass 2');
  const expected = await summary(page);
  await expect.poll(() => page.evaluate(() => location.hash)).not.toBe(hashBefore);
  await page.reload();
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'ready', {
    timeout: 30_000,
  });
  await waitForRun(page, 'coopmat-f16', size);
  await expect(page.getByTestId('staging-select')).toHaveValue('in-gemm');
  expect(await summary(page)).toEqual(expected);
  // The Tuner tab opens on this family's hunt (tile and staging), not the int8 one.
  await page.getByTestId('tab-tuner').click();
  await expect(page.getByTestId('tuner-op')).toHaveValue('mmq_q4k_coopmat');
});
