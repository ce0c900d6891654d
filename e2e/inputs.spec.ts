// Number fields a newcomer can edit: free typing with a draft that is never lost or snapped back, the
// reason a draft is not a value said under the field, nothing run while one is invalid, ArrowUp/Down by
// the value's valid step (k by the Q4_K block, m by the tile where the kernel has no tail guards).
import { expect, test, type Locator, type Page } from '@playwright/test';
import { openApp, pickKernel, runId, waitForRun } from './helpers';

const params = (page: Page) => page.evaluate(() => window.__mmq!.status().params);

async function retype(field: Locator, keys: string[]) {
  await field.click();
  await field.press('End');
  for (const k of keys) await field.press(k);
}

test('typing in a number field: backspace to empty and type, negative, exponent, fraction', async ({
  page,
}) => {
  await openApp(page);
  await waitForRun(page, 'mmq-q8-naive');
  await pickKernel(page, 'mmq-q4k-rt', {});
  await waitForRun(page, 'mmq-q4k-rt');
  const n = page.getByTestId('param-n');
  await expect(n).toHaveValue('100');
  // 100 -> 10 -> 1 -> '' (a draft, said why), then 256: never 1256.
  await retype(n, ['Backspace', 'Backspace', 'Backspace']);
  await expect(n).toHaveValue('');
  await expect(page.getByTestId('param-n-problem')).toHaveText(
    'n is empty: type a whole number from 1 to 1048576',
  );
  await expect(page.getByTestId('run')).toBeDisabled();
  await expect(page.getByTestId('run-blocked')).toContainText('a field holds an invalid value');
  await n.pressSequentially('256');
  await expect(n).toHaveValue('256');
  await expect(page.getByTestId('param-n-problem')).toHaveCount(0);
  expect((await params(page)).n).toBe(256);
  const done = await waitForRun(page, 'mmq-q4k-rt', { rows: 50, cols: 256 });
  expect(done.pass).toBe(true);

  const before = await runId(page);
  for (const [text, problem] of [
    ['-5', 'n = -5 must be at least 1'],
    ['1e9', 'n = 1e9: write the number in digits (no exponent)'],
    ['3.5', 'n = 3.5 must be a whole number'],
  ] as const) {
    await n.fill(text);
    await expect(n).toHaveValue(text); // kept as typed, not coerced ("05", "19", "3")
    await expect(page.getByTestId('param-n-problem')).toHaveText(problem);
    expect((await params(page)).n).toBe(256); // the last valid value stays in the config
    // The editor says its kernel is the last valid value's, not the field's text.
    await expect(page.getByTestId('draft-notice')).toContainText(problem);
  }
  // Nothing runs while a draft is invalid, and the draft survives a blur.
  await page.getByTestId('kernel-title').click();
  await page.waitForTimeout(1500);
  expect(await runId(page)).toBe(before);
  await expect(n).toHaveValue('3.5');
  await n.fill('64');
  await expect(page.getByTestId('param-n-problem')).toHaveCount(0);
  await expect(page.getByTestId('draft-notice')).toHaveCount(0);
  await waitForRun(page, 'mmq-q4k-rt', { rows: 50, cols: 64 });
});

test("a tile field takes a new digit after backspace; arrows step by the value's valid step", async ({
  page,
}) => {
  await openApp(page);
  await pickKernel(page, 'mmq-q4k-tile', {});
  await waitForRun(page, 'mmq-q4k-tile');
  const wm = page.getByTestId('param-wm');
  await expect(wm).toHaveValue('2');
  await retype(wm, ['Backspace']);
  await wm.pressSequentially('4');
  await expect(wm).toHaveValue('4'); // not 24
  expect((await params(page)).wm).toBe(4);
  // k steps by the Q4_K super-block.
  const k = page.getByTestId('param-k');
  await k.fill('300');
  await expect(page.getByTestId('problems')).toContainText('k = 300 is not a multiple of 256');
  await k.press('ArrowUp');
  await expect(k).toHaveValue('512');
  await k.press('ArrowUp');
  await expect(k).toHaveValue('768');
  await k.press('ArrowDown');
  await expect(k).toHaveValue('512');
  // A kernel without tail guards steps m by its 32-row tile.
  await pickKernel(page, 'mmq-q8-tiled', {});
  const m = page.getByTestId('param-m');
  await expect(m).toHaveValue('64');
  await m.press('ArrowUp');
  await expect(m).toHaveValue('96');
  await m.press('ArrowDown');
  await m.press('ArrowDown');
  await expect(m).toHaveValue('32');
  // A model preset sets a real GEMM's shape (through the family's own shapeParams).
  await page.getByTestId('auto-run').uncheck();
  await page.getByTestId('shape-preset-model').selectOption('llama-3.1-8b');
  await page.getByTestId('shape-preset-gemm').selectOption('ffn_down');
  await page.getByTestId('shape-preset-rows').selectOption('64');
  await page.getByTestId('shape-preset-apply').click();
  expect(await params(page)).toMatchObject({ m: 64, n: 4096, k: 14336 });
  await expect(page.getByTestId('problems')).toHaveCount(0);
});

test("the tuner's form says why it cannot hunt, inline", async ({ page }) => {
  await openApp(page);
  await page.getByTestId('tab-tuner').click();
  await page.getByTestId('tuner-param-k').fill('300');
  await page.getByTestId('tuner-population').fill('');
  const blockers = page.getByTestId('tuner-blockers');
  await expect(blockers).toContainText('k = 300 is not a multiple of 256');
  await expect(blockers).toContainText('population is empty');
  await expect(page.getByTestId('tuner-population-problem')).toBeVisible();
  await expect(page.getByTestId('tuner-hunt')).toBeDisabled();
});
