// The one way a test skips: with a reason CI declares (.ci/skips.ts), and only where that reason holds, as
// checked here on the adapter or the machine itself. The product's own answer ("this arm is unavailable")
// is what makes a test want to skip, and a bug there must not turn a test into a skip: where the reason
// does not hold, the test fails with the product's words instead. The reason goes into the test's meta,
// which vitest's JSON report carries to CI's verdict (.ci/verdict.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'vitest';
import { SKIP_REASONS, type SkipReason } from '../.ci/skips';

declare module 'vitest' {
  interface TaskMeta {
    /** Why the test skipped (set by skipBecause only). */
    skipReason?: SkipReason;
  }
}

/** What a reason's check needs to know: the component type of the subgroup matrices a kernel uses. */
export interface SkipFacts {
  matrixComponent?: 'i8' | 'f16';
}

/** The subgroup-matrix feature as Dawn names it, spelled here rather than read from the product. */
const MATRIX_FEATURE = 'chromium-experimental-subgroup-matrix';

/** Whether `reason` holds on this machine, with what was seen; never asks the product. */
async function check(reason: SkipReason, facts: SkipFacts): Promise<{ holds: boolean; seen: string }> {
  if (reason === 'no-onnxruntime') {
    // Where bench/ort.ts looks ($MMQ_ORT_DIR, then bench/.ort): a package there means ORT is installed,
    // and one that fails to load must fail the test, not skip it.
    const { ortCandidates } = await import('../bench/ort');
    const found = ortCandidates(process.env, process.cwd()).find(
      (d) =>
        existsSync(join(d, 'node_modules', 'onnxruntime-node', 'package.json')) ||
        existsSync(join(d, 'package.json')),
    );
    return {
      holds: !found,
      seen: found ? `onnxruntime-node is installed in ${found}` : 'no onnxruntime-node',
    };
  }
  const { getTestGpu } = await import('./gpu');
  const { features, info } = (await getTestGpu()).adapter;
  if (!features.has(MATRIX_FEATURE)) return { holds: true, seen: `the adapter lacks ${MATRIX_FEATURE}` };
  if (info.subgroupMinSize !== info.subgroupMaxSize)
    return {
      holds: true,
      seen: `the adapter's subgroup size varies (${info.subgroupMinSize}..${info.subgroupMaxSize})`,
    };
  const component = facts.matrixComponent ?? 'i8';
  const configs = (info.subgroupMatrixConfigs ?? []).filter((c) => c.componentType === component);
  if (component === 'f16' && !features.has('shader-f16'))
    return { holds: true, seen: 'the adapter lacks shader-f16' };
  return configs.length
    ? { holds: false, seen: `the adapter lists ${configs.length} ${component} subgroup-matrix configs` }
    : { holds: true, seen: `the adapter lists no ${component} subgroup-matrix config` };
}

/**
 * Skip the running test because of `reason`, recorded for CI, when that reason holds here; otherwise fail
 * it, quoting `detail` (what the product or the test said). Call it at the top of a test, before any work.
 * @example it('runs the matrix arm', async (ctx) => { if (why) await skipBecause(ctx, 'no-subgroup-matrix', why); ... })
 */
export async function skipBecause(
  ctx: TestContext,
  reason: SkipReason,
  detail: string,
  facts: SkipFacts = {},
): Promise<never> {
  const { holds, seen } = await check(reason, facts);
  if (!holds)
    throw new Error(
      `this test would skip because ${SKIP_REASONS[reason]}, but here ${seen}; it says: ${detail}`,
    );
  ctx.task.meta.skipReason = reason;
  ctx.skip(`${reason}: ${seen} (${detail})`);
  throw new Error('unreachable: ctx.skip() throws');
}
