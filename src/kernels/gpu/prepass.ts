// Element-wise pre-passes: one invocation an item over a 2-D grid of workgroups, and several such bodies
// ("parts") run as one dispatch, each on its own whole workgroups. The coopmat split plan's weight and
// activation pre-passes and the MoE route's gather are parts.

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
 * One pre-pass body: its declarations (from binding `at` on), the function `${fn}(t)` doing item t, the
 * number of items, its buffers in binding order and the buffer it writes.
 */
export interface PrePassPart {
  decls: (at: number) => string;
  fn: string;
  items: number;
  bindings: readonly string[];
  out: { name: string; bytes: number };
}

/**
 * A pre-pass module (its first line `// ${title}`, K = k) running `parts` one after another over one grid: part i takes the invocations after
 * part i - 1's, rounded up to whole workgroups so each workgroup runs one part (a uniform branch).
 */
export function prePassKernel(k: number, title: string, parts: readonly PrePassPart[]): SplitPrePass {
  let at = 0;
  let first = 0;
  const decls: string[] = [];
  const calls: string[] = [];
  for (const [i, part] of parts.entries()) {
    decls.push(part.decls(at));
    at += part.bindings.length;
    // Part 0 starts at invocation 0, so it needs no lower bound.
    calls.push(
      i === 0
        ? `  if (t < ${part.items}u) { ${part.fn}(t); }`
        : `  if (t >= ${first}u && t < ${first + part.items}u) { ${part.fn}(t - ${first}u); }`,
    );
    first += Math.ceil(part.items / PRE_PASS_WG) * PRE_PASS_WG;
  }
  const grid = prePassGrid(first);
  const wgsl = `// ${title}
const K = ${k}u;
${decls.join('\n')}
@compute @workgroup_size(${PRE_PASS_WG})
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let t = gid.y * ${grid[0] * PRE_PASS_WG}u + gid.x;
${calls.join('\n')}
}
`;
  return {
    wgsl,
    entryPoint: 'main',
    bindings: parts.flatMap((p) => p.bindings),
    workgroupSize: PRE_PASS_WG,
    grid,
    writes: parts.map((p) => p.out),
  };
}
