// Ownership instrumentation. Every generated kernel calls two hooks the WGSL itself does not define:
//   set_owner(wg: u32, plane: u32, lane: u32)   once at entry (linear workgroup id, logical plane, lane)
//   store_out(i: u32, v: <out type>)            for every store to the output
// and the host appends one of two suffixes AFTER the kernel text (so editor line numbers stay right):
// the plain one just stores; the instrumented one also records, per output element, how many times it
// was stored and by whom, into an `owner` debug buffer -- the ownership of the kernel that actually ran.

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
@group(0) @binding(${ownerBinding}) var<storage, read_write> owner_dbg: array<atomic<u32>>;
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
  const map: OwnershipMap = {
    rows,
    cols,
    count: new Uint32Array(len),
    workgroup: new Uint32Array(len),
    plane: new Uint32Array(len),
    lane: new Uint32Array(len),
  };
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
