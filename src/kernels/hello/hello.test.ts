// Node tier for the hello kernels: oracles by hand, data determinism, WGSL snapshots of every arm
// (the subgroup-matrix arm cannot run on SwiftShader, so its text is pinned here), and validation
// against adapters that do and do not have the int8 matrix configs.
import { describe, expect, it } from 'vitest';
import type { ResolvedConfig } from '../family';
import { SUBGROUP_MATRIX_FEATURE, type Arm } from '../gpu/caps';
import { fakeCaps, matrixConfig as cfg, H200_INT8_CONFIGS as H200_INT8 } from '../gpu/testCaps';
import { dataStreamSeed } from '../quant/gen';
import {
  helloAnalyticOwnership,
  helloData,
  helloI8Ref,
  helloMatrixShape,
  helloMmaFamily,
  helloParams,
  helloPlan,
  helloWgsl,
  helloWmmaFamily,
  mmaHelloRef,
} from './index';

function config(kernel: 'hello-wmma' | 'hello-mma', arm: Arm, plane: number): ResolvedConfig {
  return { kernel, arm, plane, data: { source: 'reference', seed: 0 }, params: {} };
}

describe('hello oracles', () => {
  it('helloI8Ref is A @ B^T: identity A picks B rows; a hand-computed element', () => {
    const eye = new Int8Array(256);
    for (let i = 0; i < 16; i++) eye[i * 16 + i] = 1;
    const b = new Int8Array(256).map((_, i) => ((i * 37) % 255) - 127);
    // (I @ B^T)[m, n] = B[n, m]
    const out = helloI8Ref(eye, b);
    for (let m = 0; m < 16; m++) for (let n = 0; n < 16; n++) expect(out[m * 16 + n]).toBe(b[n * 16 + m]);
    const a = new Int8Array(256).fill(-127);
    const c = new Int8Array(256).fill(-127);
    expect(helloI8Ref(a, c)[17]).toBe(16 * 127 * 127); // the extreme: 258064 fits i32 trivially
  });

  it('mmaHelloRef is A @ B with B row-major [32, 8]', () => {
    const a = new Int8Array(16 * 32);
    const b = new Int8Array(32 * 8).map((_, i) => (i % 11) - 5);
    a[3 * 32 + 7] = 2; // out[3, :] = 2 * B[7, :]
    a[3 * 32 + 31] = -1; //        - B[31, :]
    const out = mmaHelloRef(a, b);
    for (let j = 0; j < 8; j++) expect(out[3 * 8 + j]).toBe(2 * b[7 * 8 + j]! - b[31 * 8 + j]!);
    expect(out.filter((_, i) => Math.floor(i / 8) !== 3).every((v) => v === 0)).toBe(true);
  });

  it('data: int8 in [-127, 127], deterministic, data seed 0 = the gen_mmq stream, random differs', () => {
    const s = helloData('hello-mma', 'reference', 0);
    expect([s.a.length, s.b.length]).toEqual([512, 256]);
    expect(Math.min(...s.a, ...s.b)).toBeGreaterThanOrEqual(-127);
    expect(Math.max(...s.a, ...s.b)).toBeLessThanOrEqual(127);
    expect(helloData('hello-mma', 'reference', 0)).toEqual(s);
    expect(helloData('hello-mma', 'random', 0).a).not.toEqual(s.a);
    expect(helloData('hello-mma', 'random', 1).a).not.toEqual(helloData('hello-mma', 'random', 2).a);
    expect(dataStreamSeed('reference', 0, 0xd1b54a32d192ed03n)).toBe(0xd1b54a32d192ed03n);
    expect(dataStreamSeed('reference', 9, 1n)).toBe(9n);
    expect(() => dataStreamSeed('reference', 1.5, 1n)).toThrow(/non-negative integer/);
  });
});

describe('hello WGSL generator', () => {
  const cases: [string, Parameters<typeof helloWgsl>[0]][] = [
    ['hello-wmma.scalar.plane32', { kernel: 'hello-wmma', arm: 'scalar', plane: 32 }],
    ['hello-wmma.dp4a.plane32', { kernel: 'hello-wmma', arm: 'dp4a', plane: 32 }],
    [
      'hello-wmma.subgroup-matrix.k32.plane32',
      { kernel: 'hello-wmma', arm: 'subgroup-matrix', plane: 32, matrixK: 32 },
    ],
    [
      'hello-wmma.subgroup-matrix.k16.plane32',
      { kernel: 'hello-wmma', arm: 'subgroup-matrix', plane: 32, matrixK: 16 },
    ],
    ['hello-mma.scalar.plane32', { kernel: 'hello-mma', arm: 'scalar', plane: 32 }],
    ['hello-mma.dp4a.plane32', { kernel: 'hello-mma', arm: 'dp4a', plane: 32 }],
    ['hello-mma.subgroup-matrix.plane32', { kernel: 'hello-mma', arm: 'subgroup-matrix', plane: 32 }],
  ];
  for (const [name, p] of cases) {
    it(`snapshot ${name}`, async () => {
      await expect(helloWgsl(p)).toMatchFileSnapshot(`./__snapshots__/${name}.wgsl`);
    });
  }

  it('the matrix arms use the new-form syntax with word strides and the shapes of their configs', () => {
    const k32 = helloWgsl({ kernel: 'hello-wmma', arm: 'subgroup-matrix', plane: 32, matrixK: 32 });
    expect(k32).toMatch(/^enable chromium_experimental_subgroup_matrix;/);
    expect(k32).toContain(
      'subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&sa, 0u, KP / 4u)',
    );
    expect(k32).toContain(
      'subgroupMatrixLoad<subgroup_matrix_right<i8, 16, 32>, col_major>(&sb, 0u, KP / 4u)',
    );
    const mma = helloWgsl({ kernel: 'hello-mma', arm: 'subgroup-matrix', plane: 64 });
    expect(mma).toContain('subgroup_matrix_right<i8, 8, 32>, row_major>(&b, 0u, N / 4u)');
    expect(mma).toContain('subgroup_matrix_result<i32, 8, 16>');
    expect(mma).toContain('const PER = 2u;'); // 128 outputs over a 64-lane plane
    // The workgroup is one plane, whatever its width; nothing hardcodes 32.
    for (const plane of [4, 8, 64])
      expect(helloWgsl({ kernel: 'hello-wmma', arm: 'scalar', plane })).toContain(`const PLANE = ${plane}u;`);
    expect(() => helloWgsl({ kernel: 'hello-wmma', arm: 'scalar', plane: 12 })).toThrow(
      /plane 12 must be a power of two/,
    );
    expect(() => helloWgsl({ kernel: 'hello-mma', arm: 'scalar', plane: 256 })).toThrow(
      /dividing the 16x8 = 128 outputs/,
    );
    expect(() => helloWgsl({ kernel: 'hello-mma', arm: 'subgroup-matrix', plane: 32, matrixK: 16 })).toThrow(
      /matrixK applies only/,
    );
  });

  it('plans carry the shape, bindings and the right suffix; instrumented adds the owner buffer at binding 3', () => {
    const data = helloData('hello-wmma', 'reference', 0);
    const plain = helloPlan({ kernel: 'hello-wmma', arm: 'scalar', plane: 8 }, data);
    expect(plain.passes[0]).toMatchObject({
      workgroups: [1, 1, 1],
      workgroupSize: 8,
      bindings: ['a', 'b', 'out'],
    });
    expect(plain.passes[0]!.wgsl).toContain('fn store_out(i: u32, v: i32) { out[i] = v; }');
    const inst = helloPlan({ kernel: 'hello-wmma', arm: 'scalar', plane: 8 }, data, { instrument: true });
    expect(inst.passes[0]!.bindings).toEqual(['a', 'b', 'out', 'owner']);
    expect(inst.passes[0]!.wgsl).toContain('@group(0) @binding(3) var<storage, read_write> owner_dbg');
    expect(inst.buffers.find((b) => b.name === 'owner')?.size).toBe(256 * 12);
    expect(() => helloPlan({ kernel: 'hello-mma', arm: 'scalar', plane: 8 }, data)).toThrow(
      /needs A of 512 and B of 256/,
    );
    const own = helloAnalyticOwnership('hello-mma', 32);
    expect([own.lane[0], own.lane[3], own.lane[4], own.lane[127]]).toEqual([0, 0, 1, 31]);
  });
});

describe('hello validation against adapters', () => {
  it('an adapter without subgroup matrices refuses the matrix arm with the reason; with them it is accepted', () => {
    const none = fakeCaps();
    expect(helloWmmaFamily.validate(config('hello-wmma', 'subgroup-matrix', 32), none)).toEqual([
      `the subgroup matrix (int8) arm cannot run here: this adapter has no subgroup matrices (${SUBGROUP_MATRIX_FEATURE}; Chrome: --enable-unsafe-webgpu)`,
    ]);
    const h200 = fakeCaps({}, H200_INT8);
    expect(helloWmmaFamily.validate(config('hello-wmma', 'subgroup-matrix', 32), h200)).toEqual([]);
    expect(helloMmaFamily.validate(config('hello-mma', 'subgroup-matrix', 32), h200)).toEqual([]);
    // With only the 16x16x32 config, hello-wmma pads K; hello-mma needs 16x8x32.
    const only16 = fakeCaps({}, [cfg(16, 16, 32)]);
    expect(helloMatrixShape('hello-wmma', only16)).toEqual([16, 16, 32]);
    expect(helloParams(config('hello-wmma', 'subgroup-matrix', 32), only16).matrixK).toBe(32);
    expect(helloMmaFamily.validate(config('hello-mma', 'subgroup-matrix', 32), only16)).toEqual([
      'the subgroup matrix (int8) arm cannot run here: this adapter lists no i8 -> i32 16x8x32 subgroup matrix',
    ]);
    const k16 = fakeCaps({}, [cfg(16, 16, 16)]);
    expect(helloParams(config('hello-wmma', 'subgroup-matrix', 32), k16).matrixK).toBe(16);
  });

  it('the matrix arm needs plane = the hardware subgroup and a fixed subgroup size; dp4a needs dot4I8Packed', () => {
    const h200 = fakeCaps({}, H200_INT8);
    expect(helloWmmaFamily.validate(config('hello-wmma', 'subgroup-matrix', 16), h200)).toEqual([
      'the subgroup-matrix arm runs on the hardware plane: plane width must be 32, not 16',
    ]);
    const varying = fakeCaps({ subgroupMinSize: 16, subgroupMaxSize: 32 }, H200_INT8);
    expect(helloWmmaFamily.validate(config('hello-wmma', 'subgroup-matrix', 32), varying).join()).toMatch(
      /varies its subgroup size/,
    );
    const noDot = fakeCaps({ dot4I8Packed: false });
    expect(helloMmaFamily.validate(config('hello-mma', 'dp4a', 32), noDot).join()).toMatch(
      /lacks WGSL packed_4x8_integer_dot_product/,
    );
    const small = fakeCaps({ limits: { maxComputeInvocationsPerWorkgroup: 16 } });
    expect(helloWmmaFamily.validate(config('hello-wmma', 'scalar', 32), small).join()).toMatch(
      /plane width 32 > this adapter's 16 invocations per workgroup/,
    );
    expect(() => helloWmmaFamily.build(config('hello-wmma', 'scalar', 32), small)).toThrow(/16 invocations/);
    expect(helloWmmaFamily.validate(config('hello-wmma', 'scalar', 3), h200)).toEqual([
      'plane width 3 must be a power of two from 1 to 256',
    ]);
  });

  it('build gives a bit-exact gate, the scalar-epilogue phase, ops and weight bytes, and row-sampled oracles', () => {
    const { facts } = helloMmaFamily.build(config('hello-mma', 'dp4a', 32), fakeCaps());
    expect(facts.gate).toEqual({ kind: 'bit-exact' });
    expect(facts.phases).toEqual(['scalar-epilogue']);
    expect([facts.rows, facts.cols, facts.ops, facts.weightBytes]).toEqual([16, 8, 2 * 16 * 8 * 32, 256]);
    expect(facts.oracle()).toBe(facts.oracle()); // memoised
    expect(Array.from(facts.oracle([3]))).toEqual(Array.from(facts.oracle().subarray(24, 32)));
    expect(() => facts.analyticOwnership('fragment-store')).toThrow(
      /does not occur in hello-mma .*: it stores its output in scalar-epilogue/,
    );
  });
});
