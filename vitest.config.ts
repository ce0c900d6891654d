import { defineConfig } from 'vitest/config';
import FileLimitReporter from './.ci/fileLimit';

// Node tier: pure logic and, through Dawn on SwiftShader, every kernel against its oracle.
// GPU test files share one Dawn instance per worker; a single fork keeps SwiftShader from
// oversubscribing CI's two cores, and saves a process start per file (a fork per file cost ~1.7 s
// more a file, measured on a loaded two-core machine). The fork stays responsive because no test blocks it: child
// processes go through test/cliProcess.ts (ESLint bans the sync ones), so the runner's RPC is always
// answered. A file that stops anyway shows: a test or hook that does not settle fails at its timeout; a
// test that spins without yielding (so no timer in the fork can fire) is stopped by the per-file wall-clock
// limit this process keeps (.ci/fileLimit.ts, MMQ_FILE_LIMIT_S), which names its file; files a dead fork
// never ran are named by .ci/summary.ts; and .ci/run bounds each tier's wall time.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    poolOptions: { forks: { singleFork: true } },
    // A test or hook that has not settled in 2 minutes fails as timed out (a hang, not a slow pass).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Closing the fork (Dawn's device included) past this is reported, and the run ends.
    teardownTimeout: 30_000,
    // `npm run test:unit` names its reporters (the JSON report for CI too) and the limit again.
    reporters: ['default', new FileLimitReporter()],
  },
});
