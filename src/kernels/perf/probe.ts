// The peaks probe, pure half: the WGSL of each probe kernel (generated from typed parameters), the plan
// that runs it at a given size, and what one run of it moves or computes. Each probe is a plain
// KernelPlan, so the one runner prepares and times it like any kernel (./probe.run.ts grows its size
// until a run takes long enough, then times batches). Four kinds:
//   bandwidth    a grid-stride copy of vec4<u32>: every byte read once and written once;
//   f16-vector   independent chains of vec4<f16> fma (shader-f16);
//   f16-matrix   independent 16x16x16 subgroupMatrixMultiplyAccumulate chains (f16 in, f32 or f16 out);
//   int8-dot4    independent chains of acc = dot4I8Packed(acc, y) + acc (packed_4x8_integer_dot_product);
//   int8-scalar  independent chains of vec4<i32> multiply-add: what the scalar arm's int8 MACs run on.
// Results are kept live by a store only a sentinel value would take, so nothing is optimised away and
// no memory traffic is added to the compute probes.
import { bindingDecls, bindingNames, readOnly, readWrite } from '../gpu/bindings';
import { findMatrixConfig, isSoftwareAdapter, type AdapterCaps } from '../gpu/caps';
import type { KernelPlan } from '../gpu/plan';
import type { ComputeRoof } from './roofline';

export type ProbeKind = 'bandwidth' | ComputeRoof;

/** How big one probe run is: the copy's bytes, or a compute probe's workgroups and loop trips. */
export interface ProbeSize {
  /** Bandwidth: bytes copied (read once, written once). */
  bytes?: number;
  /** Compute: workgroups dispatched. */
  workgroups?: number;
  /** Compute: loop trips per invocation. */
  iters?: number;
}

/** A probe kernel: its plan at a size, what one run moves and computes, and its method in words. */
export interface ProbeKernel {
  kind: ProbeKind;
  /** What the kernel does, one line (the app's method table). */
  what: string;
  plan(size: ProbeSize): KernelPlan;
  /** Bytes moved by one run (bandwidth) and operations of one run (compute; a multiply-add is 2). */
  work(size: ProbeSize): { bytes: number; ops: number };
  /** The size after `size`, or undefined at the largest this adapter allows. */
  grow(size: ProbeSize): ProbeSize | undefined;
  first: ProbeSize;
  /** The size in words ("64 MiB", "4096 workgroups x 256 x 128 trips"). */
  describe(size: ProbeSize): string;
}

const WG = 256;
/** Independent accumulator chains per invocation: enough to hide the FMA latency. */
const CHAINS = 8;
/** Workgroups along x before the grid goes 2D (under every adapter's 65535). */
const GRID_X = 32768;
const MIB = 1 << 20;

const grid = (workgroups: number): readonly [number, number, number] =>
  workgroups <= GRID_X ? [workgroups, 1, 1] : [GRID_X, Math.ceil(workgroups / GRID_X), 1];

/** The copy probe's bindings: the buffer read and the one written. */
const COPY_BINDINGS = { src: readOnly('array<vec4<u32>>'), dst: readWrite('array<vec4<u32>>') };
/** The compute probes' bindings: their operands and a sink only a sentinel value is stored to. */
const chainBindings = (params: string) => ({
  params: { uniform: 'vec4<u32>', comment: params },
  sink: readWrite('array<f32>'),
});
const CHAIN_BINDINGS = chainBindings('trips, b, c (f32 bits), y (packed int8)');
const MATRIX_BINDINGS = chainBindings('trips');

/** The grid-stride copy: dst[i] = src[i] over vec4<u32>. */
export const copyWgsl = (): string => `// Peaks probe: streaming copy, every byte read once and written once.
${bindingDecls(COPY_BINDINGS)}

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let n = arrayLength(&src);
  let stride = nwg.x * ${WG}u;
  for (var i = gid.x; i < n; i += stride) {
    dst[i] = src[i];
  }
}
`;

/** What a compute probe's chains are: their type, one step, its operations, and the live-keeping sum. */
interface ChainSpec {
  enables: string;
  type: string;
  init: (chain: number) => string;
  step: (acc: string) => string;
  opsPerStep: number;
  sum: string;
}

const CHAIN_SPECS: Record<'f16-vector' | 'int8-dot4' | 'int8-scalar', ChainSpec> = {
  'f16-vector': {
    enables: 'enable f16;\n',
    type: 'vec4<f16>',
    init: (c) => `vec4<f16>(f16(seed) * ${(c + 1) / 16}h)`,
    step: (a) => `${a} = fma(${a}, vec4<f16>(b), vec4<f16>(c));`,
    opsPerStep: 8,
    sum: 'f32(dot(total, vec4<f16>(1.0h)))',
  },
  'int8-dot4': {
    enables: '',
    type: 'i32',
    init: (c) => `i32(seed_u + ${c}u)`,
    step: (a) => `${a} = dot4I8Packed(bitcast<u32>(${a}), yu) + ${a};`,
    opsPerStep: 8,
    sum: 'f32(total)',
  },
  'int8-scalar': {
    enables: '',
    type: 'vec4<i32>',
    init: (c) => `vec4<i32>(i32(seed_u + ${c}u))`,
    step: (a) => `${a} = ${a} * vec4<i32>(yi) + vec4<i32>(zi);`,
    opsPerStep: 8,
    sum: 'f32(total.x + total.y + total.z + total.w)',
  },
};

/**
 * The WGSL of a chained-FMA compute probe: CHAINS independent accumulators per invocation, `params.x`
 * loop trips, operands from the uniform so nothing folds, and a store only the sentinel takes.
 */
export function chainWgsl(kind: keyof typeof CHAIN_SPECS): string {
  const s = CHAIN_SPECS[kind];
  const ids = Array.from({ length: CHAINS }, (_, c) => c);
  return `${s.enables}// Peaks probe: ${kind}, ${CHAINS} independent chains per invocation.
${bindingDecls(CHAIN_BINDINGS)}

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let id = gid.x + gid.y * nwg.x * ${WG}u;
  let seed_u = id & 255u;
  let seed = f32(seed_u) / 256.0;
${kind === 'f16-vector' ? '  let b = f16(bitcast<f32>(params.y));\n  let c = f16(bitcast<f32>(params.z));\n' : ''}  let yu = params.w;
  let yi = i32(params.w & 3u) + 1;
  let zi = i32(params.w >> 8u);
${ids.map((c) => `  var a${c} = ${s.init(c)};`).join('\n')}
  for (var t = 0u; t < params.x; t++) {
${ids.map((c) => `    ${s.step(`a${c}`)}`).join('\n')}
  }
  let total = ${ids.map((c) => `a${c}`).join(' + ')};
  let v = ${s.sum};
  if (v == -1234.5) {
    sink[0] = v;
  }
}
`;
}

/** The WGSL of the f16 subgroup-matrix probe: per subgroup CHAINS/2 independent 16x16x16 MMA chains. */
export function matrixWgsl(result: 'f32' | 'f16', subgroup: number): string {
  const ids = Array.from({ length: CHAINS / 2 }, (_, c) => c);
  return `enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// Peaks probe: f16 subgroup matrices, ${CHAINS / 2} independent 16x16x16 multiply-accumulate chains per subgroup.
${bindingDecls(MATRIX_BINDINGS)}
var<workgroup> tile: array<f16, 256>;
// The results land in an array of their own element type (a matrix store needs a stride of its elements).
var<workgroup> outTile: array<${result}, 256>;

@compute @workgroup_size(${subgroup})
fn main(@builtin(local_invocation_index) li: u32) {
  for (var i = li; i < 256u; i += ${subgroup}u) {
    tile[i] = f16(f32((i * 7u + params.y) & 15u) / 64.0);
  }
  workgroupBarrier();
  let a = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&tile, 0u, 16u);
  let b = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&tile, 0u, 16u);
${ids.map((c) => `  var acc${c} = subgroup_matrix_result<${result}, 16, 16>();`).join('\n')}
  for (var t = 0u; t < params.x; t++) {
${ids.map((c) => `    acc${c} = subgroupMatrixMultiplyAccumulate(a, b, acc${c});`).join('\n')}
  }
${ids.map((c) => `  subgroupMatrixStore<row_major>(&outTile, 0u, acc${c}, 16u);\n  workgroupBarrier();\n  if (li == 0u && f32(outTile[${c}u]) == -1234.5) {\n    sink[0] = 1.0;\n  }\n  workgroupBarrier();`).join('\n')}
}
`;
}

const f32Bits = (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0]!;

/** The uniform of a chained probe: trips, fma operands b and c as f32 bits, and the int operand word. */
const chainParams = (iters: number) =>
  new Uint32Array([iters, f32Bits(0.9375), f32Bits(0.0625), 0x01_02_03_04]);

/** Compute probes grow their grid first (to fill the GPU), then their loop trips. */
function computeGrowth(maxWorkgroups: number) {
  return (s: ProbeSize): ProbeSize | undefined => {
    const wg = s.workgroups ?? 1;
    const iters = s.iters ?? 1;
    if (wg * 2 <= maxWorkgroups) return { workgroups: wg * 2, iters };
    return iters < 1 << 20 ? { workgroups: wg, iters: iters * 2 } : undefined;
  };
}

function chainProbe(kind: keyof typeof CHAIN_SPECS, what: string, maxWorkgroups: number): ProbeKernel {
  const wgsl = chainWgsl(kind);
  return {
    kind,
    what,
    first: { workgroups: 16, iters: 64 },
    plan: (s) => ({
      buffers: [
        { name: 'params', kind: 'uniform', data: chainParams(s.iters ?? 1) },
        { name: 'sink', kind: 'storage', size: 16 },
      ],
      passes: [
        {
          label: `probe ${kind}`,
          wgsl,
          entryPoint: 'main',
          workgroups: grid(s.workgroups ?? 1),
          bindings: bindingNames(CHAIN_BINDINGS),
          workgroupSize: WG,
        },
      ],
      output: 'sink',
      outputType: 'f32',
      mainPass: 0,
    }),
    work: (s) => ({
      bytes: 0,
      ops: (s.workgroups ?? 1) * WG * (s.iters ?? 1) * CHAINS * CHAIN_SPECS[kind].opsPerStep,
    }),
    grow: computeGrowth(maxWorkgroups),
    describe: (s) =>
      `${s.workgroups} workgroups x ${WG} invocations x ${s.iters} trips x ${CHAINS} chains x ${CHAIN_SPECS[kind].opsPerStep} ops`,
  };
}

/** The f16 matrix config the probe uses: 16x16x16 f16 in, f32 out (else f16 out); undefined if none. */
export function probeMatrixConfig(caps: AdapterCaps): 'f32' | 'f16' | undefined {
  if (!caps.shaderF16) return undefined;
  if (findMatrixConfig(caps, 'f16', 'f32', 16, 16, 16)) return 'f32';
  return findMatrixConfig(caps, 'f16', 'f16', 16, 16, 16) ? 'f16' : undefined;
}

/**
 * The probes this adapter can run, and why each other one cannot. Sizes stay under the adapter's
 * buffer limits and 256 MiB (beyond every cache; 64 MiB on a CPU adapter, whose caches are small).
 * @example probeKernels(caps).kernels.map((k) => k.kind) // ['bandwidth', 'f16-vector', 'int8-dot4', 'int8-scalar']
 */
export function probeKernels(caps: AdapterCaps): {
  kernels: ProbeKernel[];
  skipped: { kind: ProbeKind; why: string }[];
} {
  const software = isSoftwareAdapter(caps);
  const maxBytes = Math.min(
    software ? 64 * MIB : 256 * MIB,
    caps.limits.maxStorageBufferBindingSize,
    caps.limits.maxBufferSize,
  );
  const maxWorkgroups = software ? 4096 : 65536;
  const copy = copyWgsl();
  const kernels: ProbeKernel[] = [
    {
      kind: 'bandwidth',
      what: 'grid-stride copy of vec4<u32> between two storage buffers: every byte read once, written once',
      first: { bytes: MIB },
      plan: (s) => {
        const bytes = s.bytes ?? MIB;
        return {
          buffers: [
            { name: 'src', kind: 'read-only-storage', size: bytes },
            { name: 'dst', kind: 'storage', size: bytes },
          ],
          passes: [
            {
              label: 'probe copy',
              wgsl: copy,
              entryPoint: 'main',
              workgroups: [Math.min(GRID_X, Math.ceil(bytes / 16 / WG)), 1, 1],
              bindings: bindingNames(COPY_BINDINGS),
              workgroupSize: WG,
            },
          ],
          output: 'dst',
          outputType: 'f32',
          mainPass: 0,
        };
      },
      work: (s) => ({ bytes: 2 * (s.bytes ?? MIB), ops: 0 }),
      grow: (s) => ((s.bytes ?? MIB) * 2 <= maxBytes ? { bytes: (s.bytes ?? MIB) * 2 } : undefined),
      describe: (s) => `${(s.bytes ?? MIB) / MIB} MiB copied (${(2 * (s.bytes ?? MIB)) / MIB} MiB moved)`,
    },
  ];
  const skipped: { kind: ProbeKind; why: string }[] = [];
  const matrix = probeMatrixConfig(caps);
  const sg = caps.subgroupMinSize;
  if (matrix && sg === caps.subgroupMaxSize && sg > 0) {
    const wgsl = matrixWgsl(matrix, sg);
    const chains = CHAINS / 2;
    kernels.push({
      kind: 'f16-matrix',
      what: `${chains} independent 16x16x16 f16 subgroupMatrixMultiplyAccumulate chains (${matrix} result) per subgroup, one subgroup a workgroup`,
      first: { workgroups: 16, iters: 64 },
      plan: (s) => ({
        buffers: [
          { name: 'params', kind: 'uniform', data: new Uint32Array([s.iters ?? 1, 3, 0, 0]) },
          { name: 'sink', kind: 'storage', size: 16 },
        ],
        passes: [
          {
            label: 'probe f16-matrix',
            wgsl,
            entryPoint: 'main',
            workgroups: grid(s.workgroups ?? 1),
            bindings: bindingNames(MATRIX_BINDINGS),
            workgroupSize: sg,
            workgroupBytes: 512,
          },
        ],
        output: 'sink',
        outputType: 'f32',
        mainPass: 0,
      }),
      work: (s) => ({ bytes: 0, ops: (s.workgroups ?? 1) * (s.iters ?? 1) * chains * 2 * 16 * 16 * 16 }),
      grow: computeGrowth(maxWorkgroups * 4),
      describe: (s) => `${s.workgroups} subgroups x ${s.iters} trips x ${chains} chains x 8192 ops`,
    });
  } else
    skipped.push({
      kind: 'f16-matrix',
      why: !matrix
        ? 'no 16x16x16 f16 subgroup-matrix config on this adapter'
        : 'the subgroup size varies, so a workgroup cannot be one subgroup',
    });
  if (caps.shaderF16)
    kernels.push(
      chainProbe('f16-vector', `${CHAINS} independent vec4<f16> fma chains per invocation`, maxWorkgroups),
    );
  else skipped.push({ kind: 'f16-vector', why: 'no shader-f16 on this adapter' });
  if (caps.dot4I8Packed)
    kernels.push(
      chainProbe(
        'int8-dot4',
        `${CHAINS} independent acc = dot4I8Packed(acc, y) + acc chains per invocation (4 int8 MACs each)`,
        maxWorkgroups,
      ),
    );
  else skipped.push({ kind: 'int8-dot4', why: 'no dot4I8Packed (packed_4x8_integer_dot_product) here' });
  kernels.push(
    chainProbe(
      'int8-scalar',
      `${CHAINS} independent vec4<i32> multiply-add chains per invocation (the scalar arm's MACs)`,
      maxWorkgroups,
    ),
  );
  return { kernels, skipped };
}

/** How long a probe run must take before its size stops growing, ms (longer on a CPU adapter's coarse clock). */
export const probeRunMs = (caps: AdapterCaps): number => (isSoftwareAdapter(caps) ? 4 : 1);

/**
 * Whether a probe kernel's one timed run says to grow it: shorter than `minMs`, or too short for the
 * timer to tell (coarse: under 10 steps, or read as 0 and taken by the wall clock, which then counts
 * the submission's own latency: Chrome's 65 us timestamp steps once stopped an H100's copy at 1 MiB
 * and called 672 GB/s its roof, where 256 MiB runs at 2,960 GB/s).
 * @example probeShouldGrow({ ms: 1.2, coarse: true }, 1) // true: the timer could not tell
 */
export const probeShouldGrow = (one: { ms: number; coarse: boolean }, minMs: number): boolean =>
  one.coarse || one.ms < minMs;

/** The adapter a cached probe belongs to: vendor, architecture, description and the features that add roofs. */
export function probeAdapterKey(caps: AdapterCaps): string {
  const roofs = [
    caps.shaderF16 ? 'f16' : '',
    caps.dot4I8Packed ? 'dot4' : '',
    probeMatrixConfig(caps) ? 'mat' : '',
  ].filter(Boolean);
  return [caps.vendor, caps.architecture, caps.description, roofs.join('+')].join('|');
}
