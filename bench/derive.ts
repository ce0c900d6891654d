// What the bench derives from one run's rows: the same-run ratios (vs the f32 baseline, the scalar arm,
// the incumbent) and the headline against torch from the same command.
import type { BenchResult, BenchRow, Headline, Shape } from './result';

/**
 * Same-run ratios: (a) vs the best f32 baseline tile, (b) vs the scalar arm (the row of the same knobs,
 * else of the same declared tile), (c) tuned vs incumbent.
 */
export function deriveRatios(rows: BenchRow[]) {
  const key = (r: BenchRow) => `${r.m}x${r.n}x${r.k}/${r.experts ?? 0}`;
  const ok = (r: BenchRow) => r.ms !== undefined && r.correctness?.pass;
  const bestF32 = new Map<string, number>();
  for (const r of rows)
    if (r.role === 'baseline' && ok(r)) bestF32.set(key(r), Math.min(bestF32.get(key(r)) ?? Infinity, r.ms!));
  for (const r of rows) {
    if (!ok(r)) continue;
    const f = bestF32.get(key(r));
    if (f !== undefined && r.role !== 'baseline') r.vsF32 = f / r.ms!;
    if (r.arm !== 'scalar') {
      const s =
        rows.find(
          (o) =>
            ok(o) && o.family === r.family && o.tile === r.tile && o.arm === 'scalar' && key(o) === key(r),
        ) ??
        rows.find(
          (o) =>
            ok(o) &&
            o.family === r.family &&
            o.tileKnobs !== undefined &&
            o.tileKnobs === r.tileKnobs &&
            o.arm === 'scalar' &&
            key(o) === key(r),
        );
      if (s) r.vsScalar = s.ms! / r.ms!;
    }
    if (r.role === 'tuned') {
      const inc = rows.find(
        (o) =>
          ok(o) && o.family === r.family && o.arm === r.arm && o.role === 'incumbent' && key(o) === key(r),
      );
      if (inc) r.vsIncumbent = inc.ms! / r.ms!;
    }
  }
}

/** What the bench reads of a torch_baseline.py JSON (ms_call only in files from 2026-12-04 on). */
interface TorchJson {
  int_mm?: { m: number; n: number; k: number; layout?: string; ms: number; tops: number; ms_call?: number }[];
  f16_mm?: { m: number; n: number; k: number; ms: number; tflops: number; ms_call?: number }[];
}

const withCall = (ms: number | undefined) => (ms === undefined ? {} : { msCall: ms });

/** Ours, not a baseline: the rows a shape's best plan and its ratios are about. */
const ours = (r: BenchRow) => r.role !== 'baseline';

/** The headline at `shape` from a run's rows and its torch JSON (bench/report.ts recomputes it from files). */
export function headline(result: Pick<BenchResult, 'rows' | 'torch'>, shape: Shape): Headline {
  const at = result.rows.filter(
    (r) =>
      r.m === shape.m &&
      r.n === shape.n &&
      r.k === shape.k &&
      !r.experts &&
      r.ms !== undefined &&
      r.correctness?.pass,
  );
  const best = (rows: BenchRow[]) =>
    rows.reduce<BenchRow | undefined>((b, r) => (!b || r.ms! < b.ms! ? r : b), undefined);
  const int8 = best(at.filter((r) => ours(r) && r.arithmetic === 'int8'));
  const any = best(at.filter(ours));
  const h: Headline = { shape };
  if (int8) h.bestInt8 = { id: int8.id, ms: int8.ms!, tops: int8.tops! };
  if (any) h.bestAny = { id: any.id, ms: any.ms!, tops: any.tops! };
  const torch = (result.torch as TorchJson | undefined)?.int_mm?.filter(
    (t) => t.m === shape.m && t.n === shape.n && t.k === shape.k,
  );
  if (torch?.length) {
    h.torchIntMm = torch.map((t) => ({
      layout: t.layout ?? 'kn',
      ms: t.ms,
      tops: t.tops,
      ...withCall(t.ms_call),
    }));
    const fastest = Math.min(...torch.map((t) => t.ms));
    if (int8) h.ratioInt8 = fastest / int8.ms!;
    if (any) h.ratioAny = fastest / any.ms!;
    h.goalMs = 2 * fastest;
  }
  const f16 = (result.torch as TorchJson | undefined)?.f16_mm?.find(
    (t) => t.m === shape.m && t.n === shape.n && t.k === shape.k,
  );
  if (f16) h.torchF16Mm = { ms: f16.ms, tflops: f16.tflops, ...withCall(f16.ms_call) };
  const passes = any?.passMs;
  if (passes && passes.length > 1) {
    h.gemmPassMs = passes.at(-1)!;
    if (h.goalMs !== undefined) h.goalGemmPassMs = h.goalMs - (any!.ms! - h.gemmPassMs);
  }
  return h;
}

/** Which family won a shape (one weight format), and by how much over the next family. */
export interface FamilyWin {
  /** "MxNxK", with " xE" for an MoE case of E experts. */
  shape: string;
  weights: BenchRow['weights'];
  /** Each family's fastest passing row, fastest first (a family of several routes: one entry per route). */
  ranked: { family: string; id: string; ms: number }[];
  /** The runner-up's ms over the winner's (> 1), when a second family ran. */
  margin?: number;
}

/**
 * The pick across families the bench's rows show: at each shape (an MoE case apart) and weight format,
 * each family's fastest passing row (ours: not the baselines and peers), the winner and its margin over
 * the next family. A family whose rows run two arithmetics (the MoE family's int8 and f16 routes) counts
 * each route as its own entry.
 * @example familyWins(result.rows).map((w) => `${w.shape} ${w.ranked[0].family} ${w.margin?.toFixed(2)}x`)
 */
export function familyWins(rows: readonly BenchRow[]): FamilyWin[] {
  const ok = (r: BenchRow) => r.role !== 'baseline' && r.ms !== undefined && r.correctness?.pass === true;
  const routes = new Map<string, Set<string>>();
  for (const r of rows.filter(ok)) {
    const s = routes.get(r.family) ?? new Set<string>();
    s.add(r.arithmetic ?? '');
    routes.set(r.family, s);
  }
  const unit = (r: BenchRow) =>
    routes.get(r.family)!.size > 1 ? `${r.family} ${r.arithmetic ?? ''}`.trim() : r.family;
  const groups = new Map<
    string,
    { shape: string; weights: BenchRow['weights']; best: Map<string, BenchRow> }
  >();
  for (const r of rows.filter(ok)) {
    const shape = `${r.m}x${r.n}x${r.k}${r.experts ? ` x${r.experts}` : ''}`;
    const key = `${shape} ${r.weights}`;
    const g = groups.get(key) ?? { shape, weights: r.weights, best: new Map<string, BenchRow>() };
    const cur = g.best.get(unit(r));
    if (!cur || r.ms! < cur.ms!) g.best.set(unit(r), r);
    groups.set(key, g);
  }
  return [...groups.values()].map(({ shape, weights, best }) => {
    const ranked = [...best]
      .map(([family, r]) => ({ family, id: r.id, ms: r.ms! }))
      .sort((a, b) => a.ms - b.ms);
    return { shape, weights, ranked, ...(ranked[1] ? { margin: ranked[1].ms / ranked[0]!.ms } : {}) };
  });
}
