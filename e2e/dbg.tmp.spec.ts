import { test } from '@playwright/test';
import { openApp, pickKernel, runId, waitForNewRun, waitForRun } from './helpers';
test('dbg', async ({ page }) => {
  await openApp(page);
  await pickKernel(page, 'mmq-q8-naive');
  await waitForRun(page, 'mmq-q8-naive');
  const before = await runId(page);
  await page.getByTestId('editor').locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('\nfn broken( {');
  await waitForNewRun(page, before);
  await page.waitForTimeout(1500);
  console.log(await page.evaluate(() => [...document.querySelectorAll('[class*=squiggly]')].map((e) => e.className + ' ' + (e.parentElement?.className ?? '')).join('\n')));
  console.log(await page.evaluate(() => [...document.querySelectorAll('.view-overlays')].map((e) => e.children.length).join(',')));
  await page.screenshot({ path: '/tmp/dbg.png' });
});
