// The MoE family's f16 route: the routed GEMM on the coopmat split plan's structure. Passes:
//   moe route tiles    per expert (one workgroup each): its slots in ascending order, laid out in row
//                      tiles of BM after the tiles of the experts before it (a prefix sum over the
//                      expert histogram), into the routing table (routedTable)
//   pre-passes         the bank's weights to f16 (prepass stagings), and each row tile's slots gathered
//                      from x and rounded to f16 fragment tiles
//   the GEMM           coopmat's split or stream GEMM over (n tiles, row tiles) with the experts' row
//                      map (expertRowMap): a workgroup reads its tile's expert (exits past the tiles in
//                      use), takes B from that expert, and scatters each row to its slot. The scalar arm
//                      is the oracle-matching path, as in the dense twin.
import { gemmF32 } from '../oracle';
import { bindingDecls, bindingNames, readOnly, readWrite } from '../gpu/bindings';
import { emptyOwnership, ownerBufferSpec, type OwnershipMap } from '../gpu/instrument';
import { kernelPass, type BufferSpec, type KernelPlan } from '../gpu/plan';
import { f16TileItem, type PrePassPart } from '../gpu/prepass';
import { dequantizeQ4K, q4kRows } from '../quant';
import {
  buildCoopmatKernel,
  coopmatGeometry,
  coopmatInputBuffers,
  COOPMAT_OWNER_BUFFER,
  coopmatOwner,
  coopmatPrePasses,
  mmqQ4kF16RoundedRef,
  SPLIT_SLACK_BYTES,
  type CoopmatData,
  type CoopmatSpec,
  type DecodeRounding,
  type RowMap,
} from '../coopmat';
import type { MoeProblem } from './moe.plan';

/** A routing table's 'no slot' (rows past an expert's count) and 'no expert' (tiles past those in use). */
export const ROUTED_NONE = 0xffffffff;

/**
 * Word offsets in the routing table the grouping pass writes: [0] the row tiles in use, then the expert
 * of each row tile, then the slot of each row (NONE past an expert's count).
 */
export const routedTable = (tiles: number, bm: number) => ({
  count: 0,
  expertAt: 1,
  slotAt: 1 + tiles,
  words: 1 + tiles + tiles * bm,
});

/**
 * The experts' routing as the row map coopmat's GEMMs take: row tile wg.y multiplies the weight of
 * expert groups[1 + wg.y] (read uniformly, so the matrix loads stay uniform; workgroups past the tiles in
 * use exit), and row r of the tile goes to slot groups[SLOTS_AT + r].
 */
export function expertRowMap(experts: number, tiles: number, bm: number): RowMap {
  return {
    banks: experts,
    bindings: { groups: readOnly('array<u32>', 'the routing table') },
    decls: `const NONE = ${ROUTED_NONE}u;
const SLOTS_AT = ${routedTable(tiles, bm).slotAt}u; // routing table: [0] row tiles in use, [1 + y] expert of row tile y, [SLOTS_AT + row] slot of a row
var<workgroup> tile_expert: u32;
`,
    rowBank: ({
      bank,
      tile,
      tid,
    }) => `  // Row tile ${tile} holds one expert's rows, or none past the tiles in use (the workgroup exits).
  if (${tid} == 0u) { tile_expert = select(NONE, groups[1u + ${tile}], ${tile} < groups[0]); }
  let ${bank} = workgroupUniformLoad(&tile_expert);
  if (${bank} == NONE) { return; }
`,
    outSlot: ({ row, col }) => ({
      lookup: `let slot = groups[SLOTS_AT + ${row}];`,
      guard: `slot != NONE && ${col} < N`,
      index: `slot * N + ${col}`,
    }),
  };
}

/** The routing kernel's bindings: the slots' experts and the routing table it writes. */
const ROUTE_TILES_BINDINGS = {
  ids: readOnly('array<u32>', '[slots] expert of each slot'),
  groups: readWrite('array<u32>'),
};

/** Threads of a routing workgroup (its expert histogram bounds the experts: catalog.ts). */
const ROUTE_THREADS = 256;

/**
 * Row tiles the f16 route's grid covers: every expert's count rounded up to BM is at most slots / BM
 * tiles plus one partial tile per expert that has rows.
 * @example moeF16Tiles(4096, 8, 128) // 40
 */
export function moeF16Tiles(slots: number, experts: number, bm: number): number {
  return Math.ceil(slots / bm) + Math.min(experts, slots);
}

/**
 * The routing kernel: workgroup e counts every expert's slots (a workgroup histogram), sums the row
 * tiles of experts 0..e-1, writes its own tiles' expert and, by a stable scan over the slots, each of its
 * rows' slot (NONE up to the tile's end); workgroup 0 writes the tiles in use.
 */
export function moeRouteTilesWgsl(slots: number, experts: number, bm: number, tiles: number): string {
  const t = routedTable(tiles, bm);
  return `// moe route tiles (f16 route): each expert's slots, ascending, in row tiles of BM after the experts before it.
const SLOTS = ${slots}u;
const EXPERTS = ${experts}u;
const BM = ${bm}u;
const NT = ${ROUTE_THREADS}u;
const NONE = ${ROUTED_NONE}u;
const EXPERT_AT = ${t.expertAt}u; // routing table: [0] row tiles in use, [EXPERT_AT + y] expert of row tile y,
const SLOTS_AT = ${t.slotAt}u; // [SLOTS_AT + row] slot of a row

${bindingDecls(ROUTE_TILES_BINDINGS)}

var<workgroup> hist: array<atomic<u32>, EXPERTS>;
var<workgroup> scan: array<u32, NT>;
var<workgroup> sums: array<vec2u, NT>;

@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wg: vec3u) {
  let e = wg.x;
  for (var i = tid; i < EXPERTS; i += NT) { atomicStore(&hist[i], 0u); }
  workgroupBarrier();
  for (var s = tid; s < SLOTS; s += NT) {
    let x = ids[s];
    if (x < EXPERTS) { atomicAdd(&hist[x], 1u); }
  }
  workgroupBarrier();
  // Row tiles of experts before e (x) and of all (y): strided shares, then a tree sum.
  var part = vec2u(0u);
  for (var i = tid; i < EXPERTS; i += NT) {
    let tiles = (atomicLoad(&hist[i]) + BM - 1u) / BM;
    part += vec2u(select(0u, tiles, i < e), tiles);
  }
  sums[tid] = part;
  workgroupBarrier();
  for (var half = NT / 2u; half > 0u; half /= 2u) {
    if (tid < half) { sums[tid] += sums[tid + half]; }
    workgroupBarrier();
  }
  let before = sums[0].x;
  let count = atomicLoad(&hist[e]);
  let tiles = (count + BM - 1u) / BM;
  if (e == 0u && tid == 0u) { groups[0] = sums[0].y; }
  for (var y = tid; y < tiles; y += NT) { groups[EXPERT_AT + before + y] = e; }
  // The slots of e in ascending order: an inclusive scan of the matches in each chunk of NT slots.
  let row0 = SLOTS_AT + before * BM;
  var placed = 0u;
  for (var c = 0u; c < SLOTS; c += NT) {
    let s = c + tid;
    let hit = s < SLOTS && ids[s] == e;
    scan[tid] = select(0u, 1u, hit);
    workgroupBarrier();
    for (var off = 1u; off < NT; off *= 2u) {
      let v = select(0u, scan[tid - off], tid >= off);
      workgroupBarrier();
      scan[tid] += v;
      workgroupBarrier();
    }
    if (hit) { groups[row0 + placed + scan[tid] - 1u] = s; }
    placed += scan[NT - 1u];
    workgroupBarrier();
  }
  for (var i = count + tid; i < tiles * BM; i += NT) { groups[row0 + i] = NONE; }
}
`;
}

/**
 * The activation gather: row r of the routed rows is slot groups[SLOTS_AT + r] of x, rounded to f16 into
 * 16x16 fragment tiles (zero for NONE); rows past the tiles in use are not written (the GEMM reads none).
 */
function gatherPart(spec: CoopmatSpec, slots: number, tiles: number): PrePassPart {
  const { bm } = coopmatGeometry(spec);
  const t = routedTable(tiles, bm);
  const decls = (
    bindings: string,
  ) => `// Activation: each row tile's slots gathered from x [${slots}, ${spec.k}] and rounded to f16 into 16x16
// fragment tiles xt [${(tiles * bm) / 16}][${spec.k / 16}][16][16] (rows past an expert's count zero).
const GATHER_BM = ${bm}u;
const GATHER_SLOTS_AT = ${t.slotAt}u;
${bindings}

${f16TileItem(
  'gather_item',
  '  if (row >= groups[0] * GATHER_BM) { return; }\n  let s = groups[GATHER_SLOTS_AT + row];\n',
  's',
  `s != ${ROUTED_NONE}u`,
)}`;
  return {
    bindings: {
      x: readOnly('array<vec4f>', '[slots, K] row-major'),
      groups: readOnly('array<u32>', 'the routing table'),
      xt: readWrite('array<vec4u>', 'f16 tiles as pack2x16float pairs'),
    },
    decls,
    fn: 'gather_item',
    items: (tiles * bm * spec.k) / 8,
    out: { name: 'xt', bytes: tiles * bm * spec.k * 2 + SPLIT_SLACK_BYTES },
  };
}

/**
 * The f16 route's plan: route tiles, pre-passes, the routed GEMM (the main pass). `spec` is the GEMM's:
 * m = tiles * BM routed rows, n and k per expert, `routed` set.
 * @example moeF16Plan(problem, spec, () => data)
 */
export function moeF16Plan(
  p: MoeProblem,
  spec: CoopmatSpec,
  tiles: number,
  data: () => CoopmatData,
  opts: { instrument?: boolean } = {},
): KernelPlan {
  const slots = p.tokens * p.topk;
  const { bm } = coopmatGeometry(spec);
  const kc = buildCoopmatKernel(spec, { instrument: opts.instrument ?? false });
  const pre = coopmatPrePasses(spec, gatherPart(spec, slots, tiles), 'moe f16 route');
  const buffers: BufferSpec[] = [
    ...coopmatInputBuffers(slots, p.experts * p.n, p.k, data),
    { name: 'ids', kind: 'read-only-storage', data: p.ids },
    { name: 'groups', kind: 'storage', size: routedTable(tiles, bm).words * 4 },
    ...pre.flatMap(([q]) => q.writes.map((w) => ({ name: w.name, kind: 'storage' as const, size: w.bytes }))),
    { name: 'out', kind: 'storage', size: slots * p.n * 4 },
  ];
  if (opts.instrument) buffers.push(ownerBufferSpec(slots * p.n, COOPMAT_OWNER_BUFFER));
  const { wm, wn, rm, rn } = spec.tile;
  return {
    buffers,
    passes: [
      {
        label: 'moe route tiles',
        wgsl: moeRouteTilesWgsl(slots, p.experts, bm, tiles),
        entryPoint: 'main',
        workgroups: [p.experts, 1, 1],
        bindings: bindingNames(ROUTE_TILES_BINDINGS),
        workgroupSize: ROUTE_THREADS,
        workgroupBytes: p.experts * 4 + ROUTE_THREADS * 12,
      },
      ...pre.map(([q, what]) => kernelPass({ ...q, workgroupBytes: 0 }, q.grid, `moe f16 ${what}`)),
      kernelPass(
        kc,
        kc.workgroups(spec.m, spec.n),
        `moe f16 GEMM ${spec.arm} ${wm}x${wn}x${rm}x${rn}${spec.staging === 'stream' ? ` stream ${spec.ksplit ?? 1} parts` : ''}`,
      ),
    ],
    output: 'out',
    outputType: 'f32',
    mainPass: 1 + pre.length,
  };
}

/** Where the routing puts each slot: its routed row (expert tiles in order, slots ascending in each). */
export function moeRoutedRows(ids: ArrayLike<number>, experts: number, bm: number): Int32Array {
  const counts = new Array<number>(experts).fill(0);
  for (let s = 0; s < ids.length; s++) if (ids[s]! < experts) counts[ids[s]!]!++;
  const first: number[] = [];
  let tiles = 0;
  for (let e = 0; e < experts; e++) {
    first.push(tiles * bm);
    tiles += Math.ceil(counts[e]! / bm);
  }
  const rowOf = new Int32Array(ids.length).fill(-1);
  for (let s = 0; s < ids.length; s++) if (ids[s]! < experts) rowOf[s] = first[ids[s]!]!++;
  return rowOf;
}

/** The slots of `rows` (all when undefined) grouped by expert, for per-expert oracles. */
function byExpert(ids: ArrayLike<number>, rows: readonly number[] | undefined, slots: number) {
  const groups = new Map<number, { at: number[]; slots: number[] }>();
  const picked = rows ?? Array.from({ length: slots }, (_, i) => i);
  picked.forEach((s, at) => {
    const e = ids[s]!;
    const g = groups.get(e) ?? { at: [], slots: [] };
    g.at.push(at);
    g.slots.push(s);
    groups.set(e, g);
  });
  return { groups, count: picked.length };
}

/**
 * Per expert of the requested slots: `gemm(rows of x, expert's weight, rows)` scattered back in order.
 * Only the experts the rows use are decoded.
 */
function perExpert(
  data: CoopmatData,
  ids: ArrayLike<number>,
  n: number,
  k: number,
  rows: readonly number[] | undefined,
  slots: number,
  gemm: (x: Float32Array, w: CoopmatData['w'], m: number) => Float32Array,
): Float32Array {
  const { groups, count } = byExpert(ids, rows, slots);
  const out = new Float32Array(count * n);
  for (const [e, g] of groups) {
    const x = new Float32Array(g.slots.length * k);
    g.slots.forEach((s, i) => x.set(data.x.subarray(s * k, (s + 1) * k), i * k));
    const r = gemm(x, q4kRows(data.w, e * n, n, k), g.slots.length);
    g.at.forEach((at, i) => out.set(r.subarray(i * n, (i + 1) * n), at * n));
  }
  return out;
}

/**
 * The f16 route's exact emulation: each slot's row against its expert's weight, as the dense twin's
 * scalar arm computes it (mmqQ4kF16RoundedRef, `ksplit` K parts added in order). `rows`: the slots to
 * compute (a gate's sample).
 * @example moeF16RoundedRef(data, ids, n, k, undefined, slots)
 */
export function moeF16RoundedRef(
  data: CoopmatData,
  ids: ArrayLike<number>,
  n: number,
  k: number,
  rows: readonly number[] | undefined,
  slots: number,
  decode: DecodeRounding = 'separate',
  ksplit = 1,
): Float32Array {
  return perExpert(data, ids, n, k, rows, slots, (x, w, m) =>
    mmqQ4kF16RoundedRef(x, w, m, n, k, decode, ksplit),
  );
}

/** The f32 GEMM of each slot's unrounded row with its expert's dequantized weight (the error split). */
export function moeF32Ref(data: CoopmatData, ids: ArrayLike<number>, n: number, k: number, slots: number) {
  return perExpert(data, ids, n, k, undefined, slots, (x, w, m) =>
    gemmF32(x, dequantizeQ4K(w, n, k), m, n, k),
  );
}

/**
 * Who stores each [slot, col] of the f16 route: the GEMM workgroup of the slot's routed row, and the
 * plane and lane of the dense twin's partition for that row of its tile.
 */
export function moeF16Ownership(spec: CoopmatSpec, p: MoeProblem): OwnershipMap {
  const slots = p.tokens * p.topk;
  const rowOf = moeRoutedRows(p.ids, p.experts, coopmatGeometry(spec).bm);
  const map = emptyOwnership(slots, p.n);
  for (let s = 0; s < slots; s++) {
    if (rowOf[s]! < 0) continue;
    for (let c = 0; c < p.n; c++) {
      const o = coopmatOwner(spec, rowOf[s]!, c);
      const i = s * p.n + c;
      map.count[i] = 1;
      map.workgroup[i] = o.workgroup;
      map.plane[i] = o.plane;
      map.lane[i] = o.lane;
    }
  }
  return map;
}
