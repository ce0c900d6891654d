// Bindings declared once, by key (TypeGPU's bindGroupLayout; tinygrad numbers its buffers by iterating
// them): a kernel module's table `{ name: { storage, access } }` gives both its WGSL declarations, their
// @binding index taken from the entry's place in the table, and the host's bind-group order, the plan
// buffer names a pass lists. No index is written by hand on either side, so the two cannot drift.

/** A storage buffer: its WGSL type and access. */
export interface StorageEntry {
  storage: string;
  access: 'read' | 'read_write';
  /** What it holds, after the declaration (`// ...`). */
  comment?: string;
  /** The plan's buffer bound here, when it is not named as the WGSL variable (e.g. `out` bound as `part`). */
  buffer?: string;
  /** Lines declared just above it (a comment, the struct a uniform uses). */
  before?: string;
}

/** A uniform: its WGSL type. */
export interface UniformEntry {
  uniform: string;
  comment?: string;
  buffer?: string;
  before?: string;
}

export type BindingEntry = StorageEntry | UniformEntry;

/** A kernel module's bindings, keyed by WGSL variable name, in @binding order. */
export type BindingTable = Readonly<Record<string, BindingEntry>>;

/**
 * A read-only storage entry.
 * @example const table = { x: readOnly('array<vec4f>', 'activation [M, K]') };
 */
export const readOnly = (storage: string, comment?: string): StorageEntry => ({
  storage,
  access: 'read',
  ...(comment !== undefined ? { comment } : {}),
});

/**
 * A read-write storage entry.
 * @example const table = { out: readWrite('array<f32>', '[M, N]') };
 */
export const readWrite = (storage: string, comment?: string): StorageEntry => ({
  storage,
  access: 'read_write',
  ...(comment !== undefined ? { comment } : {}),
});

const declaration = (name: string, e: BindingEntry, index: number): string => {
  const v =
    'uniform' in e
      ? `var<uniform> ${name}: ${e.uniform};`
      : `var<storage, ${e.access}> ${name}: ${e.storage};`;
  const line = `@group(0) @binding(${index}) ${v}${e.comment !== undefined ? ` // ${e.comment}` : ''}`;
  return e.before !== undefined ? `${e.before}\n${line}` : line;
};

/**
 * The WGSL declarations of a table, one a line (no final newline), numbered in entry order from `first`
 * (the entries of tables bound before it: see bindingLayout).
 * @example bindingDecls({ x: readOnly('array<f32>') }) // '@group(0) @binding(0) var<storage, read> x: array<f32>;'
 */
export function bindingDecls(table: BindingTable, first = 0): string {
  return Object.entries(table)
    .map(([name, e], i) => declaration(name, e, first + i))
    .join('\n');
}

/**
 * The plan buffer names a pass binds, in @binding order: what the host's bind group is made of.
 * @example bindingNames({ x: readOnly('array<f32>'), out: { ...readWrite('array<f32>'), buffer: 'part' } }) // ['x', 'part']
 */
export function bindingNames(table: BindingTable): string[] {
  return Object.entries(table).map(([name, e]) => e.buffer ?? name);
}

/**
 * Several tables bound one after another in one group (parts of a module declared apart, e.g. a GEMM's
 * A operand before its constants and the rest after): each part's declarations numbered after the parts
 * before it, and every buffer name in @binding order.
 * @example const { decls: [a, rest], names } = bindingLayout({ xt }, { wh, out });
 */
export function bindingLayout(...tables: readonly BindingTable[]): { decls: string[]; names: string[] } {
  let first = 0;
  const decls = tables.map((t) => {
    const text = bindingDecls(t, first);
    first += Object.keys(t).length;
    return text;
  });
  return { decls, names: tables.flatMap(bindingNames) };
}
