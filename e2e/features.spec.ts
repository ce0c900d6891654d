// An adapter without the optional features Firefox and Safari lack (subgroups, timestamp-query,
// shader-f16), as a test build of the worker hides them: every family runs its scalar arm at the logical
// plane width of 32 and is timed by the wall clock, and the arms that need a feature say so.
import { expect, test } from '@playwright/test';
import { CATALOG } from '../src/kernels/catalog';
import { pickKernel, SMALL, waitForRun } from './helpers';

test('without subgroups, timestamps and f16 every family runs its scalar arm, timed by the wall clock', async ({
  page,
}) => {
  test.setTimeout(240_000);
  await page.goto('/?hide=subgroups,timestamp-query,shader-f16');
  const status = page.getByTestId('device-status');
  await expect(status).toHaveAttribute('data-status', 'ready', { timeout: 30_000 });
  await expect(status).toContainText('plane 32');
  await expect(status).toContainText('wall clock');
  await expect(status).not.toContainText('timestamps');
  const kernels = await page.evaluate(() => window.__mmq!.kernels());
  for (const kernel of kernels) {
    await test.step(kernel, async () => {
      const size = await pickKernel(page, kernel, SMALL[kernel] ?? {});
      await page.getByTestId('arm-scalar').check();
      // A subgroup-matrix arm is shown, and refused; a family may declare none (matvec-q4k).
      if (CATALOG.get(kernel).arms.some((a) => a.arm === 'subgroup-matrix'))
        await expect(page.getByTestId('arm-subgroup-matrix')).toBeDisabled();
      else await expect(page.getByTestId('arm-subgroup-matrix')).toHaveCount(0);
      const s = await waitForRun(page, kernel, size);
      expect(s.pass).toBe(true);
      await expect(page.getByTestId('verdict')).toContainText('matches oracle');
      await expect(page.getByTestId('timing-detail')).toContainText('wall clock (no timestamp queries here)');
      expect(await page.evaluate(() => window.__mmq!.status().timing?.resolutionNs)).toBeGreaterThan(0);
    });
  }
  await expect(page.getByTestId('arm-picker')).toContainText('subgroup matri');
});
