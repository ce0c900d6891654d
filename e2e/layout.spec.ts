// Layout from 1024 px wide: nothing scrolls sideways, Run is always in view, nothing a user must read is
// cut off; at 1440 px the editor shows at least 80 columns; the splitter moves; a heatmap click brings
// the inspector into view. Screenshot baselines at 1024x768 and 1440x900 (run timings masked).
import { expect, test, type Locator, type Page } from '@playwright/test';
import { openApp, pickKernel, waitForRun } from './helpers';

async function inViewport(page: Page, el: Locator) {
  const box = await el.boundingBox();
  const vp = page.viewportSize()!;
  expect(box, 'laid out').not.toBeNull();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.y).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(vp.width);
  expect(box!.y + box!.height).toBeLessThanOrEqual(vp.height);
}

/** Elements whose text must be read whole: none may be clipped (scrollWidth beyond clientWidth). */
async function clipped(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [
      '[data-testid="kernel-title"]',
      '[data-testid="reset"]',
      '[data-testid="launch"]',
      '[data-testid="verdict"]',
      '[data-testid="run"]',
      '[data-testid="device-status"]',
      '[data-testid="timing-detail"]',
    ].flatMap((sel) => {
      const el = document.querySelector(sel);
      return el && el.scrollWidth > el.clientWidth + 1 ? [sel] : [];
    }),
  );
}

const masks = (page: Page) => [
  page.getByTestId('timing'),
  page.locator('.monaco-editor .cursors-layer'),
  page.locator('.monaco-editor .view-overlays'),
  page.getByTestId('device-status'),
];

test.describe('at 1024x768', () => {
  test.use({ viewport: { width: 1024, height: 768 } });

  test('no sideways scroll, Run and the verdict in view, nothing cut off', async ({ page }) => {
    await openApp(page);
    await waitForRun(page, 'mmq-q8-naive');
    const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(over).toBeLessThanOrEqual(0);
    await inViewport(page, page.getByTestId('run'));
    await inViewport(page, page.getByTestId('cancel'));
    await page.getByTestId('verdict').scrollIntoViewIfNeeded();
    await inViewport(page, page.getByTestId('verdict'));
    expect(await clipped(page)).toEqual([]);
    await page.getByTestId('verdict').evaluate((el) => el.closest('.work')?.scrollTo(0, 0));
    await expect(page).toHaveScreenshot('layout-1024x768.png', { mask: masks(page) });
  });

  test('a heatmap click brings the inspector into view', async ({ page }) => {
    await openApp(page);
    await waitForRun(page, 'mmq-q8-naive');
    await page.getByTestId('tab-errors').click();
    const canvas = page.getByTestId('heatmap-canvas');
    await canvas.scrollIntoViewIfNeeded();
    await canvas.click({ position: { x: 5, y: 5 } });
    await expect(page.getByTestId('inspector')).toBeInViewport();
  });
});

test.describe('at 1440x900', () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test('the editor shows 80 columns, the splitter moves, nothing is cut off', async ({ page }) => {
    await openApp(page);
    await waitForRun(page, 'mmq-q8-naive');
    await expect
      .poll(() => page.evaluate(() => window.__mmq!.editor()?.columns() ?? 0))
      .toBeGreaterThanOrEqual(80);
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    expect(await clipped(page)).toEqual([]);
    await expect(page).toHaveScreenshot('layout-1440x900.png', { mask: masks(page) });
    // Drag the splitter 200 px left: the results widen, the editor narrows.
    const cols = await page.evaluate(() => window.__mmq!.editor()!.columns());
    const s = (await page.getByTestId('splitter').boundingBox())!;
    await page.mouse.move(s.x + s.width / 2, s.y + 200);
    await page.mouse.down();
    await page.mouse.move(s.x + s.width / 2 - 200, s.y + 200, { steps: 5 });
    await page.mouse.up();
    await expect.poll(() => page.evaluate(() => window.__mmq!.editor()!.columns())).toBeLessThan(cols - 10);
    // Hiding the controls gives the editor their width.
    await page.getByTestId('toggle-controls').click();
    await expect.poll(() => page.evaluate(() => window.__mmq!.editor()!.columns())).toBeGreaterThan(cols);
  });

  test('the performance tables fit the results pane: it does not scroll sideways', async ({ page }) => {
    test.setTimeout(120_000);
    await openApp(page);
    // The widest case: a plan of three passes with long labels, the peaks measured, the method shown.
    const size = await pickKernel(page, 'coopmat-f16');
    await waitForRun(page, 'coopmat-f16', size);
    await page.getByTestId('perf-probe').click();
    await expect(page.getByTestId('perf')).toHaveAttribute('data-peaks', 'measured', { timeout: 60_000 });
    await page.getByTestId('perf-method-toggle').click();
    await expect(page.getByTestId('perf-row')).toHaveCount(4);
    const widths = await page.evaluate(() => {
      const side = document.querySelector<HTMLElement>('.side')!;
      const box = side.getBoundingClientRect();
      return {
        side: side.scrollWidth - side.clientWidth,
        tables: ['perf-table', 'perf-method'].map((id) => {
          const t = document.querySelector<HTMLElement>(`[data-testid="${id}"]`)!;
          const r = t.getBoundingClientRect();
          return {
            id,
            overRight: r.right - box.right,
            overWrap: t.scrollWidth - t.parentElement!.clientWidth,
          };
        }),
      };
    });
    expect(widths.side).toBeLessThanOrEqual(0);
    for (const t of widths.tables) {
      expect(t.overRight, t.id).toBeLessThanOrEqual(0);
      expect(t.overWrap, t.id).toBeLessThanOrEqual(0);
    }
  });
});
