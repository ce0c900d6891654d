// The dense MMQ kernels on a real WebGPU implementation (Dawn on SwiftShader in CI) against their
// oracles: every seed test's twin under the same gate, for every arm the adapter allows, plus what the
// seed's CPU runtime could not do (multi-block grids, several plane widths), ownership as recorded by
// the instrumented kernel, and a broken epilogue that must fail the gate.
import { describe, expect, it } from 'vitest';
import { judge, type Gate } from '../src/kernels/compare';
import { planeWidth, type Arm } from '../src/kernels/gpu/caps';
import { ownershipDiff } from '../src/kernels/gpu/instrument';
import {
  buildMmqPlan,
  mmqDataset,
  mmqFamilies,
  mmqPresetSpec,
  mmqQ4kRef,
  mmqQ8Ref,
  MMQ_ARMS,
  type MmqKernelId,
  type MmqSpec,
} from '../src/kernels/mmq';
import { configOf } from './configs';
import { BIT, openKernelHarness, REL, SEED_TAIL_SHAPES } from './kernelHarness';

const { caps, planeFor, perArm, runOut, check, recordOwnership } = await openKernelHarness('mmq gpu');
/** The fastest arm the adapter runs without subgroup matrices (the text checks below edit its WGSL). */
const fastestScalarArm: Arm = MMQ_ARMS[1].unavailable(caps, {}) ? 'scalar' : 'dp4a';

type Shape = readonly [number, number, number];

/** Run a preset on seed data and gate it against its oracle. */
async function runPreset(
  id: MmqKernelId,
  [m, n, k]: Shape,
  arm: Arm,
  gate: Gate,
  extra: Partial<MmqSpec> = {},
) {
  const spec = { ...mmqPresetSpec(id, { m, n, k, arm, plane: planeFor(arm) }), ...extra };
  const ds = mmqDataset(spec.weights, m, n, k, 'reference', 0);
  const got = await runOut(buildMmqPlan(ds.inputs, m, n, k, spec));
  const want =
    ds.inputs.weights === 'q8_0' ? mmqQ8Ref(ds.inputs.data, m, n, k) : mmqQ4kRef(ds.inputs.data, m, n, k);
  return { got, want, verdict: check(got, want, gate, `${id} ${m}x${n}x${k} ${arm} plane ${spec.plane}`) };
}

describe('mmq-q8-naive (mmq_q8_wmma)', () => {
  perArm('is bit-exact to mmqQ8Ref at (16,16,64), (32,16,128), (16,32,256)', async (arm) => {
    for (const shape of [
      [16, 16, 64],
      [32, 16, 128],
      [16, 32, 256],
    ] as const) {
      await runPreset('mmq-q8-naive', shape, arm, BIT);
    }
  });
});

describe('mmq-q8-tiled (mmq_q8_wmma_blk)', () => {
  perArm('matches mmqQ8Ref at 32x64x128 (rel_to_max < 1e-6)', async (arm) => {
    await runPreset('mmq-q8-tiled', [32, 64, 128], arm, REL);
  });
  perArm('multi-block: 64x2048x64, a 32 x 2 grid of workgroups', async (arm) => {
    await runPreset('mmq-q8-tiled', [64, 2048, 64], arm, REL);
  });
});

describe('mmq-q4k-blk (mmq_q4k_wmma_blk)', () => {
  perArm('matches mmqQ4kRef at (32,64,256), (32,64,512)', async (arm) => {
    await runPreset('mmq-q4k-blk', [32, 64, 256], arm, REL);
    await runPreset('mmq-q4k-blk', [32, 64, 512], arm, REL);
  });
});

describe('mmq-q4k-rt (mmq_q4k_wmma_rt)', () => {
  perArm('matches mmqQ4kRef with m/n tails, one pipeline for every shape', async (arm) => {
    const codes = new Set<string>();
    for (const [m, n, k] of SEED_TAIL_SHAPES) {
      const spec = mmqPresetSpec('mmq-q4k-rt', { m, n, k, arm, plane: planeFor(arm) });
      const ds = mmqDataset('q4k', m, n, k, 'reference', 0);
      const plan = buildMmqPlan(ds.inputs, m, n, k, spec);
      codes.add(plan.passes[0]!.wgsl);
      if (ds.inputs.weights !== 'q4k') throw new Error('q4k data expected');
      check(await runOut(plan), mmqQ4kRef(ds.inputs.data, m, n, k), REL, `rt ${m}x${n}x${k} ${arm}`);
    }
    expect(codes.size).toBe(1);
  });
  perArm('multi-block: 40x2048x256 (32 n-tiles x 2 m-tiles, partial last m-tile)', async (arm) => {
    await runPreset('mmq-q4k-rt', [40, 2048, 256], arm, REL);
  });
  it('a broken epilogue (dropped - M*xsum) FAILS the gate', async () => {
    const [m, n, k] = [32, 64, 256];
    const spec = mmqPresetSpec('mmq-q4k-rt', {
      m,
      n,
      k,
      arm: fastestScalarArm,
      plane: planeWidth(caps),
    });
    const ds = mmqDataset('q4k', m, n, k, 'reference', 0);
    if (ds.inputs.weights !== 'q4k') throw new Error('q4k data expected');
    const plan = buildMmqPlan(ds.inputs, m, n, k, spec);
    const good = plan.passes[0]!.wgsl;
    const broken = good.replace(
      'no_fuse(xsc * wdd * f32(isum)) - no_fuse(wmm * xsm)',
      'no_fuse(xsc * wdd * f32(isum))',
    );
    expect(broken).not.toBe(good);
    const want = mmqQ4kRef(ds.inputs.data, m, n, k);
    const v = judge(await runOut(plan, { 0: broken }), want, REL);
    console.log(
      `[mmq gpu] broken epilogue (no - M*xsum): rel_to_max = ${v.relToMax.toExponential(3)}, ${v.mismatches}/${want.length} elements off`,
    );
    expect(v.pass).toBe(false);
    expect(v.relToMax).toBeGreaterThan(1e-2);
    // The unmodified kernel passes the same gate on the same run path.
    expect(judge(await runOut(plan), want, REL).pass).toBe(true);
  });
});

describe('mmq-q4k-tile (mmq_q4k_wmma_tile)', () => {
  const tiles = [
    [1, 1, 1, 1],
    [2, 2, 1, 1],
    [1, 1, 2, 2],
    [2, 1, 1, 2],
    [1, 2, 2, 1],
    [2, 2, 2, 2],
  ] as const;
  perArm('matches mmqQ4kRef for every genome at m=BM, n=BN, k 256 and 512', async (arm) => {
    for (const [wm, wn, rm, rn] of tiles) {
      const tile = { wm, wn, rm, rn };
      const [bm, bn] = [wm * rm * 16, wn * rn * 16];
      for (const k of [256, 512]) await runPreset('mmq-q4k-tile', [bm, bn, k], arm, REL, { tile });
    }
  });
  perArm('multi-block with tails: (2,2,2,2) at 100x300x256, a 5 x 2 grid', async (arm) => {
    await runPreset('mmq-q4k-tile', [100, 300, 256], arm, REL, { tile: { wm: 2, wn: 2, rm: 2, rn: 2 } });
  });
  it('gives identical bits for every plane width the partition divides by (4, 8, 32)', async () => {
    // The scalar arms use no subgroup operation, so a logical plane of any width that divides 256
    // must reproduce the same bits: per = 256/plane elements per lane, workgroup = nwarp * plane.
    const arm = fastestScalarArm;
    const tile = { wm: 2, wn: 2, rm: 1, rn: 1 };
    const ref = await runPreset('mmq-q4k-tile', [32, 32, 256], arm, REL, { tile, plane: 4 });
    for (const plane of [8, 32]) {
      const { got } = await runPreset('mmq-q4k-tile', [32, 32, 256], arm, REL, { tile, plane });
      expect(judge(got, ref.got, BIT).mismatches, `plane ${plane}`).toBe(0);
    }
  });
});

describe('families end to end (random data, the adapter default arm)', () => {
  // Shapes the reference twins above already compiled (static dims bake the shape), so no new pipelines.
  const shapes: Record<string, Record<string, number>> = {
    'mmq-q8-naive': { m: 16, n: 32, k: 256 },
    'mmq-q8-tiled': { m: 32, n: 64, k: 128 },
    'mmq-q4k-blk': { m: 32, n: 64, k: 512 },
    'mmq-q4k-rt': { m: 17, n: 50, k: 512 },
    'mmq-q4k-tile': { m: 32, n: 32, k: 256, wm: 2, wn: 2, rm: 1, rn: 1 },
  };
  for (const fam of mmqFamilies) {
    it(`${fam.id}: ${fam.reference} on quantized f32 tensors passes its gate; error split reported`, async () => {
      const config = configOf(fam, caps, shapes[fam.id], { data: { source: 'random', seed: 0 } });
      expect(fam.validate(config, caps)).toEqual([]);
      const b = fam.build(config, caps);
      const got = await runOut(b.plan);
      const oracle = b.facts.oracle() as Float32Array;
      const v = check(got, oracle, b.facts.gate, fam.id);
      const quant = judge(oracle, b.facts.fullPrecision!(), REL);
      console.log(
        `[mmq gpu] ${fam.id} ${JSON.stringify(shapes[fam.id])} ${config.arm}: kernel rel ${v.relToMax.toExponential(2)}, quantization rel ${quant.relToMax.toExponential(2)}`,
      );
      expect(quant.relToMax).toBeGreaterThan(0);
      expect(quant.relToMax).toBeLessThan(0.1);
    });
  }
});

describe('ownership: the instrumented run equals the analytic map, every element stored once', () => {
  const cases: [MmqKernelId, Record<string, number>][] = [
    ['mmq-q8-naive', { m: 32, n: 16, k: 128 }],
    ['mmq-q8-tiled', { m: 64, n: 2048, k: 64 }],
    ['mmq-q4k-rt', { m: 40, n: 100, k: 256 }],
    ['mmq-q4k-tile', { m: 100, n: 300, k: 256, wm: 2, wn: 2, rm: 2, rn: 2 }],
  ];
  for (const [id, over] of cases) {
    perArm(`${id} ${JSON.stringify(over)}`, async (arm) => {
      const fam = mmqFamilies.find((f) => f.id === id)!;
      const b = fam.build(configOf(fam, caps, over, { arm, plane: planeFor(arm) }), caps);
      const { own, output } = await recordOwnership(b);
      for (const phase of b.facts.phases.filter((ph) => ph !== 'fragment-store')) {
        expect(ownershipDiff(own, b.facts.analyticOwnership(phase), { counts: true }), phase).toBe(0);
      }
      // Recording ownership does not change the result.
      expect(judge(output, await runOut(b.plan), BIT).mismatches).toBe(0);
    });
  }
});
