// Device probe for the lent GPU: adapter info under each Dawn toggle set, subgroup-matrix syntax and
// stride semantics checked against JS references, and the ceilings WGSL can reach on this adapter
// (matrix-op rate from registers, from workgroup memory, and with the int8 MMQ per-32-block epilogue;
// buffer copy and read bandwidth). Run: `tsx bench/probe.ts [--json out.json]`.
import { writeFileSync } from 'node:fs';
import { adapterInfoRecord, FULL_DAWN_FLAGS, openBenchGpu } from './dawn';
import { compileWgsl, readBuffer, timeDispatches, uploadBuffer } from '../src/kernels/gpu/run';
import { gemmF64 } from '../src/kernels/oracle';
import { create, globals } from 'webgpu';

type Rec = Record<string, unknown>;
const keep: GPU[] = []; // GPU objects must outlive their adapters and devices
const report: Rec = { date: new Date().toISOString() };
const log = (...a: unknown[]) => console.log(...a);

async function adapterOnly(flags: string[]): Promise<Rec> {
  Object.assign(globalThis, globals);
  const gpu = create(flags);
  keep.push(gpu);
  const a = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!a) return { flags, adapter: null };
  return {
    flags,
    info: adapterInfoRecord(a),
    features: [...a.features].map(String).sort(),
    wgslLanguageFeatures: [...gpu.wgslLanguageFeatures].map(String).sort(),
  };
}

Object.assign(globalThis, globals);
const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

async function pipelineFor(device: GPUDevice, code: string, label: string): Promise<GPUComputePipeline> {
  const module = await compileWgsl(device, code, label);
  return device.createComputePipelineAsync({
    layout: 'auto',
    compute: { module, entryPoint: 'main' },
    label,
  });
}

function bind(device: GPUDevice, p: GPUComputePipeline, bufs: GPUBuffer[]): GPUBindGroup {
  return device.createBindGroup({
    layout: p.getBindGroupLayout(0),
    entries: bufs.map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
}

async function runOnce(
  device: GPUDevice,
  p: GPUComputePipeline,
  g: GPUBindGroup,
  wg: [number, number, number],
) {
  const enc = device.createCommandEncoder();
  const cp = enc.beginComputePass();
  cp.setPipeline(p);
  cp.setBindGroup(0, g);
  cp.dispatchWorkgroups(...wg);
  cp.end();
  device.queue.submit([enc.finish()]);
  await device.queue.onSubmittedWorkDone();
}

/** Upload `a` and `b`, run one workgroup of `p` on them into a fresh `outBytes` buffer, read it back. */
async function runOnOperands(
  device: GPUDevice,
  p: GPUComputePipeline,
  a: ArrayBufferView,
  b: ArrayBufferView,
  outBytes: number,
): Promise<ArrayBuffer> {
  const ab = uploadBuffer(device, a, STORAGE);
  const bb = uploadBuffer(device, b, STORAGE);
  const cb = device.createBuffer({ size: outBytes, usage: STORAGE });
  await runOnce(device, p, bind(device, p, [ab, bb, cb]), [1, 1, 1]);
  const out = await readBuffer(device, cb, outBytes);
  [ab, bb, cb].forEach((x) => x.destroy());
  return out;
}

function randI8(n: number, seed: number): Int8Array {
  let s = seed >>> 0 || 1;
  const out = new Int8Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = (s % 255) - 127;
  }
  return out;
}

/** One-subgroup i8 matmul through subgroup matrices; A [M x K] row-major, W [N x K] row-major (= right col-major). */
async function checkI8(
  device: GPUDevice,
  M: number,
  N: number,
  K: number,
  where: 'storage' | 'workgroup',
  plane: number,
): Promise<Rec> {
  // Embed the operands at an offset and with a padded row stride, so offset and stride units are both tested.
  const padK = K + 16;
  const offRows = 2;
  const a = randI8((M + offRows) * padK, 7 + M);
  const w = randI8((N + offRows) * padK, 11 + N);
  const want = new Int32Array(M * N);
  for (let i = 0; i < M; i++)
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let l = 0; l < K; l++) s += a[(offRows + i) * padK + l]! * w[(offRows + j) * padK + l]!;
      want[i * N + j] = s;
    }
  const strideU = padK / 4;
  const offU = (offRows * padK) / 4;
  const resStride = N + 4;
  const wgDecl =
    where === 'workgroup'
      ? `var<workgroup> sa: array<u32, ${((M + offRows) * padK) / 4}>;\nvar<workgroup> sb: array<u32, ${((N + offRows) * padK) / 4}>;\nvar<workgroup> sc: array<i32, ${M * resStride}>;`
      : '';
  const fill =
    where === 'workgroup'
      ? `for (var i = lid; i < ${((M + offRows) * padK) / 4}u; i += ${plane}u) { sa[i] = a[i]; }
  for (var i = lid; i < ${((N + offRows) * padK) / 4}u; i += ${plane}u) { sb[i] = b[i]; }
  workgroupBarrier();`
      : '';
  const src = where === 'workgroup' ? ['sa', 'sb'] : ['a', 'b'];
  const store =
    where === 'workgroup'
      ? `subgroupMatrixStore<row_major>(&sc, 0u, acc, ${resStride}u);
  workgroupBarrier();
  for (var i = lid; i < ${M * resStride}u; i += ${plane}u) { c[i] = sc[i]; }`
      : `subgroupMatrixStore<row_major>(&c, 0u, acc, ${resStride}u);`;
  const code = `enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<i32>;
${wgDecl}
@compute @workgroup_size(${plane}) fn main(@builtin(local_invocation_index) lid: u32) {
  ${fill}
  let l = subgroupMatrixLoad<subgroup_matrix_left<i8, ${K}, ${M}>, row_major>(&${src[0]}, ${offU}u, ${strideU}u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<i8, ${N}, ${K}>, col_major>(&${src[1]}, ${offU}u, ${strideU}u);
  var acc = subgroup_matrix_result<i32, ${N}, ${M}>();
  acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  ${store}
}`;
  try {
    const p = await pipelineFor(device, code, `i8-${M}x${N}x${K}-${where}`);
    const got = new Int32Array(await runOnOperands(device, p, a, w, M * resStride * 4));
    let bad = 0;
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) if (got[i * resStride + j] !== want[i * N + j]) bad++;
    return { ok: bad === 0, mismatches: bad, of: M * N, code };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e), code };
  }
}

/** f16 x f16 -> f32 through subgroup matrices at M x N x K (row-major A, col-major B from [N x K]). */
async function checkF16(device: GPUDevice, M: number, N: number, K: number, plane: number): Promise<Rec> {
  const a = new Float32Array(M * K).map((_, i) => ((i * 37) % 19) / 8 - 1);
  const w = new Float32Array(N * K).map((_, i) => ((i * 53) % 23) / 16 - 0.7);
  const want = Float32Array.from(gemmF64(a, w, M, N, K));
  const code = `enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
var<workgroup> sa: array<f16, ${M * K}>;
var<workgroup> sb: array<f16, ${N * K}>;
@compute @workgroup_size(${plane}) fn main(@builtin(local_invocation_index) lid: u32) {
  for (var i = lid; i < ${M * K}u; i += ${plane}u) { sa[i] = f16(a[i]); }
  for (var i = lid; i < ${N * K}u; i += ${plane}u) { sb[i] = f16(b[i]); }
  workgroupBarrier();
  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, ${K}, ${M}>, row_major>(&sa, 0u, ${K}u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<f16, ${N}, ${K}>, col_major>(&sb, 0u, ${K}u);
  var acc = subgroup_matrix_result<f32, ${N}, ${M}>();
  acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  subgroupMatrixStore<row_major>(&c, 0u, acc, ${N}u);
}`;
  try {
    const p = await pipelineFor(device, code, `f16-${M}x${N}x${K}`);
    const got = new Float32Array(await runOnOperands(device, p, a, w, M * N * 4));
    let maxd = 0;
    for (let i = 0; i < M * N; i++) maxd = Math.max(maxd, Math.abs(got[i]! - want[i]!));
    return { ok: maxd < 1e-2, maxAbsDelta: maxd };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

export interface RateSpec {
  name: string;
  comp: 'i8' | 'f16';
  M: number;
  N: number;
  K: number;
  /** 'reg': operands stay in registers; 'wg': reloaded from workgroup memory every step; 'epi': 'wg' plus
   * the int8 MMQ per-block epilogue (store the i32 fragment, barrier, scale into f32 registers). */
  mode: 'reg' | 'wg' | 'epi';
  rm: number;
  rn: number;
  subgroups: number;
  iters: number;
  /** 'epi' only: unroll the epilogue with literal accumulator indices. */
  unroll?: boolean;
}

/** A WGSL kernel that runs `iters` steps of an rm x rn tile of matrix multiply-adds per subgroup. */
/**
 * A rate probe of `comp` fragments M x N x K in `mode` with an rm x rn tile per subgroup, named by them
 * (`unroll`: the 'epi' epilogue unrolled, its subgroup count in the name).
 */
function rateSpec(
  comp: RateSpec['comp'],
  [M, N, K]: readonly [number, number, number],
  mode: RateSpec['mode'],
  [rm, rn]: readonly [number, number],
  iters: number,
  subgroups = 4,
  unroll = false,
): RateSpec {
  const name = `${comp} ${M}x${N}x${K} ${mode} ${rm}x${rn}${unroll ? ` ${subgroups}sg unrolled` : ''}`;
  return { name, comp, M, N, K, mode, rm, rn, subgroups, iters, ...(unroll ? { unroll } : {}) };
}

export function rateKernel(s: RateSpec, plane: number): string {
  const acc = s.comp === 'i8' ? 'i32' : 'f32';
  const arr = s.comp === 'i8' ? 'u32' : 'f16';
  const per = s.comp === 'i8' ? 4 : 1; // elements per array word
  const lw = (s.M * s.K) / per;
  const rw = (s.N * s.K) / per;
  const LT = `subgroup_matrix_left<${s.comp}, ${s.K}, ${s.M}>`;
  const RT = `subgroup_matrix_right<${s.comp}, ${s.N}, ${s.K}>`;
  const CT = `subgroup_matrix_result<${acc}, ${s.N}, ${s.M}>`;
  const nthreads = s.subgroups * plane;
  const lines: string[] = [];
  lines.push(
    `${s.comp === 'f16' ? 'enable f16;\n' : ''}enable subgroups;\nenable chromium_experimental_subgroup_matrix;`,
  );
  lines.push(`@group(0) @binding(0) var<storage, read> src: array<${s.comp === 'i8' ? 'u32' : 'f32'}>;`);
  lines.push(`@group(0) @binding(1) var<storage, read_write> dst: array<${acc}>;`);
  lines.push(`var<workgroup> sa: array<${arr}, ${2 * s.rm * lw}>;`);
  lines.push(`var<workgroup> sb: array<${arr}, ${2 * s.rn * rw}>;`);
  const frag = s.M * s.N;
  if (s.mode === 'epi') lines.push(`var<workgroup> sc: array<i32, ${s.subgroups * s.rm * s.rn * frag}>;`);
  lines.push(
    `@compute @workgroup_size(${nthreads}) fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wgid: vec3u, @builtin(subgroup_id) sgid: u32, @builtin(subgroup_invocation_id) sglane: u32) {`,
  );
  // Matrix offsets must be subgroup-uniform: the hardware subgroup id is, lid / plane is not (by analysis).
  lines.push('  let wid = wgid.x; let sg = sgid; let lane = sglane;');
  const conv = s.comp === 'i8' ? '' : 'f16';
  lines.push(`  for (var i = lid; i < ${2 * s.rm * lw}u; i += ${nthreads}u) { sa[i] = ${conv}(src[i]); }`);
  lines.push(
    `  for (var i = lid; i < ${2 * s.rn * rw}u; i += ${nthreads}u) { sb[i] = ${conv}(src[i + 7u]); }`,
  );
  lines.push('  workgroupBarrier();');
  const C: string[] = [];
  for (let i = 0; i < s.rm; i++) for (let j = 0; j < s.rn; j++) C.push(`c${i}_${j}`);
  C.forEach((c) => lines.push(`  var ${c} = ${CT}();`));
  const perLane = frag / plane;
  if (s.mode === 'epi') lines.push(`  var f: array<f32, ${s.rm * s.rn * perLane}>;`);
  if (s.mode === 'reg') {
    for (let i = 0; i < s.rm; i++)
      lines.push(`  let l${i} = subgroupMatrixLoad<${LT}, row_major>(&sa, ${i * lw}u, ${s.K / per}u);`);
    for (let j = 0; j < s.rn; j++)
      lines.push(`  let r${j} = subgroupMatrixLoad<${RT}, col_major>(&sb, ${j * rw}u, ${s.K / per}u);`);
  }
  lines.push(`  for (var it = 0u; it < ${s.iters}u; it++) {`);
  if (s.mode !== 'reg') {
    lines.push('    let ph = it & 1u;');
    for (let i = 0; i < s.rm; i++)
      lines.push(
        `    let l${i} = subgroupMatrixLoad<${LT}, row_major>(&sa, (ph * ${s.rm}u + ${i}u) * ${lw}u, ${s.K / per}u);`,
      );
    for (let j = 0; j < s.rn; j++)
      lines.push(
        `    let r${j} = subgroupMatrixLoad<${RT}, col_major>(&sb, (ph * ${s.rn}u + ${j}u) * ${rw}u, ${s.K / per}u);`,
      );
  }
  for (let i = 0; i < s.rm; i++)
    for (let j = 0; j < s.rn; j++) {
      if (s.mode === 'epi')
        lines.push(`    c${i}_${j} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, ${CT}());`);
      else lines.push(`    c${i}_${j} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, c${i}_${j});`);
    }
  if (s.mode === 'epi') {
    C.forEach((c, t) =>
      lines.push(
        `    subgroupMatrixStore<row_major>(&sc, (sg * ${s.rm * s.rn}u + ${t}u) * ${frag}u, ${c}, ${s.N}u);`,
      ),
    );
    lines.push('    workgroupBarrier();');
    lines.push(`    let scale = f32(ph + 1u) * 0.5;`);
    if (s.unroll) {
      // Literal indices: the f32 accumulators stay in registers.
      for (let e = 0; e < s.rm * s.rn * perLane; e++) {
        const at = `sg * ${s.rm * s.rn * frag}u + ${Math.floor(e / perLane) * frag + (e % perLane) * plane}u + lane`;
        lines.push(`    f[${e}] += f32(sc[${at}]) * scale;`);
      }
    } else {
      lines.push(`    for (var e = 0u; e < ${s.rm * s.rn * perLane}u; e++) {`);
      lines.push(
        `      f[e] += f32(sc[sg * ${s.rm * s.rn * frag}u + (e / ${perLane}u) * ${frag}u + (e % ${perLane}u) * ${plane}u + lane]) * scale;`,
      );
      lines.push('    }');
    }
    lines.push('    workgroupBarrier();');
  }
  lines.push('  }');
  C.forEach((c, t) =>
    lines.push(
      `  subgroupMatrixStore<row_major>(&dst, (wid * ${s.subgroups}u + sg) * ${s.rm * s.rn * frag}u + ${t * frag}u, ${c}, ${s.N}u);`,
    ),
  );
  if (s.mode === 'epi')
    lines.push(`  dst[wid * ${nthreads}u + lid] += ${acc}(f[0] + f[${s.rm * s.rn * perLane - 1}]);`);
  lines.push('}');
  return lines.join('\n');
}

async function measureRate(device: GPUDevice, s: RateSpec, plane: number, groups: number): Promise<Rec> {
  const code = rateKernel(s, plane);
  try {
    const p = await pipelineFor(device, code, s.name);
    const srcWords = 1 << 16;
    const srcData =
      s.comp === 'i8'
        ? new Uint32Array(srcWords).map((_, i) => (i * 2654435761) >>> 0)
        : new Float32Array(srcWords).map((_, i) => ((i % 17) - 8) / 64);
    const src = uploadBuffer(device, srcData, STORAGE);
    const frag = s.M * s.N;
    const dstBytes = groups * s.subgroups * s.rm * s.rn * frag * 4 + groups * s.subgroups * plane * 4;
    const dst = device.createBuffer({ size: dstBytes, usage: STORAGE });
    const g = bind(device, p, [src, dst]);
    const t = await timeDispatches(device, p, [g], [groups, 1, 1], 5);
    const ops = 2 * groups * s.subgroups * s.rm * s.rn * s.M * s.N * s.K * s.iters;
    src.destroy();
    dst.destroy();
    return { ...s, ms: t.ms, timing: t.timing, tops: ops / (t.ms * 1e-3) / 1e12 };
  } catch (e) {
    return { ...s, error: e instanceof Error ? e.message : String(e) };
  }
}

async function bandwidth(device: GPUDevice): Promise<Rec> {
  const want = Number(process.env.PROBE_BW_MB ?? 1024) * 1024 * 1024;
  const bytes = Math.min(want, device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  const a = device.createBuffer({ size: bytes, usage: STORAGE });
  const b = device.createBuffer({ size: bytes, usage: STORAGE });
  // Copy: bytes read + bytes written, as METHOD.md counts them.
  const reps = 10;
  const copyMs: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    const enc = device.createCommandEncoder();
    for (let i = 0; i < reps; i++) enc.copyBufferToBuffer(i % 2 ? b : a, 0, i % 2 ? a : b, 0, bytes);
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    copyMs.push((performance.now() - t0) / reps);
  }
  const copy = Math.min(...copyMs);
  log('copy done');
  // Read: a vec4<u32> streaming kernel, timestamps around the pass.
  const code = `@group(0) @binding(0) var<storage, read> src: array<vec4u>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nw: vec3u) {
  var acc = vec4u(0u);
  let total = arrayLength(&src);
  let stride = nw.x * 256u;
  for (var i = gid.x; i < total; i += stride) { acc ^= src[i]; }
  dst[gid.x] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}`;
  const p = await pipelineFor(device, code, 'read-bw');
  const groupsN = 132 * 16;
  const dst = device.createBuffer({ size: groupsN * 256 * 4, usage: STORAGE });
  const t = await timeDispatches(device, p, [bind(device, p, [a, dst])], [groupsN, 1, 1], 10);
  a.destroy();
  b.destroy();
  dst.destroy();
  return {
    bytes,
    copyMsWall: copy,
    copyGBsReadPlusWrite: (2 * bytes) / (copy * 1e-3) / 1e9,
    readMs: t.ms,
    readTiming: t.timing,
    readGBs: bytes / (t.ms * 1e-3) / 1e9,
  };
}

async function main() {
  const argv = process.argv.slice(2);
  const jsonAt = argv.indexOf('--json');
  report.adapters = [];
  const flagSets = process.env.PROBE_SKIP_ADAPTERS
    ? []
    : [[], ['enable-dawn-features=allow_unsafe_apis'], [...FULL_DAWN_FLAGS]];
  for (const flags of flagSets) {
    const r = await adapterOnly(flags);
    (report.adapters as Rec[]).push(r);
    log('adapter', JSON.stringify(r));
  }
  if (process.env.PROBE_ONLY_ADAPTER) return;
  const { device, caps } = await openBenchGpu([...FULL_DAWN_FLAGS]);
  report.caps = caps;
  log('caps', JSON.stringify(caps));
  const plane = caps.subgroupMaxSize || 32;
  const checks: Rec[] = [];
  if (caps.subgroupMatrixConfigs.length) {
    for (const [M, N, K] of [
      [16, 16, 32],
      [16, 8, 32],
    ] as const) {
      for (const where of ['storage', 'workgroup'] as const) {
        const r = await checkI8(device, M, N, K, where, plane);
        checks.push({ test: `i8 ${M}x${N}x${K} ${where}`, ...r, code: r.ok ? undefined : r.code });
        log('check', `i8 ${M}x${N}x${K} ${where}`, r.ok, r.error ?? r.mismatches);
      }
    }
    if (caps.shaderF16) {
      for (const [M, N, K] of [
        [16, 16, 16],
        [16, 8, 16],
      ] as const) {
        const r = await checkF16(device, M, N, K, plane);
        checks.push({ test: `f16 ${M}x${N}x${K}`, ...r });
        log('check', `f16 ${M}x${N}x${K}`, JSON.stringify(r));
      }
    }
  }
  report.checks = checks;
  const rates: Rec[] = [];
  if (caps.subgroupMatrixConfigs.length) {
    const groups = 132 * 8;
    const specs: RateSpec[] = [
      rateSpec('i8', [16, 16, 32], 'reg', [2, 2], 4096),
      rateSpec('i8', [16, 8, 32], 'reg', [2, 4], 4096),
      rateSpec('i8', [16, 16, 32], 'wg', [2, 2], 2048),
      rateSpec('i8', [16, 16, 32], 'wg', [4, 2], 2048),
      rateSpec('i8', [16, 16, 32], 'wg', [4, 4], 1024),
      rateSpec('i8', [16, 8, 32], 'wg', [4, 4], 2048),
      rateSpec('i8', [16, 16, 32], 'epi', [2, 2], 1024),
      rateSpec('i8', [16, 16, 32], 'epi', [4, 2], 1024),
      rateSpec('i8', [16, 16, 32], 'epi', [1, 1], 1024, 8),
      ...(
        [
          [2, 2, 4],
          [4, 2, 4],
          [2, 2, 8],
          [1, 1, 8],
        ] as const
      ).map(([rm, rn, subgroups]) => rateSpec('i8', [16, 16, 32], 'epi', [rm, rn], 1024, subgroups, true)),
    ];
    if (caps.shaderF16 && caps.subgroupMatrixConfigs.some((c) => c.componentType === 'f16')) {
      specs.push(
        rateSpec('f16', [16, 16, 16], 'reg', [2, 2], 4096),
        rateSpec('f16', [16, 8, 16], 'reg', [2, 4], 4096),
        rateSpec('f16', [16, 16, 16], 'wg', [2, 2], 2048),
        rateSpec('f16', [16, 16, 16], 'wg', [4, 4], 1024),
        rateSpec('f16', [16, 8, 16], 'wg', [4, 4], 2048),
      );
    }
    for (const s of specs) {
      const r = await measureRate(device, s, plane, groups);
      rates.push(r);
      log(
        'rate',
        s.name,
        r.error
          ? `ERROR ${String(r.error).slice(0, 400)}`
          : `${(r.tops as number).toFixed(1)} TOPS (${(r.ms as number).toFixed(3)} ms ${String(r.timing)})`,
      );
    }
  }
  report.rates = rates;
  const save = () => {
    if (jsonAt >= 0 && argv[jsonAt + 1]) writeFileSync(argv[jsonAt + 1]!, JSON.stringify(report, null, 1));
  };
  save();
  log('bandwidth start');
  try {
    report.bandwidth = await bandwidth(device);
    log('bandwidth', JSON.stringify(report.bandwidth));
  } catch (e) {
    report.bandwidth = { error: e instanceof Error ? e.message : String(e) };
    log('bandwidth error', report.bandwidth);
  }
  save();
  log('probe done');
}

if (!process.env.PROBE_NO_MAIN) {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error('probe failed:', e);
      process.exit(1);
    },
  );
}
