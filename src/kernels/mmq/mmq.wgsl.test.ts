// Node tier for the generator and host plans: WGSL snapshots per variant (so generator changes show in
// review), the subgroup-matrix arm's text (it cannot run on SwiftShader), spec/shape/limit validation
// with clear ShapeErrors before any dispatch, workgroup memory per arm, and analytic ownership.
import { describe, expect, it } from 'vitest';
import { ShapeError, type FamilyParams, type ResolvedConfig } from '../family';
import { SUBGROUP_MATRIX_FEATURE, type AdapterCaps, type Arm } from '../gpu/caps';
import { planLimitProblems } from '../gpu/plan';
import { SWIFTSHADER_CAPS as SWIFTSHADER } from '../gpu/testCaps';
import type { MmqKernelId } from './catalog';
import { mmqDataset } from './mmq.data';
import { mmqFamilies, mmqPresetSpec } from './mmq.family';
import { buildMmqPlan, mmqAnalyticOwnership, mmqShapeProblems } from './mmq.plan';
import { buildMmqKernel, mmqSpecProblems, mmqWgsl, mmqWorkgroupBytes, type MmqSpec } from './mmq.wgsl';

const limits = SWIFTSHADER.limits;
/** What Dawn with allow_unsafe_apis reports on the H200. */
const H200: AdapterCaps = {
  ...SWIFTSHADER,
  vendor: 'nvidia',
  features: ['subgroups', 'timestamp-query', SUBGROUP_MATRIX_FEATURE],
  subgroupMinSize: 32,
  subgroupMaxSize: 32,
  subgroupMatrixConfigs: [{ componentType: 'i8', resultComponentType: 'i32', M: 16, N: 16, K: 32 }],
  limits: {
    ...limits,
    maxComputeInvocationsPerWorkgroup: 1024,
    maxComputeWorkgroupSizeX: 1024,
    maxComputeWorkgroupStorageSize: 49152,
  },
};

const family = (id: MmqKernelId) => mmqFamilies.find((f) => f.id === id)!;
const config = (kernel: MmqKernelId, over: Partial<ResolvedConfig> = {}): ResolvedConfig => ({
  kernel,
  arm: 'scalar',
  plane: 4,
  data: { source: 'reference', seed: 0 },
  params: family(kernel).defaults,
  ...over,
});

const preset = (
  id: MmqKernelId,
  arm: Arm,
  plane = 4,
  shape = { m: 32, n: 64, k: 256 },
  tile = { wm: 2, wn: 2, rm: 2, rn: 2 },
) => mmqPresetSpec(id, { ...shape, arm, plane, tile });

describe('generated WGSL snapshots', () => {
  const variants: [string, MmqSpec][] = [
    ['mmq-q8-naive.scalar', preset('mmq-q8-naive', 'scalar', 4, { m: 16, n: 16, k: 64 })],
    ['mmq-q8-naive.subgroup-matrix', preset('mmq-q8-naive', 'subgroup-matrix', 32, { m: 16, n: 16, k: 64 })],
    ['mmq-q8-tiled.dp4a', preset('mmq-q8-tiled', 'dp4a', 4, { m: 32, n: 64, k: 128 })],
    ['mmq-q4k-blk.scalar', preset('mmq-q4k-blk', 'scalar')],
    ['mmq-q4k-rt.dp4a', preset('mmq-q4k-rt', 'dp4a')],
    ['mmq-q4k-tile.scalar', preset('mmq-q4k-tile', 'scalar')],
    ['mmq-q4k-tile.subgroup-matrix', preset('mmq-q4k-tile', 'subgroup-matrix', 32)],
    ['mmq-q4k-id.dp4a', preset('mmq-q4k-id', 'dp4a')],
  ];
  for (const [name, spec] of variants) {
    it(name, async () => {
      await expect(mmqWgsl(spec)).toMatchFileSnapshot(`./__snapshots__/${name}.wgsl`);
    });
  }
});

describe('subgroup-matrix arm text (validated on hardware, not on SwiftShader)', () => {
  const code = mmqWgsl(preset('mmq-q4k-tile', 'subgroup-matrix', 32));
  it('enables the extension and uses the NEW load/store form with u32-element offsets and strides', () => {
    expect(code).toMatch(/^enable subgroups;\nenable chromium_experimental_subgroup_matrix;$/m);
    // Operands must be subgroup-uniform: the plane index is the hardware subgroup id (Tint rejects
    // tid / PLANE and subgroupBroadcastFirst(tid / PLANE) as matrix offsets; seen on the H200).
    expect(code).toContain('@builtin(subgroup_id) sg_id: u32');
    expect(code).toContain('let warp = sg_id;');
    expect(code).toContain('let lane = sg_lane;');
    expect(code).toContain(
      'subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&sa, sm * 16u * 8u, 8u)',
    );
    expect(code).toContain(
      'subgroupMatrixLoad<subgroup_matrix_right<i8, 16, 32>, col_major>(&sb, sn * 16u * 8u, 8u)',
    );
    expect(code).toContain('subgroupMatrixMultiply<i32>(a, b)');
    expect(code).toContain(
      'subgroupMatrixStore<row_major>(&ci, (warp * RM * RN + im * RN + jn) * 256u, c, 16u)',
    );
    // The deprecated form passes a bool layout argument; it must not appear.
    expect(code).not.toMatch(/subgroupMatrix(Load|Store)[^;]*(true|false)/);
    // The scalar epilogue reads the fragment back from the shared round trip.
    expect(code).toContain('let isum = ci[(warp * RM * RN + sub) * 256u + p];');
    expect(code).not.toContain('requires packed_4x8_integer_dot_product');
  });
  it('is gated by the adapter: refused on SwiftShader with the reason, accepted on an H200-like adapter', () => {
    const fam = family('mmq-q4k-tile');
    const c = config('mmq-q4k-tile', { arm: 'subgroup-matrix', plane: 32 });
    expect(fam.validate(c, SWIFTSHADER).join()).toMatch(
      /has no subgroup matrices \(chromium-experimental-subgroup-matrix/,
    );
    expect(fam.validate(c, H200)).toEqual([]);
    expect(fam.validate({ ...c, plane: 16 }, H200).join()).toMatch(/plane width must be 32, not 16/);
  });
  it('Q4_K with global operands has no matrix arm (the nibbles need the in-kernel decode)', () => {
    const spec: MmqSpec = { ...preset('mmq-q4k-blk', 'subgroup-matrix', 32), operands: 'global' };
    expect(mmqSpecProblems(spec).join()).toMatch(/q4k needs operands shared/);
  });
});

describe('epilogue arithmetic', () => {
  it("writes the oracle's f32 order with every product rounded on its own (no FMA contraction)", () => {
    const q8 = mmqWgsl(preset('mmq-q8-tiled', 'dp4a', 4, { m: 32, n: 64, k: 128 }));
    expect(q8).toContain('accf[gmm * BN + gnn] += no_fuse(f32(isum) * xsc * wscale);');
    const q4 = mmqWgsl(preset('mmq-q4k-tile', 'scalar'));
    expect(q4).toContain('acc[sub * PER + e] += no_fuse(xsc * wdd * f32(isum)) - no_fuse(wmm * xsm);');
    expect(q4).toContain('let wdd = wsb.x * f32(q4k_sc(blk * 3u, is));');
    expect(q4).toContain('let wmm = wsb.y * f32(q4k_m(blk * 3u, is));');
    expect(q4).toContain('nofuse_zero = nwg.z >> 31u;');
  });
});

describe('spec and kernel facts', () => {
  it('partitions by the plane: workgroup size nwarp*plane, per = 256/plane, plane must divide 256', () => {
    const k4 = buildMmqKernel(preset('mmq-q4k-rt', 'dp4a', 4));
    expect([k4.workgroupSize, k4.geometry.per]).toEqual([32, 64]);
    const k32 = buildMmqKernel(preset('mmq-q4k-rt', 'dp4a', 32));
    expect([k32.workgroupSize, k32.geometry.per]).toEqual([256, 8]);
    expect(() => buildMmqKernel(preset('mmq-q4k-rt', 'dp4a', 48))).toThrow(ShapeError);
    expect(() => buildMmqKernel(preset('mmq-q4k-rt', 'dp4a', 48))).toThrow(/plane 48 does not divide 256/);
  });

  it('bindings follow the reference argument order, the dims uniform and the grid slice last', () => {
    expect(buildMmqKernel(preset('mmq-q8-naive', 'scalar')).bindings).toEqual([
      'xq',
      'xs',
      'wq',
      'wd',
      'out',
      'grid_slice',
    ]);
    // Q4_K pairs interleaved (xs|xsum, d|dmin, counts|rows): within WebGPU's 8 storage buffers + owner.
    const q4kInputs = ['xq', 'xs_xsum', 'wqs', 'wsc', 'wd_dmin'];
    expect(buildMmqKernel(preset('mmq-q4k-rt', 'scalar')).bindings).toEqual([
      ...q4kInputs,
      'out',
      'dims',
      'grid_slice',
    ]);
    const id = buildMmqKernel(preset('mmq-q4k-id', 'scalar'));
    expect(id.bindings).toEqual([...q4kInputs, 'routing', 'out', 'dims', 'grid_slice']);
    expect(id.outputBinding).toBe(6);
  });

  it('grids: ceil over tiles, or (n-tiles, ytiles, experts) when indexed', () => {
    expect(buildMmqKernel(preset('mmq-q4k-rt', 'scalar')).workgroups(17, 130)).toEqual([3, 1, 1]);
    expect(
      buildMmqKernel(preset('mmq-q4k-id', 'scalar')).workgroups(999, 64, { ytiles: 3, experts: 8 }),
    ).toEqual([1, 3, 8]);
    expect(() => buildMmqKernel(preset('mmq-q4k-id', 'scalar')).workgroups(1, 64)).toThrow(/ytiles, experts/);
  });

  it('workgroup memory is what the kernel declares, per arm; the matrix arm matches the seed mmq_lds_bytes', () => {
    for (const tile of [
      { wm: 2, wn: 4, rm: 1, rn: 1 },
      { wm: 2, wn: 2, rm: 2, rn: 2 },
      { wm: 1, wn: 4, rm: 4, rn: 2 },
    ]) {
      const bm = tile.wm * tile.rm * 16;
      const bn = tile.wn * tile.rn * 16;
      const matrix = preset('mmq-q4k-tile', 'subgroup-matrix', 32, undefined, tile);
      // The seed's LDS model: sa[BM*32] i8 + sb[BN*32] i8 + ci[BM*BN] i32 (register accumulator).
      expect(mmqWorkgroupBytes(matrix)).toBe(bm * 32 + bn * 32 + bm * bn * 4);
      // The scalar arms keep isum in a register: no ci scratch.
      expect(mmqWorkgroupBytes({ ...matrix, arm: 'dp4a' })).toBe(bm * 32 + bn * 32);
      // The text declares exactly that: count the array sizes in the generated code.
      const declared = [...mmqWgsl(matrix).matchAll(/var<workgroup> \w+: array<\w+, ([^>]+)>/g)].map(
        (mt) => mt[1],
      );
      expect(declared).toEqual(['BM * 8u', 'BN * 8u', 'BM * BN']);
    }
    // The fixed seed kernels also hold the f32 tile in shared memory (accf) and MoE its slot list.
    expect(mmqWorkgroupBytes(preset('mmq-q4k-rt', 'scalar'))).toBe(32 * 32 + 64 * 32 + 32 * 64 * 4);
    expect(mmqWorkgroupBytes(preset('mmq-q4k-id', 'subgroup-matrix', 32))).toBe(
      32 * 4 + 32 * 32 + 64 * 32 + 2 * 32 * 64 * 4,
    );
  });

  it('refuses impossible specs with a reason', () => {
    const rt = preset('mmq-q4k-rt', 'scalar');
    expect(
      mmqSpecProblems({ ...rt, indexed: true, dims: { kind: 'static', m: 1, n: 1, k: 256 } }).join(),
    ).toMatch(/dims must be runtime/);
    expect(mmqSpecProblems({ ...rt, operands: 'global' }).join()).toMatch(/no tail guards/);
    expect(mmqSpecProblems({ ...rt, tile: { wm: 0, wn: 1, rm: 1, rn: 1 } }).join()).toMatch(
      /positive integers/,
    );
  });

  it('the plan carries the limits the adapter checks: workgroup size, workgroup memory, storage buffers', () => {
    const q4 = () => mmqDataset('q4k', 32, 64, 256, 'reference', 0).inputs;
    const plan = (spec: MmqSpec, instrument = false) => buildMmqPlan(q4, 32, 64, 256, spec, { instrument });
    const big = preset('mmq-q4k-tile', 'dp4a', 32, undefined, { wm: 4, wn: 4, rm: 1, rn: 1 });
    expect(planLimitProblems(plan(big), limits).join()).toMatch(
      /512 invocations per workgroup > this adapter's 256 \(maxComputeInvocationsPerWorkgroup\)/,
    );
    const lds = preset('mmq-q4k-tile', 'dp4a', 4, undefined, { wm: 1, wn: 1, rm: 8, rn: 8 });
    expect(planLimitProblems(plan({ ...lds, accumulator: 'shared' }), limits).join()).toMatch(
      /73728 bytes of workgroup memory > this adapter's 32768/,
    );
    // The interleaved layout fits WebGPU's default 8 with the owner buffer; one fewer is refused.
    const rt = preset('mmq-q4k-rt', 'scalar');
    expect(planLimitProblems(plan(rt, true), { ...limits, maxStorageBuffersPerShaderStage: 7 })).toEqual([]);
    expect(
      planLimitProblems(plan(rt, true), { ...limits, maxStorageBuffersPerShaderStage: 6 }).join(),
    ).toMatch(/binds 7 storage buffers > this adapter's 6/);
    expect(
      planLimitProblems(
        buildMmqPlan(() => mmqDataset('q4k', 64, 64, 256, 'reference', 0).inputs, 64, 64, 256, rt),
        { ...limits, maxComputeWorkgroupsPerDimension: 1 },
      ).join(),
    ).toMatch(/2 workgroups along y > this adapter's 1 \(maxComputeWorkgroupsPerDimension\)/);
  });
});

describe('shape preconditions throw ShapeError before any dispatch', () => {
  const q4 = mmqDataset('q4k', 17, 64, 256, 'reference', 0).inputs;
  it('k must be a multiple of the block (32 for Q8_0, 256 for Q4_K)', () => {
    expect(mmqShapeProblems(preset('mmq-q4k-rt', 'scalar'), 32, 64, 288).join()).toMatch(
      /k = 288 is not a multiple of 256/,
    );
    const q8 = mmqPresetSpec('mmq-q8-naive', { m: 16, n: 16, k: 48, arm: 'scalar', plane: 4 });
    expect(mmqShapeProblems(q8, 16, 16, 48).join()).toMatch(/k = 48 is not a multiple of 32/);
  });
  it('kernels without tail guards need tile multiples', () => {
    const blk = mmqPresetSpec('mmq-q4k-blk', { m: 17, n: 64, k: 256, arm: 'scalar', plane: 4 });
    expect(() => buildMmqPlan(q4, 17, 64, 256, blk)).toThrow(ShapeError);
    expect(() => buildMmqPlan(q4, 17, 64, 256, blk)).toThrow(
      /m = 17 is not a multiple of BM 32 \(this kernel has no tail guards\)/,
    );
    // The runtime kernel with tails takes the same shape.
    expect(() =>
      buildMmqPlan(
        q4,
        17,
        64,
        256,
        mmqPresetSpec('mmq-q4k-rt', { m: 0, n: 0, k: 0, arm: 'scalar', plane: 4 }),
      ),
    ).not.toThrow();
  });
  it('a static kernel runs only its own shape', () => {
    const blk = mmqPresetSpec('mmq-q4k-blk', { m: 32, n: 64, k: 256, arm: 'scalar', plane: 4 });
    expect(mmqShapeProblems(blk, 32, 64, 512).join()).toMatch(/generated for 32x64x256, not 32x64x512/);
  });
});

describe('families', () => {
  it('every family builds its defaults on SwiftShader-like caps, with reference data and a plan', () => {
    for (const fam of mmqFamilies) {
      const c = config(fam.id as MmqKernelId);
      expect(fam.validate(c, SWIFTSHADER), fam.id).toEqual([]);
      const b = fam.build(c, SWIFTSHADER);
      const [m, n, k] = [c.params.m, c.params.n, c.params.k] as number[];
      expect(b.facts.rows * b.facts.cols).toBe(m! * n!);
      expect(b.facts.ops).toBe(2 * m! * n! * k!);
      expect(b.facts.gate).toEqual({ kind: 'bit-exact' });
      expect(b.plan.passes[b.plan.mainPass]!.wgsl).toContain('fn store_out');
      expect(b.instrumentedPlan().passes[0]!.bindings.at(-1)).toBe(b.ownerBuffer);
    }
  });
  it("validate explains in the user's terms, one message per problem; build throws ShapeError", () => {
    const fam = family('mmq-q8-naive');
    const c = config('mmq-q8-naive', { params: { m: 20, n: 64, k: 40 } });
    expect(fam.validate(c, SWIFTSHADER)).toEqual(['k = 40 is not a multiple of 32 (the Q8_0 block)']);
    const c2 = config('mmq-q8-naive', { params: { m: 20, n: 64, k: 64 } });
    expect(fam.validate(c2, SWIFTSHADER)).toEqual([
      'm = 20 is not a multiple of 16 (the 16-row output tile: this kernel has no tail guards)',
    ]);
    expect(() => fam.build(c2, SWIFTSHADER)).toThrow(ShapeError);
    expect(
      family('mmq-q4k-tile').validate(
        config('mmq-q4k-tile', { params: { m: 0, n: 64, k: 256, wm: 0, wn: 4, rm: 1, rn: 1 } }),
        SWIFTSHADER,
      ),
    ).toEqual(['m = 0 must be at least 1', 'wm = 0 must be at least 1']);
    expect(
      family('mmq-q4k-rt')
        .validate(config('mmq-q4k-rt', { arm: 'subgroup-matrix' }), SWIFTSHADER)
        .join(),
    ).toMatch(/subgroup matri/);
  });
  it('controls step k by the block and m/n by the tile where the kernel has no tail guards', () => {
    const step = (id: MmqKernelId, key: string, params: FamilyParams) =>
      family(id).controls.find((c) => c.key === key && c.kind === 'int')?.kind === 'int'
        ? (family(id).controls.find((c) => c.key === key) as { step(p: FamilyParams): number }).step(params)
        : undefined;
    expect(step('mmq-q8-tiled', 'k', {})).toBe(32);
    expect(step('mmq-q4k-rt', 'k', {})).toBe(256);
    expect(step('mmq-q8-tiled', 'm', {})).toBe(32);
    expect(step('mmq-q8-tiled', 'n', {})).toBe(64);
    expect(step('mmq-q4k-rt', 'm', {})).toBe(1);
  });
  it('phases: the matrix arm adds an opaque fragment-store phase, the tile kernel a register accumulator', () => {
    const fam = family('mmq-q4k-tile');
    const tile = fam.build(config('mmq-q4k-tile'), SWIFTSHADER).facts;
    expect(tile.phases).toEqual(['scalar-epilogue', 'register-accumulator']);
    const h = fam.build(config('mmq-q4k-tile', { arm: 'subgroup-matrix', plane: 32 }), H200).facts;
    expect(h.phases).toEqual(['fragment-store', 'scalar-epilogue', 'register-accumulator']);
    expect(h.analyticOwnership('fragment-store').count.every((v) => v === 0)).toBe(true);
    expect(() => tile.analyticOwnership('fragment-store')).toThrow(/does not occur/);
  });
});

describe('analytic ownership', () => {
  it('stores every element once; each lane owns per*rm*rn elements of its workgroup tile', () => {
    for (const [tile, plane] of [
      [{ wm: 2, wn: 4, rm: 1, rn: 1 }, 4],
      [{ wm: 2, wn: 1, rm: 1, rn: 2 }, 8],
      [{ wm: 1, wn: 2, rm: 2, rn: 2 }, 32],
    ] as const) {
      const spec = mmqPresetSpec('mmq-q4k-tile', { m: 0, n: 0, k: 256, arm: 'dp4a', plane, tile });
      const bm = tile.wm * tile.rm * 16;
      const bn = tile.wn * tile.rn * 16;
      const own = mmqAnalyticOwnership(spec, bm * 2, bn * 3);
      expect(own.count.every((c) => c === 1)).toBe(true);
      const perOwner = new Map<string, number>();
      own.count.forEach((_, i) => {
        const key = `${own.workgroup[i]}/${own.plane[i]}/${own.lane[i]}`;
        perOwner.set(key, (perOwner.get(key) ?? 0) + 1);
      });
      expect(perOwner.size).toBe(6 * tile.wm * tile.wn * plane);
      expect([...perOwner.values()].every((v) => v === (256 / plane) * tile.rm * tile.rn)).toBe(true);
    }
  });
});
