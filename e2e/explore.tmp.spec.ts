import { expect, test } from '@playwright/test';
import { openApp, pickKernel, SMALL, waitForRun } from './helpers';
test('explore', async ({ page }) => {
  test.setTimeout(300_000);
  page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  await openApp(page);
  for (const id of Object.keys(SMALL)) {
    await pickKernel(page, id);
    const s = await waitForRun(page, id);
    console.log(id, JSON.stringify({ pass: s.pass, rec: s.recorded, tile: s.tile, an: Object.keys(s.analytic) }));
    await expect(page.getByTestId('verdict')).toContainText('matches oracle');
    await page.screenshot({ path: `/tmp/ex-${id}.png` });
  }
});
