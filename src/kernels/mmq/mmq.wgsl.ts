// ONE generator for every int8 MMQ kernel of the seed (mmq_q8_wmma, mmq_q8_wmma_blk, mmq_q4k_wmma_blk,
// mmq_q4k_wmma_rt, mmq_q4k_wmma_tile, mmq_q4k_id): each is a preset of `MmqSpec`, and the WGSL is composed
// from small functions -- bindings, Q4_K decode helpers, stage A, stage B, the contraction island with its
// arms, the epilogue, the store. The seed's `#[comptime]` parameters become WGSL `const`s; its runtime
// `meta` becomes a uniform, so one compiled pipeline serves every shape.
//
// MMQ math per 32-block kb (int8 accumulation is exact only within one constant-scale block):
//   q8_0 (symmetric): acc += f32(isum) * xs * wd
//   q4k  (affine):    acc += xs * (d*sc) * f32(isum) - (dmin*m) * xsum      (xsum = xs * sum(xq))
// written in exactly the oracle's f32 order, each product rounded on its own (no_fuse), so every arm can
// match the oracle bit for bit on any compiler, contracting to FMA or not.
import type { Arm } from '../gpu/caps';
import { bindingDecls, bindingNames, readOnly, readWrite, type BindingTable } from '../gpu/bindings';
import { GRID_SLICE_PARAM, GRID_SLICE_STRUCT, gridSliceLets, withGridSlice } from '../gpu/gridSlice';
import { ShapeError } from '../family';
import { Q4K_SCALES_WGSL } from '../quant/q4k.wgsl';
import type { TileParams } from '../tile';
import {
  microBody,
  microConstants,
  microGeometry,
  microHelpers,
  microWorkgroupBytes,
  microWorkgroupDecls,
} from './mmq.microtile';
import type { MmqAccumulator, MmqSchedule, MmqOperands, MmqWeights } from './catalog';

export type { MmqAccumulator, MmqOperands, MmqWeights } from './catalog';
/** 'static': m/n/k baked as WGSL consts (the seed's #[comptime]); 'runtime': read from the `dims` uniform. */
export type MmqDims = { kind: 'static'; m: number; n: number; k: number } | { kind: 'runtime' };

/** Everything that determines one generated MMQ kernel. */
export interface MmqSpec {
  weights: MmqWeights;
  /** Warp grid wm x wn, per-warp register tile rm x rn of 16x16 subtiles: BM = wm*rm*16, BN = wn*rn*16. */
  tile: TileParams;
  operands: MmqOperands;
  accumulator: MmqAccumulator;
  dims: MmqDims;
  /** m/n tail guards: the grid may cover a partial edge tile. Without them m, n must be tile multiples. */
  tails: boolean;
  /** MoE: rows gathered/scattered through the `routing` lists, expert on workgroup_id.z, grid-stride over row tiles. */
  indexed: boolean;
  /** The contraction island's arm (the family's default on the adapter: arms.ts defaultArm). */
  arm: Arm;
  /**
   * Plane width every partition divides by (planeWidth(caps)); must divide 256. The scalar arms treat it
   * as a logical width (any divisor of 256 gives the same bits); the subgroup-matrix arm needs the
   * hardware subgroup size, since it indexes planes by @builtin(subgroup_id).
   */
  plane: number;
  /**
   * How the tile is scheduled: 'subtile' (the seed's: each lane a slice of every 16x16 subtile, one
   * 32-block a step; the default) or 'microtile' (./mmq.microtile.ts: each lane a TM x TN block of its
   * warp tile in registers, 64-wide double-buffered stages, scales staged once a stage).
   */
  schedule?: MmqSchedule;
}

export type { MmqSchedule } from './catalog';

/** Derived tile geometry of a spec. */
export interface MmqGeometry {
  bm: number;
  bn: number;
  nwarp: number;
  /** Workgroup size: nwarp * plane invocations. */
  nthread: number;
  /** 16x16-subtile elements each lane owns: 256 / plane. */
  per: number;
}

/** A generated kernel plus what a host needs to launch it with its own (e.g. resident) buffers. */
export interface MmqKernel {
  spec: MmqSpec;
  /** The kernel text WITHOUT the ownership host suffix (append `ownerSuffix(...)` before compiling). */
  wgsl: string;
  entryPoint: string;
  /** Buffer names in @group(0) @binding(i) order (the `dims` uniform last when runtime). */
  bindings: string[];
  /** Binding index of the output buffer. */
  outputBinding: number;
  workgroupSize: number;
  /** Grid for a problem: [ceil(n/BN), ceil(m/BM), 1], or for `indexed` [ceil(n/BN), ytiles, experts]. */
  workgroups(m: number, n: number, extra?: { ytiles: number; experts: number }): [number, number, number];
  /** Workgroup memory the kernel declares, in bytes. */
  workgroupBytes: number;
  geometry: MmqGeometry;
}

/**
 * Tile geometry of a spec.
 * @example mmqGeometry({ ...spec, tile: MMQ_BLK_TILE, plane: 32 }) // { bm: 32, bn: 64, nwarp: 8, nthread: 256, per: 8 }
 */
export function mmqGeometry(spec: Pick<MmqSpec, 'tile' | 'plane'>): MmqGeometry {
  const { wm, wn, rm, rn } = spec.tile;
  const nwarp = wm * wn;
  return { bm: wm * rm * 16, bn: wn * rn * 16, nwarp, nthread: nwarp * spec.plane, per: 256 / spec.plane };
}

const posInt = (v: number) => Number.isInteger(v) && v >= 1;

/**
 * Problems intrinsic to a spec (independent of adapter and data); empty = the generator can emit it.
 * @example mmqSpecProblems({ ...spec, plane: 48 }) // ['plane 48 does not divide 256 ...']
 */
export function mmqSpecProblems(spec: MmqSpec): string[] {
  const p: string[] = [];
  const { wm, wn, rm, rn } = spec.tile;
  if (![wm, wn, rm, rn].every(posInt)) p.push(`tile (${wm},${wn},${rm},${rn}) must be positive integers`);
  if (!posInt(spec.plane) || 256 % spec.plane !== 0) {
    p.push(
      `plane ${spec.plane} does not divide 256: a 16x16 subtile is split into 256/plane elements per lane`,
    );
  }
  if (spec.dims.kind === 'static') {
    const { m, n, k } = spec.dims;
    if (![m, n, k].every(posInt)) p.push(`static dims (${m},${n},${k}) must be positive integers`);
  }
  if (spec.schedule === 'microtile') {
    if (spec.indexed)
      p.push('the micro-tile schedule is dense: the expert-indexed kernel keeps the subtile one');
    if (spec.operands !== 'shared') p.push('the micro-tile schedule stages A and B in workgroup memory');
    if (256 % spec.plane === 0 && posInt(spec.plane) && !microGeometry(spec))
      p.push(
        `plane ${spec.plane} cannot tile a ${spec.tile.rm * 16}x${spec.tile.rn * 16} warp tile into lane blocks`,
      );
  }
  if (spec.indexed) {
    if (spec.dims.kind !== 'runtime')
      p.push('indexed (MoE) kernels read n/k/cap at run time: dims must be runtime');
    if (!spec.tails) p.push('indexed (MoE) kernels need tail guards: an expert owns any number of rows');
    if (spec.operands !== 'shared')
      p.push('indexed (MoE) kernels gather A through a staged slot list: operands must be shared');
  }
  if (spec.operands === 'global' && spec.tails) {
    p.push('global operands are read unguarded: no tail guards (use operands shared)');
  }
  if (spec.operands === 'global' && spec.weights === 'q4k' && spec.arm === 'subgroup-matrix') {
    p.push(
      'the subgroup-matrix arm loads Q4_K nibbles only after the in-kernel decode: q4k needs operands shared',
    );
  }
  return p;
}

function assertSpec(spec: MmqSpec): void {
  const problems = mmqSpecProblems(spec);
  if (problems.length) throw new ShapeError(problems.join('; '));
}

/**
 * Workgroup memory the generated kernel declares, in bytes, per arm: A/B staged (shared operands),
 * the i32 fragment scratch `ci` (subgroup-matrix arm only: the scalar arms keep isum in a register),
 * the f32 accumulator tile (shared accumulator) and the slot list (indexed).
 * @example mmqWorkgroupBytes(q4kRtSpec) // 32*32 + 64*32 + 32*64*4 = 11264 for the scalar arm
 */
export function mmqWorkgroupBytes(spec: MmqSpec): number {
  if (spec.schedule === 'microtile') return microWorkgroupBytes(mmqGeometry(spec), spec.arm);
  return workgroupArrays(spec).reduce((s, a) => s + a.words * 4, 0);
}

interface WorkgroupArray {
  name: string;
  type: 'u32' | 'i32' | 'f32';
  words: number;
  comment: string;
}

function workgroupArrays(spec: MmqSpec): WorkgroupArray[] {
  const { bm, bn } = mmqGeometry(spec);
  const out: WorkgroupArray[] = [];
  if (spec.indexed)
    out.push({ name: 'srow', type: 'u32', words: bm, comment: 'slot index of each tile row' });
  if (spec.operands === 'shared') {
    out.push({ name: 'sa', type: 'u32', words: bm * 8, comment: 'A tile [BM x 32] int8, 4 per word' });
    out.push({
      name: 'sb',
      type: 'u32',
      words: bn * 8,
      comment: 'B tile [BN x 32] int8 (Q4_K: nibbles), 4 per word',
    });
  }
  if (spec.arm === 'subgroup-matrix') {
    out.push({
      name: 'ci',
      type: 'i32',
      words: bm * bn,
      comment: 'per-(plane, subtile) i32 fragment scratch',
    });
  }
  if (spec.accumulator === 'shared') {
    out.push({ name: 'accf', type: 'f32', words: bm * bn, comment: 'f32 output tile [BM x BN]' });
  }
  return out;
}

/**
 * The binding table of a spec, in binding order (seed argument order; `dims` last when runtime). Values
 * read together are interleaved into one binding (xs|xsum, d|dmin, counts|rows) because WebGPU's default
 * maxStorageBuffersPerShaderStage is 8 (SwiftShader in Chromium and many real adapters report just
 * that), and an instrumented run adds the owner buffer: MoE binds 7 + owner, dense Q4_K 6 + owner.
 * @example bindingNames(mmqBindings(q8Spec)) // ['xq', 'xs', 'wq', 'wd', 'out', 'grid_slice']
 */
export function mmqBindings(spec: MmqSpec): BindingTable {
  const ro = (elem: string, comment: string) => readOnly(`array<${elem}>`, comment);
  // The micro-tile schedule reads the packed int8 operands 16 bytes at a time (rows are 64-byte aligned).
  const packed = (name: string, comment: string): BindingTable =>
    spec.schedule === 'microtile'
      ? { [`${name}4`]: { ...ro('vec4<u32>', `${comment}, 16 per vec4`), buffer: name } }
      : { [name]: ro('u32', `${comment}, 4 per word`) };
  const weights: BindingTable =
    spec.weights === 'q8_0'
      ? {
          xs: ro('f32', 'activation scale per 32-block [rows, k/32]'),
          ...packed('wq', 'Q8_0 weight int8 [n, k]'),
          wd: ro('f32', 'Q8_0 weight scale per 32-block [n, k/32]'),
        }
      : {
          xs_xsum: ro('vec2f', '[rows, k/32] (xs, xsum = xs * sum(xq)) per 32-block, interleaved'),
          ...(spec.schedule === 'microtile'
            ? packed('wqs', 'Q4_K qs: 128 B per super-block')
            : { wqs: ro('u32', 'Q4_K qs: 32 words (128 B) per super-block') }),
          wsc: ro('u32', 'Q4_K packed 6-bit scales/mins: 3 words per super-block'),
          wd_dmin: ro('vec2f', 'Q4_K (d, dmin) per super-block, interleaved'),
        };
  return withGridSlice(
    {
      ...packed('xq', 'q8_1 activation int8 [rows, k]'),
      ...weights,
      ...(spec.indexed
        ? {
            routing: ro(
              'u32',
              '[experts] rows per expert, then [experts * cap] slot per (expert, local row)',
            ),
          }
        : {}),
      out: readWrite('array<f32>', 'output [rows, n]'),
      ...(spec.dims.kind === 'runtime'
        ? { dims: { uniform: 'Dims', comment: 'm, n, k, cap (`meta` is a WGSL reserved word)' } }
        : {}),
    },
    // The module declares GridSlice with its other structs, above the bindings.
    { struct: false },
  );
}

// ------------------------------------------------------------------------------------------ text pieces

const ind = (lines: string[], n = 1): string[] => lines.map((l) => (l ? '  '.repeat(n) + l : l));

function header(spec: MmqSpec, g: MmqGeometry): string[] {
  const { wm, wn, rm, rn } = spec.tile;
  const dims =
    spec.dims.kind === 'static' ? `static ${spec.dims.m}x${spec.dims.n}x${spec.dims.k}` : 'runtime dims';
  const lines = [
    `// MMQ ${spec.weights === 'q8_0' ? 'Q8_0' : 'Q4_K'} x q8_1 -> f32, out = X @ W^T (generated by mmqWgsl).`,
    `// tile wm${wm} wn${wn} rm${rm} rn${rn} (BM ${g.bm}, BN ${g.bn}), plane ${spec.plane}, arm ${spec.arm},`,
    // The text still calls the operands 'staging': the kernels' WGSL is pinned byte for byte.
    spec.schedule === 'microtile'
      ? `// micro-tile schedule (lane blocks, 64-wide double-buffered stages), ${dims}${spec.tails ? ', tail guards' : ''}.`
      : `// staging ${spec.operands}, accumulator ${spec.accumulator}, ${dims}${spec.tails ? ', tail guards' : ''}${spec.indexed ? ', expert-indexed' : ''}.`,
    '// set_owner/store_out are defined by the host suffix appended after this text.',
  ];
  if (spec.arm === 'dp4a') lines.push('requires packed_4x8_integer_dot_product;');
  if (spec.arm === 'subgroup-matrix')
    lines.push('enable subgroups;', 'enable chromium_experimental_subgroup_matrix;');
  return lines;
}

function constants(spec: MmqSpec, g: MmqGeometry): string[] {
  const { wm, wn, rm, rn } = spec.tile;
  const lines = [
    `const PLANE: u32 = ${spec.plane}u;`,
    `const WM: u32 = ${wm}u; // warp-grid rows`,
    `const WN: u32 = ${wn}u; // warp-grid cols`,
    `const RM: u32 = ${rm}u; // 16x16 subtiles per plane along m`,
    `const RN: u32 = ${rn}u; // 16x16 subtiles per plane along n`,
    `const BM: u32 = ${g.bm}u;`,
    `const BN: u32 = ${g.bn}u;`,
    `const NTHREAD: u32 = ${g.nthread}u; // nwarp * PLANE`,
    `const PER: u32 = ${g.per}u; // subtile elements per lane: 256 / PLANE`,
  ];
  if (spec.dims.kind === 'static') {
    lines.push(
      `const M: u32 = ${spec.dims.m}u;`,
      `const N: u32 = ${spec.dims.n}u;`,
      `const K: u32 = ${spec.dims.k}u;`,
    );
  }
  return lines;
}

function bindingLines(spec: MmqSpec): string[] {
  const lines: string[] = [];
  if (spec.dims.kind === 'runtime') lines.push('struct Dims { m: u32, n: u32, k: u32, cap: u32 }');
  lines.push(GRID_SLICE_STRUCT, '', bindingDecls(mmqBindings(spec)));
  return lines;
}

function workgroupDecls(spec: MmqSpec): string[] {
  const sizeOf: Record<string, string> = {
    srow: 'BM',
    sa: 'BM * 8u',
    sb: 'BN * 8u',
    ci: 'BM * BN',
    accf: 'BM * BN',
  };
  return workgroupArrays(spec).map(
    (a) => `var<workgroup> ${a.name}: array<${a.type}, ${sizeOf[a.name] ?? a.words}>; // ${a.comment}`,
  );
}

/** Q4_K decode helpers: q4k_sc / q4k_m over wsc (the format's one WGSL, shared with the coopmat twin). */
function q4kHelpers(): string[] {
  return Q4K_SCALES_WGSL.trimEnd().split('\n');
}

/**
 * Pin the oracle's rounding: WGSL lets a compiler contract `a * b + c` into one FMA (one rounding instead
 * of two; NVIDIA does, SwiftShader does not), which breaks bit-exactness against the Math.fround oracle.
 * OR-ing the product's bits with a zero the compiler cannot prove is zero keeps it a separately rounded
 * f32, at one integer op per element per 32-block.
 */
function noFuseHelpers(): string[] {
  return [
    'var<private> nofuse_zero: u32; // 0 at run time (set from num_workgroups), opaque to the compiler',
    'fn no_fuse(x: f32) -> f32 {',
    '  return bitcast<f32>(bitcast<u32>(x) | nofuse_zero);',
    '}',
  ];
}

/** Sets no_fuse's opaque zero at the top of main (both schedules). */
const SET_NOFUSE_ZERO = 'nofuse_zero = nwg.z >> 31u; // a grid never has 2^31 workgroups in z';

/** The normative arm's int8 dot: unpack bytes with shifts, i32 MACs (the seed's `default` arm). */
function scalarDotHelpers(): string[] {
  return [
    '// Signed byte j of a packed word: shift it to the top, arithmetic-shift back (sign-extends).',
    'fn i8_at(w: u32, j: u32) -> i32 {',
    '  return bitcast<i32>(w << (24u - 8u * j)) >> 24u;',
    '}',
    'fn dot_i8(a: u32, b: u32) -> i32 {',
    '  var s = 0i;',
    '  for (var j = 0u; j < 4u; j++) { s += i8_at(a, j) * i8_at(b, j); }',
    '  return s;',
    '}',
  ];
}

/** Parenthesize a sum so it can be multiplied. */
const paren = (e: string) => (/^[\w.]+$/.test(e) || /^\(.*\)$/.test(e) ? e : `(${e})`);

/** Words of the B row `ncolExpr` (absolute weight row) at word `w` of the current 32-block, from global. */
function weightWord(spec: MmqSpec, rowExpr: string, w: string): string {
  return spec.weights === 'q8_0'
    ? `wq[${paren(rowExpr)} * kw + k0w + ${w}]`
    : // Sub-block `is` of super-block sbk: byte (is/2)*32 + qi, low nibble for even is, high for odd --
      // four consecutive qi share one word, so the nibbles decode four at a time with one mask.
      `(wqs[(${paren(rowExpr)} * nsb + sbk) * 32u + g * 8u + ${w}] >> nib_shift) & 0x0f0f0f0fu`;
}

/** The absolute weight row of bank-local row `row` (indexed kernels offset into their expert's block). */
const wrow = (spec: MmqSpec, row: string) => (spec.indexed ? `(wbase + ${row})` : row);

/**
 * The staging loop both operands share: the NTHREAD threads copy `rows` x 8 words of the current
 * 32-block into `dest`, one word per store, coalesced by word; `load` sets `v` (left 0 past an edge).
 */
function stageLoop(
  comment: string,
  rows: 'BM' | 'BN',
  row: 'r' | 'c',
  load: string[],
  dest: string,
): string[] {
  return [
    comment,
    `for (var i = tid; i < ${rows} * 8u; i += NTHREAD) {`,
    `  let ${row} = i / 8u;`,
    '  let w = i % 8u;',
    '  var v = 0u;',
    ...ind(load),
    `  ${dest}[i] = v;`,
    '}',
  ];
}

/** Stage A[BM x 32] into workgroup memory, coalesced by word; past-edge rows stage 0 (inert in the dot). */
function stageA(spec: MmqSpec): string[] {
  const body = spec.indexed
    ? ['if (mrow0 + r < ecount) { v = xq[srow[r] * kw + k0w + w]; }']
    : spec.tails
      ? ['if (mrow0 + r < m) { v = xq[(mrow0 + r) * kw + k0w + w]; }']
      : ['v = xq[(mrow0 + r) * kw + k0w + w];'];
  return stageLoop(
    '// Stage A: the 32-block of BM activation rows, one u32 (4 int8) per store.',
    'BM',
    'r',
    body,
    'sa',
  );
}

/** Stage B[BN x 32]: Q8_0 int8 words, or Q4_K nibbles decoded in-kernel (weights stay 4.5-bit in memory). */
function stageB(spec: MmqSpec): string[] {
  const load = `v = ${weightWord(spec, wrow(spec, 'ncol0 + c'), 'w')};`;
  const body = spec.tails ? [`if (ncol0 + c < n) { ${load} }`] : [load];
  const what = spec.weights === 'q4k' ? ' as Q4_K nibbles (0..15), 4 per word' : '';
  return stageLoop(`// Stage B: the 32-block of BN weight rows${what}.`, 'BN', 'c', body, 'sb');
}

/** Per-32-block values the decode and epilogue need. */
function blockPrologue(spec: MmqSpec): string[] {
  const lines = ['let k0w = kb * 8u; // word offset of this 32-block within a row'];
  if (spec.weights === 'q4k') {
    lines.push(
      '// One 32-block == one Q4_K sub-block `is` of super-block `sbk`.',
      'let is = kb % 8u;',
      'let g = is / 2u;',
      'let sbk = kb / 8u;',
      'let nib_shift = 4u * (is % 2u);',
    );
  }
  return lines;
}

interface OwnedLoop {
  /** Apply the m/n tail guard (indexed kernels always guard on their expert's row count). */
  guarded: boolean;
  /** The body reads `arow` (the activation/output row; a slot-list lookup when indexed). */
  arow: boolean;
}

/**
 * Loop over the output elements this lane owns: for each of its rm x rn subtiles, PER elements
 * p = lane*PER + e at (row p/16, col p%16) -- the seed's partition, divided by the plane width.
 * `body` sees sub, p, gmm, gnn (tile-local), ncol (global column) and, when asked, arow.
 */
function forOwned(spec: MmqSpec, body: string[], o: OwnedLoop): string[] {
  const inner: string[] = [
    'let p = lane * PER + e;',
    'let gmm = sm * 16u + p / 16u;',
    'let gnn = sn * 16u + p % 16u;',
    'let ncol = ncol0 + gnn;',
  ];
  if (spec.indexed) {
    const rowBody = o.arow ? ['let arow = srow[gmm];', ...body] : body;
    if (o.guarded) inner.push('if (mrow0 + gmm < ecount && ncol < n) {', ...ind(rowBody), '}');
    else inner.push(...rowBody);
  } else {
    if (o.arow) inner.push('let arow = mrow0 + gmm;');
    if (o.guarded) inner.push(`if (${o.arow ? 'arow' : 'mrow0 + gmm'} < m && ncol < n) {`, ...ind(body), '}');
    else inner.push(...body);
  }
  const sub =
    spec.accumulator === 'register' || spec.arm === 'subgroup-matrix' ? ['    let sub = im * RN + jn;'] : [];
  return [
    'for (var im = 0u; im < RM; im++) {',
    '  for (var jn = 0u; jn < RN; jn++) {',
    '    let sm = warp_m * RM + im; // M-subtile of the block',
    '    let sn = warp_n * RN + jn; // N-subtile of the block',
    ...sub,
    '    for (var e = 0u; e < PER; e++) {',
    ...ind(inner, 3),
    '    }',
    '  }',
    '}',
  ];
}

const accRef = (spec: MmqSpec) =>
  spec.accumulator === 'register' ? 'acc[sub * PER + e]' : 'accf[gmm * BN + gnn]';

/**
 * The subgroup-matrix arm: per subtile, one i8 x i8 -> i32 16x16x32 product of the plane's 16 A rows
 * and 16 B rows, stored row-major into the plane's `ci` region (the fragment layout is opaque, so the
 * scale is applied after this shared round trip). Offsets/strides count u32 array elements.
 */
function matrixIsland(spec: MmqSpec): string[] {
  const shared = spec.operands === 'shared';
  const aLoad = shared
    ? 'subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&sa, sm * 16u * 8u, 8u)'
    : 'subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&xq, (mrow0 + sm * 16u) * kw + k0w, kw)';
  // B is stored [n][k]: as the K x N right operand that is column-major with one 32-byte column per row.
  const bLoad = shared
    ? 'subgroupMatrixLoad<subgroup_matrix_right<i8, 16, 32>, col_major>(&sb, sn * 16u * 8u, 8u)'
    : 'subgroupMatrixLoad<subgroup_matrix_right<i8, 16, 32>, col_major>(&wq, (ncol0 + sn * 16u) * kw + k0w, kw)';
  return [
    '// Contraction island, subgroup-matrix arm: the hardware int8 matrix core.',
    'for (var im = 0u; im < RM; im++) {',
    '  for (var jn = 0u; jn < RN; jn++) {',
    '    let sm = warp_m * RM + im;',
    '    let sn = warp_n * RN + jn;',
    `    let a = ${aLoad};`,
    `    let b = ${bLoad};`,
    '    let c = subgroupMatrixMultiply<i32>(a, b);',
    '    subgroupMatrixStore<row_major>(&ci, (warp * RM * RN + im * RN + jn) * 256u, c, 16u);',
    '  }',
    '}',
    'workgroupBarrier();',
  ];
}

/** The scalar arms' contraction of one owned element: isum over the 8 words of the 32-block. */
function scalarIsland(spec: MmqSpec): string[] {
  const a = spec.operands === 'shared' ? 'sa[gmm * 8u + w]' : 'xq[arow * kw + k0w + w]';
  const b = spec.operands === 'shared' ? 'sb[gnn * 8u + w]' : weightWord(spec, wrow(spec, 'ncol'), 'w');
  const dot = spec.arm === 'dp4a' ? 'dot4I8Packed' : 'dot_i8';
  return [
    `// Contraction island, ${spec.arm} arm: exact int8 dot of the 32-block.`,
    'var isum = 0i;',
    `for (var w = 0u; w < 8u; w++) { isum += ${dot}(${a}, ${b}); }`,
  ];
}

/** The scale epilogue of one owned element: symmetric (Q8_0) or affine (Q4_K), the oracle's f32 order. */
function epilogue(spec: MmqSpec): string[] {
  const acc = accRef(spec);
  const isum = spec.arm === 'subgroup-matrix' ? ['let isum = ci[(warp * RM * RN + sub) * 256u + p];'] : [];
  if (spec.weights === 'q8_0') {
    return [
      ...isum,
      'let xsc = xs[arow * kbc + kb];',
      `let wscale = wd[${wrow(spec, 'ncol')} * kbc + kb];`,
      `${acc} += no_fuse(f32(isum) * xsc * wscale);`,
    ];
  }
  return [
    ...isum,
    `let blk = ${wrow(spec, 'ncol')} * nsb + sbk;`,
    'let wsb = wd_dmin[blk]; // (d, dmin) of the super-block',
    'let wdd = wsb.x * f32(q4k_sc(blk * 3u, is)); // D = d * sc',
    'let wmm = wsb.y * f32(q4k_m(blk * 3u, is)); // M = dmin * m',
    'let xsx = xs_xsum[arow * kbc + kb];',
    'let xsc = xsx.x;',
    'let xsm = xsx.y;',
    '// xs folds into the dot; xsum already carries xs, so the offset needs no outer xs.',
    `${acc} += no_fuse(xsc * wdd * f32(isum)) - no_fuse(wmm * xsm);`,
  ];
}

/** One output tile: accumulator, the K loop (stage, island, epilogue), the store. */
function tileBody(spec: MmqSpec): string[] {
  const shared = spec.operands === 'shared';
  const matrix = spec.arm === 'subgroup-matrix';
  const lines: string[] = [];
  if (spec.accumulator === 'register') {
    lines.push('// f32 output held in registers across the K loop: RM*RN subtiles, PER elements each.');
    lines.push('var acc = array<f32, RM * RN * PER>();');
  } else {
    // Zeroed in the owner mapping itself, so no barrier is needed before the first accumulation.
    lines.push(...forOwned(spec, [`${accRef(spec)} = 0.0;`], { guarded: false, arow: false }));
  }
  const kloop: string[] = [...blockPrologue(spec)];
  if (shared) kloop.push(...stageA(spec), ...stageB(spec), 'workgroupBarrier();');
  if (matrix) kloop.push(...matrixIsland(spec));
  kloop.push(
    "// Epilogue: the per-block scale, applied by each element's owner lane.",
    ...forOwned(spec, [...(matrix ? [] : scalarIsland(spec)), ...epilogue(spec)], {
      guarded: spec.tails,
      arow: true,
    }),
  );
  // The next block re-stages sa/sb (and re-stores ci): nobody may run ahead while a peer still reads them.
  if (shared || matrix) kloop.push('workgroupBarrier();');
  lines.push('for (var kb = 0u; kb < kbc; kb++) {', ...ind(kloop), '}');
  lines.push(
    '// Store: every output element exactly once, by its owner lane.',
    ...forOwned(spec, [`store_out(arow * n + ncol, ${accRef(spec)});`], { guarded: spec.tails, arow: true }),
  );
  return lines;
}

/**
 * Both schedules' first lines: which plane (warp) and lane this invocation is, its workgroup's place in
 * the grid slice, and the ownership record. Matrix operands must be subgroup-uniform: the hardware
 * subgroup id is, tid / PLANE is not provably so. The lane is then the subgroup invocation, so the
 * fragment store and the epilogue that reads it back agree by construction (plane = subgroup size).
 */
function planePrologue(matrix: boolean): string[] {
  return [
    ...(matrix
      ? ['let warp = sg_id; // plane index (one plane per warp-grid cell)', 'let lane = sg_lane;']
      : ['let warp = tid / PLANE; // plane index (one plane per warp-grid cell)', 'let lane = tid % PLANE;']),
    ...gridSliceLets('wid', 'nwg'),
    'let warp_m = warp / WN;',
    'let warp_n = warp % WN;',
    'set_owner(wid.x + wid.y * nwg.x + wid.z * nwg.x * nwg.y, warp, lane);',
    SET_NOFUSE_ZERO,
  ];
}

function mainFn(spec: MmqSpec, g: MmqGeometry): string[] {
  const rt = spec.dims.kind === 'runtime';
  const matrix = spec.arm === 'subgroup-matrix';
  const lines: string[] = [
    ...planePrologue(matrix),
    // m is the dense row count; an indexed kernel bounds rows by its expert's count instead.
    ...(spec.indexed ? [] : [`let m = ${rt ? 'dims.m' : 'M'};`]),
    `let n = ${rt ? 'dims.n' : 'N'};`,
    `let k = ${rt ? 'dims.k' : 'K'};`,
    'let kbc = k / 32u; // 32-blocks per row',
    'let kw = k / 4u; // words per int8 row',
  ];
  if (spec.weights === 'q4k') lines.push('let nsb = k / 256u; // Q4_K super-blocks per row');
  lines.push('let ncol0 = wid.x * BN;');
  if (!spec.indexed) {
    lines.push('let mrow0 = wid.y * BM;', ...tileBody(spec));
  } else {
    lines.push(
      'let expert = wid.z;',
      // routing = counts [experts] then the slot lists [experts * cap]; the grid has one z per expert.
      'let ecount = routing[expert];',
      'let cap = dims.cap;',
      'let rows0 = nwg.z; // first slot-list word: the lists follow the per-expert counts',
      "let wbase = expert * n; // this expert's first weight row in the [E, n, k] bank",
      "// Grid-stride over this expert's row tiles: grid.y is a throughput choice, any value >= 1 covers",
      '// every row. (expert, mtile, ecount) are workgroup-uniform, so the barriers below never diverge.',
      'for (var mtile = wid.y; mtile * BM < ecount; mtile += nwg.y) {',
      '  let mrow0 = mtile * BM;',
      "  // The tile's slot indices, staged once: every k-block re-reads them.",
      '  for (var r = tid; r < BM; r += NTHREAD) {',
      '    var s = 0u;',
      '    if (mrow0 + r < ecount) { s = routing[rows0 + expert * cap + mrow0 + r]; }',
      '    srow[r] = s;',
      '  }',
      '  workgroupBarrier();',
      ...ind(tileBody(spec)),
      '  // The next tile re-stages srow, which the store above reads.',
      '  workgroupBarrier();',
      '}',
    );
  }
  return [
    `@compute @workgroup_size(${g.nthread})`,
    'fn main(',
    '  @builtin(local_invocation_index) tid: u32,',
    `  ${GRID_SLICE_PARAM},`,
    ...(matrix
      ? ['  @builtin(subgroup_id) sg_id: u32,', '  @builtin(subgroup_invocation_id) sg_lane: u32,']
      : []),
    ') {',
    ...ind(lines),
    '}',
  ];
}

/**
 * Generate the WGSL of an MMQ kernel (without the ownership host suffix).
 * @example const code = mmqWgsl(mmqPresetSpec('mmq-q4k-rt', { arm: 'dp4a', plane: 32 })) + ownerSuffix({...})
 */
export function mmqWgsl(spec: MmqSpec): string {
  assertSpec(spec);
  const g = mmqGeometry(spec);
  if (spec.schedule === 'microtile') return microWgsl(spec, g);
  const sections: string[][] = [
    header(spec, g),
    constants(spec, g),
    bindingLines(spec),
    workgroupDecls(spec),
  ];
  sections.push(noFuseHelpers());
  if (spec.weights === 'q4k') sections.push(q4kHelpers());
  if (spec.arm === 'scalar') sections.push(scalarDotHelpers());
  sections.push(mainFn(spec, g));
  return sections.map((s) => s.join('\n')).join('\n\n') + '\n';
}

/** The micro-tile schedule's module: the shared header, bindings and helpers, its own stages and loop. */
function microWgsl(spec: MmqSpec, g: MmqGeometry): string {
  const mg = microGeometry(spec)!;
  const rt = spec.dims.kind === 'runtime';
  const matrix = spec.arm === 'subgroup-matrix';
  const main = [
    ...planePrologue(matrix),
    `m = ${rt ? 'dims.m' : 'M'};`,
    `n = ${rt ? 'dims.n' : 'N'};`,
    `let k = ${rt ? 'dims.k' : 'K'};`,
    'kv = k / 16u;',
    'kbc = k / 32u;',
    ...(spec.weights === 'q4k' ? ['nsb = k / 256u;'] : []),
    'ncol0 = wid.x * BN;',
    'mrow0 = wid.y * BM;',
    ...microBody(spec),
  ];
  const sections: string[][] = [
    header(spec, g),
    [...constants(spec, g), ...microConstants(spec, mg)],
    bindingLines(spec),
    microWorkgroupDecls(spec),
    noFuseHelpers(),
  ];
  if (spec.weights === 'q4k') sections.push(q4kHelpers());
  if (spec.arm === 'scalar') sections.push(scalarDotHelpers());
  sections.push(microHelpers(spec));
  sections.push([
    `@compute @workgroup_size(${g.nthread})`,
    `fn main(@builtin(local_invocation_index) tid: u32, ${GRID_SLICE_PARAM}${matrix ? ', @builtin(subgroup_id) sg_id: u32, @builtin(subgroup_invocation_id) sg_lane: u32' : ''}) {`,
    ...ind(main),
    '}',
  ]);
  return sections.map((x) => x.join('\n')).join('\n\n') + '\n';
}

/**
 * Build a kernel and its launch facts. Throws ShapeError for an impossible spec (adapter limits are
 * checked by the plan/family against AdapterCaps, not here).
 * @example
 *   const kern = buildMmqKernel(spec);
 *   pass = { wgsl: kern.wgsl + ownerSuffix({ instrument: false, outName: 'out', outType: 'f32', ownerBinding: kern.bindings.length }),
 *            entryPoint: kern.entryPoint, bindings: kern.bindings, workgroups: kern.workgroups(m, n), ... }
 */
export function buildMmqKernel(spec: MmqSpec): MmqKernel {
  const wgsl = mmqWgsl(spec);
  const geometry = mmqGeometry(spec);
  const bindings = bindingNames(mmqBindings(spec));
  return {
    spec,
    wgsl,
    entryPoint: 'main',
    bindings,
    outputBinding: bindings.indexOf('out'),
    workgroupSize: geometry.nthread,
    workgroups(m, n, extra) {
      const nx = Math.ceil(n / geometry.bn);
      if (spec.indexed) {
        if (!extra) throw new RangeError('an indexed (MoE) kernel needs { ytiles, experts } for its grid');
        return [nx, Math.max(1, extra.ytiles), extra.experts];
      }
      return [nx, Math.ceil(m / geometry.bm), 1];
    },
    workgroupBytes: mmqWorkgroupBytes(spec),
    geometry,
  };
}
