// The stream GEMM, for few rows (decode, or a few rows of each weight of a bank): the split GEMM's one
// stage in flight leaves it waiting on memory (decision record 0012). KSPLIT plane groups each take a K
// part, stage their own B decoded from Q4_K words held STREAM_DEPTH stages ahead, and their sums are
// added in order (the emulation's split-K order) in the workgroup: no partial sums, no reduction pass.
import { bindingDecls, bindingNames, type Binding } from '../gpu/plan';
import { SET_NO_FUSE } from '../quant/q4k.wgsl';
import { streamGeometry, type CoopmatSpec } from './coopmat.params';
import * as gemm from './coopmat.split';

const header = (spec: CoopmatSpec) => {
  const g = streamGeometry(spec);
  const { wm, wn, rm, rn } = spec.tile;
  return `// coopmat-f16 stream GEMM (${spec.arm} arm): out[M, N] = xt @ W^T with W streamed from its Q4_K words.
// Tile wm=${wm} wn=${wn} rm=${rm} rn=${rn}: BM=${g.bm} BN=${g.bn}; ${g.parts} K part(s) of ${g.stages} 64-wide stage(s), one plane group of ${g.nwarp} plane(s) each: ${g.planes} plane(s) of ${spec.plane} = ${g.threads} invocations.
`;
};

const head = (spec: CoopmatSpec) =>
  `${gemm.mainHead(spec.arm, [
    '// Plane warp is plane (warp_m, warp_n) of K part part (subgroup-uniform, as matrix offsets must be).',
    'let part = warp / (WM * WN);',
    'let warp_m = (warp % (WM * WN)) / WN;',
    'let warp_n = warp % WN;',
  ])}${spec.arm === 'scalar' ? SET_NO_FUSE : ''}${gemm.gemmPrologue(spec)}`;

/** The module: the constants, the part sums' memory, xt, then `body`; then the parts' sums added in order. */
function module(spec: CoopmatSpec, xt: Binding, bindings: Binding[], body: string): gemm.GemmModule {
  const g = streamGeometry(spec);
  return {
    bindings: ['xt', ...bindingNames(bindings)],
    wgsl: `${spec.arm === 'scalar' ? '' : `${gemm.MATRIX_ENABLES}\n`}${header(spec)}
${gemm.gemmConsts(spec, g)}const PARTS = ${g.parts}u; // K parts, one plane group each (NT = PARTS x WM*WN planes)
const STAGES = ${g.stages}u; // 64-wide stages of a part
// Each part's sums of the tile [PARTS][BM][BN], added in order at the end.
var<workgroup> ps: array<f32, ${g.parts * g.bm * g.bn}u>;
${bindingDecls([xt])}${body}
  workgroupBarrier();
  // Every element of the tile: its K parts added in order (the emulation's split-K order), then stored.
  for (var e = warp * PLANE + lane; e < BM * BN; e += NT) {
    var s = ps[e];
    for (var p = 1u; p < PARTS; p++) { s += ps[p * BM * BN + e]; }
    let orow = mrow0 + e / BN;
    let ocol = ncol0 + e % BN;
${gemm.at('    ', gemm.storeOut(gemm.outRows(spec), 's'))}
  }
}
`,
  };
}

function scalarMain(spec: CoopmatSpec): gemm.GemmModule {
  const b = gemm.scalarB(spec);
  const xt = gemm.readOnly('xt', 'array<u32>', 'f16 pairs, 16x16 fragment tiles');
  return module(
    spec,
    xt,
    b.bindings,
    `${b.decls}
${gemm.XT_PAIR}
${head(spec)}  var acc: array<f32, RM * RN * PER>;
${gemm.scalarLoop('part * (KB / PARTS)', '(part + 1u) * (KB / PARTS)')}${gemm.eachElement(
      '  ',
      [],
      [
        'let r = (warp_m * RM + im) * 16u + p / 16u;',
        'let c = (warp_n * RN + jn) * 16u + p % 16u;',
        'ps[part * BM * BN + r * BN + c] = acc[(im * RN + jn) * PER + e];',
      ],
    )}`,
  );
}

/** The matrix arm: per part, B stages decoded from raw words held DEPTH stages ahead, A from xt. */
function matrixMain(spec: CoopmatSpec): gemm.GemmModule {
  const g = streamGeometry(spec);
  const groupThreads = g.nwarp * spec.plane;
  const bufAt = (buf: string) => `part * ${g.bufHalves}u + (${buf}) * ${g.bn * g.rs}u + `;
  // Stage `kb` of this part is K stage ks0 + kb; raw slot d holds the words of stage kb + d.
  const slots = gemm.range(g.depth).map((d) =>
    gemm.q4kSource(spec, {
      who: (i) => `pt + ${i * groupThreads}u`,
      count: groupThreads,
      items: g.qUnits,
      bufAt,
      stageAt: (kb) => `ks0 + ${kb}`,
      rs: g.rs,
      tag: `${d}_`,
    }),
  );
  const pa = (im: number, kc: number) => `pa_${im}_${kc}`;
  // One stage of the unrolled loop: slot d's stage is in buffer cur; the next stage's words are in slot
  // d + 1 (mod DEPTH); slot d is refilled with the stage DEPTH ahead once its words are staged.
  const stage = (d: number) => `    {
      let s = kb + ${d}u;
      let cur = s % 2u;
${gemm.at(
  '      ',
  gemm.aFragments(spec).map(([im, kc]) => `let a_${im}_${kc} = ${pa(im, kc)};`),
)}
${gemm.at(
  '      ',
  gemm.loadsA(spec, 'ks0 + s + 1u', (im, kc) => `${pa(im, kc)} = `),
)}
${gemm.contractChunks(spec, { chunks: g.kc, what: 'stage', bufAt: `part * ${g.bufHalves}u + cur * ${g.bn * g.rs}u + `, rs: g.rs, a: (im, kc) => `a_${im}_${kc}` })}
      // The next stage into the other buffer, then this slot refilled ${g.depth} stages ahead.
${slots[(d + 1) % g.depth]!.put('1u - cur', '      ')}
${slots[d]!.fetch(`s + ${g.depth}u`, '      ')}
      workgroupBarrier();
    }`;
  const bindings = [...slots[0]!.bindings, gemm.outBinding(spec), ...(spec.rowMap?.bindings ?? [])];
  const xt = gemm.readOnly('xt', 'array<array<f16, 256>>', '16x16 fragment tiles [MP/16][KT][16][16]');
  return module(
    spec,
    xt,
    bindings,
    `const RS = ${g.rs}u; // f16 elements per staged B row (64 K-values + padding against bank conflicts)
const NSB = K / 256u; // Q4_K super-blocks per weight row
${bindingDecls(bindings, 1)}
${slots[0]!.decls}
// B of a stage, two buffers per part [PARTS][2][BN][RS]: stage s is read from buffer s % 2 while s + 1 is written.
var<workgroup> sb: array<f16, ${g.parts * g.bufHalves}u>;

${head(spec)}  // This invocation's place among its part's stagers, from the same builtins as its part.
  let pt = (warp % (WM * WN)) * PLANE + lane;
  let ks0 = part * STAGES;
${gemm.accDecls(spec)}
  // The first ${g.depth} stages' words in flight, stage 0 staged, A of stage 0 in registers.
${slots.map((s) => s.regs).join('\n')}
${slots.map((s, d) => s.fetch(`${d}u`, '  ')).join('\n')}
${slots[0]!.put('0u', '  ')}
${gemm.at(
  '  ',
  gemm.loadsA(spec, 'ks0', (im, kc) => `var ${pa(im, kc)} = `),
)}
  workgroupBarrier();
  for (var kb = 0u; kb < STAGES; kb += ${g.depth}u) {
${gemm.lines(g.depth, stage)}
  }
${gemm.at(
  '  ',
  gemm
    .fragments(spec)
    .map(
      ([im, jn]) =>
        `subgroupMatrixStore<row_major>(&ps, part * BM * BN + (warp_m * RM + ${im}u) * 16u * BN + (warp_n * RN + ${jn}u) * 16u, acc_${im}_${jn}, BN);`,
    ),
)}`,
  );
}

/** The stream GEMM (the host appends the set_owner/store_out suffix). */
export const coopmatStreamModule = (spec: CoopmatSpec): gemm.GemmModule =>
  spec.arm === 'scalar' ? scalarMain(spec) : matrixMain(spec);
