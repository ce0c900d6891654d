// WGSL generator for the f16-dequant register-blocked Q4_K GEMM, the twin of the reference's
// mmq_q4k_coopmat_tile, written ONCE as a function of typed parameters: the one-pass kernel here, the
// split plan's passes in coopmat.split.ts, and buildCoopmatKernel, which picks between them.
//
// Same algorithm as the reference (NOT the int8 MMQ): per 32-wide K-block, stage the activation tile
// A[BM, 32] rounded to f16 and the weight tile B[BN, 32] decoded from Q4_K with the affine scale FOLDED
// in (w = d*sc*q - dmin*m, in f32) and rounded to f16; contract in f32. Because the scale is folded
// before the contraction, the accumulators sum across ALL of K and stay in registers.
// Comptime tile: a wm x wn grid of planes, each owning rm x rn 16x16 subtiles: BM = wm*rm*16,
// BN = wn*rn*16. Tail guards on m and n (rows past the edge stage 0 and are never stored); k is a
// multiple of the 256-wide Q4_K super-block, so it never tails.
//   scalar          : the normative arm -- each lane owns PER = 256/plane elements of each of its
//                     rm*rn subtiles as f32 registers; f16 as real `f16` (enable f16) or, in core
//                     WGSL, rounded through pack2x16float -- both round each operand to f16 the same way.
//   subgroup-matrix : f16 x f16 -> f32 16x16x16 subgroup matrices, rm*rn result matrices held across
//                     K; at the end each is spilled to workgroup memory and stored by the same
//                     per-lane partition (the fragment's lane map is opaque, and the tail guards and
//                     ownership hooks need element stores).
// The kernel calls set_owner / store_out, which the host defines in a suffix (gpu/instrument.ts).
import { ownerSuffix } from '../gpu/instrument';
import { bindingDecls, bindingNames } from '../gpu/plan';
import { NO_FUSE_DECODE, q4kDecode, Q4K_SCALES_WGSL, q4kWeight, SET_NO_FUSE } from '../quant/q4k.wgsl';
import {
  coopmatGeometry,
  coopmatSpecErrors,
  coopmatWorkgroupBytes,
  isSplit,
  stagingOf,
  streamGeometry,
  type CoopmatSpec,
} from './coopmat.params';
import {
  MATRIX_MAIN_HEAD,
  OUT_BINDING,
  scalarBlock,
  SCALAR_MAIN_HEAD,
  scalarStore,
  spillCopyOut,
  spillStore,
  tileConsts,
} from './coopmat.snippets';
import { coopmatSplitBindings, coopmatSplitWgsl } from './coopmat.split';
import { coopmatStreamWgsl } from './coopmat.stream';

/** The one-pass kernel's buffers: the f32 activation, the Q4_K weight, the output. */
const ONE_PASS_BINDINGS = [
  { name: 'x', access: 'read', type: 'array<f32>', comment: 'activation [M, K] row-major' } as const,
  ...q4kWeight('u32'),
  OUT_BINDING(),
];
export const COOPMAT_BINDINGS = bindingNames(ONE_PASS_BINDINGS);

function header(spec: CoopmatSpec): string {
  const g = coopmatGeometry(spec);
  const { wm, wn, rm, rn } = spec.tile;
  const f16 = spec.f16 === 'native' ? 'f16 native' : 'f16 emulated with pack2x16float';
  return `// coopmat-f16 (${spec.arm} arm, ${f16}), twin of the seed's mmq_q4k_coopmat_tile:
//   out[M, N] = x[M, K] @ W[N, K]^T, W = d*sc*q - dmin*m decoded from Q4_K; both operands rounded to f16,
//   accumulated in f32. Tile wm=${wm} wn=${wn} rm=${rm} rn=${rn}: BM=${g.bm} BN=${g.bn}, ${g.nwarp} plane(s) of ${spec.plane} = ${g.threads} invocations.
`;
}

const consts = (
  spec: CoopmatSpec,
) => `${tileConsts(spec, coopmatGeometry(spec))}const KB = K / 32u; // 32-wide K-blocks (one Q4_K sub-block each)
const NSB = K / 256u; // Q4_K super-blocks per weight row
`;

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
${q4kDecode
  .scaleMin('', 'wd[blk]', 'q4k_sc(blk * 3u, is)', 'wdm[blk]', 'q4k_m(blk * 3u, is)', 'separate')
  .map((l) => `        ${l}`)
  .join('\n')}
        let pair = wqs[blk * 32u + (g * 32u + qi) / 4u] >> (8u * (qi % 4u));
        v = ${q4kDecode.value('', 'vec2f(f32((pair >> shift) & 15u), f32((pair >> (shift + 8u)) & 15u))', 'separate', '2')};
      }
      put_b(i, v);
    }
    workgroupBarrier();
`;

const SCALAR_MAIN = `${SCALAR_MAIN_HEAD}${SET_NO_FUSE}  for (var kb = 0u; kb < KB; kb++) {
${STAGE}    for (var im = 0u; im < RM; im++) {
      for (var jn = 0u; jn < RN; jn++) {
        let sm = warp_m * RM + im;
        let sn = warp_n * RN + jn;
        for (var e = 0u; e < PER; e++) {
          let p = lane * PER + e;
          let ra = (sm * 16u + p / 16u) * 16u; // first f16 pair of this element's A row
          let rb = (sn * 16u + p % 16u) * 16u; // ... and of its B row (= output column)
${scalarBlock(
  (l) => `get_a(ra + ${l})`,
  (l) => `get_b(rb + ${l})`,
)}
        }
      }
    }
    workgroupBarrier();
  }
${scalarStore()}`;

function matrixMain(spec: CoopmatSpec): string {
  const { rm, rn } = spec.tile;
  const ids: [number, number][] = [];
  for (let im = 0; im < rm; im++) for (let jn = 0; jn < rn; jn++) ids.push([im, jn]);
  const kHalf = (kc: number) => {
    const loadsB = Array.from(
      { length: rn },
      (_, jn) =>
        `      let b_${jn} = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, (warp_n * RN + ${jn}u) * 512u + ${kc * 16}u, 32u);`,
    ).join('\n');
    const perA = Array.from({ length: rm }, (_, im) => {
      const mmas = Array.from(
        { length: rn },
        (_, jn) =>
          `        acc_${im}_${jn} = subgroupMatrixMultiplyAccumulate(a_${im}, b_${jn}, acc_${im}_${jn});`,
      ).join('\n');
      return `      {
        let a_${im} = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, (warp_m * RM + ${im}u) * 512u + ${kc * 16}u, 32u);
${mmas}
      }`;
    }).join('\n');
    return `    {
      // K columns ${kc * 16}..${kc * 16 + 15} of the staged block.
${loadsB}
${perA}
    }`;
  };
  return `// One 16x16 f32 spill per plane: the result matrix's lane layout is opaque, so it is stored here and
// copied out by the per-lane partition, which also applies the tail guards and the ownership hooks.
${spillCopyOut()}
${MATRIX_MAIN_HEAD}${SET_NO_FUSE}  // RM*RN f32 result matrices held across the whole K loop (the hand kernel's coopmat acc[][]).
${ids.map(([im, jn]) => `  var acc_${im}_${jn} = subgroup_matrix_result<f32, 16, 16>();`).join('\n')}
  for (var kb = 0u; kb < KB; kb++) {
${STAGE}${kHalf(0)}
${kHalf(1)}
    workgroupBarrier();
  }
${ids.map(([im, jn]) => spillStore(im, jn)).join('\n')}
}
`;
}

function assertSpec(spec: CoopmatSpec): void {
  const errs = coopmatSpecErrors(spec);
  if (errs.length) throw new RangeError(errs.join('; '));
}

/**
 * The kernel text of a coopmat tile (the host appends the set_owner/store_out suffix); for a split
 * staging, the text of its GEMM pass.
 * @example coopmatWgsl({ m: 16, n: 16, k: 256, tile: { wm: 1, wn: 1, rm: 1, rn: 1 }, plane: 4, arm: 'scalar', f16: 'emulated', staging: 'one-pass' })
 */
export function coopmatWgsl(spec: CoopmatSpec, opts: { directStore?: boolean } = {}): string {
  assertSpec(spec);
  if (stagingOf(spec).stream) return coopmatStreamWgsl(spec, opts);
  if (isSplit(spec.staging)) return coopmatSplitWgsl(spec, opts);
  const enables = [
    spec.f16 === 'native' ? 'enable f16;' : '',
    spec.arm === 'subgroup-matrix' ? 'enable subgroups;\nenable chromium_experimental_subgroup_matrix;' : '',
  ]
    .filter(Boolean)
    .join('\n');
  return `${enables ? `${enables}\n\n` : ''}${header(spec)}
${consts(spec)}
${bindingDecls(ONE_PASS_BINDINGS)}
${Q4K_SCALES_WGSL}${NO_FUSE_DECODE}
${tileStorage(spec)}
${spec.arm === 'scalar' ? SCALAR_MAIN : matrixMain(spec)}`;
}

export interface CoopmatKernel {
  /** Kernel text plus the host suffix: ready for createShaderModule. */
  wgsl: string;
  /** The kernel text alone (what an editor shows). */
  kernelWgsl: string;
  entryPoint: 'main';
  /** Buffer names in @binding order (the owner debug buffer last, when instrumented). */
  bindings: readonly string[];
  workgroupSize: number;
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
  // The split GEMM stores interior fragments straight to out, except instrumented (see coopmat.split.ts).
  const kernelWgsl = coopmatWgsl(spec, { directStore: !instrument });
  const g = stagingOf(spec).stream ? streamGeometry(spec) : coopmatGeometry(spec);
  const bindings = isSplit(spec.staging) ? coopmatSplitBindings(spec) : [...COOPMAT_BINDINGS];
  const ownerBinding = bindings.length; // the debug buffer goes one past the kernel's own bindings
  if (instrument) bindings.push('owner');
  return {
    wgsl: kernelWgsl + ownerSuffix({ instrument, outName: 'out', outType: 'f32', ownerBinding }),
    kernelWgsl,
    entryPoint: 'main',
    bindings,
    workgroupSize: g.threads,
    // Split-K's parts run on grid z; the stream GEMM's in each workgroup.
    workgroups: (m: number, n: number) => [
      Math.ceil(n / g.bn),
      Math.ceil(m / g.bm),
      stagingOf(spec).stream ? 1 : (spec.ksplit ?? 1),
    ],
    workgroupBytes: coopmatWorkgroupBytes(spec),
  };
}
