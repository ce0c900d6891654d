// Ownership instrumentation. Every generated kernel calls two hooks the WGSL itself does not define:
//   set_owner(wg: u32, plane: u32, lane: u32)   once at entry (linear workgroup id, logical plane, lane)
//   store_out(i: u32, v: <out type>)            for every store to the output
// and the host appends one of two suffixes AFTER the kernel text (so editor line numbers stay right):
// the plain one just stores; the instrumented one also records, per output element, how many times it
// was stored and by whom, into an `owner` debug buffer -- the ownership of the kernel that actually ran.
import { bindingDecls, readWrite } from './bindings';
import { kernelPass, type BufferSpec, type KernelLaunch, type PassSpec } from './plan';

export const OWNER_WORDS = 3; // per output element: [store count, workgroup, (plane << 16) | lane]

/**
 * The suffix that defines the hooks. `outName` is the kernel's output array; `ownerBinding` is the
 * binding index to give the debug buffer (one past the kernel's last binding).
 * @example kernelCode + ownerSuffix({ instrument: true, outName: 'out', outType: 'f32', ownerBinding: 9 })
 */
export function ownerSuffix(opts: {
  instrument: boolean;
  outName: string;
  outType: 'f32' | 'i32' | 'u32';
  ownerBinding: number;
}): string {
  const { instrument, outName, outType, ownerBinding } = opts;
  if (!instrument) {
    return `
// ---- host suffix (not editable): plain output store ----
fn set_owner(wg: u32, plane: u32, lane: u32) {}
fn store_out(i: u32, v: ${outType}) { ${outName}[i] = v; }
`;
  }
  return `
// ---- host suffix (not editable): ownership-recording output store ----
${bindingDecls({ owner_dbg: readWrite('array<atomic<u32>>') }, ownerBinding)}
var<private> owner_id: vec3u;
fn set_owner(wg: u32, plane: u32, lane: u32) { owner_id = vec3u(wg, plane, lane); }
fn store_out(i: u32, v: ${outType}) {
  ${outName}[i] = v;
  atomicAdd(&owner_dbg[i * 3u], 1u);
  atomicStore(&owner_dbg[i * 3u + 1u], owner_id.x);
  atomicStore(&owner_dbg[i * 3u + 2u], (owner_id.y << 16u) | owner_id.z);
}
`;
}

export interface OwnershipMap {
  rows: number;
  cols: number;
  /** Times each element was stored (0 = never, >1 = stored twice: both are bugs). */
  count: Uint32Array;
  workgroup: Uint32Array;
  plane: Uint32Array;
  lane: Uint32Array;
}

/** Decode the owner debug buffer of a rows x cols output. */
export function decodeOwnership(raw: ArrayBuffer, rows: number, cols: number): OwnershipMap {
  const w = new Uint32Array(raw);
  const len = rows * cols;
  const map = emptyOwnership(rows, cols);
  for (let i = 0; i < len; i++) {
    map.count[i] = w[i * 3]!;
    map.workgroup[i] = w[i * 3 + 1]!;
    map.plane[i] = w[i * 3 + 2]! >>> 16;
    map.lane[i] = w[i * 3 + 2]! & 0xffff;
  }
  return map;
}

/** An empty ownership map to fill analytically. */
export function emptyOwnership(rows: number, cols: number): OwnershipMap {
  const len = rows * cols;
  return {
    rows,
    cols,
    count: new Uint32Array(len),
    workgroup: new Uint32Array(len),
    plane: new Uint32Array(len),
    lane: new Uint32Array(len),
  };
}

/** The first line every host suffix starts with (after its leading newline). */
export const HOST_SUFFIX_MARKER = '// ---- host suffix (not editable)';

/**
 * Split a pass's full WGSL into the editable kernel text and the host suffix `ownerSuffix` appended.
 * The suffix keeps its leading newline, so `kernel + suffix` is the original code again.
 * @example splitHostSuffix(code + ownerSuffix({ instrument: false, outName: 'out', outType: 'f32', ownerBinding: 4 })).kernel === code
 */
export function splitHostSuffix(code: string): { kernel: string; suffix: string } {
  const at = code.lastIndexOf(`\n${HOST_SUFFIX_MARKER}`);
  if (at < 0) return { kernel: code, suffix: '' };
  return { kernel: code.slice(0, at), suffix: code.slice(at) };
}

/**
 * Elements where two ownership maps name a different (workgroup, plane, lane) -- and, with
 * `counts: true`, a different store count. Maps of different shapes differ everywhere.
 * @example ownershipDiff(decodeOwnership(raw, m, n), analytic, { counts: true }) // 0 = the same owners
 */
export function ownershipDiff(a: OwnershipMap, b: OwnershipMap, opts: { counts?: boolean } = {}): number {
  if (a.rows !== b.rows || a.cols !== b.cols) return a.rows * a.cols;
  const counts = opts.counts ?? false;
  let n = 0;
  for (let i = 0; i < a.count.length; i++) {
    if (
      (counts && a.count[i] !== b.count[i]) ||
      a.workgroup[i] !== b.workgroup[i] ||
      a.plane[i] !== b.plane[i] ||
      a.lane[i] !== b.lane[i]
    )
      n++;
  }
  return n;
}

/**
 * The owner debug buffer an instrumented plan adds for an output of `elements` values.
 * @example if (instrument) buffers.push(ownerBufferSpec(m * n))
 */
export function ownerBufferSpec(elements: number, name = 'owner'): BufferSpec {
  return { name, kind: 'storage', size: elements * OWNER_WORDS * 4 };
}

/**
 * The pass of a kernel whose text still lacks the host suffix: appends ownerSuffix (plain, or
 * recording into `ownerBuffer`, bound after the kernel's own bindings, when `instrument`).
 * @example suffixedPass(kern, kern.workgroups(m, n), 'mmq q4k', { instrument: true })
 */
export function suffixedPass(
  kern: KernelLaunch,
  workgroups: readonly [number, number, number],
  label: string,
  opts: { instrument?: boolean; ownerBuffer?: string; outType?: 'f32' | 'i32' | 'u32' } = {},
): PassSpec {
  const instrument = opts.instrument ?? false;
  const suffix = ownerSuffix({
    instrument,
    outName: 'out',
    outType: opts.outType ?? 'f32',
    ownerBinding: kern.bindings.length,
  });
  const bindings = instrument ? [...kern.bindings, opts.ownerBuffer ?? 'owner'] : kern.bindings;
  return kernelPass({ ...kern, wgsl: kern.wgsl + suffix, bindings }, workgroups, label);
}
