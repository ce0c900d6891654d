import { expect, test } from '@playwright/test';
test('smoke', async ({ page }) => {
  page.on('console', (m) => console.log('[console]', m.type(), m.text()));
  page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  await page.goto('/');
  await expect(page.getByTestId('verdict')).toContainText('matches oracle', { timeout: 60000 });
  await page.screenshot({ path: '/tmp/shot1.png' });
  await page.getByTestId('tab-errors').click();
  await page.screenshot({ path: '/tmp/shot2.png' });
});
