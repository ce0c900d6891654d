// The stream GEMM ('stream' staging): the f16 GEMM shaped for few rows (decode, m <= 32, or a few rows
// of each weight of a bank), where the weight must stream from memory at the hardware's pace. The split
// GEMM's stage keeps one 64-wide stage of weight words in flight per workgroup, which leaves a small-m
// GEMM waiting on memory (decision record 0012, split-K for small m). Here the workgroup holds
// KSPLIT plane groups (a wm x wn grid each), each taking its own contiguous K part:
//   - every plane group stages its own B (64 K-values a stage, two buffers), decoded from the Q4_K words
//     with the weight pre-pass's arithmetic, and keeps the raw words of the next STREAM_DEPTH stages in
//     registers, so each invocation has several loads in flight from the start;
//   - A fragments come straight from the activation pre-pass's tiles, one stage ahead;
//   - at the end each group's result goes to workgroup memory and the groups' sums are added in order
//     (the emulation's split-K order), then stored element by element: no partial sums leave the
//     workgroup and no reduction pass runs.
// The scalar arm does the same per-part 32-block sums in registers, so it stays bit-exact.
import { bindingDecls } from '../gpu/plan';
import { SET_NO_FUSE } from '../quant/q4k.wgsl';
import { OUT_BINDING, range } from './coopmat.snippets';
import { streamGeometry, type CoopmatSpec } from './coopmat.params';
import {
  contractStage,
  fragments,
  gemmConsts,
  gemmPrologue,
  loadA,
  outRows,
  q4kSource,
  scalarB,
  scalarLoop,
  XT_PAIR,
  type Stagers,
} from './coopmat.split';

const header = (spec: CoopmatSpec) => {
  const g = streamGeometry(spec);
  const { wm, wn, rm, rn } = spec.tile;
  return `// coopmat-f16 stream GEMM (${spec.arm} arm): out[M, N] = xt @ W^T with W streamed from its Q4_K words.
// Tile wm=${wm} wn=${wn} rm=${rm} rn=${rn}: BM=${g.bm} BN=${g.bn}; ${g.parts} K part(s) of ${g.stages} 64-wide stage(s), one plane group of ${g.nwarp} plane(s) each: ${g.planes} plane(s) of ${spec.plane} = ${g.threads} invocations.
`;
};

/** The entry point: plane, part and the plane's place in its group's grid, from either arm's builtins. */
const head = (spec: CoopmatSpec) => `@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) tid: u32, ${
  spec.arm === 'scalar'
    ? ''
    : '@builtin(subgroup_id) warp: u32, @builtin(subgroup_invocation_id) lane: u32,\n        '
}@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u) {
${spec.arm === 'scalar' ? '  let warp = tid / PLANE;\n  let lane = tid % PLANE;\n' : ''}  // Plane warp is plane (warp_m, warp_n) of K part part (subgroup-uniform, as matrix offsets must be).
  let part = warp / (WM * WN);
  let warp_m = (warp % (WM * WN)) / WN;
  let warp_n = warp % WN;
  let mrow0 = wg.y * BM;
  let ncol0 = wg.x * BN;
  set_owner(wg.y * nwg.x + wg.x, warp, lane);
${spec.arm === 'scalar' ? SET_NO_FUSE : ''}`;

/** The end: the parts' sums in ps added in order, element by element, and stored (the ownership phase). */
const sumParts = (spec: CoopmatSpec) => {
  const o = outRows(spec);
  return `  workgroupBarrier();
  // Every element of the tile: its K parts added in order (the emulation's split-K order), then stored.
  for (var e = warp * PLANE + lane; e < BM * BN; e += NT) {
    var s = ps[e];
    for (var p = 1u; p < PARTS; p++) { s += ps[p * BM * BN + e]; }
    let orow = mrow0 + e / BN;
    let ocol = ncol0 + e % BN;
${o.lookup ? `    ${o.lookup}\n` : ''}    if (${o.guard}) {
      store_out(${o.index}, s);
    }
  }
}
`;
};

/** The constants, the part sums' memory and the bindings both arms declare. */
function module(spec: CoopmatSpec, xt: { type: string; comment: string }, body: string): string {
  const g = streamGeometry(spec);
  return `${spec.arm === 'scalar' ? '' : 'enable f16;\nenable subgroups;\nenable chromium_experimental_subgroup_matrix;\n\n'}${header(spec)}
${gemmConsts(spec, g)}const PARTS = ${g.parts}u; // K parts, one plane group each (NT = PARTS x WM*WN planes)
const STAGES = ${g.stages}u; // 64-wide stages of a part
// Each part's sums of the tile [PARTS][BM][BN], added in order at the end.
var<workgroup> ps: array<f32, ${g.parts * g.bm * g.bn}u>;
@group(0) @binding(0) var<storage, read> xt: ${xt.type}; // ${xt.comment}
${body}`;
}

/** The scalar arm: the split GEMM's per-lane 32-block sums over this part's K blocks, then into ps. */
function scalarMain(spec: CoopmatSpec): string {
  const b = scalarB(spec, OUT_BINDING());
  return module(
    spec,
    { type: 'array<u32>', comment: 'f16 pairs, 16x16 fragment tiles' },
    `${b.decls}
${XT_PAIR}
${head(spec)}${gemmPrologue(spec)}  var acc: array<f32, RM * RN * PER>;
${scalarLoop('part * (KB / PARTS)', '(part + 1u) * (KB / PARTS)')}  for (var im = 0u; im < RM; im++) {
    for (var jn = 0u; jn < RN; jn++) {
      for (var e = 0u; e < PER; e++) {
        let p = lane * PER + e;
        let r = (warp_m * RM + im) * 16u + p / 16u;
        let c = (warp_n * RN + jn) * 16u + p % 16u;
        ps[part * BM * BN + r * BN + c] = acc[(im * RN + jn) * PER + e];
      }
    }
  }
${sumParts(spec)}`,
  );
}

/** The matrix arm: per part, B stages decoded from raw words held DEPTH stages ahead, A from xt. */
function matrixMain(spec: CoopmatSpec): string {
  const g = streamGeometry(spec);
  const groupThreads = g.nwarp * spec.plane;
  const region = 2 * g.bn * g.rs;
  // Stage `kb` of this part is K stage ks0 + kb; raw slot d holds the words of stage kb + d.
  const stagers = (d: number): Stagers => ({
    who: (i) => `pt + ${i * groupThreads}u`,
    count: groupThreads,
    items: g.qUnits,
    bufAt: (buf) => `part * ${region}u + (${buf}) * ${g.bn * g.rs}u + `,
    stageAt: (kb) => `ks0 + ${kb}`,
    rs: g.rs,
    tag: `${d}_`,
  });
  const slots = range(g.depth).map((d) => q4kSource(spec, stagers(d)));
  const ids = fragments(spec);
  const rows = ids.filter(([, jn]) => jn === 0).map(([im]) => im);
  const pa = (im: number, kc: number) => `pa_${im}_${kc}`;
  const loadsA = (stage: string, lhs: (im: number, kc: number) => string) =>
    rows.flatMap((im) => range(g.kc).map((kc) => `${lhs(im, kc)}${loadA(im, kc, stage, g.kc)};`));
  // One stage of the unrolled loop: slot d's stage is in buffer cur; the next stage's words are in slot
  // d + 1 (mod DEPTH); slot d is refilled with the stage DEPTH ahead once its words are staged.
  const stage = (d: number) => {
    const next = (d + 1) % g.depth;
    return `    {
      let s = kb + ${d}u;
      let cur = s % 2u;
${rows.flatMap((im) => range(g.kc).map((kc) => `      let a_${im}_${kc} = ${pa(im, kc)};`)).join('\n')}
${loadsA('ks0 + s + 1u', (im, kc) => `      ${pa(im, kc)} = `).join('\n')}
${contractStage(spec, `part * ${region}u + cur * ${g.bn * g.rs}u + `, g.rs, (im, kc) => `a_${im}_${kc}`)}
      // The next stage into the other buffer, then this slot refilled ${g.depth} stages ahead.
${slots[next]!.put('1u - cur', '      ')}
${slots[d]!.fetch(`s + ${g.depth}u`, '      ')}
      workgroupBarrier();
    }`;
  };
  const bindings = [...slots[0]!.bindings, OUT_BINDING(), ...(spec.rowMap?.bindings ?? [])];
  return module(
    spec,
    { type: 'array<array<f16, 256>>', comment: '16x16 fragment tiles [MP/16][KT][16][16]' },
    `const RS = ${g.rs}u; // f16 elements per staged B row (64 K-values + padding against bank conflicts)
const NSB = K / 256u; // Q4_K super-blocks per weight row
${bindingDecls(bindings, 1)}
${slots[0]!.decls}
// B of a stage, two buffers per part [PARTS][2][BN][RS]: stage s is read from buffer s % 2 while s + 1 is written.
var<workgroup> sb: array<f16, ${g.parts * region}u>;

${head(spec)}${gemmPrologue(spec)}  // This invocation's place among its part's stagers, from the same builtins as its part.
  let pt = (warp % (WM * WN)) * PLANE + lane;
  let ks0 = part * STAGES;
${ids.map(([im, jn]) => `  var acc_${im}_${jn} = subgroup_matrix_result<f32, 16, 16>();`).join('\n')}
  // The first ${g.depth} stages' words in flight, stage 0 staged, A of stage 0 in registers.
${slots.map((s) => s.regs).join('\n')}
${slots.map((s, d) => s.fetch(`${d}u`, '  ')).join('\n')}
${slots[0]!.put('0u', '  ')}
${loadsA('ks0', (im, kc) => `  var ${pa(im, kc)} = `).join('\n')}
  workgroupBarrier();
  for (var kb = 0u; kb < STAGES; kb += ${g.depth}u) {
${range(g.depth).map(stage).join('\n')}
  }
${ids
  .map(
    ([im, jn]) =>
      `  subgroupMatrixStore<row_major>(&ps, part * BM * BN + (warp_m * RM + ${im}u) * 16u * BN + (warp_n * RN + ${jn}u) * 16u, acc_${im}_${jn}, BN);`,
  )
  .join('\n')}
${sumParts(spec)}`,
  );
}

/**
 * The stream GEMM's kernel text (the host appends the set_owner/store_out suffix).
 * @example coopmatStreamWgsl({ m: 32, n: 64, k: 1024, tile, plane: 32, arm: 'subgroup-matrix', f16: 'native', staging: 'stream', ksplit: 4 })
 */
export function coopmatStreamWgsl(spec: CoopmatSpec, _opts: { directStore?: boolean } = {}): string {
  return spec.arm === 'scalar' ? scalarMain(spec) : matrixMain(spec);
}
