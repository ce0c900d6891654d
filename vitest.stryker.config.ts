// The tests StrykerJS runs against each mutant (stryker.config.mjs): the unit tier's files less those that
// open a Dawn device. Stryker runs vitest in a worker thread, one at a time, and for every mutant only the
// tests that covered it; the GPU files compile WGSL on SwiftShader (seconds a test) and exercise the kernels'
// WGSL text, which Stryker does not mutate (its generators are excluded there; test/mutants.test.ts holds
// hand-written WGSL mutants). A file opens a device when it imports test/gpu.ts, test/kernelHarness.ts or
// the webgpu package; the scan keeps a new GPU test out without a list to maintain.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

const OPENS_A_DEVICE = /from '(\.\.?\/)+(test\/)?(gpu|kernelHarness)'|from 'webgpu'/;

/** The unit tier's test files (vitest.config.ts's include) that open a Dawn device, relative to here. */
function gpuTestFiles(): string[] {
  return ['src', 'test'].flatMap((dir) =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .map((f) => join(dir, f))
      .filter((f) => /\.test\.tsx?$/.test(f) && OPENS_A_DEVICE.test(readFileSync(f, 'utf8'))),
  );
}

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...gpuTestFiles()],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
