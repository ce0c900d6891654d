// mmq probe: this machine's WebGPU peaks (streaming-copy bandwidth and every compute roof the adapter
// offers), measured by the same probe the app runs (src/kernels/perf/probe.run.ts) through the worker core.
// Bounded by design, so it needs no estimate or --yes: each probe kernel grows only until one run takes
// probeRunMs (or the adapter's largest size), then times a fixed number of batches.
import { KERNELS } from '../src/kernels';
import type { ProbeResult } from '../src/kernels/perf/probe.run';
import { CliError, parseArgs } from './args';
import { gpuFor, progressOptions } from './run';
import { startProgress } from './progress';
import type { Subcommand } from './subcommand';

const fmt = (m: ProbeResult['measurements'][number]) =>
  m.kind === 'bandwidth'
    ? `${m.value.toPrecision(4)} GB/s`
    : m.value >= 1e12
      ? `${(m.value / 1e12).toPrecision(4)} Tops/s`
      : `${(m.value / 1e9).toPrecision(4)} Gops/s`;

function human(r: ProbeResult): string {
  const lines = [`peaks of ${r.adapter} (probe took ${(r.durationMs / 1000).toFixed(1)} s)`];
  for (const m of r.measurements)
    lines.push(
      `  ${m.kind.padEnd(11)} ${fmt(m).padStart(16)}  median of ${m.spread.n} batches of ${m.runsPerBatch} runs (${m.method}; min ${m.spread.min.toPrecision(3)} / max ${m.spread.max.toPrecision(3)} ms per run); ${m.size}: ${m.what}`,
    );
  for (const s of r.skipped) lines.push(`  ${s.kind.padEnd(11)} not measured: ${s.why}`);
  return lines.join('\n') + '\n';
}

export const probe: Subcommand = {
  name: 'probe',
  usage: 'mmq probe [--json]',
  summary: "this WebGPU adapter's measured peaks: copy bandwidth, f16 and int8 throughput per arm",
  async run(args, io) {
    const a = parseArgs('probe', args, { boolean: ['--json'] });
    if (a.positionals.length) throw new CliError(`mmq probe: unexpected argument '${a.positionals[0]!}'`, 2);
    const gpu = await gpuFor(KERNELS, io, 'probe');
    const progress = startProgress(io.stderr, 'mmq probe', progressOptions());
    let r;
    try {
      r = await gpu.request({ type: 'probe' }, (m) => {
        if (m.type === 'progress') progress.update(m.stage, m.fraction);
      });
    } finally {
      progress.stop();
      await gpu.close();
    }
    if (r.type !== 'probe-result') throw new Error(`unexpected '${r.type}' to probe`);
    io.stdout(a.booleans.has('--json') ? JSON.stringify(r.result, null, 2) + '\n' : human(r.result));
    return 0;
  },
};
