// How the bench prints: numbers, a row's line as it is measured, the final table, the headline and the
// MoE ratios (bench/report.ts renders the same lines into the docs).
import type { BenchResult, BenchRow, Headline } from './result';

/** A number to `d` decimals, '-' when missing or not finite (the bench's and its reports' tables). */
export const fmt = (v: number | undefined, d = 2) =>
  v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(d);

/** A row's shape as the tables print it: "MxNxK", and " eE" for an MoE row over E experts. */
export const rowShape = (r: BenchRow): string => `${r.m}x${r.n}x${r.k}${r.experts ? ` e${r.experts}` : ''}`;

/** One row as the bench logs it when it is measured (or skipped, or failed). */
export function rowLine(r: BenchRow): string {
  const shape = rowShape(r);
  if (r.skipped) return `  skip  ${r.id.padEnd(44)} ${shape.padEnd(18)} ${r.skipped.slice(0, 160)}`;
  if (r.error) return `  ERROR ${r.id.padEnd(44)} ${shape.padEnd(18)} ${r.error.slice(0, 300)}`;
  const c = r.correctness;
  const verdict = c
    ? c.pass
      ? 'ok'
      : `WRONG rel ${c.relToMax.toExponential(1)}${c.allWritten ? '' : ' unwritten'}`
    : '?';
  const passes =
    r.passMs && r.passMs.length > 1 ? ` (passes alone ${r.passMs.map((p) => fmt(p, 4)).join(' + ')})` : '';
  return `  ${verdict.padEnd(5)} ${r.id.padEnd(44)} ${shape.padEnd(18)} ${fmt(r.ms, 4).padStart(9)} ms ${fmt(r.tops, 1).padStart(7)} TOPS ${fmt(r.weightGBs, 0).padStart(6)} GB/s${r.peakFraction !== undefined ? ` ${fmt(100 * r.peakFraction, 1)}% peak` : ''}${passes}`;
}

/** The final table: one line per measured row, then tuning and the headline. */
export function table(result: BenchResult): string[] {
  const lines: string[] = [''];
  lines.push(
    `adapter: ${result.adapter.vendor} ${result.adapter.description} plane ${result.adapter.plane}${result.quick ? ' (QUICK: harness check, not speed)' : ''}`,
  );
  if (result.peak) lines.push(`peak: ${result.peak.source}`);
  lines.push(
    'family/arm/config                             shape              ms/run   TOPS   wGB/s  %peak  xF32  xScalar xIncumb  check',
  );
  for (const r of result.rows) {
    if (r.ms === undefined) continue;
    const c = r.correctness;
    lines.push(
      `${r.id.padEnd(45)} ${rowShape(r).padEnd(18)} ${fmt(r.ms, 4).padStart(9)} ${fmt(r.tops, 1).padStart(6)} ${fmt(r.weightGBs, 0).padStart(7)} ${(r.peakFraction !== undefined ? fmt(100 * r.peakFraction, 1) : '-').padStart(6)} ${fmt(r.vsF32).padStart(5)} ${fmt(r.vsScalar).padStart(8)} ${fmt(r.vsIncumbent).padStart(7)}  ${c?.pass ? 'ok' : 'WRONG'} ${c ? c.relToMax.toExponential(1) : ''}`,
    );
  }
  const failed = result.rows.filter((r) => r.error || (r.correctness && !r.correctness.pass));
  if (failed.length)
    lines.push(
      `${failed.length} config(s) FAILED (error or wrong result): ${failed.map((r) => `${r.id}@${rowShape(r)}`).join(', ')}`,
    );
  for (const t of result.tuning)
    lines.push(
      `tuned ${t.family} at ${t.shape.m}x${t.shape.n}x${t.shape.k}: ${t.winner ?? 'none'} (${t.evaluated} evaluated, ${t.failedGate} failed gate, ${t.rejected} rejected)`,
    );
  if (result.headline) lines.push(...headlineLines(result.headline));
  return lines;
}

/**
 * The headline as the bench prints it and bench/report.ts renders it: the best int8 MMQ and the best
 * quantized GEMM against torch, and both against torch's f16 matmul for scale.
 */
export function headlineLines(h: Headline): string[] {
  const s = `${h.shape.m}x${h.shape.n}x${h.shape.k}`;
  const lines: string[] = [];
  if (h.bestInt8)
    lines.push(
      `best WebGPU int8 MMQ at ${s}: ${h.bestInt8.id} ${fmt(h.bestInt8.ms, 4)} ms ${fmt(h.bestInt8.tops, 1)} TOPS`,
    );
  if (h.bestAny)
    lines.push(
      `best WebGPU quantized GEMM at ${s}: ${h.bestAny.id} ${fmt(h.bestAny.ms, 4)} ms ${fmt(h.bestAny.tops, 1)} TOPS` +
        (h.gemmPassMs !== undefined ? ` (its GEMM pass ${fmt(h.gemmPassMs, 4)} ms)` : ''),
    );
  const oneAtATime = (ms: number | undefined) =>
    ms === undefined ? '' : ` (one call at a time: ${fmt(ms, 4)} ms)`;
  for (const t of h.torchIntMm ?? [])
    lines.push(
      `torch._int_mm at ${s} (B layout ${t.layout}): ${fmt(t.ms, 4)} ms ${fmt(t.tops, 1)} TOPS${oneAtATime(t.msCall)}`,
    );
  if (h.ratioInt8 !== undefined)
    lines.push(
      `RATIO best WebGPU int8 MMQ / torch._int_mm (fastest layout) = ${fmt(h.ratioInt8, 3)} (goal >= 0.5)`,
    );
  if (h.ratioAny !== undefined)
    lines.push(`RATIO best WebGPU quantized GEMM (any arm) / torch._int_mm = ${fmt(h.ratioAny, 3)}`);
  if (h.goalMs !== undefined && h.bestAny)
    lines.push(
      `GOAL 0.5x torch._int_mm needs the best plan at <= ${fmt(h.goalMs, 4)} ms (now ${fmt(h.bestAny.ms, 4)})` +
        (h.goalGemmPassMs !== undefined
          ? `: its GEMM pass at <= ${fmt(h.goalGemmPassMs, 4)} ms (now ${fmt(h.gemmPassMs, 4)}) next to its other passes`
          : ''),
    );
  const f16 = h.torchF16Mm;
  if (f16) {
    const x = (ms: number | undefined) => (ms === undefined ? undefined : ms / f16.ms);
    lines.push(
      `torch f16 matmul at ${s}: ${fmt(f16.ms, 4)} ms ${fmt(f16.tflops, 1)} TFLOP/s${oneAtATime(f16.msCall)}` +
        (h.bestAny ? `; best plan ${fmt(x(h.bestAny.ms))}x it` : '') +
        (h.gemmPassMs !== undefined ? `, its GEMM pass ${fmt(x(h.gemmPassMs))}x` : '') +
        (h.goalGemmPassMs !== undefined ? `, the goal's GEMM pass ${fmt(x(h.goalGemmPassMs))}x` : ''),
    );
  }
  return lines;
}

/** What moeRatioLines reads of a torch_baseline.py JSON (key "moe"). */
interface TorchMoe {
  moe?: { experts: number; tokens: number; way: string; ms: number; check?: { pass?: boolean } }[];
}

/**
 * Per MoE case: our fastest passing row (any route and arm; a peer's rows are baselines) against torch's per-expert loop and
 * `_grouped_mm` from the same command, and against the dense f16 plan at m = slots (one weight).
 * @example for (const l of moeRatioLines(result.rows, torch)) console.log(l);
 */
export function moeRatioLines(rows: readonly BenchRow[], torch?: unknown): string[] {
  const ok = (r: BenchRow) => r.ms !== undefined && !!r.correctness?.pass;
  const t = (torch as TorchMoe | undefined)?.moe ?? [];
  const cases = new Map<string, BenchRow>();
  for (const r of rows)
    if (r.experts && r.role !== 'baseline' && ok(r)) {
      const key = `${r.experts}x${r.m / (r.topk ?? 1)}`;
      const best = cases.get(key);
      if (!best || r.ms! < best.ms!) cases.set(key, r);
    }
  return [...cases.entries()].map(([key, r]) => {
    const tokens = r.m / (r.topk ?? 1);
    const dense = rows
      .filter(
        (d) => d.role !== 'baseline' && !d.experts && d.m === r.m && d.n === r.n && d.k === r.k && ok(d),
      )
      .reduce<BenchRow | undefined>((a, d) => (!a || d.ms! < a.ms! ? d : a), undefined);
    const ways = t
      .filter((x) => x.experts === r.experts && x.tokens === tokens && x.check?.pass !== false)
      .map((x) => `torch ${x.way} ${fmt(x.ms, 4)} ms (ours / torch ${fmt(r.ms! / x.ms, 2)})`);
    return (
      `MOE ${key} (experts x tokens, top-${r.topk}, ${r.n}x${r.k}): ours ${fmt(r.ms, 4)} ms (${r.id})` +
      (dense
        ? `; dense plan at m = ${r.m} ${fmt(dense.ms, 4)} ms (ours / dense ${fmt(r.ms! / dense.ms!, 2)})`
        : '') +
      (ways.length ? `; ${ways.join('; ')}` : '')
    );
  });
}
