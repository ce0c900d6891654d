// Throwaway experiment: f16 x f16 -> f32 GEMM cores through WGSL subgroup matrices on the lent GPU, to find
// which structure (operands straight from storage vs staged in workgroup memory, layouts, tiles) reaches
// the f16 ceiling the probe measured. Run: tsx bench/lab.ts [--json out.json] [--only REGEX] [--configs robust,norobust,range]
import { writeFileSync } from 'node:fs';
import { FULL_DAWN_FLAGS, openBenchGpu } from './dawn';
import type { PassSpec } from '../src/kernels/gpu/plan';
import { makeResident, preparePasses, runOnce, timeMainPass } from './exec';
import { buildCoopmatKernel } from '../src/kernels/coopmat';
import { f16BitsToF32 as f16ToF32, f32ToF16Bits as f32ToF16 } from '../src/kernels/quant/f16';

interface LabSpec {
  name: string;
  /** Where each operand's fragments come from: straight from storage, or staged in workgroup memory. */
  srcA: 'direct' | 'staged';
  srcB: 'direct' | 'staged';
  /** Global layout of directly loaded operands (staged ones are always row-major). */
  layout: 'row' | 'tiled';
  fn: 8 | 16;
  wm: number;
  wn: number;
  rm: number;
  rn: number;
  ks: number;
  pad: number;
  /** Direct operands: registers double-buffered one K step ahead. */
  prefetch: boolean;
  sized: boolean;
  /** Bind one B bank only (as a pre-pass's fresh output would be, L2-warm) instead of rotating 4. */
  hotB?: boolean;
  /** Launch the grid with x over row tiles (M) instead of column tiles (N). */
  swap?: boolean;
  /** Run the product's split-GEMM kernel text for this tile instead of the lab generator's. */
  product?: boolean;
  /** Full-mantissa random f16 operands instead of the (k - 15) / 16 set. */
  rand?: boolean;
}

const M = 2048;
const N = 4096;
const K = 4096;
const SLACK = 16 * 256; // extra halves so a prefetch one step past the end stays in bounds

function geo(s: LabSpec) {
  return {
    bm: s.wm * s.rm * 16,
    bn: s.wn * s.rn * s.fn,
    nt: s.wm * s.wn * 32,
    rs: s.ks + s.pad,
  };
}

const R = (n: number) => Array.from({ length: n }, (_, i) => i);

function aOff(s: LabSpec, row: string, k: string): string {
  return s.layout === 'row'
    ? `(${row}) * ${K}u + ${k}`
    : `((${row}) / 16u * ${K / 16}u + (${k}) / 16u) * 256u`;
}
function bOff(s: LabSpec, col: string, k: string): string {
  return s.layout === 'row'
    ? `(${col}) * ${K}u + ${k}`
    : `((${col}) / 16u * ${K / 16}u + (${k}) / 16u) * 256u + ((${col}) % 16u) * 16u`;
}

function labWgsl(s: LabSpec): string {
  const g = geo(s);
  const gstride = s.layout === 'row' ? `${K}u` : '16u';
  const LT = 'subgroup_matrix_left<f16, 16, 16>';
  const RT = `subgroup_matrix_right<f16, ${s.fn}, 16>`;
  const CT = `subgroup_matrix_result<f32, ${s.fn}, 16>`;
  const arr = (t: string, n: number) => (s.sized ? `array<${t}, ${n}>` : `array<${t}>`);
  const kc = s.ks / 16;
  const lines: string[] = [];
  lines.push('enable f16;', 'enable subgroups;', 'enable chromium_experimental_subgroup_matrix;', '');
  lines.push(`// ${s.name}: BM=${g.bm} BN=${g.bn} threads=${g.nt}`);
  // Staged operands are read as vec4 (16-byte loads); direct ones as f16 for the matrix loads.
  lines.push(
    s.srcA === 'direct'
      ? `@group(0) @binding(0) var<storage, read> A: ${arr('f16', M * K + SLACK)};`
      : `@group(0) @binding(0) var<storage, read> A4: ${arr('vec4u', (M * K + SLACK) / 8)};`,
  );
  lines.push(
    s.srcB === 'direct'
      ? `@group(0) @binding(1) var<storage, read> B: ${arr('f16', N * K + SLACK)};`
      : `@group(0) @binding(1) var<storage, read> B4: ${arr('vec4u', (N * K + SLACK) / 8)};`,
  );
  lines.push(`@group(0) @binding(2) var<storage, read_write> C: ${arr('f32', M * N)};`);
  if (s.srcA === 'staged') lines.push(`var<workgroup> sa: array<f16, ${2 * g.bm * g.rs}>;`);
  if (s.srcB === 'staged') lines.push(`var<workgroup> sb: array<f16, ${2 * g.bn * g.rs}>;`);
  lines.push('');
  lines.push(`@compute @workgroup_size(${g.nt})`);
  lines.push(
    'fn main(@builtin(subgroup_id) sg: u32, @builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wg: vec3u) {',
  );
  lines.push(`  let sm = sg / ${s.wn}u;`, `  let sn = sg % ${s.wn}u;`);
  lines.push(
    s.swap ? `  let wrow = wg.x * ${g.bm}u;` : `  let wrow = wg.y * ${g.bm}u;`,
    s.swap ? `  let wcol = wg.y * ${g.bn}u;` : `  let wcol = wg.x * ${g.bn}u;`,
  );
  lines.push(`  let row0 = wrow + sm * ${s.rm * 16}u;`, `  let col0 = wcol + sn * ${s.rn * s.fn}u;`);
  for (const i of R(s.rm)) for (const j of R(s.rn)) lines.push(`  var c${i}_${j} = ${CT}();`);

  const loadAg = (i: number, k: string) =>
    `subgroupMatrixLoad<${LT}, row_major>(&A, ${aOff(s, `row0 + ${i * 16}u`, k)}, ${gstride})`;
  const loadBg = (j: number, k: string) =>
    `subgroupMatrixLoad<${RT}, col_major>(&B, ${bOff(s, `col0 + ${j * s.fn}u`, k)}, ${gstride})`;
  const loadAs = (i: number, c: number) =>
    `subgroupMatrixLoad<${LT}, row_major>(&sa, cur * ${g.bm * g.rs}u + (sm * ${s.rm * 16}u + ${i * 16}u) * ${g.rs}u + ${c * 16}u, ${g.rs}u)`;
  const loadBs = (j: number, c: number) =>
    `subgroupMatrixLoad<${RT}, col_major>(&sb, cur * ${g.bn * g.rs}u + (sn * ${s.rn * s.fn}u + ${j * s.fn}u) * ${g.rs}u + ${c * 16}u, ${g.rs}u)`;
  // Fragment of chunk c of the current step.
  const fragA = (i: number, c: number) =>
    s.srcA === 'staged' ? loadAs(i, c) : s.prefetch ? `qa${i}_${c}` : loadAg(i, `k + ${c * 16}u`);
  const fragB = (j: number, c: number) =>
    s.srcB === 'staged' ? loadBs(j, c) : s.prefetch ? `qb${j}_${c}` : loadBg(j, `k + ${c * 16}u`);

  // Staging: row-major global, row-major padded tiles [rows][RS], double-buffered, register-prefetched
  // vec4 loads, one barrier per step.
  const vpr = s.ks / 8;
  const ia = s.srcA === 'staged' ? (g.bm * vpr) / g.nt : 0;
  const ib = s.srcB === 'staged' ? (g.bn * vpr) / g.nt : 0;
  if (!Number.isInteger(ia) || !Number.isInteger(ib)) throw new Error(`${s.name}: stage not divisible`);
  const fetch = (k: string) => {
    const out: string[] = [];
    const one = (v: string, arrName: string, base: string, t: number) =>
      out.push(
        `    ${v}${t} = ${arrName}[((${base} + (tid + ${t * g.nt}u) / ${vpr}u) * ${K}u + ${k} + ((tid + ${t * g.nt}u) % ${vpr}u) * 8u) / 8u];`,
      );
    R(ia).forEach((t) => one('ga', 'A4', 'wrow', t));
    R(ib).forEach((t) => one('gb', 'B4', 'wcol', t));
    return out;
  };
  const put = (buf: string) => {
    const out: string[] = [];
    const one = (arrName: string, rows: number, reg: string, t: number) => {
      out.push(
        `    {`,
        `      let o = ${buf} * ${rows * g.rs}u + ((tid + ${t * g.nt}u) / ${vpr}u) * ${g.rs}u + ((tid + ${t * g.nt}u) % ${vpr}u) * 8u;`,
      );
      R(4).forEach((w) => {
        out.push(`      let h${w} = bitcast<vec2<f16>>(${reg}.${'xyzw'[w]});`);
        out.push(
          `      ${arrName}[o + ${2 * w}u] = h${w}.x;`,
          `      ${arrName}[o + ${2 * w + 1}u] = h${w}.y;`,
        );
      });
      out.push('    }');
    };
    R(ia).forEach((t) => one('sa', g.bm, `ga${t}`, t));
    R(ib).forEach((t) => one('sb', g.bn, `gb${t}`, t));
    return out;
  };
  const staged = ia + ib > 0;
  if (staged) {
    for (const t of R(ia)) lines.push(`  var ga${t}: vec4u;`);
    for (const t of R(ib)) lines.push(`  var gb${t}: vec4u;`);
    lines.push('  let cur = 0u;', ...fetch('0u'), ...put('0u'), '  workgroupBarrier();');
  }
  if (s.prefetch) {
    if (s.srcA === 'direct')
      for (const i of R(s.rm))
        for (const c of R(kc)) lines.push(`  var pa${i}_${c} = ${loadAg(i, `${c * 16}u`)};`);
    if (s.srcB === 'direct')
      for (const j of R(s.rn))
        for (const c of R(kc)) lines.push(`  var pb${j}_${c} = ${loadBg(j, `${c * 16}u`)};`);
  }
  lines.push(`  for (var k = 0u; k < ${K}u; k += ${s.ks}u) {`);
  if (staged) lines.push(`    let cur = (k / ${s.ks}u) % 2u;`);
  if (s.prefetch) {
    if (s.srcA === 'direct')
      for (const i of R(s.rm))
        for (const c of R(kc))
          lines.push(
            `    let qa${i}_${c} = pa${i}_${c};`,
            `    pa${i}_${c} = ${loadAg(i, `k + ${s.ks + c * 16}u`)};`,
          );
    if (s.srcB === 'direct')
      for (const j of R(s.rn))
        for (const c of R(kc))
          lines.push(
            `    let qb${j}_${c} = pb${j}_${c};`,
            `    pb${j}_${c} = ${loadBg(j, `k + ${s.ks + c * 16}u`)};`,
          );
  }
  if (staged) lines.push(...fetch(`k + ${s.ks}u`));
  for (const c of R(kc)) {
    lines.push('    {');
    for (const i of R(s.rm)) lines.push(`      let la${i} = ${fragA(i, c)};`);
    for (const j of R(s.rn)) lines.push(`      let lb${j} = ${fragB(j, c)};`);
    for (const i of R(s.rm))
      for (const j of R(s.rn))
        lines.push(`      c${i}_${j} = subgroupMatrixMultiplyAccumulate(la${i}, lb${j}, c${i}_${j});`);
    lines.push('    }');
  }
  if (staged) lines.push(...put('(1u - cur)'), '    workgroupBarrier();');
  lines.push('  }');
  for (const i of R(s.rm))
    for (const j of R(s.rn))
      lines.push(
        `  subgroupMatrixStore<row_major>(&C, (row0 + ${i * 16}u) * ${N}u + col0 + ${j * s.fn}u, c${i}_${j}, ${N}u);`,
      );
  lines.push('}');
  return lines.join('\n');
}

function spec(name: string, p: Partial<LabSpec>): LabSpec {
  return {
    name,
    srcA: 'direct',
    srcB: 'direct',
    layout: 'tiled',
    fn: 16,
    wm: 2,
    wn: 2,
    rm: 4,
    rn: 4,
    ks: 16,
    pad: 0,
    prefetch: true,
    sized: false,
    ...p,
  };
}

const W = (wm: number, wn: number, rm: number, rn: number) => ({ wm, wn, rm, rn });
const MA = (p: Partial<LabSpec>) => ({ srcB: 'staged' as const, ks: 32, pad: 8, ...p });
const SPECS: LabSpec[] = [
  spec('MixAdir-2144-k32-p8', MA(W(2, 1, 4, 4))),
  spec('PROD-2144', MA({ ...W(2, 1, 4, 4), product: true })),
  spec('MixAdir-2144-k32-p8-rand', MA({ ...W(2, 1, 4, 4), rand: true })),
  spec('PROD-2144-rand', MA({ ...W(2, 1, 4, 4), product: true, rand: true })),
  spec('MixAdir-2244-k32-p8', MA({})),
  spec('PROD-2244', MA({ product: true })),
  spec('MixAdir-2244-k32-p8-rand', MA({ rand: true })),
  spec('PROD-2244-rand', MA({ product: true, rand: true })),
  spec('MixAdir-4144-k32-p8', MA(W(4, 1, 4, 4))),
  spec('PROD-4144', MA({ ...W(4, 1, 4, 4), product: true })),
  spec('PROD-4144-rand', MA({ ...W(4, 1, 4, 4), product: true, rand: true })),
  spec('MixAdir-2144-k32-p8#2', MA(W(2, 1, 4, 4))),
];

// Pre-pass timing kernels (core WGSL, no f16 needed): Q4_K -> f16 [N][K] row-major, and x f32 -> f16
// fragment-tiled [M/16][K/16][16][16]. Both write f16 pairs through pack2x16float.
const P1_WGSL = `
@group(0) @binding(0) var<storage, read> qs: array<vec4u>; // 8 vec4 (128 B) per super-block
@group(0) @binding(1) var<storage, read> sc: array<u32>; // 3 words per super-block
@group(0) @binding(2) var<storage, read> dd: array<vec2f>; // (d, dmin) per super-block
@group(0) @binding(3) var<storage, read_write> wh: array<vec4u>; // f16 [N][K]: 8 halves per vec4
fn byte_of(w: vec3u, i: u32) -> u32 { return (w[i / 4u] >> (8u * (i % 4u))) & 255u; }
fn sc6(w: vec3u, j: u32) -> u32 {
  if (j < 4u) { return byte_of(w, j) & 63u; }
  return (byte_of(w, j + 4u) & 15u) | ((byte_of(w, j - 4u) >> 6u) << 4u);
}
fn m6(w: vec3u, j: u32) -> u32 {
  if (j < 4u) { return byte_of(w, j + 4u) & 63u; }
  return (byte_of(w, j + 4u) >> 4u) | ((byte_of(w, j) >> 6u) << 4u);
}
fn nib(q: u32, sh: u32) -> vec4f {
  let v = ((vec4u(q) >> vec4u(0u, 8u, 16u, 24u)) >> vec4u(sh)) & vec4u(15u);
  return bitcast<vec4f>(v | vec4u(0x4b000000u)) - vec4f(8388608.0);
}
// One invocation per (super-block, qs group g, 16-byte quad h): 32 bytes -> sub-blocks 2g (low nibbles)
// and 2g+1 (high nibbles), 16 weights each here.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let t = gid.y * nw.x * 256u + gid.x;
  if (t >= ${(N * K) / 32}u) { return; }
  let sb = t / 8u;
  let g = (t % 8u) / 2u;
  let h = t % 2u;
  let q = qs[sb * 8u + g * 2u + h];
  let w = vec3u(sc[sb * 3u], sc[sb * 3u + 1u], sc[sb * 3u + 2u]);
  let d = dd[sb];
  let row = sb / ${K / 256}u;
  let k0 = (sb % ${K / 256}u) * 256u + g * 64u + h * 16u;
  for (var s = 0u; s < 2u; s++) {
    let j = 2u * g + s;
    let ds = d.x * f32(sc6(w, j));
    let ms = d.y * f32(m6(w, j));
    let sh = 4u * s;
    let a = ds * nib(q.x, sh) - ms;
    let b = ds * nib(q.y, sh) - ms;
    let c = ds * nib(q.z, sh) - ms;
    let e = ds * nib(q.w, sh) - ms;
    let o = (row * ${K}u + k0 + s * 32u) / 8u;
    wh[o] = vec4u(pack2x16float(a.xy), pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));
    wh[o + 1u] = vec4u(pack2x16float(c.xy), pack2x16float(c.zw), pack2x16float(e.xy), pack2x16float(e.zw));
  }
}`;
const P2_WGSL = `
@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> xt: array<vec4u>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let t = gid.y * nw.x * 256u + gid.x; // one vec4u (8 halves) of xt
  if (t >= ${(M * K) / 8}u) { return; }
  let tile = t / 32u;
  let r = (t % 32u) / 2u;
  let kk = (t % 2u) * 8u;
  let p = tile / ${K / 16}u;
  let c = tile % ${K / 16}u;
  let i = ((p * 16u + r) * ${K}u + c * 16u + kk) / 4u;
  let a = x[i];
  let b = x[i + 1u];
  xt[t] = vec4u(pack2x16float(a.xy), pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));
}`;
const grid = (threads: number): [number, number, number] => {
  const g = Math.ceil(threads / 256);
  return [Math.min(g, 32768), Math.ceil(g / 32768), 1];
};
const PREPASSES: PassSpec[] = [
  {
    label: 'P1-q4k-to-f16',
    wgsl: P1_WGSL,
    entryPoint: 'main',
    workgroups: grid((N * K) / 32),
    bindings: ['q4qs', 'q4sc', 'q4d', 'wh'],
    workgroupSize: 256,
  },
  {
    label: 'P2-x-to-f16-tiled',
    wgsl: P2_WGSL,
    entryPoint: 'main',
    workgroups: grid((M * K) / 8),
    bindings: ['x32', 'xt'],
    workgroupSize: 256,
  },
];

/** xorshift-ish f16 values (k - 15) / 16, k in 0..30: exact in f16, and every product and sum exact in f32. */
function fill(n: number, seed: number): Uint16Array {
  const out = new Uint16Array(n);
  const table = R(31).map((k) => f32ToF16((k - 15) / 16));
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = table[s % 31]!;
  }
  return out;
}

function tiled(src: Uint16Array, rows: number): Uint16Array {
  const out = new Uint16Array(src.length);
  const kc = K / 16;
  for (let r = 0; r < rows; r++)
    for (let k = 0; k < K; k++)
      out[(((r / 16) | 0) * kc + ((k / 16) | 0)) * 256 + (r % 16) * 16 + (k % 16)] = src[r * K + k]!;
  return out;
}

async function main() {
  const argv = process.argv.slice(2);
  const arg = (f: string) => {
    const i = argv.indexOf(f);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = arg('--only') ? new RegExp(arg('--only')!) : undefined;
  const configs = (arg('--configs') ?? 'robust,norobust').split(',');
  const report: Record<string, unknown>[] = [];
  const t0 = performance.now();
  const a = fill(M * K + SLACK, 7);
  // Random f16 bit patterns with exponents in [-4, 1] (magnitudes 1/16 .. 4), both signs, full mantissa.
  const randF16 = (n: number, seed: number) => {
    const out = new Uint16Array(n);
    let st = seed;
    for (let i = 0; i < n; i++) {
      st = (Math.imul(st, 1664525) + 1013904223) >>> 0;
      out[i] = ((st >>> 31) << 15) | ((11 + ((st >>> 10) % 6)) << 10) | (st & 1023);
    }
    return out;
  };
  const br = randF16(N * K + SLACK, 3);
  const atr = tiledPad(randF16(M * K, 5), M);
  const b = fill(N * K + SLACK, 11);
  function tiledPad(src: Uint16Array, rows: number): Uint16Array {
    const out = new Uint16Array(rows * K + SLACK);
    out.set(tiled(src.subarray(0, rows * K), rows));
    return out;
  }
  const at = new Uint16Array(M * K + SLACK);
  at.set(tiled(a.subarray(0, M * K), M));
  const bt = new Uint16Array(N * K + SLACK);
  bt.set(tiled(b.subarray(0, N * K), N));
  const q4qs = new Uint32Array((N * K) / 8).map((_, i) => (i * 2654435761) >>> 0);
  const q4sc = new Uint32Array(((N * K) / 256) * 3).map((_, i) => (i * 40503 + 12345) >>> 0);
  const q4d = new Float32Array((2 * N * K) / 256).map((_, i) => 1 / (1 + (i % 7)));
  const x32 = new Float32Array(M * K).map((_, i) => ((i % 61) - 30) / 17);
  console.log(`data ${(performance.now() - t0).toFixed(0)} ms`);
  const af = Float64Array.from(a.subarray(0, M * K), f16ToF32);
  const bf = Float64Array.from(b.subarray(0, N * K), f16ToF32);
  const samples = R(96).map((i) => {
    const r = i < 8 ? [0, M - 1, 17, 1023][i % 4]! : (i * 2654435761) % M;
    const c = i < 8 ? [0, N - 1, 4095, 129][(i >> 2) % 4]! : (i * 40503 + 977) % N;
    let acc = 0;
    for (let k = 0; k < K; k++) acc += af[r * K + k]! * bf[c * K + k]!;
    return { r, c, want: acc };
  });
  for (const cfg of configs) {
    const extra =
      cfg === 'norobust'
        ? ',disable_robustness'
        : cfg === 'range'
          ? ',enable_integer_range_analysis_in_robustness'
          : cfg === 'spirv14'
            ? ',enable_integer_range_analysis_in_robustness,use_spirv_1_4'
            : '';
    const flags = FULL_DAWN_FLAGS.map((f) => `${f}${extra}`);
    const gpu = await openBenchGpu(flags);
    const { device } = gpu;
    const res = makeResident(
      device,
      [
        { name: 'A', kind: 'read-only-storage', data: a },
        { name: 'B', kind: 'read-only-storage', data: b },
        { name: 'At', kind: 'read-only-storage', data: at },
        { name: 'Bt', kind: 'read-only-storage', data: bt },
        { name: 'Bhot', kind: 'read-only-storage', data: b },
        { name: 'Atr', kind: 'read-only-storage', data: atr },
        { name: 'Br', kind: 'read-only-storage', data: br },
        { name: 'Bthot', kind: 'read-only-storage', data: bt },
        { name: 'C', kind: 'storage', size: M * N * 4 },
        { name: 'q4qs', kind: 'read-only-storage', data: q4qs },
        { name: 'q4sc', kind: 'read-only-storage', data: q4sc },
        { name: 'q4d', kind: 'read-only-storage', data: q4d },
        { name: 'wh', kind: 'storage', size: N * K * 2 },
        { name: 'x32', kind: 'read-only-storage', data: x32 },
        { name: 'xt', kind: 'storage', size: M * K * 2 },
      ],
      ['B', 'Bt', 'Br', 'q4qs', 'q4sc', 'q4d'],
      4,
    );
    for (const pre of PREPASSES) {
      if (only && !only.test(pre.label)) continue;
      try {
        const prepared = await preparePasses(res, [pre]);
        await runOnce(res, [pre], prepared, pre.bindings[pre.bindings.length - 1]!);
        const t = await timeMainPass(res, pre, prepared, 0, { reps: 3, targetMs: 15, maxIters: 400 });
        console.log(`${cfg.padEnd(8)} ${pre.label.padEnd(22)} ${t.ms.toFixed(4)} ms`);
        report.push({ cfg, name: pre.label, ms: t.ms, samples: t.samples });
      } catch (e) {
        console.log(
          `${cfg.padEnd(8)} ${pre.label.padEnd(22)} ERROR ${e instanceof Error ? e.message.slice(0, 300) : String(e)}`,
        );
      }
    }
    for (const s of SPECS) {
      if (only && !only.test(s.name)) continue;
      const g = geo(s);
      const A = (s.layout === 'tiled' && s.srcA === 'direct' ? 'At' : 'A') + (s.rand ? 'r' : '');
      const Bn =
        (s.layout === 'tiled' && s.srcB === 'direct' ? 'Bt' : 'B') +
        (s.hotB ? 'hot' : '') +
        (s.rand ? 'r' : '');
      const pass: PassSpec = {
        label: s.name,
        wgsl: s.product
          ? buildCoopmatKernel({
              m: M,
              n: N,
              k: K,
              tile: s,
              plane: 32,
              arm: 'subgroup-matrix',
              f16: 'native',
              split: true,
              rowPad: s.pad,
            }).wgsl
          : labWgsl(s),
        entryPoint: 'main',
        workgroups: s.swap ? [M / g.bm, N / g.bn, 1] : [N / g.bn, M / g.bm, 1],
        bindings: [A, Bn, 'C'],
        workgroupSize: g.nt,
      };
      const row: Record<string, unknown> = { cfg, ...s };
      try {
        const prepared = await preparePasses(res, [pass]);
        const out = await runOnce(res, [pass], prepared, 'C');
        let maxErr = 0;
        let nan = 0;
        for (let i = 0; i < out.length; i += 997) if (Number.isNaN(out[i])) nan++;
        for (const p of samples) maxErr = Math.max(maxErr, Math.abs(out[p.r * N + p.c]! - p.want));
        const t = await timeMainPass(res, pass, prepared, 0, { reps: 3, targetMs: 15, maxIters: 200 });
        row.ms = t.ms;
        row.samples = t.samples;
        row.tflops = (2 * M * N * K) / (t.ms * 1e-3) / 1e12;
        row.maxErr = maxErr;
        row.nan = nan;
        console.log(
          `${cfg.padEnd(8)} ${s.name.padEnd(22)} ${t.ms.toFixed(4)} ms ${(row.tflops as number).toFixed(1).padStart(6)} TFLOP/s err ${maxErr} nan ${nan}`,
        );
      } catch (e) {
        row.error = e instanceof Error ? e.message : String(e);
        console.log(`${cfg.padEnd(8)} ${s.name.padEnd(22)} ERROR ${String(row.error).slice(0, 300)}`);
      }
      report.push(row);
      const jsonAt = arg('--json');
      if (jsonAt) writeFileSync(jsonAt, JSON.stringify(report, null, 1));
    }
    res.destroy();
    device.destroy();
  }
  if (argv.includes('--print'))
    for (const s of SPECS) if (!only || only.test(s.name)) console.log(labWgsl(s));
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error('lab failed:', e);
    process.exit(1);
  },
);
