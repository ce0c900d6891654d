// Playwright against Debian's Chromium with WebGPU on SwiftShader (see ../shared/FINDINGS.md): the test
// build (`npm run build:e2e`: vite --mode e2e into dist-e2e/, the only build with window.__mmq) is served
// by `vite preview` on 127.0.0.1 (a secure context, so navigator.gpu exists), and again under /mmq/ by a
// plain static server that serves nothing else (e2e/serve-subpath.ts) (e2e/deploy.spec.ts). One worker: SwiftShader already
// uses both CI cores. Screenshots: fixed viewport, DPR 1, animations off.
import { defineConfig } from '@playwright/test';

// MMQ_E2E_PORT lets two checkouts on one machine run their e2e at once (the sub-path server takes the next port).
const PORT = Number(process.env.MMQ_E2E_PORT ?? 4173);
/** The sub-path server (e2e/serve-subpath.ts). */
export const SUBPATH_URL = `http://127.0.0.1:${PORT + 1}/mmq/`;

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results',
  snapshotPathTemplate: '{testDir}/{testFileName}-snapshots/{arg}{ext}',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // Under CI (.ci/run sets CI=true) a .only fails the run, and a missing screenshot fails its test without a
  // baseline being written for the next run to pass on (elsewhere Playwright's default: write it, and fail);
  // .ci/verdict.ts checks both settings in the report.
  forbidOnly: !!process.env.CI,
  updateSnapshots: process.env.CI ? 'none' : 'default',
  timeout: 90_000,
  // A test's timeout is a timer in Playwright's worker, which code that spins there would block (a page
  // that spins does not: the browser is another process). The runner's process keeps this one: the whole
  // suite under CI, well past its length on a loaded machine, stopped with the running test named as
  // interrupted (.ci/verdict.ts: 'never ran') instead of at .ci/run's tier limit.
  globalTimeout: process.env.CI ? 25 * 60_000 : 0,
  expect: {
    timeout: 30_000,
    toHaveScreenshot: { maxDiffPixelRatio: 0.02, animations: 'disabled', caret: 'hide', scale: 'css' },
  },
  // The JSON report feeds the one-line pass/fail summary .ci/run prints at the end.
  reporter: [['list'], ['json', { outputFile: '.test-results/e2e.json' }]],
  use: {
    baseURL: `http://127.0.0.1:${PORT}/`,
    headless: true,
    viewport: { width: 1600, height: 1000 },
    deviceScaleFactor: 1,
    colorScheme: 'dark',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--enable-unsafe-webgpu',
        '--use-webgpu-adapter=swiftshader',
        '--enable-features=Vulkan',
        '--font-render-hinting=none',
        '--disable-lcd-text',
      ],
    },
  },
  webServer: [
    {
      command: `npx vite preview --outDir dist-e2e --host 127.0.0.1 --port ${PORT} --strictPort`,
      url: `http://127.0.0.1:${PORT}/`,
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      command: `npx tsx e2e/serve-subpath.ts dist-e2e ${PORT + 1} /mmq/`,
      url: SUBPATH_URL,
      reuseExistingServer: false,
      timeout: 60_000,
    },
  ],
});
