// Hosted under a path: the test build copied to /mmq/ of a plain static server that serves nothing else
// (e2e/serve-subpath.ts, started by playwright.config.ts). Every request must succeed -- scripts, styles,
// the GPU and editor workers, the lazy editor and tuner chunks, the favicon, the README -- and a kernel runs.
import { expect, test } from '@playwright/test';
import { SUBPATH_URL as SUBPATH } from '../playwright.config';

test('the build runs under a sub-path: no request fails and a kernel matches its oracle', async ({
  page,
}) => {
  const failed: string[] = [];
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  page.on('requestfailed', (r) => failed.push(`failed ${r.url()}`));
  // Without the trailing slash the server redirects, as static hosts do.
  await page.goto(SUBPATH.replace(/\/$/, ''));
  expect(page.url()).toBe(SUBPATH);
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'ready', {
    timeout: 30_000,
  });
  await expect(page.getByTestId('verdict')).toContainText('matches oracle', { timeout: 60_000 });
  await expect(page.getByTestId('editor').locator('.view-line').first()).toBeVisible();
  await page.getByTestId('tab-tuner').click();
  await expect(page.getByTestId('tuner-dashboard')).toBeVisible();
  await page.getByTestId('glossary-open').click();
  const readme = await page.getByTestId('readme-link').getAttribute('href');
  const res = await page.request.get(new URL(readme!, SUBPATH).href);
  expect(res.status()).toBe(200);
  expect(await res.text()).toContain('# MMQ Playground');
  const icon = await page.locator('link[rel="icon"]').getAttribute('href');
  expect((await page.request.get(new URL(icon!, SUBPATH).href)).status()).toBe(200);
  expect(failed).toEqual([]);
});
