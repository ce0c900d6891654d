// Shared e2e steps: wait for the device, pick a kernel and a shape, wait for a run, read window.__mmq.
import { expect, type Page } from '@playwright/test';
import type { RunSummary } from '../src/app/testHook';
import { SMALL } from '../test/smallShapes';

export { SMALL };

/** Open the app (optionally at a hash) and wait for the GPU device. */
export async function openApp(page: Page, hash = ''): Promise<void> {
  await page.goto(`/${hash}`);
  await expect(page.getByTestId('device-status')).toHaveAttribute('data-status', 'ready', {
    timeout: 30_000,
  });
}

/** The numeric summary of the current run. */
export async function summary(page: Page): Promise<RunSummary> {
  const s = await page.evaluate(() => window.__mmq?.summary());
  if (!s) throw new Error('no run summary yet');
  return s;
}

/** The id of the latest run request (0 before any). */
export async function runId(page: Page): Promise<number> {
  return page.evaluate(() => window.__mmq?.status().runId ?? 0);
}

/** Wait until a run newer than `after` has finished; returns its final status ('done', 'compile-error', ...). */
export async function waitForNewRun(page: Page, after: number): Promise<string> {
  // The state is read in the same evaluate that sees the run end: a replaced worker's 'ready' may start
  // generating again right after, and a second read would see that instead.
  let ended = '';
  await expect
    .poll(
      async () => {
        ended = await page.evaluate((prev) => {
          const s = window.__mmq?.status();
          return !!s && s.runId > prev && s.run !== 'running' && s.run !== 'generating' ? s.run : '';
        }, after);
        return ended !== '';
      },
      { timeout: 60_000 },
    )
    .toBe(true);
  return ended;
}

/**
 * Wait until a run of `kernel` has finished, any verdict (and, given `size`, one whose output is rows x
 * cols); fail at once if the config is rejected. The size matters after pickKernel: selecting a family
 * auto-runs it at its default shape before the small shape's fields are filled in, and that first run can
 * finish first (a heatmap screenshot once caught it: 64x64 instead of 32x32 on a loaded 2-core CI machine).
 */
export async function waitForRun(
  page: Page,
  kernel: string,
  size?: { rows: number; cols: number },
): Promise<RunSummary> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const st = await page.evaluate(() => ({
      run: window.__mmq?.status().run,
      current: window.__mmq?.status().current,
      kernel: window.__mmq?.summary()?.kernel,
      rows: window.__mmq?.summary()?.rows,
      cols: window.__mmq?.summary()?.cols,
      problems: document.querySelector('[data-testid="problems"]')?.textContent ?? null,
    }));
    const sized = !size || (st.rows === size.rows && st.cols === size.cols);
    if (st.run === 'done' && st.current && st.kernel === kernel && sized) return summary(page);
    if (st.problems) throw new Error(`${kernel}: the app rejected the config: ${st.problems}`);
    if (Date.now() > deadline)
      throw new Error(`${kernel}: no finished run after 60 s (status ${JSON.stringify(st)})`);
    await page.waitForTimeout(150);
  }
}

/**
 * Select a family and set its small shape; the app regenerates and auto-runs. Returns the output size the
 * shape sets (a dense m x n; undefined for MoE or a shape that leaves m or n at the default), for waitForRun.
 */
export async function pickKernel(
  page: Page,
  kernel: string,
  shape = SMALL[kernel] ?? {},
): Promise<{ rows: number; cols: number } | undefined> {
  await page.getByTestId('kernel-select').selectOption(kernel);
  for (const [field, value] of Object.entries(shape))
    await page.getByTestId(`param-${field}`).fill(String(value));
  return shape.m !== undefined && shape.n !== undefined && shape.experts === undefined
    ? { rows: shape.m, cols: shape.n }
    : undefined;
}
