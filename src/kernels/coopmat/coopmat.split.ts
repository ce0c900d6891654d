// The split plan: pre-passes (Q4_K -> f16 rows wh [NP, K]; x -> f16 xt in 16x16 fragment tiles), then a
// GEMM, because decoding in the GEMM repeats it in every workgroup row (docs/decisions/0001-split-plan.md).
// The GEMM stages B (pre-passed rows, or Q4_K decoded in the stage: ./coopmat.operands.ts) into two
// row-padded buffers and reads A from xt one 64-wide stage ahead.
import { readOnly } from '../gpu/bindings';
import { f16TilesPart, prePassKernel, type PrePassPart, type SplitPrePass } from '../gpu/prepass';
import * as quant from '../quant/q4k.wgsl';
import {
  coopmatSplitExtents,
  coopmatSplitGeometry,
  SPLIT_K_STAGE,
  SPLIT_SLACK_BYTES,
  stagingOf,
  type CoopmatSpec,
} from './coopmat.params';
import {
  accDecls,
  aReg,
  at,
  block,
  contractChunks,
  eachFragment,
  gridHead,
  inline,
  lines,
  outRows,
  partSums,
  range,
  scalarStore,
  spillCopyOut,
  spillStores,
  tileSummary,
  type GemmModule,
} from './coopmat.emit';
import {
  gemmModule,
  loadsA,
  q4kSource,
  scalarB,
  scalarLoop,
  stageAt,
  stageZero,
  stagers,
  XT_PAIR,
  type BSource,
} from './coopmat.operands';

/**
 * The pre-passes of a split staging in dispatch order, each with its label: 'prepass' the weight then
 * the activation; 'fused-prepass' both in one dispatch; 'in-gemm' and 'stream' the activation's alone.
 * `act` replaces the activation's (a gather).
 * @example coopmatPrePasses(spec).map(([, what]) => what) // ['weight Q4_K to f16', 'activation to f16 tiles']
 */
export function coopmatPrePasses(
  spec: CoopmatSpec,
  act: PrePassPart = f16TilesPart(spec.m, spec.k, coopmatSplitExtents(spec).mp, SPLIT_SLACK_BYTES),
  plan = 'coopmat-f16 split plan',
): [SplitPrePass, string][] {
  const [{ n, k }, { np }] = [spec, coopmatSplitExtents(spec)];
  // The scalar arm decodes 'separate', as the emulation does, on every compiler (quant.q4kDecode).
  const guard = spec.arm === 'scalar' ? 'separate' : 'compiler';
  const rows = () =>
    quant.q4kF16RowsPart({ n, k, np, banks: spec.rowMap?.banks ?? 1, guard, slack: SPLIT_SLACK_BYTES });
  const pass = (title: string, parts: PrePassPart[], what: string): [SplitPrePass, string] => [
    prePassKernel(k, `${plan}, pass ${title}`, parts),
    what,
  ];
  const activation = pass('1: the activation to f16 tiles', [act], 'activation to f16 tiles');
  const weight = stagingOf(spec).weightPrePass;
  if (weight === 'none') return [activation];
  if (weight === 'own') return [pass('0: the weight to f16', [rows()], 'weight Q4_K to f16'), activation];
  const both = '0: the weight to f16 and the activation to f16 tiles, one dispatch';
  return [pass(both, [rows(), act], 'weight and activation to f16')];
}

/** B from the weight pre-pass's f16 rows: 8 halves (one vec4u) an item, stored half by half. */
function rowsSource(spec: CoopmatSpec): BSource {
  const { n, who, guard, bufAt, rs, reg } = stagers(spec, SPLIT_K_STAGE / 8, '');
  // Written in line, not through a helper taking the offset: the bounds checks' range analysis proves an
  // offset built from tid in range and drops the clamp, but cannot see into a function parameter.
  const putRows = (buf: string, pad: string, it: number) => {
    const body = block(pad, '', [
      `let o = ${bufAt(buf)}((${who(it)}) / 8u) * ${rs}u + ((${who(it)}) % 8u) * 8u;`,
      ...range(4).map((w) => `let ${'pqrs'[w]} = bitcast<vec2<f16>>(${reg('gb', it)}.${'xyzw'[w]});`),
      inline(8, (h) => `sb[o + ${h}u] = ${'pqrs'[h >> 1]}.${'xy'[h & 1]};`),
    ]);
    return guard(it) ? `${pad}${guard(it)}{ ${body.slice(pad.length)} }` : body;
  };
  const load = (kb: string, it: number) =>
    `${reg('gb', it)} = wh[((${spec.rowMap ? 'w0 + ' : ''}ncol0 + (${who(it)}) / 8u) * K + (${stageAt(spec, kb)}) * ${SPLIT_K_STAGE}u + ((${who(it)}) % 8u) * 8u) / 8u];`;
  return {
    bindings: { wh: readOnly('array<vec4u>', 'f16 [NP, K] row-major, 8 halves per vec4') },
    regs: lines(n, (it) => `  var ${reg('gb', it)} = vec4u(0u);`),
    fetch: (kb, pad) =>
      lines(n, (it) => `${pad}${guard(it) ? `${guard(it)}{ ${load(kb, it)} }` : load(kb, it)}`),
    put: (buf, pad) => lines(n, (it) => putRows(buf, pad, it)),
  };
}

/** The split matrix arm's stores: straight to out where it may, else through the spill. */
function matrixStores(spec: CoopmatSpec, directStore: boolean, edges: boolean) {
  // Split-K's direct stores offset by wg.z * M * N, not the private kz0: a matrix store's offset must be uniform.
  const direct = (pad: string) =>
    eachFragment(spec, pad, (im, jn) => [
      `subgroupMatrixStore<row_major>(&out, ${partSums(spec) ? 'wg.z * M * N + ' : ''}(mrow0 + (warp_m * RM + ${im}u) * 16u) * N + ncol0 + (warp_n * RN + ${jn}u) * 16u, acc_${im}_${jn}, N);`,
    ]);
  const spilled = spec.rowMap
    ? 'Mapped rows go where the row map says, so every fragment is spilled and copied by lanes.'
    : 'Instrumented: every fragment is spilled and copied by lanes, so store_out records the owners.';
  if (spec.rowMap || !directStore) return `  // ${spilled}\n${spillStores(spec, '    ')}`;
  if (!edges) return `  // m and n are whole blocks: every fragment goes straight to out.\n${direct('  ')}`;
  return `  if (mrow0 + BM <= M && ncol0 + BN <= N) {
    // The whole block is inside m x n: every fragment goes straight to out.
${direct('    ')}
  } else {
    // An edge block (workgroup-uniform branch, so its barriers are legal): spill and copy with guards.
${spillStores(spec, '    ')}
  }`;
}

/** The split GEMM (the host appends the set_owner/store_out suffix); see matrixStores for `directStore`. */
export function coopmatSplitModule(spec: CoopmatSpec, directStore: boolean): GemmModule {
  const g = coopmatSplitGeometry(spec);
  // Split-K: workgroup z runs its K / KSPLIT of the K blocks (the matrix arm's prefetch wraps over all K).
  const split = (spec.ksplit ?? 1) > 1;
  const title = `// coopmat-f16 split plan, pass 2 (${spec.arm} arm): out[M, N] = xt @ wh^T, the f16 operands the pre-passes
// wrote, accumulated in f32. ${tileSummary(spec, g, `, ${g.nwarp}`)}
`;
  if (spec.arm === 'scalar')
    return gemmModule(spec, g, scalarB(spec), {
      title,
      consts: '\n',
      decls: XT_PAIR,
      head: gridHead('scalar'),
      body: `${scalarLoop(split ? 'wg.z * (KB / KSPLIT)' : '0u', split ? '(wg.z + 1u) * (KB / KSPLIT)' : 'KB')}${scalarStore(outRows(spec))}`,
    });
  const stages = `K / ${SPLIT_K_STAGE}u`;
  const src = stagingOf(spec).b === 'q4k' ? q4kSource(spec) : rowsSource(spec);
  // The edge path is emitted only where m or n leaves a partial block (the kernel is generated per
  // shape), so a kernel of whole blocks carries no spill code or spill memory.
  const edges = spec.m % g.bm !== 0 || spec.n % g.bn !== 0;
  const spill =
    !directStore || edges || spec.rowMap
      ? `// One 16x16 f32 spill per plane for edge subtiles: the fragment's lane layout is opaque.
${spillCopyOut(outRows(spec))}`
      : '';
  const takeA = loadsA(
    spec,
    stageAt(spec, 'kb + 1u'),
    (im, kc) => `let ${aReg(im, kc)} = ${aReg(im, kc, 'pa')};\n    ${aReg(im, kc, 'pa')} = `,
  );
  return gemmModule(spec, g, src, {
    title,
    consts: `const RS = ${g.rs}u; // f16 elements per staged B row (${SPLIT_K_STAGE} K-values + padding against bank conflicts)\n`,
    decls: `// B [BN, ${SPLIT_K_STAGE}] of a stage, two buffers [2][BN][RS]: stage kb is read from buffer kb % 2 while kb + 1 is written.
var<workgroup> sb: array<f16, ${2 * g.bn * g.rs}u>;

${spill}
`,
    head: gridHead(spec.arm),
    body: `${split ? `  let ks0 = wg.z * (${stages} / KSPLIT);\n` : ''}${accDecls(spec)}
${stageZero(spec, 'Stage 0: B into buffer 0, A fragments into registers.', [src], stageAt(spec, '0u'))}  for (var kb = 0u; kb < ${split ? `${stages} / KSPLIT` : stages}; kb++) {
    let cur = kb % 2u;
    // Take this stage's A and issue the next stage's loads (the last stage's prefetch reads the slack).
${at('    ', takeA)}
${src.fetch('kb + 1u', '    ')}
${contractChunks(spec, { chunks: g.kc, what: 'stage', bufAt: `cur * ${g.bn * g.rs}u + `, rs: g.rs })}
    // Write the next stage into the other buffer; the barrier publishes it and retires this one.
${src.put('1u - cur', '    ')}
    workgroupBarrier();
  }
${matrixStores(spec, directStore, edges)}
}
`,
  });
}
