// What the bench runs: the dense shapes and MoE cases, and per family and problem its candidate configs
// (each arm at its incumbent, then its search's seeds) and the rows they become. Nothing here names a
// family: the families' declarations (`takes`, arms, search) say what to run.
import { KERNELS } from '../src/kernels';
import { gemmF32BaselineFamily } from '../src/kernels/baseline';
import { knobLabel, type FamilyParams, type KernelFamily, type RunConfig } from '../src/kernels/family';
import { defaultArm } from '../src/kernels/arms';
import type { AdapterCaps } from '../src/kernels/gpu/caps';
import { createRegistry } from '../src/kernels/registry';
import type { Candidate } from './measure';
import type { BenchRow, MoeCase, Shape } from './result';

/**
 * A `--shapes` list: "m,n,k;m,n,k". Throws on a malformed entry.
 * @example parseShapes('2048,4096,4096;32,11008,4096')
 */
export function parseShapes(list: string): Shape[] {
  return list.split(';').map((s) => {
    const parts = s.split(',').map(Number);
    const [m, n, k] = parts;
    if (parts.length !== 3 || !parts.every((v) => Number.isSafeInteger(v) && v > 0))
      throw new Error(`--shapes: bad shape "${s}" (want m,n,k with positive whole numbers)`);
    return { m: m!, n: n!, k: k! };
  });
}

/** The dense shapes: m = 32..2048 at three LLM layers' n x k (quick: one CI-size shape). */
export function denseShapes(quick: boolean): Shape[] {
  return quick
    ? [{ m: 32, n: 64, k: 256 }]
    : [32, 128, 512, 2048].flatMap((m) =>
        [
          [4096, 4096],
          [11008, 4096],
          [4096, 11008],
        ].map(([n, k]) => ({ m, n: n!, k: k! })),
      );
}

/** The MoE cases: 8 and 64 experts x 32..2048 tokens, top-2, n = k = 4096 (quick: one small case). */
export function moeCases(quick: boolean): MoeCase[] {
  return quick
    ? [{ tokens: 8, experts: 4, topk: 2, n: 64, k: 256 }]
    : [8, 64].flatMap((experts) =>
        [32, 128, 512, 2048].map((tokens) => ({ tokens, experts, topk: 2, n: 4096, k: 4096 })),
      );
}

/** The headline shape, 2048 x 4096 x 4096. */
export const isHeadline = (s: Shape): boolean => s.m === 2048 && s.n === 4096 && s.k === 4096;

/** The families the bench measures: every one that multiplies real weights (catalog `takes`). */
export const BENCHED: readonly KernelFamily[] = KERNELS.families.filter((f) => f.takes);

/** What the bench runs: the registry's families and the f32 baseline (which the app does not offer). */
const BENCH_KERNELS = createRegistry<KernelFamily>([...KERNELS.families, gemmF32BaselineFamily]);

/** A family the bench runs, by id (UnknownFamilyError for another). */
export const benchFamily = (id: string): KernelFamily => BENCH_KERNELS.get(id);

/** The row name of a config: its tile (and staging, when the family has one) or '-'. */
const configName = (c: RunConfig): string => knobLabel(benchFamily(c.kernel), c.params);

/** The bench's data: fast synthetic codes (prefill-size shapes), one seed. */
export const BENCH_DATA = { source: 'synthetic' as const, seed: 1 };

/**
 * A family's config at `params` over its defaults, on `arm` or the family's default arm here.
 * @example benchConfig(caps, 'gemm-f32', { m, n, k, tile: '128x128x16/8x8' })
 */
export function benchConfig(caps: AdapterCaps, id: string, params: FamilyParams, arm?: string): RunConfig {
  const f = benchFamily(id);
  const p = { ...f.defaults, ...params };
  return {
    kernel: id,
    arm: (arm ?? defaultArm(f, caps, p)) as RunConfig['arm'],
    data: BENCH_DATA,
    params: p,
  };
}

/** The rows of a family's configs at a shape (an MoE row also carries its experts and top-k). */
export function rowOf(
  f: KernelFamily,
  shape: Shape & { experts?: number; topk?: number },
): (c: RunConfig, role: string) => BenchRow {
  const baseline = f === gemmF32BaselineFamily;
  const tileKnobs = (c: RunConfig) =>
    f.tile?.block(c.params) ? { tileKnobs: f.tile.keys.map((k) => String(c.params[k])).join(',') } : {};
  return (c, role) => ({
    id: `${f.id}/${c.arm}/${configName(c)}`,
    family: f.id,
    weights: baseline ? 'f32' : f.takes?.format === 'Q8_0' ? 'q8_0' : 'q4k',
    arm: baseline ? 'f32' : c.arm,
    role,
    tile: configName(c),
    ...tileKnobs(c),
    ...shape,
  });
}

/** A config's arm and params, key order aside: equal keys run the same kernel on the same problem. */
const configKey = (c: RunConfig) =>
  JSON.stringify([c.arm, Object.entries(c.params).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);

/**
 * A family's candidates at `params`: each arm at its incumbent (or its defaults; the scalar arm only
 * in quick runs or where it is the only one), then its search's seeds (quick: the first and the last),
 * each config once. `base` is the problem's session base, at the incumbent's params.
 */
export function candidatesOf(
  caps: AdapterCaps,
  quick: boolean,
  f: KernelFamily,
  params: FamilyParams,
): { base: RunConfig; list: Candidate[] } {
  const base = benchConfig(caps, f.id, params);
  const search = f.search?.(base, caps);
  const incumbent = search ? search.apply(search.incumbent).params : params;
  const list: Candidate[] = f.arms
    .map((a) => a.arm)
    .filter((a) => a !== 'scalar' || quick || f.arms.length === 1)
    .map((a) => ({
      config: { ...benchConfig(caps, f.id, incumbent, a), params: incumbent },
      role: search ? 'incumbent' : 'fixed',
    }));
  const all = search?.seeds ?? [];
  // Quick: the first and the last seed (a family of two routes seeds each).
  const seeds = quick ? [...new Set([all[0], all.at(-1)])].filter((c) => c !== undefined) : all;
  for (const c of seeds) list.push({ config: search!.apply(c), role: 'fixed' });
  // A seed that is an arm's incumbent would be gated and timed twice (minutes over the MoE cases).
  const seen = new Set<string>();
  const distinct = list.filter(({ config }) => {
    const key = configKey(config);
    return !seen.has(key) && !!seen.add(key);
  });
  return { base: { ...base, params: incumbent }, list: distinct };
}

/** The f32 baseline's configs at a shape (quick: one small tile). */
export function baselineCandidates(caps: AdapterCaps, quick: boolean, { m, n, k }: Shape): Candidate[] {
  const tiles = quick ? ['32x32x16/4x4'] : ['128x128x16/8x8', '64x128x16/4x8', '128x64x16/8x4'];
  return tiles.map((tile) => ({
    config: benchConfig(caps, gemmF32BaselineFamily.id, { m, n, k, tile }),
    role: 'baseline',
  }));
}
