// Editing the kernel: compile errors as Monaco markers on the right line, a wrong edit lighting up the
// heatmap (and the ownership summary naming the guilty lane), the buffer surviving a reload, Ctrl/Alt+Enter
// anywhere on the page.
import { expect, test, type Page } from '@playwright/test';
import { openApp, pickKernel, runId, summary, waitForNewRun, waitForRun } from './helpers';

const editorText = (page: Page) => page.evaluate(() => window.__mmq!.editor()!.getValue());
const markers = (page: Page) => page.evaluate(() => window.__mmq!.editor()!.markers());
const replaceInEditor = (page: Page, pattern: string, replacement: string) =>
  page.evaluate(([p, r]) => window.__mmq!.editor()!.replace(p!, r!), [pattern, replacement]);

/** Double the value every lane-3 invocation stores: valid WGSL, wrong result, one guilty lane. */
const LANE3_BUG = [
  'store_out\\(([^;]*?), ([^;]*)\\);',
  'store_out($1, ($2) * select(1.0, 2.0, lane == 3u));',
] as const;

test.beforeEach(async ({ page }) => {
  await openApp(page);
  await pickKernel(page, 'mmq-q8-naive');
  await waitForRun(page, 'mmq-q8-naive');
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
});

test('typing a syntax error puts a Monaco marker on that line and keeps the buffer', async ({ page }) => {
  const lines = (await editorText(page)).split('\n').length;
  const before = await runId(page);
  await page.getByTestId('editor').locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('\nfn broken( {');
  expect(await waitForNewRun(page, before)).toBe('compile-error');
  await expect(page.getByTestId('compile-errors')).toContainText(`line ${lines + 1}:`);
  await expect(page.getByTestId('run-compile-error')).toBeVisible();
  const errs = (await markers(page)).filter((m) => m.severity === 8);
  expect(errs.map((m) => m.line)).toContain(lines + 1);
  await expect(page.getByTestId('editor').locator('.squiggly-error').first()).toBeVisible();
  await expect(page.getByTestId('edited-badge')).toBeVisible();

  await page.getByTestId('reset').click();
  await expect(page.getByTestId('generated-badge')).toBeVisible();
  expect(await waitForNewRun(page, before + 1)).toBe('done');
  await expect(page.getByTestId('verdict')).toContainText('matches oracle');
  expect((await markers(page)).length).toBe(0);
});

test('an error in the host suffix is reported as such, pinned to the last line', async ({ page }) => {
  const before = await runId(page);
  expect(
    await replaceInEditor(page, 'var<storage, read_write> out\\b', 'var<storage, read_write> out_renamed'),
  ).toBe(true);
  expect(await waitForNewRun(page, before)).toBe('compile-error');
  await expect(page.getByTestId('compile-errors')).toContainText('in host suffix');
  await expect(page.getByTestId('compile-errors')).toContainText('(host suffix)');
  const lines = (await editorText(page)).split('\n').length;
  expect((await markers(page)).some((m) => m.line === lines && m.message.startsWith('in host suffix'))).toBe(
    true,
  );
});

test('a wrong edit lights up the heatmap where it is wrong, and names the lane', async ({ page }) => {
  const before = await runId(page);
  expect(await replaceInEditor(page, ...LANE3_BUG)).toBe(true);
  expect(await waitForNewRun(page, before)).toBe('done');
  await expect(page.getByTestId('verdict')).toContainText('differs from oracle');
  const s = await summary(page);
  expect(s.edited).toBe(true);
  expect(s.badLanes).toEqual([3]);
  expect(s.bad).toBe((s.rows * s.cols) / 4); // plane 4: each lane owns a quarter of every tile
  expect(s.recorded).toMatchObject({ never: 0, twice: 0 });
  // The error buffer numerically (hashes of the output and of the log-binned error field), beside the pixels.
  expect(JSON.stringify(s, null, 2)).toMatchSnapshot('heatmap-lane3-bug.json');

  await page.getByTestId('tab-errors').click();
  await expect(page.getByTestId('bad-sentence')).toContainText('lane 3');
  const canvas = page.getByTestId('heatmap-canvas');
  await expect(canvas).toHaveScreenshot('heatmap-lane3-bug.png');
  // Click a lane-3 element (rows 12..15 of the first 16x16 tile at plane 4): owner and value vs oracle.
  const cell = Number(await canvas.getAttribute('data-cell'));
  await canvas.click({ position: { x: cell * 2 + cell / 2, y: cell * 13 + cell / 2 } });
  await expect(page.getByTestId('inspector')).toContainText('lane 3');
  await expect(page.getByTestId('inspector')).toContainText('fails the gate');
  await expect(page.getByTestId('inspector-owner')).toContainText('workgroup 0, plane 0, lane 3');
});

test('the edited buffer survives a reload (localStorage), also without the permalink', async ({ page }) => {
  expect(await replaceInEditor(page, ...LANE3_BUG)).toBe(true);
  const edited = await editorText(page);
  await page.waitForTimeout(400); // the hash and the buffer store are debounced
  await page.goto('/'); // no hash: only localStorage can bring the edit back
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'ready');
  await pickKernel(page, 'mmq-q8-naive');
  await expect(page.getByTestId('edited-badge')).toBeVisible();
  await expect.poll(() => editorText(page)).toBe(edited);
});

test('Ctrl+Enter and Alt+Enter run the kernel, in the editor and anywhere on the page', async ({ page }) => {
  await page.getByTestId('auto-run').uncheck();
  await page.getByTestId('editor').locator('.view-lines').click();
  let before = await runId(page);
  await page.keyboard.press('Control+Enter');
  expect(await waitForNewRun(page, before)).toBe('done');
  before = await runId(page);
  await page.keyboard.press('Alt+Enter');
  expect(await waitForNewRun(page, before)).toBe('done');
  // Focus outside the editor: a number field, then the page itself.
  await page.getByTestId('data-seed-number').click();
  before = await runId(page);
  await page.keyboard.press('Control+Enter');
  expect(await waitForNewRun(page, before)).toBe('done');
  await page.getByTestId('kernel-title').click();
  before = await runId(page);
  await page.keyboard.press('Alt+Enter');
  expect(await waitForNewRun(page, before)).toBe('done');
});

test('Tab does not trap the keyboard in the editor: Escape then Tab leaves, Tab from the page passes', async ({
  page,
}) => {
  const text = await editorText(page);
  // The editor's text input (Monaco keeps other focusable parts inside it too).
  const inEditor = () =>
    page.evaluate(() => {
      const a = document.activeElement;
      return !!a?.closest('[data-testid="editor"] .monaco-editor') && a?.tagName === 'TEXTAREA';
    });
  await page.getByTestId('editor').locator('.view-lines').click();
  expect(await inEditor()).toBe(true);
  await page.keyboard.press('Escape');
  await page.keyboard.press('Tab');
  expect(await inEditor()).toBe(false);
  // Back in by Shift+Tab, then ten Tabs: focus moves on, nothing is indented.
  for (let i = 0; i < 4 && !(await inEditor()); i++) await page.keyboard.press('Shift+Tab');
  expect(await inEditor()).toBe(true);
  await page.keyboard.press('Tab');
  expect(await inEditor()).toBe(false);
  for (let i = 0; i < 9; i++) await page.keyboard.press('Tab'); // around the page, through the editor again
  await page.waitForTimeout(800); // an edit would be debounced into a run by now
  expect(await editorText(page)).toBe(text);
  await expect(page.getByTestId('edited-badge')).toHaveCount(0);
  // Clicked and typed in, Tab indents again (the editor's own use of it).
  await page.getByTestId('editor').locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('\n');
  await page.keyboard.press('Tab');
  expect(await inEditor()).toBe(true);
  expect(await editorText(page)).not.toBe(text);
});
