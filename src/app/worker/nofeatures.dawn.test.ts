// The app's worker stack in Node on Dawn (SwiftShader): the app's worker client over the real worker core,
// on an adapter whose optional features are hidden as Firefox and Safari lack them (subgroups,
// timestamp-query, shader-f16). Every family's scalar arm runs at the logical plane width of 32, is timed by
// the wall clock, and matches its oracle; the arms that need a hidden feature say why they cannot run.
import { describe, expect, it } from 'vitest';
import { getDawnGpu } from '../../../test/gpu';
import { SMALL } from '../../../test/smallShapes';
import { KERNELS } from '../../kernels';
import { CATALOG } from '../../kernels/catalog';
import type { AdapterCaps } from '../../kernels/gpu/caps';
import { createGpuCore } from '../../workers/core';
import { withoutFeatures } from '../../workers/runtime/hideFeatures';
import type { WorkerRequest, WorkerResponse } from '../../workers/protocol';
import { handleTuneRequest } from '../../workers/tune';
import { defaultConfig } from '../store/state';
import { createWorkerClient, type WorkerPort } from './client';

const HIDDEN = ['subgroups', 'timestamp-query', 'shader-f16'];

/** The worker core behind a port, in this process (messages delivered asynchronously, as a worker's are). */
function corePort(gpu: GPU): WorkerPort {
  const listeners: ((ev: MessageEvent<WorkerResponse>) => void)[] = [];
  const core = createGpuCore({
    gpu,
    kernels: KERNELS,
    post: (msg) =>
      queueMicrotask(() => listeners.forEach((l) => l({ data: msg } as MessageEvent<WorkerResponse>))),
    tune: (req, ctx) => handleTuneRequest({ ...ctx, isCancelled: () => ctx.isCancelled() }, req, ctx.post),
  });
  return {
    postMessage: (m: WorkerRequest) => void core.handle(m),
    addEventListener: ((type: 'message' | 'error', l: (ev: MessageEvent<WorkerResponse>) => void) => {
      if (type === 'message') listeners.push(l);
    }) as WorkerPort['addEventListener'],
  };
}

describe('the worker stack on an adapter without subgroups, timestamps and f16 (Dawn)', () => {
  const client = createWorkerClient(() => corePort(withoutFeatures(getDawnGpu(), HIDDEN)));
  let caps: AdapterCaps;

  it('opens a device that has none of them, at the logical plane width of 32', async () => {
    const ready = await client.request({ type: 'init' }).done;
    if (ready.type !== 'ready') throw new Error(JSON.stringify(ready));
    caps = ready.caps;
    expect(caps).toMatchObject({ subgroups: false, timestampQuery: false, shaderF16: false });
    expect(ready.plane).toBe(32);
    for (const f of HIDDEN) expect(caps.features).not.toContain(f);
  });

  it.each(CATALOG.families.map((c) => c.id))(
    '%s: the scalar arm runs, timed by the wall clock, and matches',
    async (id) => {
      const catalog = CATALOG.get(id);
      const config = defaultConfig(catalog, caps);
      expect(config.arm).not.toBe('subgroup-matrix');
      const matrix = catalog.arms.find((a) => a.arm === 'subgroup-matrix');
      if (matrix) expect(matrix.unavailable(caps, config.params)).toMatch(/subgroup matri/);
      const run = await client.request({
        type: 'run',
        config: { ...config, arm: 'scalar', params: { ...config.params, ...SMALL[id] } },
        instrument: false,
        timing: { targetMs: 1, batches: 1 },
      }).done;
      if (run.type !== 'run-result') throw new Error(JSON.stringify(run));
      expect(run.outcome.verdict.pass).toBe(true);
      expect(run.outcome.config.plane).toBe(32);
      expect(run.outcome.timing?.method).toBe('wall');
      expect(run.outcome.timing?.resolutionNs).toBeGreaterThan(0);
    },
  );
});
