// Permalinks: the whole config and the edited WGSL in the URL hash; a fresh browser opening it sees the
// same state (same numbers); a corrupt or old link gives a clear message that says what happens instead.
import { expect, test } from '@playwright/test';
import LZString from 'lz-string';
import { openApp, pickKernel, runId, summary, waitForNewRun, waitForRun } from './helpers';

const { compressToEncodedURIComponent } = LZString;

test('a copied link restores kernel, shape, plane, data, tab and the edited WGSL in a fresh browser', async ({
  page,
  browser,
}) => {
  test.setTimeout(180_000); // two browsers, each opening a device on a loaded machine
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await openApp(page);
  const size = await pickKernel(page, 'mmq-q4k-rt', { m: 17, n: 50, k: 256 });
  await page.getByTestId('arm-scalar').check();
  await page.getByTestId('plane-select').selectOption('8');
  await page.getByTestId('data-random').click();
  await page.getByTestId('data-seed-number').fill('7');
  await waitForRun(page, 'mmq-q4k-rt', size);
  await expect.poll(() => page.evaluate(() => window.__mmq!.status().params)).toMatchObject({ m: 17 });
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
  expect(link).toMatch(/#v=2&s=/);

  const fresh = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  const other = await fresh.newPage();
  await other.goto(link);
  await expect(other.getByTestId('device-status')).toHaveAttribute('data-status', 'ready', {
    timeout: 30_000,
  });
  // A link from someone else is shown, not run, and nothing of it is stored until accepted.
  await expect(other.getByTestId('link-preview')).toContainText('with WGSL edited by whoever made the link');
  // The run bar and the results say the link waits for approval, and where to give it.
  await expect(other.getByTestId('run-blocked')).toHaveText(
    'Cannot run: this config came from a link and waits for your approval ("Run this linked kernel" above)',
  );
  await expect(other.getByTestId('results-link-waiting')).toContainText('"Run this linked kernel"');
  await expect(other.getByTestId('results')).not.toContainText('No run yet');
  await expect.poll(() => other.evaluate(() => window.__mmq!.editor()?.getValue())).toBe(text);
  await other.waitForTimeout(1500); // the debounced auto-run would have started by now
  expect(await other.evaluate(() => window.__mmq!.status().runId)).toBe(0);
  expect(await other.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('mmq')))).toEqual(
    [],
  );
  await other.getByTestId('link-accept').click();
  await expect(other.getByTestId('link-preview')).toHaveCount(0);
  await waitForRun(other, 'mmq-q4k-rt');
  await expect(other.getByTestId('kernel-select')).toHaveValue('mmq-q4k-rt');
  await expect(other.getByTestId('param-m')).toHaveValue('17');
  await expect(other.getByTestId('param-n')).toHaveValue('50');
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
  await openApp(page, '#v=2&s=NobodyCompressedThis');
  await expect(page.getByTestId('link-error')).toContainText('corrupt');
  await expect(page.getByTestId('link-error')).toContainText('Showing the default config instead.');
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  await page.getByTestId('link-error').getByRole('button', { name: 'Dismiss' }).click();
  await expect(page.getByTestId('link-error')).toHaveCount(0);
});

test('a corrupt hash typed into the same tab keeps the current config, and says so', async ({ page }) => {
  await openApp(page);
  await pickKernel(page, 'mmq-q4k-rt', { m: 17, n: 50, k: 256 });
  await waitForRun(page, 'mmq-q4k-rt', { rows: 17, cols: 50 });
  await page.evaluate(() => (window.location.hash = '#v=2&s=garbage'));
  await expect(page.getByTestId('link-error')).toContainText('corrupt');
  await expect(page.getByTestId('link-error')).toContainText('The config you had is kept.');
  await expect(page.getByTestId('kernel-select')).toHaveValue('mmq-q4k-rt');
  await expect(page.getByTestId('param-m')).toHaveValue('17');
});

test('an old-version or invalid link says what is wrong', async ({ page }) => {
  await openApp(page, `#v=0&s=${compressToEncodedURIComponent('{}')}`);
  await expect(page.getByTestId('link-error')).toContainText('format v=0; this build reads v=2');
  // A v=1 link (flat fields, the tile object) with a bad m.
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
  await expect(page.getByTestId('link-error')).toContainText(
    'm must be a whole number from 1 to 1048576 (got -4)',
  );
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
});

test('a split staging shows a tab per pass, times the plan and each pass apart, and the link keeps it', async ({
  page,
}) => {
  await openApp(page);
  const size = await pickKernel(page, 'coopmat-f16');
  await waitForRun(page, 'coopmat-f16', size);
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  // f16 arithmetic: its throughput in TFLOP/s, the oracle's f16 emulation said, the full-precision split shown.
  await expect(page.getByTestId('timing')).toContainText('TFLOP/s');
  await expect(page.getByTestId('oracle-kind')).toContainText('emulates');
  await expect(page.getByTestId('results-split-quant')).not.toHaveText('–');
  // The default staging is a split plan: pre-passes and the GEMM, each a tab, the GEMM editable.
  const tabs = page.getByTestId('pass-tabs').getByRole('tab');
  const passes = await tabs.count();
  expect(passes).toBeGreaterThan(1);
  await expect(tabs.last()).toContainText('(editable)');
  await expect(page.getByTestId('pass-ms').locator('li')).toHaveCount(passes);
  await expect(page.getByTestId('pass-ms')).toContainText('separate measurements');
  await page.getByTestId('pass-tab-0').click();
  await expect.poll(() => page.evaluate(() => window.__mmq!.editor()?.readOnly())).toBe(true);
  const pre = await page.evaluate(() => window.__mmq!.editor()!.getValue());
  await page.getByTestId(`pass-tab-${passes - 1}`).click();
  await expect.poll(() => page.evaluate(() => window.__mmq!.editor()?.readOnly())).toBe(false);
  expect(await page.evaluate(() => window.__mmq!.editor()!.getValue())).not.toBe(pre);

  const before = await runId(page);
  const hashBefore = await page.evaluate(() => location.hash);
  await page.getByTestId('param-staging').selectOption('in-gemm');
  expect(await waitForNewRun(page, before)).toBe('done');
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  // Two passes now (activation tiles, then the GEMM that decodes B), each timed alone.
  await expect(tabs).toHaveCount(2);
  await expect(page.getByTestId('pass-ms').locator('li')).toHaveCount(2);
  const expected = await summary(page);
  await expect.poll(() => page.evaluate(() => location.hash)).not.toBe(hashBefore);
  await page.reload();
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'ready', {
    timeout: 30_000,
  });
  await waitForRun(page, 'coopmat-f16', size);
  await expect(page.getByTestId('param-staging')).toHaveValue('in-gemm');
  expect(await summary(page)).toEqual(expected);
  // The Tuner tab opens on this family's hunt (tile and staging), not the int8 one.
  await page.getByTestId('tab-tuner').click();
  await expect(page.getByTestId('tuner-kernel')).toHaveValue('coopmat-f16');
});
