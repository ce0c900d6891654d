// The keyboard alone: the glossary is a dialog that holds focus (focus moves in, Tab cycles inside,
// Escape closes it and gives focus back), the view tabs follow the WAI-ARIA tabs pattern (Left/Right,
// Home/End, one tab stop), and the error heatmap and the ownership grid take focus: the arrow keys move
// a highlighted element, announced in a live region, and Enter opens what a click opens.
import { expect, test, type Page } from '@playwright/test';
import { openApp, pickKernel, runId, waitForNewRun, waitForRun } from './helpers';

/** Where focus is: the data-testid of the focused element, and whether it is inside the glossary. */
const focus = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return {
      id: el?.dataset.testid ?? el?.tagName ?? '',
      inGlossary: !!el?.closest('[data-testid="glossary"]'),
    };
  });

test('the glossary holds focus: in on open, Tab cycles inside, Escape closes and gives it back', async ({
  page,
}) => {
  await openApp(page);
  await page.getByTestId('glossary-open').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('glossary')).toBeVisible();
  expect(await focus(page)).toEqual({ id: 'glossary-close', inGlossary: true });
  // Its two focusable elements, Close and the README link, in a cycle both ways.
  await page.keyboard.press('Tab');
  expect(await focus(page)).toEqual({ id: 'readme-link', inGlossary: true });
  await page.keyboard.press('Tab');
  expect(await focus(page)).toEqual({ id: 'glossary-close', inGlossary: true });
  await page.keyboard.press('Shift+Tab');
  expect(await focus(page)).toEqual({ id: 'readme-link', inGlossary: true });
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('glossary')).toHaveCount(0);
  expect(await focus(page)).toEqual({ id: 'glossary-open', inGlossary: false });
});

test('the view tabs move with Left/Right (wrapping) and Home/End, with one tab stop', async ({ page }) => {
  await openApp(page);
  const selected = () =>
    page.evaluate(() => ({
      selected: document.querySelector('[role="tab"][aria-selected="true"]')?.getAttribute('data-testid'),
      focused: (document.activeElement as HTMLElement | null)?.dataset.testid,
      stops: document.querySelectorAll('[role="tab"][tabindex="0"]').length,
    }));
  await page.getByTestId('tab-ownership').focus();
  for (const [key, tab] of [
    ['ArrowRight', 'tab-errors'],
    ['ArrowRight', 'tab-ab'],
    ['End', 'tab-config'],
    ['ArrowRight', 'tab-ownership'],
    ['ArrowLeft', 'tab-config'],
    ['Home', 'tab-ownership'],
  ] as const) {
    await page.keyboard.press(key);
    expect(await selected(), key).toEqual({ selected: tab, focused: tab, stops: 1 });
  }
  // The panel is the selected tab's.
  await page.keyboard.press('ArrowRight');
  await expect(page.getByRole('tabpanel', { name: 'Errors' })).toBeVisible();
});

test('the heatmap and the ownership grid work from the keyboard: arrows, a live region, Enter', async ({
  page,
}) => {
  await openApp(page);
  const size = await pickKernel(page, 'mmq-q8-naive', { m: 32, n: 32, k: 128 });
  await waitForRun(page, 'mmq-q8-naive', size);
  // Skip k-block 1 (as the drill-down test does), so the inspector has something to say.
  const before = await runId(page);
  expect(
    await page.evaluate(() =>
      window
        .__mmq!.editor()!
        .replace('let k0w = kb \\* 8u;', 'if (kb == 1u) { continue; }\n    let k0w = kb * 8u;'),
    ),
  ).toBe(true);
  expect(await waitForNewRun(page, before)).toBe('done');
  await page.getByTestId('tab-errors').click();
  // Tab reaches the map after the view's own controls.
  await page.getByTestId('overlay').focus();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  expect((await focus(page)).id).toBe('heatmap-canvas');
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
  for (let i = 0; i < 2; i++) await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('heatmap-canvas-live')).toContainText('(2, 5) GPU');
  await expect(page.getByTestId('heatmap-hover')).toContainText('(2, 5) GPU');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('inspector')).toContainText('element (2, 5)');
  await expect(page.getByTestId('drill-deviation')).toHaveText('k-block 1 is missing from the GPU sum');

  await page.getByTestId('tab-ownership').click();
  const grid = page.getByTestId('ownership-canvas');
  await grid.focus();
  await page.keyboard.press('ArrowLeft'); // from the selected element (2, 5)
  await expect(page.getByTestId('ownership-canvas-live')).toContainText('(2, 4) → workgroup');
  await page.keyboard.press(' ');
  await expect(page.getByTestId('inspector')).toContainText('element (2, 4)');
});
