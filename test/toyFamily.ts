// A toy kernel family, written outside src/kernels the way any family is: a light catalog (its
// declarations), its parts for the family skeleton (src/kernels/define.ts) and a tuning search, put in
// a registry of its own. test/addFamily.test.ts drives it through the worker core, the tuner and
// `mmq run`: the registry and defineFamily() are the only places a family plugs in.
//
// The kernel: out[m, n] = A[m, k] @ B[n, k]^T over small integers, exact in i32. A workgroup of `wx`
// invocations covers one output row; each invocation stores `cols` consecutive outputs.
import { shapeControl } from '../src/kernels/controls';
import { defineFamily, familyBuilder, type FamilyParts } from '../src/kernels/define';
import {
  controlProblems,
  dataProblems,
  intParam,
  type ControlDecl,
  type FamilyCatalog,
  type RunConfig,
  type TuningSearch,
} from '../src/kernels/family';
import { armPlaneProblems, SCALAR_ARM } from '../src/kernels/arms';
import type { AdapterCaps } from '../src/kernels/gpu/caps';
import { emptyOwnership, ownerBufferSpec, suffixedPass } from '../src/kernels/gpu/instrument';
import { singlePassPlan, type BufferSpec } from '../src/kernels/gpu/plan';
import { createRegistry, kernelRegistry } from '../src/kernels/registry';
import { knobSearch } from '../src/kernels/tune/knobs';

export const TOY_ID = 'toy-gemm';

const controls: ControlDecl[] = [
  shapeControl('m', 'm', { max: 4096 }),
  shapeControl('n', 'n', { max: 4096 }),
  shapeControl('k', 'k', { max: 4096 }),
  {
    kind: 'int',
    key: 'wx',
    label: 'wx',
    group: 'tile',
    min: 1,
    max: 256,
    step: () => 1,
    hint: 'invocations a row',
    tune: { values: [4, 8, 16, 32] },
  },
  {
    kind: 'int',
    key: 'cols',
    label: 'cols',
    group: 'tile',
    min: 1,
    max: 8,
    step: () => 1,
    hint: 'outputs an invocation',
    tune: { values: [1, 2, 4] },
  },
];

/** The toy's declarations: what the app's main thread would import. */
export const toyCatalog: FamilyCatalog = {
  id: TOY_ID,
  title: 'toy i32 GEMM',
  summary: 'out = A @ B^T over small integers, exact in i32: the family the registry test adds.',
  reference: '-',
  arithmetic: 'int8',
  arms: [SCALAR_ARM],
  controls,
  defaults: { m: 8, n: 24, k: 16, wx: 8, cols: 1 },
  small: { m: 4, n: 12, k: 8 },
  validate: (config) => [
    ...controlProblems(controls, config.params),
    ...armPlaneProblems(toyCatalog, config),
    ...dataProblems(config.data, toyCatalog),
  ],
  tuning: {
    op: 'toy_gemm',
    label: 'toy GEMM: invocations a row, outputs an invocation',
    knobs: ['wx', 'cols'],
  },
  // A workgroup covers wx x cols outputs of one row.
  tile: {
    keys: ['wx', 'cols'],
    block: (p) => ({ rows: 1, cols: Number(p.wx) * Number(p.cols), planes: 1 }),
  },
};

/** A config's shape and schedule. */
export interface ToySpec {
  m: number;
  n: number;
  k: number;
  wx: number;
  cols: number;
}

/** The operands: small integers from the data seed. */
export interface ToyData {
  a: Int32Array;
  b: Int32Array;
}

const values = (count: number, seed: number, salt: number) =>
  Int32Array.from({ length: count }, (_, i) => ((i * 31 + seed * 7919 + salt) % 15) - 7);

/** The WGSL of a spec; the host suffix defines set_owner and store_out. */
export function toyWgsl(s: ToySpec): string {
  return `@group(0) @binding(0) var<storage, read> a: array<i32>;
@group(0) @binding(1) var<storage, read> b: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<i32>;

@compute @workgroup_size(${s.wx})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) grid: vec3u) {
  set_owner(wg.x + wg.y * grid.x, 0u, lid.x);
  let row = wg.y;
  let first = (wg.x * ${s.wx}u + lid.x) * ${s.cols}u;
  for (var j = 0u; j < ${s.cols}u; j++) {
    let col = first + j;
    if (col >= ${s.n}u) { break; }
    var acc = 0i;
    for (var l = 0u; l < ${s.k}u; l++) { acc += a[row * ${s.k}u + l] * b[col * ${s.k}u + l]; }
    store_out(row * ${s.n}u + col, acc);
  }
}
`;
}

const gridX = (s: ToySpec) => Math.ceil(s.n / (s.wx * s.cols));

/** The toy's parts for the skeleton: spec, data, plan, oracle, phases, ownership, facts. */
export const toyParts: FamilyParts<ToySpec, ToyData> = {
  spec: (config) => {
    const [m, n, k, wx, cols] = ['m', 'n', 'k', 'wx', 'cols'].map((key) => intParam(config.params, key)) as [
      number,
      number,
      number,
      number,
      number,
    ];
    return { m, n, k, wx, cols };
  },
  dataKey: (s) => [s.m, s.n, s.k],
  data: (s, config) => ({
    a: values(s.m * s.k, config.data.seed, 1),
    b: values(s.n * s.k, config.data.seed, 2),
  }),
  plan(s, data, { instrument }) {
    const buffers: BufferSpec[] = [
      { name: 'a', kind: 'read-only-storage', size: s.m * s.k * 4, data: () => data().a },
      { name: 'b', kind: 'read-only-storage', size: s.n * s.k * 4, data: () => data().b, role: 'weight' },
      { name: 'out', kind: 'storage', size: s.m * s.n * 4 },
    ];
    if (instrument) buffers.push(ownerBufferSpec(s.m * s.n));
    const kern = { wgsl: toyWgsl(s), entryPoint: 'main', bindings: ['a', 'b', 'out'], workgroupSize: s.wx };
    const pass = suffixedPass(kern, [gridX(s), s.m, 1], `toy ${s.wx}x${s.cols}`, {
      instrument,
      outType: 'i32',
    });
    return singlePassPlan(buffers, pass, 'i32');
  },
  ownerBuffer: 'owner',
  oracle: ({ m, n, k }, { a, b }) =>
    Int32Array.from({ length: m * n }, (_, i) => {
      const [r, c] = [Math.floor(i / n), i % n];
      let acc = 0;
      for (let l = 0; l < k; l++) acc += a[r * k + l]! * b[c * k + l]!;
      return acc;
    }),
  phases: () => ['scalar-epilogue'],
  ownership(s) {
    const map = emptyOwnership(s.m, s.n);
    for (let r = 0; r < s.m; r++)
      for (let c = 0; c < s.n; c++) {
        const j = Math.floor(c / s.cols);
        map.count[r * s.n + c] = 1;
        map.workgroup[r * s.n + c] = Math.floor(j / s.wx) + r * gridX(s);
        map.lane[r * s.n + c] = j % s.wx;
      }
    return map;
  },
  facts: (s) => ({
    rows: s.m,
    cols: s.n,
    gate: { kind: 'bit-exact' },
    ops: 2 * s.m * s.n * s.k,
    weightBytes: s.n * s.k * 4,
  }),
};

/** The toy's search: invocations a row x outputs an invocation, as its controls declare them. */
export function toySearch(base: RunConfig, caps: AdapterCaps): TuningSearch {
  const { space, apply, choiceOf, at } = knobSearch(toyCatalog, base, caps);
  return {
    space,
    apply,
    choiceOf,
    incumbent: at({ wx: 8, cols: 1 })!,
    seeds: [at({ wx: 4, cols: 2 })!],
    gate: { kind: 'bit-exact' },
  };
}

/** The toy family: its catalog, the skeleton around its parts, its search. */
export const toyFamily = defineFamily({
  catalog: toyCatalog,
  builder: familyBuilder(TOY_ID, toyParts),
  search: toySearch,
});

/** The toy's registry: one line in each half, as a family of src/kernels has in catalog.ts and index.ts. */
export const TOY_CATALOG = createRegistry([toyCatalog]);
export const TOY_KERNELS = kernelRegistry(TOY_CATALOG, [toyFamily]);
