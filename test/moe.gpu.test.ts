// The MoE family on Dawn/SwiftShader: the stable slot grouping (moe_expert_rows) and the expert-indexed
// Q4_K MMQ (mmq_q4k_id) against their oracles -- the seed's tests at E=1 plus what its CPU runtime could
// not run: several experts, uneven routing with an idle expert, the grid-stride, ownership.
import { afterAll, describe, expect, it } from 'vitest';
import { judge, type Gate } from '../src/kernels/compare';
import type { ProblemConfig } from '../src/kernels/family';
import { ARMS, defaultInt8Arm, int8ArmSupport, planeWidth, type Arm } from '../src/kernels/gpu/caps';
import { decodeOwnership } from '../src/kernels/gpu/instrument';
import type { KernelPlan } from '../src/kernels/gpu/plan';
import { runPlan } from '../src/kernels/gpu/run';
import { buildMmqPlan, mmqDataset, mmqPresetSpec, mmqQ4kRef, type MmqSpec } from '../src/kernels/mmq';
import {
  MOE_ROWS_BINDINGS,
  MOE_ROWS_THREADS,
  moeExpertRowsRef,
  moeExpertRowsWgsl,
  moeFamily,
  moeRouting,
  prepareMoe,
  type MoeOverrides,
} from '../src/kernels/moe';
import { getTestGpu } from './gpu';

/**
 * Open the shared test device with one more Dawn toggle, restoring DAWN_FLAGS afterwards so the other
 * test files of this process (each gets its own device) keep the default configuration.
 */
async function withDawnFeature<T>(feature: string, open: () => Promise<T>): Promise<T> {
  const saved = process.env.DAWN_FLAGS;
  const flags = (saved ?? '').split(' ').filter(Boolean);
  const at = flags.findIndex((f) => f.startsWith('enable-dawn-features='));
  if (at >= 0) flags[at] += `,${feature}`;
  else flags.push(`enable-dawn-features=${feature}`);
  process.env.DAWN_FLAGS = flags.join(' ');
  try {
    return await open();
  } finally {
    if (saved === undefined) delete process.env.DAWN_FLAGS;
    else process.env.DAWN_FLAGS = saved;
  }
}

// Dawn zero-fills workgroup memory for every kernel unless told not to; on SwiftShader that polyfill
// costs ~1.4 s of compile per kernel with a shared f32 tile (8x the kernel itself). These kernels write
// every workgroup word before reading it, so this file's device turns it off: the suite runs in a
// fraction of the time, and a read of unwritten workgroup memory would now return garbage and fail.
const { device, caps } = await withDawnFeature('disable_workgroup_init', getTestGpu);
const REL: Gate = { kind: 'rel-to-max', tol: 1e-6 };
const BIT: Gate = { kind: 'bit-exact' };
const bitStats = { exact: 0, runs: 0 };
/** The seed test's routing: deliberately uneven, expert 3 never chosen, expert 0 most. */
const SEED_IDS = new Uint32Array([0, 2, 0, 4, 1, 0, 2, 4, 0, 1, 2, 0]);

const planeFor = (arm: Arm) => (arm === 'subgroup-matrix' ? caps.subgroupMaxSize : planeWidth(caps));

function perArm(name: string, fn: (arm: Arm) => Promise<void>) {
  for (const arm of ARMS) {
    const s = int8ArmSupport(caps, arm);
    if (s.ok) it(`${name} [${arm}]`, () => fn(arm));
    else it.skip(`${name} [${arm}: skipped, ${s.reason}]`, () => fn(arm));
  }
}

const runOut = async (plan: KernelPlan) => new Float32Array((await runPlan(device, plan)).output);

function check(got: Float32Array, want: Float32Array, label: string) {
  const v = judge(got, want, REL);
  expect(v.pass, `${label}: rel_to_max ${v.relToMax.toExponential(2)}, ${v.mismatches} bad`).toBe(true);
  const bits = judge(got, want, BIT);
  bitStats.runs++;
  if (bits.pass) bitStats.exact++;
  // Bit-exact on any adapter: see mmq.gpu.test.ts (no_fuse pins every rounding).
  expect(bits.mismatches, `${label}: bit mismatches vs the oracle`).toBe(0);
}

function config(arm: Arm, over: Partial<ProblemConfig>): ProblemConfig {
  return { kernel: 'moe-q4k-id', arm, plane: planeFor(arm), ...moeFamily.defaults, ...over };
}

/** Prepare, run and gate one routed problem; returns the prepared problem and its output. */
async function runMoe(arm: Arm, over: Partial<ProblemConfig>, o: MoeOverrides = {}) {
  const p = prepareMoe(config(arm, over), caps, o);
  const got = await runOut(p.plan);
  const pr = p.problem;
  check(
    got,
    p.oracle() as Float32Array,
    `moe E${pr.experts} top${pr.topk} ${pr.tokens}x${pr.n}x${pr.k} ytiles ${pr.ytiles} ${arm}`,
  );
  return { p, got };
}

afterAll(() => {
  console.log(
    `[moe gpu] bit-exact vs oracle in ${bitStats.exact}/${bitStats.runs} gated runs on ${caps.vendor}/${caps.architecture}`,
  );
});

describe('moe_expert_rows', () => {
  async function group(ids: Uint32Array, experts: number, cap: number) {
    const plan: KernelPlan = {
      buffers: [
        { name: 'ids', kind: 'read-only-storage', data: ids },
        // Start dirty: the kernel must zero the counts itself.
        { name: 'counts', kind: 'storage', data: new Uint32Array(experts).fill(7) },
        { name: 'rows', kind: 'storage', size: experts * cap * 4 },
        { name: 'route', kind: 'uniform', data: new Uint32Array([ids.length, experts, cap, 0]) },
      ],
      passes: [
        {
          label: 'moe_expert_rows',
          wgsl: moeExpertRowsWgsl(),
          entryPoint: 'main',
          workgroups: [1, 1, 1],
          bindings: MOE_ROWS_BINDINGS,
          workgroupSize: MOE_ROWS_THREADS,
        },
      ],
      output: 'counts',
      outputType: 'u32',
      mainPass: 0,
    };
    const r = await runPlan(device, plan, { read: ['rows'] });
    return { counts: new Uint32Array(r.output), rows: new Uint32Array(r.reads.rows!) };
  }

  it('groups the seed ids stably: 5 experts, cap 8, every slot once, ascending lists', async () => {
    const { counts, rows } = await group(SEED_IDS, 5, 8);
    const want: number[][] = [[], [], [], [], []];
    SEED_IDS.forEach((e, s) => want[e]!.push(s));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(SEED_IDS.length);
    for (let e = 0; e < 5; e++) {
      expect(counts[e], `expert ${e} count`).toBe(want[e]!.length);
      expect(Array.from(rows.subarray(e * 8, e * 8 + want[e]!.length)), `expert ${e} list`).toEqual(want[e]);
    }
    const ref = moeExpertRowsRef(SEED_IDS, 5, 8);
    expect(Array.from(counts)).toEqual(Array.from(ref.counts));
    expect(Array.from(rows)).toEqual(Array.from(ref.rows));
  });

  it('matches moeExpertRowsRef on seeded top-2 routing over 8 experts (more slots than threads)', async () => {
    const ids = moeRouting(100, 8, 2, 0x1234n);
    const { counts, rows } = await group(ids, 8, 100);
    const ref = moeExpertRowsRef(ids, 8, 100);
    expect(Array.from(counts)).toEqual(Array.from(ref.counts));
    expect(Array.from(rows)).toEqual(Array.from(ref.rows));
  });
});

describe('mmq-q4k-id (mmq_q4k_id)', () => {
  perArm('matches mmqQ4kIdRef with tails at E=1', async (arm) => {
    for (const [m, n, k] of [
      [32, 64, 256],
      [32, 64, 512],
      [17, 64, 256],
      [32, 50, 256],
      [17, 50, 512],
      [1, 64, 256],
    ] as const) {
      await runMoe(arm, { m, n, k, experts: 1, topk: 1, ytiles: Math.ceil(m / 32) });
    }
  });

  perArm('is bit-identical to mmq-q4k-rt at E=1 with identity routing (32x64x512)', async (arm) => {
    const [m, n, k] = [32, 64, 512];
    const { got } = await runMoe(arm, { m, n, k, experts: 1, topk: 1, ytiles: 1 });
    const ds = mmqDataset('q4k', m, n, k, 'seed', 0);
    const rt = await runOut(
      buildMmqPlan(ds.inputs, m, n, k, mmqPresetSpec('mmq-q4k-rt', { m, n, k, arm, plane: planeFor(arm) })),
    );
    expect(judge(got, rt, BIT).mismatches).toBe(0);
    if (ds.inputs.weights === 'q4k') check(rt, mmqQ4kRef(ds.inputs.data, m, n, k), 'rt reference');
  });

  perArm('grid-stride covers every row: 128 slots on ytiles 1..4', async (arm) => {
    for (const ytiles of [1, 2, 3, 4])
      await runMoe(arm, { m: 128, n: 64, k: 256, experts: 1, topk: 1, ytiles });
  });

  perArm('8 experts, top-2 routing, 40 tokens x 100 x 256 (tails, multi-expert grid)', async (arm) => {
    await runMoe(arm, { m: 40, n: 100, k: 256, experts: 8, topk: 2, ytiles: 2 });
  });

  perArm("the seed's uneven routing: an idle expert, one expert with 5 of 12 slots", async (arm) => {
    await runMoe(arm, { m: 12, n: 64, k: 256, experts: 5, topk: 1, ytiles: 1 }, { ids: SEED_IDS, cap: 8 });
  });

  it("the generator's indexed Q8_0 variant: 8 experts top-2, 16 tokens x 64 x 64", async () => {
    const arm = defaultInt8Arm(caps);
    const spec: MmqSpec = {
      ...mmqPresetSpec('moe-q4k-id', { m: 0, n: 0, k: 0, arm, plane: planeFor(arm) }),
      weights: 'q8_0',
    };
    await runMoe(arm, { m: 16, n: 64, k: 64, experts: 8, topk: 2, ytiles: 1 }, { spec });
  });

  it('the family on random data (defaults: 32 tokens, 8 experts top-2, 128 x 512) passes its gate', async () => {
    const arm = defaultInt8Arm(caps);
    const c = config(arm, { dataSource: 'random', dataSeed: 3 });
    expect(moeFamily.validate(c, caps)).toEqual([]);
    const { p } = await runMoe(arm, { dataSource: 'random', dataSeed: 3 });
    const quant = judge(p.oracle() as Float32Array, p.fullPrecision!(), REL);
    console.log(
      `[moe gpu] family defaults ${arm}: quantization rel ${quant.relToMax.toExponential(2)}, weight bytes ${p.weightBytes}`,
    );
    expect(quant.relToMax).toBeLessThan(0.1);
  });

  it('ownership: the instrumented run equals the analytic map (8 experts top-2, ytiles 2)', async () => {
    const arm = defaultInt8Arm(caps);
    const p = prepareMoe(config(arm, { m: 40, n: 100, k: 256, experts: 8, topk: 2, ytiles: 2 }), caps);
    const r = await runPlan(device, p.instrumentedPlan, { read: [p.ownerBuffer] });
    const got = decodeOwnership(r.reads[p.ownerBuffer]!, p.rows, p.cols);
    expect(got.count.every((c) => c === 1)).toBe(true);
    const want = p.analyticOwnership('scalar-epilogue');
    let bad = 0;
    for (let i = 0; i < want.count.length; i++) {
      if (
        got.workgroup[i] !== want.workgroup[i] ||
        got.plane[i] !== want.plane[i] ||
        got.lane[i] !== want.lane[i]
      )
        bad++;
    }
    expect(bad).toBe(0);
    check(new Float32Array(r.output), p.oracle() as Float32Array, 'instrumented');
  });
});
