// The stream GEMM, for few rows (decode, or a few rows of each weight of a bank): the split GEMM's one
// stage in flight leaves it waiting on memory (decision record 0012). KSPLIT plane groups each take a K
// part, stage their own B decoded from Q4_K words held STREAM_DEPTH stages ahead, and their sums are
// added in order (the emulation's split-K order) in the workgroup: no partial sums, no reduction pass.
import { streamGeometry, type CoopmatSpec } from './coopmat.params';
import {
  accDecls,
  aReg,
  at,
  contractChunks,
  eachElement,
  eachFragment,
  lines,
  mainHead,
  outRows,
  range,
  storeOut,
  tileSummary,
  type GemmModule,
} from './coopmat.emit';
import {
  aFragments,
  gemmModule,
  loadsA,
  q4kSource,
  scalarB,
  scalarLoop,
  stageZero,
  XT_PAIR,
  type BSource,
} from './coopmat.operands';

/** The scalar arm: each part's 32-blocks summed per element, as the split GEMM's, into its part sums. */
const SCALAR_PART = `  var acc: array<f32, RM * RN * PER>;
${scalarLoop('part * (KB / PARTS)', '(part + 1u) * (KB / PARTS)')}${eachElement(
  '  ',
  [],
  [
    'let r = (warp_m * RM + im) * 16u + p / 16u;',
    'let c = (warp_n * RN + jn) * 16u + p % 16u;',
    'ps[part * BM * BN + r * BN + c] = acc[(im * RN + jn) * PER + e];',
  ],
)}`;

/** The matrix arm: per part, B stages decoded from raw words held DEPTH stages ahead, A from xt. */
function matrixPart(spec: CoopmatSpec, slots: BSource[]): string {
  const g = streamGeometry(spec);
  // One stage of the unrolled loop: slot d's stage is in buffer cur; the next stage's words are in slot
  // d + 1 (mod DEPTH); slot d is refilled with the stage DEPTH ahead once its words are staged.
  const stage = (d: number) => `    {
      let s = kb + ${d}u;
      let cur = s % 2u;
${at('      ', [
  ...aFragments(spec).map(([im, kc]) => `let ${aReg(im, kc)} = ${aReg(im, kc, 'pa')};`),
  ...loadsA(spec, 'ks0 + s + 1u', (im, kc) => `${aReg(im, kc, 'pa')} = `),
])}
${contractChunks(spec, { chunks: g.kc, what: 'stage', bufAt: `part * ${g.bufHalves}u + cur * ${g.bn * g.rs}u + `, rs: g.rs })}
      // The next stage into the other buffer, then this slot refilled ${g.depth} stages ahead.
${slots[(d + 1) % g.depth]!.put('1u - cur', '      ')}
${slots[d]!.fetch(`s + ${g.depth}u`, '      ')}
      workgroupBarrier();
    }`;
  return `  // This invocation's place among its part's stagers, from the same builtins as its part.
  let pt = (warp % (WM * WN)) * PLANE + lane;
  let ks0 = part * STAGES;
${accDecls(spec)}
${stageZero(spec, `The first ${g.depth} stages' words in flight, stage 0 staged, A of stage 0 in registers.`, slots, 'ks0')}  for (var kb = 0u; kb < STAGES; kb += ${g.depth}u) {
${lines(g.depth, stage)}
  }
${eachFragment(spec, '  ', (im, jn) => [
  `subgroupMatrixStore<row_major>(&ps, part * BM * BN + (warp_m * RM + ${im}u) * 16u * BN + (warp_n * RN + ${jn}u) * 16u, acc_${im}_${jn}, BN);`,
])}`;
}

/** The stream GEMM (the host appends the set_owner/store_out suffix). */
export function coopmatStreamModule(spec: CoopmatSpec): GemmModule {
  const g = streamGeometry(spec);
  const scalar = spec.arm === 'scalar';
  // The matrix arm's B: raw slot d holds the words of the stage d ahead.
  const slots = range(scalar ? 0 : g.depth).map((d) => q4kSource(spec, `${d}_`));
  const planes = `; ${g.parts} K part(s) of ${g.stages} 64-wide stage(s), one plane group of ${g.nwarp} plane(s) each: ${g.parts * g.nwarp}`;
  return gemmModule(spec, g, scalar ? scalarB(spec) : slots[0]!, {
    title: `// coopmat-f16 stream GEMM (${spec.arm} arm): out[M, N] = xt @ W^T with W streamed from its Q4_K words.
// ${tileSummary(spec, g, planes)}
`,
    consts: `const PARTS = ${g.parts}u; // K parts, one plane group each (NT = PARTS x WM*WN planes)
const STAGES = ${g.stages}u; // 64-wide stages of a part
// Each part's sums of the tile [PARTS][BM][BN], added in order at the end.
var<workgroup> ps: array<f32, ${g.parts * g.bm * g.bn}u>;
`,
    between: scalar
      ? ''
      : `const RS = ${g.rs}u; // f16 elements per staged B row (64 K-values + padding against bank conflicts)\n`,
    decls: scalar
      ? XT_PAIR
      : `// B of a stage, two buffers per part [PARTS][2][BN][RS]: stage s is read from buffer s % 2 while s + 1 is written.
var<workgroup> sb: array<f16, ${g.parts * g.bufHalves}u>;

`,
    head: mainHead(spec.arm, [
      '// Plane warp is plane (warp_m, warp_n) of K part part (subgroup-uniform, as matrix offsets must be).',
      'let part = warp / (WM * WN);',
      'let warp_m = (warp % (WM * WN)) / WN;',
      'let warp_n = warp % WN;',
    ]),
    body: `${scalar ? SCALAR_PART : matrixPart(spec, slots)}
  workgroupBarrier();
  // Every element of the tile: its K parts added in order (the emulation's split-K order), then stored.
  for (var e = warp * PLANE + lane; e < BM * BN; e += NT) {
    var s = ps[e];
    for (var p = 1u; p < PARTS; p++) { s += ps[p * BM * BN + e]; }
    let orow = mrow0 + e / BN;
    let ocol = ncol0 + e % BN;
${at('    ', storeOut(outRows(spec), 's'))}
  }
}
`,
  });
}
