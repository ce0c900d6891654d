// The coopmat twin of the reference's mmq_q4k_coopmat_tile (f16 operands, not the int8 MMQ): the public
// entry and the one-pass kernel. Per 32-wide K-block, A is rounded to f16 and B decoded from Q4_K with the
// scale folded in and rounded to f16, so the f32 accumulators sum all of K in registers. The matrix arm
// spills its results and stores them per lane: the fragment's lane map is opaque, and the tail guards and
// ownership hooks (set_owner / store_out, the host's suffix: gpu/instrument.ts) need element stores.
import { ownerSuffix } from '../gpu/instrument';
import { bindingDecls, bindingNames, readOnly } from '../gpu/bindings';
import { withGridSlice } from '../gpu/gridSlice';
import type { KernelLaunch } from '../gpu/plan';
import { NO_FUSE_DECODE, q4kDecode, Q4K_SCALES_WGSL, q4kWeight, SET_NO_FUSE } from '../quant/q4k.wgsl';
import {
  coopmatGeometry,
  coopmatSpecErrors,
  coopmatWorkgroupBytes,
  stagingOf,
  streamGeometry,
  type CoopmatSpec,
} from './coopmat.params';
import {
  accDecls,
  at,
  contractChunks,
  eachElement,
  gridHead,
  MATRIX_ENABLES,
  outBinding,
  outRows,
  scalarStore,
  scalarSum,
  spillCopyOut,
  spillStores,
  SUBTILE,
  tileConsts,
  tileSummary,
  type GemmModule,
} from './coopmat.emit';
import { coopmatSplitModule } from './coopmat.split';
import { coopmatStreamModule } from './coopmat.stream';

function header(spec: CoopmatSpec): string {
  const g = coopmatGeometry(spec);
  const f16 = spec.f16 === 'native' ? 'f16 native' : 'f16 emulated with pack2x16float';
  return `// coopmat-f16 (${spec.arm} arm, ${f16}), twin of the seed's mmq_q4k_coopmat_tile:
//   out[M, N] = x[M, K] @ W[N, K]^T, W = d*sc*q - dmin*m decoded from Q4_K; both operands rounded to f16,
//   accumulated in f32. ${tileSummary(spec, g, `, ${g.nwarp}`)}
`;
}

/** The f16 tile storage: two K-consecutive operands per slot, stored rounded to f16. */
const tileStorage = (spec: CoopmatSpec) =>
  spec.f16 === 'native'
    ? `// f16 operand tiles, row-major with 32 K-values a row (the matrix arm loads them directly).
var<workgroup> sa: array<f16, BM * 32u>; // A [BM, 32]
var<workgroup> sb: array<f16, BN * 32u>; // B [BN, 32]: row n is column n of B^T
fn put_a(i: u32, v: vec2f) { sa[2u * i] = f16(v.x); sa[2u * i + 1u] = f16(v.y); }
fn put_b(i: u32, v: vec2f) { sb[2u * i] = f16(v.x); sb[2u * i + 1u] = f16(v.y); }
fn get_a(i: u32) -> vec2f { return vec2f(f32(sa[2u * i]), f32(sa[2u * i + 1u])); }
fn get_b(i: u32) -> vec2f { return vec2f(f32(sb[2u * i]), f32(sb[2u * i + 1u])); }
`
    : `// f16 operand tiles in core WGSL: pack2x16float rounds each of two K-consecutive values to f16
// (what f16(v) does), unpack2x16float widens them back exactly.
var<workgroup> sa: array<u32, BM * 16u>; // A [BM, 32] as f16 pairs
var<workgroup> sb: array<u32, BN * 16u>; // B [BN, 32] as f16 pairs
fn put_a(i: u32, v: vec2f) { sa[i] = pack2x16float(v); }
fn put_b(i: u32, v: vec2f) { sb[i] = pack2x16float(v); }
fn get_a(i: u32) -> vec2f { return unpack2x16float(sa[i]); }
fn get_b(i: u32) -> vec2f { return unpack2x16float(sb[i]); }
`;

/** Staging of one 32-wide K-block kb into sa / sb (both arms), by all NT invocations. */
const STAGE = `    let k0 = kb * 32u;
    // A [BM, 32]: the activation, two K-consecutive values per slot; rows past M stage 0.
    for (var i = tid; i < BM * 16u; i += NT) {
      let arow = mrow0 + i / 16u;
      var v = vec2f(0.0);
      if (arow < M) {
        let o = arow * K + k0 + (i % 16u) * 2u;
        v = vec2f(x[o], x[o + 1u]);
      }
      put_a(i, v);
    }
    // B [BN, 32]: Q4_K sub-block is = kb % 8 decoded with its scale folded in, w = d*sc*q - dmin*m.
    // Sub-block 2g / 2g+1 is the low / high nibble of qs byte g*32 + qi (matvec_q4k's map); qi is even,
    // so bytes qi and qi+1 share a word. Rows past N stage 0.
    let is = kb % 8u;
    let g = is / 2u;
    let sbk = kb / 8u;
    let shift = 4u * (is % 2u);
    for (var i = tid; i < BN * 16u; i += NT) {
      let nrow = ncol0 + i / 16u;
      let qi = (i % 16u) * 2u;
      var v = vec2f(0.0);
      if (nrow < N) {
        let blk = nrow * NSB + sbk;
${at('        ', q4kDecode.scaleMin('', 'wd[blk]', 'q4k_sc(blk * 3u, is)', 'wdm[blk]', 'q4k_m(blk * 3u, is)', 'separate'))}
        let pair = wqs[blk * 32u + (g * 32u + qi) / 4u] >> (8u * (qi % 4u));
        v = ${q4kDecode.value('', 'vec2f(f32((pair >> shift) & 15u), f32((pair >> (shift + 8u)) & 15u))', 'separate', '2')};
      }
      put_b(i, v);
    }
    workgroupBarrier();
`;

const SCALAR_MAIN = `${gridHead('scalar')}${SET_NO_FUSE}  for (var kb = 0u; kb < KB; kb++) {
${STAGE}${eachElement('    ', SUBTILE, [
  "let ra = (sm * 16u + p / 16u) * 16u; // first f16 pair of this element's A row",
  'let rb = (sn * 16u + p % 16u) * 16u; // ... and of its B row (= output column)',
  ...scalarSum('get_a(ra + l)', 'get_b(rb + l)'),
])}
    workgroupBarrier();
  }
`;

/** A fragment im of K chunk kc of the staged block, loaded where the chunk multiplies it. */
const loadA = (im: number, kc: number) =>
  `subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, (warp_m * RM + ${im}u) * 512u + ${kc * 16}u, 32u)`;

const matrixMain = (
  spec: CoopmatSpec,
) => `// One 16x16 f32 spill per plane: the result matrix's lane layout is opaque, so it is stored here and
// copied out by the per-lane partition, which also applies the tail guards and the ownership hooks.
${spillCopyOut(outRows(spec))}
${gridHead(spec.arm)}${SET_NO_FUSE}  // RM*RN f32 result matrices held across the whole K loop (the hand kernel's coopmat acc[][]).
${accDecls(spec)}
  for (var kb = 0u; kb < KB; kb++) {
${STAGE}${contractChunks(spec, { chunks: 2, what: 'staged block', bufAt: '', rs: 32 }, loadA)}
    workgroupBarrier();
  }
${spillStores(spec, '  ')}
}
`;

function onePassModule(spec: CoopmatSpec): GemmModule {
  const g = coopmatGeometry(spec);
  const bindings = withGridSlice({
    x: readOnly('array<f32>', 'activation [M, K] row-major'),
    ...q4kWeight('u32'),
    ...outBinding(spec),
  });
  const enables = spec.arm === 'scalar' ? (spec.f16 === 'native' ? 'enable f16;\n' : '') : MATRIX_ENABLES;
  return {
    bindings: bindingNames(bindings),
    wgsl: `${enables ? `${enables}\n` : ''}${header(spec)}
${tileConsts(spec, g)}const KB = K / 32u; // 32-wide K-blocks (one Q4_K sub-block each)
const NSB = K / 256u; // Q4_K super-blocks per weight row

${bindingDecls(bindings)}
${Q4K_SCALES_WGSL}${NO_FUSE_DECODE}
${tileStorage(spec)}
${spec.arm === 'scalar' ? `${SCALAR_MAIN}${scalarStore(outRows(spec))}` : matrixMain(spec)}`,
  };
}

function coopmatModule(spec: CoopmatSpec, directStore: boolean): GemmModule {
  const errs = coopmatSpecErrors(spec);
  if (errs.length) throw new RangeError(errs.join('; '));
  const { stream, prePasses } = stagingOf(spec);
  if (stream) return coopmatStreamModule(spec);
  return prePasses ? coopmatSplitModule(spec, directStore) : onePassModule(spec);
}

/**
 * The kernel text of a coopmat tile (the host appends the set_owner/store_out suffix); for a split
 * staging, the text of its GEMM pass.
 * @example coopmatWgsl({ m: 16, n: 16, k: 256, tile: { wm: 1, wn: 1, rm: 1, rn: 1 }, plane: 4, arm: 'scalar', f16: 'emulated', staging: 'one-pass' })
 */
export const coopmatWgsl = (spec: CoopmatSpec, opts: { directStore?: boolean } = {}): string =>
  coopmatModule(spec, opts.directStore ?? true).wgsl;

/** A coopmat kernel's launch: `wgsl` is the kernel text plus the host suffix, its bindings end with owner. */
export interface CoopmatKernel extends KernelLaunch {
  /** The kernel text alone (what an editor shows). */
  kernelWgsl: string;
  /** Workgroup grid covering an m x n output with this tile: (ceil(n/BN), ceil(m/BM), split-K parts). */
  workgroups(m: number, n: number): [number, number, number];
  workgroupBytes: number;
}

/**
 * Everything needed to dispatch a coopmat tile's main kernel (the split plan's GEMM for a split staging).
 * @example const kc = buildCoopmatKernel(spec); pass.dispatchWorkgroups(...kc.workgroups(spec.m, spec.n))
 */
export function buildCoopmatKernel(spec: CoopmatSpec, opts: { instrument?: boolean } = {}): CoopmatKernel {
  const instrument = opts.instrument ?? false;
  // The split GEMM stores interior fragments straight to out, except instrumented (coopmat.split.ts matrixStores).
  const { wgsl: kernelWgsl, bindings } = coopmatModule(spec, !instrument);
  const stream = stagingOf(spec).stream;
  const g = stream ? streamGeometry(spec) : coopmatGeometry(spec);
  const ownerBinding = bindings.length; // the debug buffer goes one past the kernel's own bindings
  if (instrument) bindings.push('owner');
  return {
    wgsl: kernelWgsl + ownerSuffix({ instrument, outName: 'out', outType: 'f32', ownerBinding }),
    kernelWgsl,
    entryPoint: 'main',
    bindings,
    workgroupSize: g.threads,
    // Split-K's parts run on grid z; the stream GEMM's in each workgroup.
    workgroups: (m, n) => [Math.ceil(n / g.bn), Math.ceil(m / g.bm), stream ? 1 : (spec.ksplit ?? 1)],
    workgroupBytes: coopmatWorkgroupBytes(spec),
  };
}
