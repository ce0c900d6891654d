// How the bench measures: one problem session per problem (its inputs uploaded once with cold weight
// banks), every candidate config gated against the family's oracle on sampled rows and timed by the one
// runner, passing rows swept again; a family's search tuned through the product's own PlanEvaluator.
import type { KernelFamily, RunConfig } from '../src/kernels/family';
import { resolveConfig } from '../src/kernels/arms';
import type { AdapterCaps } from '../src/kernels/gpu/caps';
import { bufferBytes } from '../src/kernels/gpu/plan';
import { banksFor } from '../src/kernels/gpu/runner';
import { Evolution, finalsWallMs } from '../src/kernels/tune';
import { PlanEvaluator, ProblemSession } from '../src/kernels/tune/session';
import type { BenchGpu } from './dawn';
import { fmt, rowLine, rowShape } from './format';
import type { BenchResult, BenchRow, Peak, Shape } from './result';

// NVIDIA's H200 SXM datasheet (the H100 SXM's tensor rates, dense): int8 1979 TOPS, f16 989 TFLOP/s,
// f32 (non-tensor) 67 TFLOP/s, HBM3e 4.8 TB/s; 60 MB of L2 (PyTorch's device properties on the lent card).
const H200_PEAK: Peak = {
  source:
    'NVIDIA H200 SXM datasheet (dense tensor rates = H100 SXM): int8 1979 TOPS, f16 989 TFLOP/s, f32 67 TFLOP/s, 4.8 TB/s',
  int8Tops: 1979,
  f16Tflops: 989,
  f32Tflops: 67,
  hbmGBs: 4800,
  l2Bytes: 60 * 1024 * 1024,
};

/** The datasheet peak of the adapter, where the bench knows it. */
export function peakOf(gpu: BenchGpu): Peak | undefined {
  const info = gpu.adapter.info as unknown as Record<string, unknown>;
  const text = `${String(info.device ?? '')} ${gpu.caps.description}`.toLowerCase();
  return gpu.caps.vendor === 'nvidia' && text.includes('h200') ? H200_PEAK : undefined;
}

/** One bench run in progress: the device, how it measures, and the result rows are appended to. */
export interface BenchRun {
  device: GPUDevice;
  caps: AdapterCaps;
  result: BenchResult;
  quick: boolean;
  /** Tune the families that declare a search. */
  tune: boolean;
  peak?: Peak;
  /** Bytes of L2 the weight banks must exceed (the peak's, else 8 MiB). */
  l2: number;
  warmMs: number;
  timing: { targetMs: number; batches: number; passes: true };
  /** Times each passing row is timed (BenchOptions.sweeps). */
  sweeps: number;
  /** Whether a row id (`${id}@${shape}`, or `${family}/tune`) passes the --filter. */
  want(id: string): boolean;
  log(line: string): void;
  onProgress?: (partial: BenchResult) => void;
  /** Test hook: rewrite a config's main-pass WGSL before it runs (proves a wrong kernel is flagged). */
  mutateWgsl?: (id: string, wgsl: string) => string;
}

/** One problem's configs to bench: each its config and its role. */
export interface Candidate {
  config: RunConfig;
  role: string;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The family with its main pass's WGSL rewritten by `mutate` (the bench's wrong-kernel test hook). */
function withMutation(
  family: KernelFamily,
  mutate: BenchRun['mutateWgsl'],
  idOf: (c: RunConfig) => string,
): KernelFamily {
  if (!mutate) return family;
  return {
    ...family,
    build(c, caps) {
      const b = family.build(c, caps);
      const main = b.plan.passes[b.plan.mainPass]!;
      const passes = [...b.plan.passes];
      passes[b.plan.mainPass] = { ...main, wgsl: mutate(idOf(c), main.wgsl) };
      return { ...b, plan: { ...b.plan, passes } };
    },
  };
}

/** Gate and time one config on its problem's session into `r` (its correctness, ms, throughput). */
async function measureRow(bench: BenchRun, s: ProblemSession, r: BenchRow, c: RunConfig): Promise<void> {
  try {
    r.timedFrom = new Date().toISOString();
    const out = await s.run(c, { ...bench.timing, ...(bench.quick ? { maxRuns: 2 } : {}) });
    const { facts } = out;
    const gate = facts.gate;
    r.correctness = {
      pass: out.verdict.pass,
      relToMax: out.verdict.relToMax,
      samples: (s.sampled?.length ?? facts.rows) * facts.cols,
      allWritten: out.unwritten === 0,
      tol: gate.kind === 'bit-exact' ? 0 : gate.tol,
    };
    if (!out.timing) return;
    r.ms = out.timing.ms;
    r.msSamples = out.timing.samples;
    r.iters = out.timing.runs;
    r.timing = out.timing.method;
    if (out.passes) r.passMs = out.passes.map((p) => p.ms);
    r.tops = facts.ops / (r.ms * 1e-3) / 1e12;
    r.arithmetic = r.weights === 'f32' ? 'f32' : (facts.arithmetic ?? s.family.arithmetic);
    r.weightGBs = facts.weightBytes / (r.ms * 1e-3) / 1e9;
    const peak = bench.peak;
    if (peak) {
      const rate =
        r.arithmetic === 'f32' ? peak.f32Tflops : r.arithmetic === 'int8' ? peak.int8Tops : peak.f16Tflops;
      r.peakFraction = r.tops / rate;
    }
  } catch (e) {
    r.error = message(e).slice(0, 2000);
  } finally {
    r.at = new Date().toISOString();
  }
}

/**
 * Bench a problem's candidates on one session: gate, time, sweep. Rows the filter drops are not run;
 * a problem whose session cannot open records the error on each of its rows.
 * @example await benchProblem(bench, family, base, list, rowOf(family, shape), tuned, passing);
 */
export async function benchProblem(
  bench: BenchRun,
  familyOf: KernelFamily,
  base: RunConfig,
  candidates: readonly Candidate[],
  row: (c: RunConfig, role: string) => BenchRow,
  keep?: Map<string, RunConfig>,
): Promise<void> {
  const { result, log } = bench;
  const wanted = (r: BenchRow) => bench.want(`${r.id}@${rowShape(r)}`);
  const rows = candidates.map((c) => row(c.config, c.role)).filter(wanted);
  if (!rows.length) return;
  const family = withMutation(familyOf, bench.mutateWgsl, (c) => row(c, '').id);
  let s: ProblemSession;
  try {
    // The session opens on a config this adapter can build: the base may not fit its limits (64 experts'
    // f16 rows exceed a 2 GiB binding on some adapters) while other candidates do.
    const built = (c: RunConfig) => {
      try {
        return { config: c, plan: family.build(resolveConfig(c, bench.caps), bench.caps).plan };
      } catch {
        return undefined;
      }
    };
    let first: ReturnType<typeof built>;
    for (const c of [base, ...candidates.map((x) => x.config)]) if ((first = built(c))) break;
    const opener = first?.config ?? base;
    // Banks so consecutive runs read >= 4x the L2 of distinct weight bytes (the plan's weight buffers).
    const plan = first?.plan ?? family.build(resolveConfig(base, bench.caps), bench.caps).plan;
    const bankBytes = plan.buffers.filter((b) => b.role === 'weight').reduce((a, b) => a + bufferBytes(b), 0);
    s = new ProblemSession(bench.device, bench.caps, family, opener, {
      banks: bench.quick ? 1 : banksFor(bankBytes, bench.l2),
      warmMs: bench.warmMs,
    });
  } catch (e) {
    for (const r of rows) result.rows.push({ ...r, error: message(e) });
    return;
  }
  const done: { row: BenchRow; c: RunConfig }[] = [];
  try {
    for (const c of candidates) {
      const r = row(c.config, c.role);
      if (!wanted(r)) continue;
      const why = s.problems(c.config);
      if (why) {
        result.rows.push({ ...r, skipped: why });
        log(rowLine(result.rows.at(-1)!));
        continue;
      }
      await measureRow(bench, s, r, c.config);
      result.rows.push(r);
      log(rowLine(r));
      if (r.correctness?.pass) {
        done.push({ row: r, c: c.config });
        keep?.set(r.id, c.config);
      }
      bench.onProgress?.(result);
    }
    for (let sweep = 2; sweep <= bench.sweeps; sweep++)
      for (const { row: r, c } of [...done].reverse()) {
        const before = r.ms!;
        const again: BenchRow = { ...r };
        await measureRow(bench, s, again, c);
        r.msSweeps = [...(r.msSweeps ?? [before]), again.ms ?? Infinity];
        if (again.ms !== undefined && again.ms < before) Object.assign(r, { ...again, msSweeps: r.msSweeps });
        log(`[sweep ${sweep}] ${r.id} ${rowShape(r)}: ${fmt(again.ms, 4)} ms (kept ${fmt(r.ms, 4)})`);
      }
  } finally {
    s.destroy();
  }
}

/**
 * Tune a family at a shape through the product's own search (the PlanEvaluator the worker runs); the
 * winner's config, or undefined when tuning is off, filtered out or found nothing.
 * @example const won = await tuneAt(bench, family, base, { m: 2048, n: 4096, k: 4096 });
 */
export async function tuneAt(
  bench: BenchRun,
  family: KernelFamily,
  base: RunConfig,
  shape: Shape,
): Promise<RunConfig | undefined> {
  const { caps, quick } = bench;
  if (!bench.tune || !family.search || !bench.want(`${family.id}/tune`)) return undefined;
  const search = family.search(base, caps);
  const ev = new PlanEvaluator(bench.device, caps, family, search, {
    banks: quick ? 1 : 2,
    batches: quick ? 1 : 3,
    warmMs: bench.warmMs,
  });
  try {
    const evo = new Evolution(
      quick
        ? { population: 3, generations: 1, measureMs: 1 }
        : { population: 16, generations: 4, measureMs: 10 },
    );
    const rep = await evo.run(search.space, ev, 0x5eed, { seeds: [search.incumbent, ...search.seeds] });
    const winner = rep.winner ? ev.configOf(search.space.parse(rep.winner)!) : undefined;
    bench.result.tuning.push({
      family: family.id,
      arm: winner?.arm ?? '-',
      shape,
      ...(rep.winner ? { winner: rep.winner } : {}),
      bestMs: rep.bestMs,
      evaluated: rep.evaluated,
      failedGate: rep.failedGate.length,
      rejected: rep.rejected.length,
      ...(rep.finals.length ? { finals: rep.finals } : {}),
    });
    bench.log(
      `[tune] ${family.id} at ${shape.m}x${shape.n}x${shape.k}: ${rep.evaluated} configs, winner ${rep.winner ?? 'none'} ${rep.bestMs.toFixed(4)} ms (${rep.failedGate.length} failed the gate, ${rep.rejected.length} rejected)` +
        (rep.finals.length ? `; finalists re-timed in ${fmt(finalsWallMs(rep.finals)! / 1000, 1)} s` : ''),
    );
    return winner;
  } finally {
    ev.destroy();
  }
}
