// The adapter's peaks: the worker measures them (kernels/perf/probe.run.ts) on its own device; the perf
// views ask for them through this, and keep what comes back (persistence/peaks.ts).
import type { ProbeResult } from '../kernels/perf/probe.run';
import type { WorkerClient } from './worker/client';

export interface ProbeController {
  /** Measure the adapter's peaks in the worker; rejects with the worker's message. */
  probe(): Promise<ProbeResult>;
}

/**
 * The probe controller over the app's worker client.
 * @example const peaks = await createProbeController({ client }).probe();
 */
export function createProbeController(env: { client: WorkerClient }): ProbeController {
  return {
    async probe() {
      const msg = await env.client.request({ type: 'probe' }).done;
      if (msg.type === 'probe-result') return msg.result;
      throw new Error(msg.type === 'error' ? msg.message : `the probe ended with '${msg.type}'`);
    },
  };
}
