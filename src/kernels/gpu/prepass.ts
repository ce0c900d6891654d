// Element-wise pre-passes: one invocation an item over a 2-D grid of workgroups, and several such bodies
// ("parts") run as one dispatch, each on its own whole workgroups. The coopmat split plan's weight and
// activation pre-passes and the MoE route's gather are parts. Here too: the f32 -> f16 fragment tiles a
// matrix GEMM loads its A from, and the in-order sum of split-K partial sums.
import {
  bindingDecls,
  bindingLayout,
  bindingNames,
  readOnly,
  readWrite,
  type BindingTable,
} from './bindings';

/** Workgroup size of the element-wise pre-passes, and the most workgroups they put on one grid row. */
export const PRE_PASS_WG = 256;
const PRE_PASS_MAX_X = 32768;

/** Grid of a pre-pass with one invocation per item: rows of up to 32768 workgroups, the rest on y. */
export function prePassGrid(items: number): [number, number, number] {
  const groups = Math.max(1, Math.ceil(items / PRE_PASS_WG));
  const gx = Math.min(groups, PRE_PASS_MAX_X);
  return [gx, Math.ceil(groups / gx), 1];
}

/** A pre-pass ready for the plan: its kernel, grid and the buffers it writes. */
export interface SplitPrePass {
  wgsl: string;
  entryPoint: 'main';
  bindings: readonly string[];
  workgroupSize: number;
  grid: [number, number, number];
  /** The buffers the pass writes and their bytes (including the slack): the plan allocates them. */
  writes: readonly { name: string; bytes: number }[];
}

/**
 * One pre-pass body: its binding table, its declarations around the table's (which the kernel numbers
 * after the parts before it), the function `${fn}(t)` doing item t, the number of items and the buffer
 * it writes.
 */
export interface PrePassPart {
  bindings: BindingTable;
  decls: (bindings: string) => string;
  fn: string;
  items: number;
  out: { name: string; bytes: number };
  /** Lines at the top of main, before any part runs (they may read num_workgroups as `nwg`). */
  head?: string;
}

/**
 * A pre-pass module (its first line `// ${title}`, K = k) running `parts` one after another over one grid: part i takes the invocations after
 * part i - 1's, rounded up to whole workgroups so each workgroup runs one part (a uniform branch).
 */
export function prePassKernel(k: number, title: string, parts: readonly PrePassPart[]): SplitPrePass {
  const layout = bindingLayout(...parts.map((p) => p.bindings));
  let first = 0;
  const decls = parts.map((p, i) => p.decls(layout.decls[i]!));
  const calls: string[] = [];
  for (const [i, part] of parts.entries()) {
    // Part 0 starts at invocation 0, so it needs no lower bound.
    calls.push(
      i === 0
        ? `  if (t < ${part.items}u) { ${part.fn}(t); }`
        : `  if (t >= ${first}u && t < ${first + part.items}u) { ${part.fn}(t - ${first}u); }`,
    );
    first += Math.ceil(part.items / PRE_PASS_WG) * PRE_PASS_WG;
  }
  const grid = prePassGrid(first);
  const head = parts.map((p) => p.head ?? '').join('');
  const wgsl = `// ${title}
const K = ${k}u;
${decls.join('\n')}
@compute @workgroup_size(${PRE_PASS_WG})
fn main(@builtin(global_invocation_id) gid: vec3u${head ? ', @builtin(num_workgroups) nwg: vec3u' : ''}) {
${head}  let t = gid.y * ${grid[0] * PRE_PASS_WG}u + gid.x;
${calls.join('\n')}
}
`;
  return {
    wgsl,
    entryPoint: 'main',
    bindings: layout.names,
    workgroupSize: PRE_PASS_WG,
    grid,
    writes: parts.map((p) => p.out),
  };
}

/**
 * WGSL fn `name(t)`: item t (8 halves, one vec4u) of the f16 fragment tiles xt [rows/16][K/16][16][16] from
 * row `src` of x (zero unless `live`), after the `head` lines (which may return, or define `src`): the
 * activation pre-pass, and a caller's gather. Consecutive items (a subgroup's 16-byte stores) are
 * contiguous, and one 16x16 tile is 512 contiguous bytes, what lets a GEMM load a fragment straight from it.
 */
export const f16TileItem = (name: string, head: string, src: string, live: string) => `fn ${name}(t: u32) {
  let tile = t / 32u; // 32 items = one 16x16 tile [16 rows][16 K]
  let row = (tile / (K / 16u)) * 16u + (t % 32u) / 2u;
  let col = (tile % (K / 16u)) * 16u + (t % 2u) * 8u;
${head}  var a = vec4f(0.0);
  var b = vec4f(0.0);
  if (${live}) {
    a = x[(${src} * K + col) / 4u];
    b = x[(${src} * K + col) / 4u + 1u];
  }
  xt[t] = vec4u(pack2x16float(a.xy), pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));
}
`;

/** Index of element (row, col) of a [rows, k] matrix in 16x16 fragment tiles [rows/16][k/16][16][16] (xt). */
export const fragmentTileIndex = (row: number, col: number, k: number): number =>
  ((((row >> 4) * (k >> 4) + (col >> 4)) * 16 + (row & 15)) << 4) + (col & 15);

/**
 * The activation pre-pass: x [m, k] (f32) rounded to f16 into 16x16 fragment tiles, xt[((p * K/16 + c) *
 * 16 + r) * 16 + kk] = x[16p + r, 16c + kk], rows m..mp-1 zero. One invocation per 8 halves.
 */
export function f16TilesPart(m: number, k: number, mp: number, slack: number): PrePassPart {
  const items = (mp * k) / 8;
  const decls = (
    bindings: string,
  ) => `// Activation: x [${m}, ${k}] rounded to f16 into 16x16 fragment tiles xt [${mp / 16}][${k / 16}][16][16]
// (rows ${m}..${mp - 1} zero).
const M = ${m}u;
${bindings}

${f16TileItem('activation_item', '', 'row', 'row < M')}`;
  return {
    bindings: {
      x: readOnly('array<vec4f>', '[M, K] row-major'),
      xt: readWrite('array<vec4u>', 'f16 tiles as pack2x16float pairs'),
    },
    decls,
    fn: 'activation_item',
    items,
    out: { name: 'xt', bytes: mp * k * 2 + slack },
  };
}

/**
 * Split-K's reduction: out = the `parts` partial sums [parts, mn] of each element added in z order (one
 * invocation an element), as an emulation of that order adds them.
 * @example partSumsPass(m * n, 4, 'coopmat-f16').bindings // ['part', 'out']
 */
export function partSumsPass(mn: number, parts: number, what: string): SplitPrePass {
  const grid = prePassGrid(mn);
  const bindings = {
    part: readOnly('array<f32>', '[KSPLIT, M, N] partial sums'),
    out: readWrite('array<f32>', '[M, N]'),
  };
  return {
    wgsl: `// ${what} split-K reduction: out = part[0] + part[1] + ... + part[${parts - 1}], in that order.
const MN = ${mn}u;
${bindingDecls(bindings)}

@compute @workgroup_size(${PRE_PASS_WG})
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.y * ${grid[0] * PRE_PASS_WG}u + gid.x;
  if (i < MN) {
    var s = part[i];
    for (var z = 1u; z < ${parts}u; z++) { s += part[z * MN + i]; }
    out[i] = s;
  }
}
`,
    entryPoint: 'main',
    bindings: bindingNames(bindings),
    workgroupSize: PRE_PASS_WG,
    grid,
    writes: [{ name: 'out', bytes: mn * 4 }],
  };
}
