import { defineConfig } from 'vitest/config';

// Node tier: pure logic and, through Dawn on SwiftShader, every kernel against its oracle.
// GPU test files share one Dawn instance per worker; a single fork keeps SwiftShader from
// oversubscribing CI's two cores.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    poolOptions: { forks: { singleFork: true } },
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
