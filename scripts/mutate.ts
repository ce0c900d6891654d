// A mutation habit for the kernels' exact parts (issue 27) and where the numbers come from (issue 30): apply
// one small fault at a time to the quant codecs, the oracles, the WGSL generators, the runner and its
// timing, the tuner, the worker, the CLI and the app's links -- an operator swapped, a constant off by
// one, a clamp or a guard dropped, two indices swapped -- and run only the vitest files that should
// notice. A mutant no test kills is a gap in the tests, or a change that cannot alter behaviour (an
// equivalent mutant); each survivor gets a test or a reason. Those only a GPU with subgroup matrices can
// kill are marked `hw` and are also in scripts/mutate-hw.sh, which runs them through the hardware tier.
// Not part of CI or `npm test`.
// StrykerJS (stryker.config.mjs) now mutates the TypeScript logic; an entry here goes once a Stryker run
// kills the same change (what remains: WGSL text, files Stryker leaves out, and changes it does not make).
//
// The working tree is never touched: the script copies src/, test/, bench/ and cli/ to a temporary
// folder, mutates the copy, and restores the mutated file and every snapshot folder after each run.
// Snapshots are updated there (vitest -u) so that a changed WGSL text does not count as a kill:
// behaviour, not text (--snapshots counts them).
//   npx tsx scripts/mutate.ts [--only REGEX] [--list] [--snapshots] [--json FILE] [--keep]
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { eachFlag } from '../bench/args';

export interface Mutant {
  id: string;
  file: string;
  /** Text that occurs exactly once in `file`, and what replaces it. */
  from: string;
  to: string;
  /** vitest file filters (substrings of test file paths). */
  tests: readonly string[];
  /** Only an adapter with subgroup matrices (or a contracting compiler) can show it: the hardware tier. */
  hw?: string;
}

const QUANT = [
  'src/kernels/quant/',
  'test/q4k.twin.test.ts',
  'test/golden.quant.test.ts',
  'test/golden.gguf.test.ts',
  'src/kernels/mmq/mmq.oracle.test.ts',
];
const MMQ_GPU = [
  'test/mmq.gpu.test.ts',
  'test/moe.gpu.test.ts',
  'src/kernels/mmq/mmq.wgsl.test.ts',
  'test/noFuse.spirv.test.ts',
  'test/mutants.test.ts',
];
const COOPMAT = ['test/coopmat.test.ts', 'src/kernels/coopmat/coopmat.test.ts', 'test/mutants.test.ts'];
const HELLO = ['test/hello.test.ts', 'src/kernels/hello/hello.test.ts'];
const MOE = ['test/moe.gpu.test.ts', 'test/moe.plan.test.ts', 'test/mutants.test.ts'];
const ORACLES = ['src/kernels/mmq/mmq.oracle.test.ts', 'test/mmq.gpu.test.ts', 'test/moe.gpu.test.ts'];

const Q8 = 'src/kernels/quant/q8.ts';
const Q4K = 'src/kernels/quant/q4k.ts';
const F16 = 'src/kernels/quant/f16.ts';
const MMQ_ORACLE = 'src/kernels/mmq/mmq.oracle.ts';
const MMQ_WGSL = 'src/kernels/mmq/mmq.wgsl.ts';
const COOP_ORACLE = 'src/kernels/coopmat/coopmat.oracle.ts';
const COOP_EMIT = 'src/kernels/coopmat/coopmat.emit.ts';
const COOP_OPERANDS = 'src/kernels/coopmat/coopmat.operands.ts';
const Q4K_WGSL = 'src/kernels/quant/q4k.wgsl.ts';
const RUNNER = 'src/kernels/gpu/runner.ts';
const TIMING = 'src/kernels/gpu/timing.ts';
const EVOLUTION = 'src/kernels/tune/evolution.ts';
const HANDLER = 'src/workers/tune/handler.ts';
const PERMALINK = 'src/app/permalink/codec.ts';
const CLI_ARGS = 'cli/args.ts';
const SUBGROUP_MATRICES = 'the matrix arm: SwiftShader has no subgroup matrices (hardware tier)';

export const MUTANTS: readonly Mutant[] = [
  // ---- quant: Q8_0 / q8_1
  { id: 'q8-amax-128', file: Q8, from: 'amax / 127', to: 'amax / 128', tests: QUANT },
  {
    id: 'q8-round-sign-of-x',
    file: Q8,
    from: 'Math.sign(x0) * Math.round',
    to: 'Math.sign(x[off + j]!) * Math.round',
    tests: QUANT,
  },
  { id: 'q8-sum-of-x0', file: Q8, from: 'sum += q[off + j]!;', to: 'sum += x0;', tests: QUANT },
  // ggml's MAX(a, b) is a > b ? a : b: the element after a NaN replaces it; Math.max keeps the NaN.
  {
    id: 'q8-amax-nan-sticks',
    file: Q8,
    from: 'amax = amax > ax ? amax : ax;',
    to: 'amax = Math.max(amax, ax);',
    tests: QUANT,
  },
  {
    id: 'q8_1-s-plus',
    file: Q8,
    from: 'Math.fround(sum * d)',
    to: 'Math.fround(sum + d)',
    tests: QUANT,
  },
  {
    id: 'q8-split-offset',
    file: Q8,
    from: 'dv.getInt8(b * Q8_0_BLOCK_BYTES + 2 + j)',
    to: 'dv.getInt8(b * Q8_0_BLOCK_BYTES + 1 + j)',
    tests: QUANT,
  },
  {
    id: 'q8-dequant-block-index',
    file: Q8,
    from: 'w.d[Math.floor(i / QK8)]!',
    to: 'w.d[Math.ceil(i / QK8)]!',
    tests: [...QUANT, 'test/mmq.gpu.test.ts', 'test/worker-core.test.ts'],
  },
  // ---- quant: nearest_int, f16
  {
    id: 'nearest-int-magic',
    file: 'src/kernels/quant/nearestInt.ts',
    from: 'Math.fround(fval) + 12582912',
    to: 'Math.fround(fval) + 12582913',
    tests: QUANT,
  },
  {
    id: 'nearest-int-bias',
    file: 'src/kernels/quant/nearestInt.ts',
    from: '- 0x00400000',
    to: '- 0x00400001',
    tests: QUANT,
  },
  { id: 'f16-tie-up', file: F16, from: 'rem > 0x1000 ||', to: 'rem >= 0x1000 ||', tests: QUANT },
  {
    id: 'f16-tie-not-even',
    file: F16,
    from: '(rem === 0x1000 && (r & 1) === 1)',
    to: '(rem === 0x1000 && (r & 1) === 0)',
    tests: QUANT,
  },
  { id: 'f16-bias', file: F16, from: 'exp - 127 + 15', to: 'exp - 127 + 14', tests: QUANT },
  {
    id: 'f16-subnormal-shift',
    file: F16,
    from: 'const shift = 14 - e;',
    to: 'const shift = 13 - e;',
    tests: QUANT,
  },
  {
    id: 'f16-underflow-bound',
    file: F16,
    from: 'if (e < -10) return sign;',
    to: 'if (e < -11) return sign;',
    tests: QUANT,
  },
  { id: 'f16-overflow-bound', file: F16, from: 'if (e >= 0x1f)', to: 'if (e > 0x1f)', tests: QUANT },
  {
    id: 'f16-nan-quiet-bit',
    file: F16,
    from: 'sign | (mant ? 0x7e00 : 0x7c00)',
    to: 'sign | 0x7c00',
    tests: QUANT,
  },
  { id: 'f16-decode-subnormal', file: F16, from: 'mant * 2 ** -24', to: 'mant * 2 ** -23', tests: QUANT },
  // ---- quant: Q4_K
  // C's `if (!d)` skips only d == 0: d = inf * 0 = NaN (the super-block scale past f16) is not skipped.
  {
    id: 'q4k-nan-d-skipped',
    file: Q4K,
    from: 'if (d === 0) continue;',
    to: 'if (!d) continue;',
    tests: QUANT,
  },
  {
    id: 'q4k-scale-mask',
    file: Q4K,
    from: 'q4kByte(wsc, scbase, j) & 63',
    to: 'q4kByte(wsc, scbase, j) & 31',
    tests: QUANT,
  },
  {
    id: 'q4k-scale-high-shift',
    file: Q4K,
    from: '((q4kByte(wsc, scbase, j - 4) >> 6) << 4)',
    to: '((q4kByte(wsc, scbase, j - 4) >> 6) << 5)',
    tests: QUANT,
  },
  {
    id: 'q4k-min-nibble',
    file: Q4K,
    from: 'return (q4kByte(wsc, scbase, j + 4) >> 4) |',
    to: 'return (q4kByte(wsc, scbase, j + 4) & 15) |',
    tests: QUANT,
  },
  {
    id: 'q4k-nibble-group',
    file: Q4K,
    from: '(is >> 1) * 32 + qi',
    to: '(is & 1) * 32 + qi',
    tests: QUANT,
  },
  { id: 'q4k-min-clamp-dropped', file: Q4K, from: 'if (min > 0) min = 0;', to: '', tests: QUANT },
  {
    id: 'q4k-L-lower-clamp-dropped',
    file: Q4K,
    from: 'L[loff + i] = Math.max(0, Math.min(nmax, l));',
    to: 'L[loff + i] = Math.min(nmax, l);',
    tests: QUANT,
  },
  { id: 'q4k-search-steps', file: Q4K, from: 'is <= 20', to: 'is < 20', tests: QUANT },
  {
    id: 'q4k-better-or-equal',
    file: Q4K,
    from: 'curError < bestError',
    to: 'curError <= bestError',
    tests: QUANT,
  },
  { id: 'q4k-thismin-ge', file: Q4K, from: 'if (thisMin > 0) {', to: 'if (thisMin >= 0) {', tests: QUANT },
  {
    id: 'q4k-ls-clamp-dropped',
    file: Q4K,
    from: 'Math.min(63, nearestInt(f(invScale * scales[j]!)) & 255)',
    to: 'nearestInt(f(invScale * scales[j]!)) & 255',
    tests: QUANT,
  },
  {
    id: 'q4k-final-L-lower-clamp-dropped',
    file: Q4K,
    from: 'L[32 * j + ii] = Math.max(0, Math.min(15, l));',
    to: 'L[32 * j + ii] = Math.min(15, l);',
    tests: QUANT,
  },
  {
    id: 'q4k-pack-swapped',
    file: Q4K,
    from: 'L[j + l]! | (L[j + l + 32]! << 4)',
    to: 'L[j + l + 32]! | (L[j + l]! << 4)',
    tests: QUANT,
  },
  { id: 'q4k-dequant-plus-min', file: Q4K, from: 'qi)) - mm);', to: 'qi)) + mm);', tests: QUANT },
  { id: 'q4k-split-qs-offset', file: Q4K, from: 'o + 16 + 4 * w', to: 'o + 12 + 4 * w', tests: QUANT },
  {
    id: 'q4k-join-dmin-is-d',
    file: Q4K,
    from: 'dv.setUint16(o + 2, f32ToF16Bits(w.dmin[b]!), true);',
    to: 'dv.setUint16(o + 2, f32ToF16Bits(w.d[b]!), true);',
    tests: QUANT,
  },
  { id: 'q4k-rms-31', file: Q4K, from: 'f(sumX2 / 32)', to: 'f(sumX2 / 31)', tests: QUANT },
  // ---- quant: generators
  {
    id: 'xorshift-13-19',
    file: 'src/kernels/quant/xorshift.ts',
    from: '(lo >>> 19)',
    to: '(lo >>> 18)',
    tests: QUANT,
  },
  {
    id: 'xorshift-mod-carry',
    file: 'src/kernels/quant/xorshift.ts',
    from: '(TWO32 % d)',
    to: '((TWO32 - 1) % d)',
    tests: QUANT,
  },
  {
    id: 'int8-stream-offset',
    file: 'src/kernels/quant/gen.ts',
    from: 'r.nextMod(255) - 127',
    to: 'r.nextMod(255) - 128',
    tests: QUANT,
  },
  // ---- oracles
  {
    id: 'oracle-q8-order',
    file: MMQ_ORACLE,
    from: 'f(f(q8BlockDot(d, xrow, wrow, k, b) * d.xs[xrow * kb + b]!) * d.wd[wrow * kb + b]!)',
    to: 'f(q8BlockDot(d, xrow, wrow, k, b) * f(d.xs[xrow * kb + b]! * d.wd[wrow * kb + b]!))',
    tests: ORACLES,
  },
  {
    id: 'oracle-q4k-order',
    file: MMQ_ORACLE,
    from: 'const scaled = f(f(xs * dd) * isum);',
    to: 'const scaled = f(xs * f(dd * isum));',
    tests: ORACLES,
  },
  {
    id: 'oracle-q4k-plus-min',
    file: MMQ_ORACLE,
    from: 'return f(scaled - offset);',
    to: 'return f(scaled + offset);',
    tests: ORACLES,
  },
  {
    id: 'oracle-q4k-subblock',
    file: MMQ_ORACLE,
    from: 'const is = b & 7;',
    to: 'const is = b & 3;',
    tests: ORACLES,
  },
  {
    id: 'oracle-q4k-superblock',
    file: MMQ_ORACLE,
    from: 'const blk = r * nsb + (kb >> 3);',
    to: 'const blk = r * nsb + (kb >> 2);',
    tests: ORACLES,
  },
  {
    id: 'oracle-activation-block',
    file: MMQ_ORACLE,
    from: 'xs[Math.floor(i / 32)]!',
    to: 'xs[Math.floor(i / 16)]!',
    tests: [...ORACLES, 'test/worker-core.test.ts'],
  },
  {
    id: 'oracle-gemm-kn-stride',
    file: 'src/kernels/oracle.ts',
    from: "bLayout === 'nk' ? [k, 1] : [1, n]",
    to: "bLayout === 'nk' ? [k, 1] : [n, 1]",
    tests: HELLO,
  },
  {
    id: 'oracle-gemm-f32-unrounded-product',
    file: 'src/kernels/oracle.ts',
    from: 'acc = f(acc + f(x[xo + l]! * w[wo + l]!));',
    to: 'acc = f(acc + x[xo + l]! * w[wo + l]!);',
    tests: [...ORACLES, ...COOPMAT],
  },
  {
    id: 'oracle-select-rows',
    file: 'src/kernels/oracle.ts',
    from: 'full.subarray(r * cols, (r + 1) * cols)',
    to: 'full.subarray(r * cols, (r + 1) * cols - 1)',
    tests: [
      'src/kernels/hello/hello.test.ts',
      'src/kernels/coopmat/coopmat.test.ts',
      'test/tune.gpu.test.ts',
    ],
  },
  {
    id: 'oracle-coopmat-decode-one-rounding',
    file: COOP_ORACLE,
    from: ': f(f(dd * q) - mm);',
    to: ': f(dd * q - mm);',
    tests: COOPMAT,
  },
  {
    id: 'oracle-coopmat-product-rounded',
    file: COOP_ORACLE,
    from: 's = f(s + xh[i * k + l]! * wh[l]!);',
    to: 's = f(s + f(xh[i * k + l]! * wh[l]!));',
    tests: COOPMAT,
  },
  {
    id: 'oracle-coopmat-block-sum',
    file: COOP_ORACLE,
    from: 'acc = f(acc + s);',
    to: 'acc = acc + s;',
    tests: COOPMAT,
  },
  {
    id: 'oracle-fma-tie',
    file: COOP_ORACLE,
    from: 'return err > 0 === other > r ? other : r;',
    to: 'return err > 0 === other > r ? r : other;',
    tests: COOPMAT,
  },
  {
    id: 'oracle-hello-layout',
    file: 'src/kernels/hello/hello.oracle.ts',
    from: "gemmF64(a, b, 16, 16, 16, 'nk')",
    to: "gemmF64(a, b, 16, 16, 16, 'kn')",
    tests: HELLO,
  },
  {
    id: 'oracle-moe-id-guard',
    file: 'src/kernels/moe/moe.oracle.ts',
    from: 'if (e >= experts) continue;',
    to: 'if (e > experts) continue;',
    tests: MOE,
  },
  {
    id: 'oracle-moe-cap',
    file: 'src/kernels/moe/moe.oracle.ts',
    from: 'if (c < cap) {',
    to: 'if (c <= cap) {',
    tests: MOE,
  },
  // ---- gates
  {
    id: 'gate-bit-exact-one-off',
    file: 'src/kernels/compare.ts',
    from: "gate.kind === 'bit-exact' ? mismatches === 0",
    to: "gate.kind === 'bit-exact' ? mismatches <= 1",
    tests: ['test/mutants.test.ts', 'test/hello.test.ts', 'test/mmq.gpu.test.ts'],
  },
  {
    id: 'gate-nan-passes',
    file: 'src/kernels/compare.ts',
    from: 'if (Number.isNaN(g) || !Number.isFinite(g)) return Infinity;',
    to: '',
    tests: ['test/mutants.test.ts', 'test/mmq.gpu.test.ts', 'test/tune.gpu.test.ts'],
  },
  // ---- generators: int8 MMQ / MoE
  {
    id: 'wgsl-a-fragment-offset',
    file: MMQ_WGSL,
    from: '(&sa, sm * 16u * 8u, 8u)',
    to: '(&sa, sm * 8u * 8u, 8u)',
    tests: MMQ_GPU,
    hw: SUBGROUP_MATRICES,
  },
  {
    id: 'wgsl-b-fragment-offset',
    file: MMQ_WGSL,
    from: '(&sb, sn * 16u * 8u, 8u)',
    to: '(&sb, sn * 8u * 8u, 8u)',
    tests: MMQ_GPU,
    hw: SUBGROUP_MATRICES,
  },
  {
    id: 'wgsl-no-fuse-identity',
    file: MMQ_WGSL,
    from: "'  return bitcast<f32>(bitcast<u32>(x) | nofuse_zero);',",
    to: "'  return x;',",
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-no-fuse-zero-constant',
    file: MMQ_WGSL,
    from: "const SET_NOFUSE_ZERO = 'nofuse_zero = nwg.z >> 31u; // a grid never has 2^31 workgroups in z';",
    to: "const SET_NOFUSE_ZERO = 'nofuse_zero = 0u;';",
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-stage-a-guard-dropped',
    file: MMQ_WGSL,
    from: "['if (mrow0 + r < m) { v = xq[(mrow0 + r) * kw + k0w + w]; }']",
    to: "['v = xq[(mrow0 + r) * kw + k0w + w];']",
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-stage-b-guard-dropped',
    file: MMQ_WGSL,
    from: 'spec.tails ? [`if (ncol0 + c < n) { ${load} }`] : [load]',
    to: '[load]',
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-store-guard-or',
    file: MMQ_WGSL,
    from: ' < m && ncol < n) {`',
    to: ' < m || ncol < n) {`',
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-q4k-subblock',
    file: MMQ_WGSL,
    from: "'let is = kb % 8u;'",
    to: "'let is = kb % 4u;'",
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-q4k-nibble-shift',
    file: MMQ_WGSL,
    from: "'let nib_shift = 4u * (is % 2u);'",
    to: "'let nib_shift = 4u * (is / 2u);'",
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-q4k-min-is-scale',
    file: MMQ_WGSL,
    from: "'let wmm = wsb.y * f32(q4k_m(blk * 3u, is)); // M = dmin * m'",
    to: "'let wmm = wsb.y * f32(q4k_sc(blk * 3u, is)); // M = dmin * m'",
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-i8-sign-extend',
    file: MMQ_WGSL,
    from: "'  return bitcast<i32>(w << (24u - 8u * j)) >> 24u;'",
    to: "'  return i32((w >> (8u * j)) & 255u);'",
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-stage-word',
    file: MMQ_WGSL,
    from: "'  let w = i % 8u;'",
    to: "'  let w = i % 4u;'",
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-stage-count',
    file: MMQ_WGSL,
    from: '* 8u; i += NTHREAD) {',
    to: '* 8u - 1u; i += NTHREAD) {',
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-scalar-a-row',
    file: MMQ_WGSL,
    from: "'sa[gmm * 8u + w]'",
    to: "'sa[(gmm ^ 1u) * 8u + w]'",
    tests: MMQ_GPU,
  },
  {
    id: 'wgsl-moe-grid-stride-step',
    file: MMQ_WGSL,
    from: "'for (var mtile = wid.y; mtile * BM < ecount; mtile += nwg.y) {'",
    to: "'for (var mtile = wid.y; mtile * BM < ecount; mtile += 1u) {'",
    tests: MOE,
  },
  {
    id: 'wgsl-moe-last-tile',
    file: MMQ_WGSL,
    from: "'for (var mtile = wid.y; mtile * BM < ecount; mtile += nwg.y) {'",
    to: "'for (var mtile = wid.y; mtile * BM + BM <= ecount; mtile += nwg.y) {'",
    tests: MOE,
  },
  {
    id: 'wgsl-moe-slot-guard-dropped',
    file: MMQ_WGSL,
    from: "'    if (mrow0 + r < ecount) { s = routing[rows0 + expert * cap + mrow0 + r]; }'",
    to: "'    s = routing[rows0 + expert * cap + mrow0 + r];'",
    tests: MOE,
  },
  {
    id: 'wgsl-moe-lists-offset',
    file: MMQ_WGSL,
    from: "'let rows0 = nwg.z; // first slot-list word: the lists follow the per-expert counts'",
    to: "'let rows0 = nwg.z + 1u;'",
    tests: MOE,
  },
  {
    id: 'wgsl-moe-rows-cap-guard',
    file: 'src/kernels/moe/moe.wgsl.ts',
    from: 'if (c < route.cap) {',
    to: 'if (c <= route.cap) {',
    tests: MOE,
  },
  {
    id: 'wgsl-q4k-scale-select',
    file: 'src/kernels/quant/q4k.wgsl.ts',
    from: 'return select((b.z & 15u) | ((b.x >> 6u) << 4u), b.x & 63u, j < 4u);',
    to: 'return select((b.z & 15u) | ((b.x >> 6u) << 4u), b.x & 63u, j <= 4u);',
    tests: [...MMQ_GPU, ...COOPMAT],
  },
  {
    id: 'wgsl-q4k-min-high-bits',
    file: 'src/kernels/quant/q4k.wgsl.ts',
    from: '(b.z >> 4u) | ((b.y >> 6u) << 4u)',
    to: '(b.z >> 4u) | ((b.y >> 6u) << 3u)',
    tests: [...MMQ_GPU, ...COOPMAT],
  },
  // ---- generators: hello
  {
    id: 'wgsl-hello-scalar-b-index',
    file: 'src/kernels/hello/hello.wgsl.ts',
    from: "bLayout === 'nk' ? 'col * K + l' : 'l * N + col'",
    to: "bLayout === 'nk' ? 'col * K + l' : 'l * K + col'",
    tests: HELLO,
  },
  {
    id: 'wgsl-hello-dp4a-gather',
    file: 'src/kernels/hello/hello.wgsl.ts',
    from: '(b_u8((r0 + 2u) * N + col) << 16u)',
    to: '(b_u8((r0 + 2u) * N + col) << 8u)',
    tests: HELLO,
  },
  {
    id: 'wgsl-hello-matrix-pad-guard',
    file: 'src/kernels/hello/hello.wgsl.ts',
    from: '    if (w < K / 4u) {',
    to: '    if (w <= K / 4u) {',
    tests: HELLO,
    hw: SUBGROUP_MATRICES,
  },
  // ---- generators: coopmat (f16 twin)
  {
    id: 'wgsl-coopmat-decode-plus-min',
    file: Q4K_WGSL,
    from: '} - ms${s}`,',
    to: '} + ms${s}`,',
    tests: COOPMAT,
  },
  {
    id: 'wgsl-coopmat-pad-rows-live',
    file: Q4K_WGSL,
    from: 'wh[t] = select(vec4u(0u), h, it.live);',
    to: 'wh[t] = h;',
    tests: COOPMAT,
  },
  {
    id: 'wgsl-coopmat-activation-guard-dropped',
    file: 'src/kernels/gpu/prepass.ts',
    from: "f16TileItem('activation_item', '', 'row', 'row < M')",
    to: "f16TileItem('activation_item', '', 'row', 'true')",
    tests: COOPMAT,
  },
  {
    id: 'wgsl-coopmat-in-gemm-nibble',
    file: COOP_OPERANDS,
    from: 'let sh = 8u * (byte0 % 4u) + 4u * (j % 2u);',
    to: 'let sh = 8u * (byte0 % 4u) + 4u * (j / 2u % 2u);',
    tests: COOPMAT,
  },
  {
    id: 'wgsl-coopmat-store-guard',
    file: COOP_EMIT,
    from: "guard: 'orow < M && ocol < N',",
    to: "guard: 'orow < M || ocol < N',",
    tests: COOPMAT,
  },
  {
    id: 'wgsl-coopmat-split-k-matrix-part-ignored',
    file: COOP_OPERANDS,
    from: '(spec.ksplit ?? 1) > 1 || stagingOf(spec).stream ? `ks0 + ${kb}` : kb;',
    to: 'stagingOf(spec).stream ? `ks0 + ${kb}` : kb;',
    tests: COOPMAT,
    hw: SUBGROUP_MATRICES,
  },
  // ---- where the numbers come from (issue 30): the runner, the timing, the worker, the tuner
  {
    id: 'runner-timed-runs-bank-0',
    file: RUNNER,
    from: 'cp.setBindGroup(0, s.groups[i % s.groups.length]!);',
    to: 'cp.setBindGroup(0, s.groups[0]!);',
    tests: ['test/runner.gpu.test.ts'],
  },
  {
    id: 'runner-destroy-leaks',
    file: RUNNER,
    from: '      destroyed = true;\n      destroyOwn();',
    to: '      destroyed = true;',
    tests: ['test/runner.gpu.test.ts'],
  },
  {
    id: 'timing-step-1-ns',
    file: TIMING,
    from: 'return g > 0n ? Number(g) : 1;',
    to: 'return 1;',
    tests: ['test/survivors.test.ts', 'test/runner.gpu.test.ts'],
  },
  {
    id: 'worker-every-pass-timed-as-pass-0',
    file: 'src/workers/run.ts',
    from: 'passes: i, warmMs: 0, onBatch',
    to: 'passes: 0, warmMs: 0, onBatch',
    tests: ['test/worker-core.test.ts'],
  },
  {
    id: 'moe-used-experts-counts-idle',
    file: 'src/kernels/moe/moe.plan.ts',
    from: 'return seen.reduce((a, b) => a + b, 0);',
    to: 'return experts;',
    tests: ['test/survivors.test.ts', ...MOE],
  },
  {
    id: 'coopmat-ksplit-divisibility-weakened',
    file: 'src/kernels/coopmat/catalog.ts',
    from: "multipleProblem('k', p.k, ks * STAGE,",
    to: "multipleProblem('k', p.k, STAGE,",
    tests: ['test/survivors.test.ts', 'src/kernels/coopmat/coopmat.test.ts'],
  },
  {
    id: 'cli-chunked-read-offset-ignored',
    file: 'cli/fileSource.ts',
    from: 'await fh.read(buf, done, n, offset + done)',
    to: 'await fh.read(buf, done, n, offset)',
    tests: ['test/survivors.test.ts'],
  },
  {
    id: 'gguf-bf16-decode-shifted',
    file: 'src/kernels/quant/gguf.ts',
    from: 'dv.getUint16(2 * i, true) << 16',
    to: 'dv.getUint16(2 * i, true) << 15',
    tests: ['test/survivors.test.ts', 'test/golden.gguf.test.ts'],
  },
  {
    id: 'permalink-seed-bound',
    file: PERMALINK,
    from: "seed: intIn(x.seed, 0, LIMITS.seed, 'data.seed')",
    to: "seed: intIn(x.seed, 0, 0x7fffffff, 'data.seed')",
    tests: ['test/survivors.test.ts', 'src/app/permalink/codec.test.ts'],
  },
  {
    id: 'ga-tournament-picks-worse',
    file: EVOLUTION,
    from: 'if (better(c, pick)) pick = c;',
    to: 'if (better(pick, c)) pick = c;',
    tests: ['test/survivors.test.ts', 'test/tune.test.ts'],
  },
  {
    id: 'ga-mutation-may-keep-value',
    file: EVOLUTION,
    from: '(cur + 1 + rng.int(p.values.length - 1))',
    to: '(cur + rng.int(p.values.length - 1))',
    tests: ['test/survivors.test.ts', 'test/tune.test.ts'],
  },
  {
    id: 'ga-no-crossover',
    file: EVOLUTION,
    from: 'let v = cross && rng.chance(0.5) ? b[i]! : a[i]!;',
    to: 'let v = a[i]!;',
    tests: ['test/survivors.test.ts', 'test/tune.test.ts'],
  },
  {
    id: 'tune-resume-replays-finalists',
    file: HANDLER,
    from: 'this.replay.delete(name);',
    to: '',
    tests: ['test/tune.handler.test.ts'],
  },
  {
    id: 'client-respawn-reopens-oldest-files',
    file: 'src/app/worker/client.ts',
    from: 'c.opened = [...c.opened, w.body].slice(-c.kept)',
    to: 'c.opened = [...c.opened, w.body].slice(0, c.kept)',
    tests: ['src/app/worker/client.test.ts'],
  },
  {
    id: 'cli-repeated-flag-accepted',
    file: CLI_ARGS,
    from: 'if (values.has(flag)) throw new CliError(`mmq ${cmd}: ${flag} given twice`);',
    to: '',
    tests: ['test/survivors.test.ts'],
  },
  {
    id: 'cli-repeated-boolean-flag-accepted',
    file: CLI_ARGS,
    from: 'if (booleans.has(flag)) throw new CliError(`mmq ${cmd}: ${flag} given twice`, 2);',
    to: '',
    tests: ['test/survivors.test.ts'],
  },
  {
    id: 'cli-double-dash-kept',
    file: CLI_ARGS,
    from: 'positionals.push(...args.slice(i + 1));',
    to: 'positionals.push(...args.slice(i));',
    tests: ['test/survivors.test.ts'],
  },
  {
    id: 'bench-vs-incumbent-inverted',
    file: 'bench/derive.ts',
    from: 'r.vsIncumbent = inc.ms! / r.ms!',
    to: 'r.vsIncumbent = r.ms! / inc.ms!',
    tests: ['test/survivors.test.ts'],
  },
];

/**
 * Survivors no test can kill, with the reason the change cannot alter what the code computes (or, where
 * marked, why it practically never does); reported as 'equivalent', not as a gap.
 */
const EQUIVALENT: Readonly<Record<string, string>> = {
  'q8-round-sign-of-x':
    'id = 1/d is never negative: sign(x*id) = sign(x) except where id is 0 or inf, and there the stored code is 0 either way (an Int8Array stores NaN, inf and -0 as 0)',
  'f16-underflow-bound':
    'at re-biased exponent -11 the value is below 2^-25, half the smallest subnormal: the subnormal path shifts all 24 significand bits out (shift 25) with a remainder under half and returns the same signed zero',
  'q4k-L-lower-clamp-dropped':
    "x - min >= 0 for every x (min is the block minimum, or 0) and iscale > 0, so nearest_int never gives a negative level: ggml's MAX(0, ...) never acts there",
  'q4k-better-or-equal':
    'a tie needs two different level sets with bit-equal f32 errors (equal level sets give the same fit); no byte changed on 12,000 fuzzed super-blocks (gaussian, uniform, exact-level data)',
  'q4k-thismin-ge':
    'differs only when the least-squares min is exactly 0 in f32, where sum_xl/sum_l2 and the two-parameter scale agree up to rounding; no byte changed on 12,000 fuzzed super-blocks',
  'q4k-ls-clamp-dropped':
    "scales are >= 0 and at most max_scale, so inv_scale*scale <= 63 up to one rounding and nearest_int never exceeds 63: ggml's MIN(63, ...) never acts",
  'oracle-coopmat-product-rounded':
    "the product of two f16 values has at most 22 significant bits and an exponent inside f32's normal range: it is exact in f32, so rounding it changes nothing",
  'oracle-moe-id-guard':
    'for e == experts, counts[e] reads past the Uint32Array (undefined) and `undefined < cap` is false: nothing is written, as with the guard',
  'wgsl-stage-a-guard-dropped':
    'staged rows past m come from bounds-checked (clamped) reads and feed only output rows >= m, which are never stored; the guard matters only where robustness is off',
  'wgsl-stage-b-guard-dropped':
    'staged weight rows past n come from bounds-checked reads and feed only columns >= n, which are never stored; the guard matters only where robustness is off',
  'wgsl-moe-slot-guard-dropped':
    "slot indices past the expert's count feed only staged A rows that the stage guard zeroes (mrow0 + r < ecount) and rows the store skips",
};

// ------------------------------------------------------------------------------------------- running

interface Outcome {
  id: string;
  file: string;
  /** killed-by-text: only checks of generated text (*.wgsl.test.ts) failed: behaviour left unchecked here. */
  status: 'killed' | 'killed-by-text' | 'survived' | 'equivalent' | 'stale' | 'timeout';
  ms: number;
  killedBy: string[];
  /** Why it may survive here: only the hardware tier can kill it, or the reason it is equivalent. */
  note?: string;
}

const ROOT = join(dirname(new URL(import.meta.url).pathname), '..');
const COPIED = ['src', 'test', 'bench', 'cli', 'package.json', 'tsconfig.json', 'vitest.config.ts'];
const skip = (p: string) => /(^|\/)(\.ort|node_modules|__pycache__)(\/|$)/.test(relative(ROOT, p));

/** Snapshot folders of the tree (vitest -u rewrites them in the copy; they are restored after each run). */
function snapshotDirs(): string[] {
  const out = spawnSync('find', ['src', 'test', '-type', 'd', '-name', '__snapshots__'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return out.stdout.split('\n').filter(Boolean);
}

function vitest(dir: string, tests: readonly string[], update: boolean, timeoutMs: number) {
  const report = join(dir, '.mutate-report.json');
  rmSync(report, { force: true });
  const r = spawnSync(
    join(ROOT, 'node_modules/.bin/vitest'),
    ['run', ...(update ? ['-u'] : []), '--reporter=json', `--outputFile=${report}`, ...tests],
    {
      cwd: dir,
      encoding: 'utf8',
      timeout: timeoutMs,
      env: {
        ...process.env,
        VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? '/usr/lib/chromium/vk_swiftshader_icd.json',
      },
    },
  );
  const failed: string[] = [];
  if (existsSync(report)) {
    const j = JSON.parse(readFileSync(report, 'utf8')) as {
      testResults: {
        name: string;
        message?: string;
        assertionResults: { status: string; fullName: string }[];
      }[];
    };
    for (const f of j.testResults) {
      const bad = f.assertionResults.filter((a) => a.status === 'failed');
      for (const a of bad) failed.push(`${relative(dir, f.name)} > ${a.fullName}`);
      if (!bad.length && f.message) failed.push(`${relative(dir, f.name)}: ${f.message.split('\n')[0]}`);
    }
  }
  return { code: r.status, timedOut: r.error !== undefined && r.signal === 'SIGTERM', failed };
}

async function main() {
  let only: RegExp | undefined;
  let list = false;
  let snapshots = false;
  let json: string | undefined;
  let keep = false;
  eachFlag(process.argv.slice(2), (flag, next) => {
    if (flag === '--only') only = new RegExp(next());
    else if (flag === '--list') list = true;
    else if (flag === '--snapshots') snapshots = true;
    else if (flag === '--json') json = next();
    else if (flag === '--keep') keep = true;
    else throw new Error(`unknown flag ${flag} (see scripts/mutate.ts)`);
  });
  const chosen = MUTANTS.filter((m) => !only || only.test(m.id));
  if (list) {
    for (const m of chosen) console.log(`${m.id.padEnd(40)} ${m.file}${m.hw ? '  [hardware only]' : ''}`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'mmq-mutate-'));
  for (const p of COPIED) cpSync(join(ROOT, p), join(dir, p), { recursive: true, filter: (s) => !skip(s) });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const snaps = snapshotDirs();
  const restoreSnapshots = () => {
    for (const s of snaps) {
      rmSync(join(dir, s), { recursive: true, force: true });
      cpSync(join(ROOT, s), join(dir, s), { recursive: true });
    }
  };
  console.log(
    `[mutate] ${chosen.length} mutants in ${dir} (snapshots ${snapshots ? 'count' : 'do not count'})`,
  );
  // Every test group must pass unmutated first, or a kill means nothing.
  const groups = [...new Set(chosen.map((m) => JSON.stringify(m.tests)))];
  for (const g of groups) {
    const t0 = performance.now();
    const base = vitest(dir, JSON.parse(g) as string[], false, 600_000);
    restoreSnapshots();
    if (base.code !== 0)
      throw new Error(
        `baseline fails for ${g}: ${base.failed.slice(0, 5).join('; ') || `exit ${base.code}`}`,
      );
    console.log(`[mutate] baseline ${g} passes (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  const outcomes: Outcome[] = [];
  const t00 = performance.now();
  try {
    for (const m of chosen) {
      const path = join(dir, m.file);
      const original = readFileSync(path, 'utf8');
      const count = original.split(m.from).length - 1;
      const t0 = performance.now();
      let outcome: Outcome;
      if (count !== 1) {
        outcome = {
          id: m.id,
          file: m.file,
          status: 'stale',
          ms: 0,
          killedBy: [`the text occurs ${count} times`],
        };
      } else {
        writeFileSync(path, original.replace(m.from, m.to));
        try {
          const r = vitest(dir, m.tests, !snapshots, 300_000);
          outcome = {
            id: m.id,
            file: m.file,
            status: r.timedOut
              ? 'timeout'
              : r.code === 0
                ? EQUIVALENT[m.id]
                  ? 'equivalent'
                  : 'survived'
                : r.failed.length && r.failed.every((t) => /\.wgsl\.test\.ts\b/.test(t))
                  ? 'killed-by-text'
                  : 'killed',
            ms: performance.now() - t0,
            killedBy: r.failed,
          };
        } finally {
          writeFileSync(path, original);
          restoreSnapshots();
        }
      }
      if (m.hw) outcome.note = m.hw;
      const why = EQUIVALENT[m.id];
      if (outcome.status === 'equivalent' && why) outcome.note = why;
      outcomes.push(outcome);
      const by = outcome.killedBy.length
        ? `  <- ${outcome.killedBy.slice(0, 2).join(' | ')}${outcome.killedBy.length > 2 ? ` (+${outcome.killedBy.length - 2})` : ''}`
        : '';
      console.log(
        `${outcome.status.padEnd(14)} ${m.id.padEnd(40)} ${(outcome.ms / 1000).toFixed(1).padStart(6)} s${m.hw && outcome.status !== 'killed' ? `  [${m.hw}]` : ''}${by}`,
      );
    }
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
  const n = (s: Outcome['status']) => outcomes.filter((o) => o.status === s).length;
  console.log(
    `[mutate] ${outcomes.length} tried: ${n('killed')} killed, ${n('killed-by-text')} killed by text checks only, ${n('survived')} survived, ${n('equivalent')} equivalent, ${n('timeout')} timed out, ${n('stale')} stale; ${((performance.now() - t00) / 1000).toFixed(0)} s`,
  );
  for (const o of outcomes.filter((x) => !['killed', 'stale'].includes(x.status)))
    console.log(`  ${o.status}: ${o.id} (${o.file})${o.note ? ` -- ${o.note}` : ''}`);
  if (json) writeFileSync(json, `${JSON.stringify(outcomes, null, 1)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
