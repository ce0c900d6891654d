// The micro-tile schedule of the MMQ generator: the same math as the seed's kernels (per 32-block exact
// int8 dots, the f32 epilogue in the oracle's order, each product rounded on its own), scheduled for
// speed. Each lane owns a TM x TN micro-tile of its plane's rm*16 x rn*16 warp tile (rows lr + LR*i,
// columns lc + LC*j), so a k-word loaded once from workgroup memory feeds TM*TN dot products and the
// f32 accumulator stays in registers across K. K is staged 64 at a time (two 32-blocks: one Q4_K qs
// word holds a low nibble of sub-block 2g and a high nibble of 2g+1) into two workgroup buffers: the
// next stage's global loads are in flight in registers while this one is computed, and one barrier a
// stage serves both of its blocks. The per-block scales (xs, xsum for rows; D = d*sc and M = dmin*m
// for columns) are staged once a stage, decoded by one thread each, not per element.
import type { Arm } from '../gpu/caps';
import type { TileParams } from '../tile';
import type { MmqWeights } from './catalog';

/** What the schedule reads of an MmqSpec (./mmq.wgsl.ts), which imports this module. */
interface MmqSpec {
  weights: MmqWeights;
  arm: Arm;
  tails: boolean;
  tile: TileParams;
  plane: number;
}

/** How a plane's lanes tile its rm*16 x rn*16 warp tile. */
export interface MicroGeometry {
  /** Lane grid: LR rows x LC columns of lanes (LR * LC = plane). */
  lr: number;
  lc: number;
  /** Each lane's micro-tile: TM rows x TN columns. */
  tm: number;
  tn: number;
}

/** vec4 words per staged row: 4 (a 64-wide stage of int8) plus 1 of padding, so rows start in other banks. */
export const MICRO_ROW_VEC4 = 5;

/**
 * The lane grid of a spec: LR x LC lanes with LR * LC = plane, LR dividing rm*16 and LC dividing rn*16,
 * the one with the fewest operand loads per k-word (TM + TN), ties to more lanes across (coalesced
 * stores). Undefined when the plane cannot tile the warp tile.
 * @example microGeometry({ tile: { wm: 2, wn: 2, rm: 2, rn: 2 }, plane: 32 }) // { lr: 4, lc: 8, tm: 8, tn: 4 }
 */
export function microGeometry(spec: Pick<MmqSpec, 'tile' | 'plane'>): MicroGeometry | undefined {
  const rows = spec.tile.rm * 16;
  const cols = spec.tile.rn * 16;
  let best: MicroGeometry | undefined;
  for (let lr = 1; lr <= spec.plane; lr *= 2) {
    const lc = spec.plane / lr;
    if (!Number.isInteger(lc) || rows % lr !== 0 || cols % lc !== 0) continue;
    const g = { lr, lc, tm: rows / lr, tn: cols / lc };
    if (!best || g.tm + g.tn < best.tm + best.tn) best = g;
  }
  return best;
}

/** Workgroup memory of the micro-tile schedule, bytes: two stages of A and B rows, and their scales. */
export function microWorkgroupBytes(g: { bm: number; bn: number }, arm?: Arm): number {
  const operands = 2 * (g.bm + g.bn) * MICRO_ROW_VEC4 * 16;
  const scales = 2 * (g.bm + g.bn) * 2 * 8;
  const fragments = arm === 'subgroup-matrix' ? g.bm * g.bn * 4 : 0;
  return operands + scales + fragments;
}

const ind = (lines: readonly string[], depth = 1) => lines.map((l) => `${'  '.repeat(depth)}${l}`);

/** Per-thread items of a staging loop over `count` items. */
const itemsOf = (count: string) => `(${count} + NTHREAD - 1u) / NTHREAD`;

/** The constants of the schedule. */
export function microConstants(spec: MmqSpec, mg: MicroGeometry): string[] {
  const q4k = spec.weights === 'q4k';
  return [
    `const LR: u32 = ${mg.lr}u; // lane grid rows of a warp tile`,
    `const LC: u32 = ${mg.lc}u; // lane grid columns`,
    `const TM: u32 = ${mg.tm}u; // rows of a lane's micro-tile (lr + LR*i)`,
    `const TN: u32 = ${mg.tn}u; // columns of a lane's micro-tile (lc + LC*j)`,
    `const SV: u32 = ${MICRO_ROW_VEC4}u; // vec4 per staged row: 4 of one 64-wide stage + 1 of padding`,
    `const B_VEC: u32 = ${q4k ? 2 : 4}u; // global vec4 loads per weight row a stage (${q4k ? 'Q4_K: 8 qs words, two sub-blocks' : 'Q8_0: 16 int8 words'})`,
    `const A_ITEMS: u32 = ${itemsOf('BM * 4u')};`,
    `const B_ITEMS: u32 = ${itemsOf('BN * B_VEC')};`,
    `const X_ITEMS: u32 = ${itemsOf('BM * 2u')};`,
    `const W_ITEMS: u32 = ${itemsOf('BN * 2u')};`,
  ];
}

/** The workgroup arrays: two stages each (the matrix arm's as words its loads can stride, and its scratch). */
export function microWorkgroupDecls(spec: MmqSpec): string[] {
  const operands =
    spec.arm === 'subgroup-matrix'
      ? [
          'var<workgroup> sa: array<u32, 2u * BM * SV * 4u>; // A stages [2][BM][SV*4 words]: int8 x 64, 4 per word',
          'var<workgroup> sb: array<u32, 2u * BN * SV * 4u>; // B stages [2][BN][SV*4 words]: the same for weight rows',
          "var<workgroup> ci: array<i32, BM * BN>; // each plane's i32 fragments of one 32-block, its lanes' to scale",
        ]
      : [
          'var<workgroup> sa: array<vec4<u32>, 2u * BM * SV>; // A stages [2][BM][SV]: int8 x 64, 4 per word',
          'var<workgroup> sb: array<vec4<u32>, 2u * BN * SV>; // B stages [2][BN][SV]: the same for weight rows',
        ];
  return [
    ...operands,
    'var<workgroup> sx: array<vec2f, 2u * BM * 2u>; // row scales [2][BM][2 blocks]: (xs, xsum)',
    'var<workgroup> sw: array<vec2f, 2u * BN * 2u>; // column scales [2][BN][2 blocks]: (D, M) or (wd, 0)',
  ];
}

/** Global loads of stage `s` into the prefetch registers (past-edge rows load zeros). */
function loadStage(spec: MmqSpec): string[] {
  const q4k = spec.weights === 'q4k';
  const rowOk = spec.tails ? (r: string) => `mrow0 + ${r} < m` : () => 'true';
  const colOk = spec.tails ? (c: string) => `ncol0 + ${c} < n` : () => 'true';
  const guard = (ok: string, body: string[]) => (ok === 'true' ? body : [`if (${ok}) {`, ...ind(body), '}']);
  const bLoad = q4k
    ? 'pb[t] = wqs4[((ncol0 + c) * nsb + s / 4u) * 8u + (s % 4u) * 2u + h];'
    : 'pb[t] = wq4[(ncol0 + c) * kv + 4u * s + h];';
  const wScale = q4k
    ? [
        'let blk = (ncol0 + c) * nsb + s / 4u;',
        'let is = (s % 4u) * 2u + b; // the Q4_K sub-block of this 32-block',
        'let wsb = wd_dmin[blk];',
        'pw[t] = vec2f(wsb.x * f32(q4k_sc(blk * 3u, is)), wsb.y * f32(q4k_m(blk * 3u, is)));',
      ]
    : ['pw[t] = vec2f(wd[(ncol0 + c) * kbc + 2u * s + b], 0.0);'];
  const xScale = q4k
    ? 'px[t] = xs_xsum[(mrow0 + r) * kbc + 2u * s + b];'
    : 'px[t] = vec2f(xs[(mrow0 + r) * kbc + 2u * s + b], 0.0);';
  return [
    'fn load_stage(s: u32, tid: u32) {',
    ...ind([
      'for (var t = 0u; t < A_ITEMS; t++) {',
      '  let i = tid + t * NTHREAD;',
      '  let r = i / 4u;',
      '  pa[t] = vec4<u32>(0u);',
      ...ind(guard(`i < BM * 4u && ${rowOk('r')}`, ['pa[t] = xq4[(mrow0 + r) * kv + 4u * s + i % 4u];'])),
      '}',
      'for (var t = 0u; t < B_ITEMS; t++) {',
      '  let i = tid + t * NTHREAD;',
      '  let c = i / B_VEC;',
      '  let h = i % B_VEC;',
      '  pb[t] = vec4<u32>(0u);',
      ...ind(guard(`i < BN * B_VEC && ${colOk('c')}`, [bLoad])),
      '}',
      'for (var t = 0u; t < X_ITEMS; t++) {',
      '  let i = tid + t * NTHREAD;',
      '  let r = i / 2u;',
      '  let b = i % 2u;',
      '  px[t] = vec2f(0.0);',
      ...ind(guard(`i < BM * 2u && ${rowOk('r')}`, [xScale])),
      '}',
      'for (var t = 0u; t < W_ITEMS; t++) {',
      '  let i = tid + t * NTHREAD;',
      '  let c = i / 2u;',
      '  let b = i % 2u;',
      '  pw[t] = vec2f(0.0);',
      ...ind(guard(`i < BN * 2u && ${colOk('c')}`, wScale)),
      '}',
    ]),
    '}',
  ];
}

/** The prefetch registers into workgroup buffer `buf` (Q4_K words split into their two sub-blocks). */
function storeStage(spec: MmqSpec): string[] {
  const q4k = spec.weights === 'q4k';
  const bStore = q4k
    ? [
        '// One qs word: the low nibbles are sub-block 2g (block 0), the high ones 2g+1 (block 1).',
        'put_b((buf * BN + c) * SV + h, pb[t] & vec4<u32>(0x0f0f0f0fu));',
        'put_b((buf * BN + c) * SV + 2u + h, (pb[t] >> vec4<u32>(4u)) & vec4<u32>(0x0f0f0f0fu));',
      ]
    : ['put_b((buf * BN + c) * SV + h, pb[t]);'];
  // The matrix arm keeps its stages as words (subgroupMatrixLoad strides over u32 elements).
  const put = (name: string, arr: string) =>
    spec.arm === 'subgroup-matrix'
      ? [
          `fn ${name}(at: u32, v: vec4<u32>) {`,
          `  ${arr}[4u * at] = v.x;`,
          `  ${arr}[4u * at + 1u] = v.y;`,
          `  ${arr}[4u * at + 2u] = v.z;`,
          `  ${arr}[4u * at + 3u] = v.w;`,
          '}',
        ]
      : [`fn ${name}(at: u32, v: vec4<u32>) { ${arr}[at] = v; }`];
  return [
    '// Stores into the stages, by vec4 index.',
    ...put('put_a', 'sa'),
    ...put('put_b', 'sb'),
    '',
    'fn store_stage(buf: u32, tid: u32) {',
    ...ind([
      'for (var t = 0u; t < A_ITEMS; t++) {',
      '  let i = tid + t * NTHREAD;',
      '  if (i < BM * 4u) { put_a((buf * BM + i / 4u) * SV + i % 4u, pa[t]); }',
      '}',
      'for (var t = 0u; t < B_ITEMS; t++) {',
      '  let i = tid + t * NTHREAD;',
      '  let c = i / B_VEC;',
      '  let h = i % B_VEC;',
      `  if (i < BN * B_VEC) {`,
      ...ind(bStore, 2),
      '  }',
      '}',
      'for (var t = 0u; t < X_ITEMS; t++) {',
      '  let i = tid + t * NTHREAD;',
      '  if (i < BM * 2u) { sx[buf * BM * 2u + i] = px[t]; }',
      '}',
      'for (var t = 0u; t < W_ITEMS; t++) {',
      '  let i = tid + t * NTHREAD;',
      '  if (i < BN * 2u) { sw[buf * BN * 2u + i] = pw[t]; }',
      '}',
    ]),
    '}',
  ];
}

/**
 * The contraction of one 32-block (`b` of the stage) into isum: the arm's int8 dot of each owned pair,
 * its 8 k-words in two halves of 4. The first half assigns, so isum needs no zeroing (SwiftShader's
 * compiler was seen not to re-zero an array declared inside the loop each iteration).
 */
function contractBlock(spec: MmqSpec): string[] {
  const dot = spec.arm === 'dp4a' ? 'dot4I8Packed' : 'dot_i8';
  const half = (h: number) => [
    `// k-words ${4 * h}..${4 * h + 3} of the block.`,
    'for (var i = 0u; i < TM; i++) {',
    `  av[i] = sa[(buf * BM + row0 + i * LR) * SV + 2u * b + ${h}u];`,
    '}',
    'for (var j = 0u; j < TN; j++) {',
    `  bv[j] = sb[(buf * BN + col0 + j * LC) * SV + 2u * b + ${h}u];`,
    '}',
    'for (var i = 0u; i < TM; i++) {',
    '  for (var j = 0u; j < TN; j++) {',
    '    let a = av[i];',
    '    let w = bv[j];',
    `    isum[i * TN + j] ${h === 0 ? '=' : '+='} ${dot}(a.x, w.x) + ${dot}(a.y, w.y) + ${dot}(a.z, w.z) + ${dot}(a.w, w.w);`,
    '  }',
    '}',
  ];
  return [...half(0), ...half(1)];
}

/** The per-block f32 epilogue of every owned element, in the oracle's order (no_fuse on each product). */
function epilogueBlock(spec: MmqSpec): string[] {
  const q4k = spec.weights === 'q4k';
  const update = q4k
    ? [
        '// xs folds into the dot; xsum already carries xs, so the offset needs no outer xs.',
        'acc[i * TN + j] += no_fuse(x.x * w.x * f32(isum[i * TN + j])) - no_fuse(w.y * x.y);',
      ]
    : ['acc[i * TN + j] += no_fuse(f32(isum[i * TN + j]) * x.x * w.x);'];
  return [
    'for (var i = 0u; i < TM; i++) {',
    '  let x = sx[(buf * BM + row0 + i * LR) * 2u + b];',
    '  for (var j = 0u; j < TN; j++) {',
    '    let w = sw[(buf * BN + col0 + j * LC) * 2u + b];',
    ...ind(update, 2),
    '  }',
    '}',
  ];
}

/**
 * The matrix arm's block: each plane's rm x rn i8 x i8 -> i32 16x16x32 products of the block into its
 * `ci` region (the fragment layout is opaque), a barrier, then each lane scales its PER elements of each
 * subtile (the seed's partition) into its register accumulator; before the next block overwrites `ci`,
 * another barrier (the stage's own barrier serves the stage's last block).
 */
function matrixBlock(spec: MmqSpec): string[] {
  const q4k = spec.weights === 'q4k';
  const update = q4k
    ? 'acc[sub * PER + e] += no_fuse(x.x * w.x * f32(isum)) - no_fuse(w.y * x.y);'
    : 'acc[sub * PER + e] += no_fuse(f32(isum) * x.x * w.x);';
  return [
    '// Contraction island, subgroup-matrix arm: the int8 matrix core, one product per subtile.',
    'for (var im = 0u; im < RM; im++) {',
    '  let a = subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&sa, (buf * BM + warp_m * RM * 16u + im * 16u) * SV * 4u + 8u * b, SV * 4u);',
    '  for (var jn = 0u; jn < RN; jn++) {',
    '    let w = subgroupMatrixLoad<subgroup_matrix_right<i8, 16, 32>, col_major>(&sb, (buf * BN + warp_n * RN * 16u + jn * 16u) * SV * 4u + 8u * b, SV * 4u);',
    '    subgroupMatrixStore<row_major>(&ci, (warp * RM * RN + im * RN + jn) * 256u, subgroupMatrixMultiply<i32>(a, w), 16u);',
    '  }',
    '}',
    'workgroupBarrier();',
    "// Epilogue: each lane's PER elements of each of its plane's subtiles, the oracle's f32 order.",
    'for (var im = 0u; im < RM; im++) {',
    '  for (var jn = 0u; jn < RN; jn++) {',
    '    let sub = im * RN + jn;',
    '    for (var e = 0u; e < PER; e++) {',
    '      let p = lane * PER + e;',
    '      let isum = ci[(warp * RM * RN + sub) * 256u + p];',
    '      let x = sx[(buf * BM + warp_m * RM * 16u + im * 16u + p / 16u) * 2u + b];',
    '      let w = sw[(buf * BN + warp_n * RN * 16u + jn * 16u + p % 16u) * 2u + b];',
    `      ${update}`,
    '    }',
    '  }',
    '}',
    '// The next block stores into ci again: every lane must have read this one.',
    'if (b == 0u) { workgroupBarrier(); }',
  ];
}

/** K staged 64 at a time through two buffers, `block` run for each of a stage's two 32-blocks. */
function stagedLoop(block: string[]): string[] {
  return [
    'let stages = k / 64u;',
    'load_stage(0u, tid);',
    'store_stage(0u, tid);',
    'workgroupBarrier();',
    'for (var s = 0u; s < stages; s++) {',
    ...ind([
      'let buf = s % 2u;',
      '// The next stage is fetched into registers while this one is computed.',
      'if (s + 1u < stages) { load_stage(s + 1u, tid); }',
      'for (var b = 0u; b < 2u; b++) {',
      ...ind(block),
      '}',
      '// The other buffer was last read before the previous barrier: it can take the next stage now.',
      'if (s + 1u < stages) { store_stage(1u - buf, tid); }',
      'workgroupBarrier();',
    ]),
    '}',
  ];
}

/** The matrix arm's staged K loop and store (the seed's lane partition, fragments through `ci`). */
function matrixBody(spec: MmqSpec): string[] {
  const guard = spec.tails ? 'arow < m && ncol < n' : 'true';
  return [
    'var acc: array<f32, RM * RN * PER>;',
    ...stagedLoop(matrixBlock(spec)),
    '// Store: every output element exactly once, by its owner lane.',
    'for (var im = 0u; im < RM; im++) {',
    '  for (var jn = 0u; jn < RN; jn++) {',
    '    for (var e = 0u; e < PER; e++) {',
    '      let p = lane * PER + e;',
    '      let arow = mrow0 + warp_m * RM * 16u + im * 16u + p / 16u;',
    '      let ncol = ncol0 + warp_n * RN * 16u + jn * 16u + p % 16u;',
    `      if (${guard}) { store_out(arow * n + ncol, acc[(im * RN + jn) * PER + e]); }`,
    '    }',
    '  }',
    '}',
  ];
}

/** The entry point's body after the shared prologue: the staged K loop and the store. */
export function microBody(spec: MmqSpec): string[] {
  if (spec.arm === 'subgroup-matrix') return matrixBody(spec);
  const rowOk = spec.tails ? ' && arow < m && ncol < n' : '';
  return [
    "let row0 = warp_m * RM * 16u + lane / LC; // this lane's first row in the block (then every LR)",
    'let col0 = warp_n * RN * 16u + lane % LC; // its first column (then every LC)',
    'var acc: array<f32, TM * TN>;',
    "var isum: array<i32, TM * TN>; // one 32-block's exact int8 sums",
    'var av: array<vec4<u32>, TM>; // four k-words of each owned row',
    'var bv: array<vec4<u32>, TN>; // and of each owned column',
    ...stagedLoop([...contractBlock(spec), ...epilogueBlock(spec)]),
    '// Store: every output element exactly once, by its owner lane.',
    'for (var i = 0u; i < TM; i++) {',
    '  for (var j = 0u; j < TN; j++) {',
    '    let arow = mrow0 + row0 + i * LR;',
    '    let ncol = ncol0 + col0 + j * LC;',
    `    if (true${rowOk}) { store_out(arow * n + ncol, acc[i * TN + j]); }`,
    '  }',
    '}',
  ];
}

/** The private prefetch registers and the stage functions (module scope: they read the bindings). */
export function microHelpers(spec: MmqSpec): string[] {
  return [
    'var<private> pa: array<vec4<u32>, A_ITEMS>; // next stage of A, in flight',
    'var<private> pb: array<vec4<u32>, B_ITEMS>; // next stage of B',
    'var<private> px: array<vec2f, X_ITEMS>; // its row scales',
    'var<private> pw: array<vec2f, W_ITEMS>; // its column scales',
    'var<private> mrow0: u32;',
    'var<private> ncol0: u32;',
    'var<private> m: u32;',
    'var<private> n: u32;',
    'var<private> kv: u32; // vec4 per int8 row (k / 16)',
    'var<private> kbc: u32; // 32-blocks per row',
    ...(spec.weights === 'q4k' ? ['var<private> nsb: u32; // Q4_K super-blocks per row'] : []),
    '',
    ...loadStage(spec),
    '',
    ...storeStage(spec),
  ];
}
