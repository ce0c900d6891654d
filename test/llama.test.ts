// llama.cpp's Vulkan backend as a bench peer (bench/llama.ts, bench/llamaPeer.ts): reading the harness's
// JSON lines and ggml-vulkan's perf logger from real output (test/fixtures/llama-lavapipe: the harness
// bench/llama/mmq-llama.c on Mesa lavapipe, ggml 0.25.1 from @node-llama-cpp/linux-x64-vulkan 3.22.1), the
// CPU-bound rule, the merge into the peers table, and the runner's two passes against a stand-in harness
// that replays that output.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/kernels/arms';
import { SWIFTSHADER_CAPS as caps } from '../src/kernels/gpu/testCaps';
import { moeProblemOf } from '../src/kernels/moe';
import { benchConfig } from '../bench/cases';
import { moeRatioLines } from '../bench/format';
import { benchLlama, benchMoeIds } from '../bench/llama';
import {
  deviceKey,
  GRAPH_REPEAT,
  gpuTimeOf,
  LLAMA_FAMILY,
  llamaRatioLines,
  llamaRatios,
  llamaRefusal,
  llamaRow,
  llamaTable,
  parseHarnessOutput,
  parsePerfLog,
  parseVkDevice,
  type LlamaRow,
} from '../bench/llamaPeer';
import { cpuBoundRefusal, oursAt, ortRatios } from '../bench/peers';
import { moeRows, renderPeers } from '../bench/report';
import type { BenchRow } from '../bench/result';
import { benchRow, PASS as pass } from './benchRow';

const FIX = new URL('./fixtures/llama-lavapipe/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, FIX), 'utf8');
const WALL = read('wall.jsonl');
const GPU = read('gpu.jsonl');
const GPU_ERR = read('gpu.stderr.txt');

describe("reading the harness's output", () => {
  it('reads the device line and one line per case', () => {
    const w = parseHarnessOutput(WALL);
    expect(w.head).toEqual({ device: 'llvmpipe (LLVM 15.0.6, 256 bits)', ggml: '0.25.1', commit: '0ad4a86' });
    expect(w.cases.map((c) => c.case)).toEqual(['32x64x256', '1x64x256', 'moe4x8/top2/64x256']);
    expect(w.cases[2]).toMatchObject({ kind: 'moe', m: 16, experts: 4, tokens: 8, topk: 2, nodes: 4 });
    expect(w.cases[0]!.check).toMatchObject({ pass: true, allWritten: true, tol: 5e-4 });
    const g = parseHarnessOutput(GPU);
    expect(g.cases[1]!.pipelines).toEqual([{ name: 'mul_mat_vec_q4_k_f32_f32', binds: 25 }]);
  });

  it('refuses a line that is not JSON, or JSON of neither kind, naming it', () => {
    expect(() => parseHarnessOutput(`${WALL}ggml_vulkan: oops\n`)).toThrow(/not JSON: ggml_vulkan: oops/);
    expect(() => parseHarnessOutput('{"ms": 1}\n')).toThrow(/neither its device nor a case/);
  });

  it("reads ggml-vulkan's perf logger between the harness's marks only (warm-up computes left out)", () => {
    const perf = parsePerfLog(GPU_ERR);
    expect(perf.map((p) => [p.label, p.nodes, p.blocks.length])).toEqual([
      ['32x64x256', 4, 2],
      ['1x64x256', 4, 2],
      ['moe4x8/top2/64x256', 4, 2],
    ]);
    expect(perf[0]!.blocks[0]).toEqual([
      { name: 'MUL_MAT q4_K m=64 n=32 k=256', count: 4, totalUs: 6928.17 },
    ]);
    // The fixture's timed blocks: 6928.17 and 2749.71 us over 4 nodes each.
    const t = gpuTimeOf(perf[0]!)!;
    expect(t.gpuMs).toBeCloseTo(2749.71 / 4 / 1000, 12);
    expect(t.gpuMsMean).toBeCloseTo((6928.17 + 2749.71) / 8 / 1000, 12);
    expect(t.nodesPerBlock).toBe(4);
    expect(gpuTimeOf(perf[1]!)!.ops).toEqual(['MUL_MAT_VEC q4_K m=64 n=1 k=256']);
    expect(gpuTimeOf(perf[2]!)!.ops[0]).toMatch(/^MUL_MAT_ID q4_K m=64 n=2 k=256 n_expert=4 batch=8$/);
    expect(gpuTimeOf({ label: 'x', nodes: 1, blocks: [[]] })).toBeUndefined();
  });

  it("reads the device line ggml-vulkan prints (lavapipe's; an H100's as its format string writes it)", () => {
    expect(parseVkDevice(GPU_ERR)).toEqual({
      name: 'llvmpipe (LLVM 15.0.6, 256 bits) (llvmpipe)',
      matrixCores: 'none',
      intDot: false,
      fp16: true,
      warpSize: 8,
    });
    // Hand-written from ggml-vulkan's format string (ggml_vk_print_gpu_info), not captured on an H100.
    const h100 =
      'ggml_vulkan: 0 = NVIDIA H100 80GB HBM3 (NVIDIA) | uma: 0 | fp16: 1 | bf16: 1 | fp4: 0 | warp size: 32 | shared memory: 49152 | int dot: 1 | matrix cores: NV_coopmat2\n';
    expect(parseVkDevice(h100)).toMatchObject({ matrixCores: 'NV_coopmat2', intDot: true, warpSize: 32 });
    expect(parseVkDevice('no device here')).toBeUndefined();
  });
});

const ours = (ms: number, extra: Partial<BenchRow> = {}): BenchRow =>
  benchRow(`coopmat-f16/subgroup-matrix/${ms}`, 'coopmat-f16', 'tuned', ms, extra);
const llama = (ms: number, gpu: number | undefined, extra: Partial<LlamaRow> = {}): LlamaRow =>
  benchRow<LlamaRow>(`${LLAMA_FAMILY}/NV_coopmat2/-`, LLAMA_FAMILY, 'baseline', ms, {
    llamaTiming: GRAPH_REPEAT,
    ...(gpu === undefined ? {} : { llamaGpuMs: gpu }),
    llamaPipelines: [{ name: 'matmul_q4_k_f16_cm2_l', perOp: 1 }],
    ...extra,
  });

describe('the CPU-bound rule and the ratios', () => {
  it("reuses the peers' rule: no wall ratio over 1.1x its GPU time, nor without a GPU time or the graph timing", () => {
    expect(cpuBoundRefusal(1.09, 1)).toBeUndefined();
    expect(cpuBoundRefusal(1.11, 1)).toBe('CPU-bound: wall 1.11x its GPU time');
    expect(llamaRefusal(llama(1.11, 1))).toBe(cpuBoundRefusal(1.11, 1));
    expect(llamaRefusal(llama(1, undefined))).toMatch(/no profiler GPU time/);
    expect(llamaRefusal({ ms: 1, llamaGpuMs: 1 })).toMatch(/not timed as a repeated graph/);
  });

  it('a CPU-bound row keeps its GPU ratio and makes no wall ratio; a usable one makes both', () => {
    const rows = [ours(0.25), llama(0.5, 0.3), ours(0.02, { m: 32 }), llama(0.05, 0.02, { m: 32 })];
    const [big, small] = llamaRatios(rows);
    expect(big).toMatchObject({ problem: '2048x4096x4096', oursMs: 0.25, shaders: 'matmul_q4_k_f16_cm2_l' });
    expect(big!.gpuRatio).toBeCloseTo(1.2, 12);
    expect(big!.refused).toBe('CPU-bound: wall 1.67x its GPU time');
    expect(big!.wallRatio).toBeUndefined();
    expect(small!.wallRatio).toBeUndefined();
    const usable = llamaRatios([ours(0.25), llama(0.31, 0.3)])[0]!;
    expect(usable.wallRatio).toBeCloseTo(0.31 / 0.25, 12);
    expect(usable.refused).toBeUndefined();
    const table = llamaTable([ours(0.25), llama(0.5, 0.3)]);
    expect(table[2]).toContain(
      '| 0.5000 (-) | 0.3000 | 1.20 | no ratio: CPU-bound: wall 1.67x its GPU time |',
    );
    expect(llamaRatioLines(llamaRatios([ours(0.25), llama(0.31, 0.3)]))[0]).toBe(
      'RATIO llama.cpp Vulkan / ours at 2048x4096x4096: GPU 1.200, wall 1.240 (llama.cpp 0.3000 ms GPU, 0.3100 ms wall, matmul_q4_k_f16_cm2_l; coopmat-f16/subgroup-matrix/0.25 0.2500 ms)',
    );
  });

  it("no ratio from a row that ran on another device than the bench's adapter", () => {
    // Dawn's adapterInfo.device as the bench JSONs hold it (docs/bench-results/h100-moe.json; a SwiftShader run).
    expect(deviceKey('NVIDIA H100 80GB HBM3')).toBe('nvidia-h100-80gb-hbm3');
    expect(deviceKey('SwiftShader Device (Subzero)')).toBe('swiftshader-device-subzero-');
    const rows = [ours(0.25), llama(0.31, 0.3, { llamaDevice: 'NVIDIA H100 80GB HBM3' })];
    expect(llamaRatios(rows, 'nvidia-h100-80gb-hbm3')[0]!.wallRatio).toBeCloseTo(0.31 / 0.25, 12);
    const [other] = llamaRatios(rows, 'swiftshader-device-subzero-');
    expect(other!.gpuRatio).toBeUndefined();
    expect(other!.wallRatio).toBeUndefined();
    expect(other!.refused).toBe('ran on NVIDIA H100 80GB HBM3, ours on swiftshader-device-subzero-');
  });

  it('a row that failed its check makes no ratio at all', () => {
    const [r] = llamaRatios([ours(0.25), llama(0.31, 0.3, { correctness: { ...pass, pass: false } })]);
    expect(r!.gpuRatio).toBeUndefined();
    expect(r!.wallRatio).toBeUndefined();
    expect(r!.refused).toBe('failed its check');
  });

  it("llama.cpp's rows are never ours: not in the dense pick, ORT's ratios or the MoE lines", () => {
    const moeOurs = ours(0.5, { family: 'moe-q4k-id', id: 'moe-q4k-id/x', experts: 8, topk: 2, m: 64 });
    const moeLlama = llama(0.1, 0.1, { experts: 8, topk: 2, m: 64 });
    const rows = [ours(0.25), llama(0.01, 0.01), moeOurs, moeLlama];
    expect(oursAt(rows, { m: 2048, n: 4096, k: 4096 })!.ms).toBe(0.25);
    expect(ortRatios(rows)).toEqual([]);
    expect(moeRatioLines(rows)[0]).toContain('ours 0.5000 ms (moe-q4k-id/x)');
    expect(moeRows(rows).slice(2)).toEqual([expect.stringContaining('| subgroup-matrix | 0.5000 |')]);
    // The MoE row pairs with our MoE row of the same case, not with a dense row.
    const moe = llamaRatios(rows).find((r) => r.problem.startsWith('moe'))!;
    expect(moe).toMatchObject({ problem: 'moe 8x32 top-2 4096x4096', oursId: 'moe-q4k-id/x' });
    expect(moe.gpuRatio).toBeCloseTo(0.2, 12);
  });

  it("the docs' peers block prints the llama.cpp table of each command", () => {
    const out = renderPeers([
      { p: 'x/h100-llama.json', j: { date: '2026-12-06', rows: [ours(0.25), llama(0.31, 0.3)] } },
    ]);
    expect(out).toContain('| 2048x4096x4096 | 0.2500 (coopmat-f16/subgroup-matrix/0.25) |');
    expect(out).toContain('- RATIO llama.cpp Vulkan / ours at 2048x4096x4096: GPU 1.200, wall 1.240');
  });
});

describe('a row from both passes', () => {
  it('takes wall time and checks from the wall pass, GPU time and pipelines from the GPU pass', () => {
    const wall = parseHarnessOutput(WALL).cases[0]!;
    const gpuCase = parseHarnessOutput(GPU).cases[0]!;
    const gpu = gpuTimeOf(parsePerfLog(GPU_ERR)[0]!)!;
    const r = llamaRow(wall, { gpu, gpuCase, device: { name: 'x', matrixCores: 'none' } });
    expect(r).toMatchObject({
      id: 'llama-vulkan/none/-',
      role: 'baseline',
      ms: 0.70325,
      msMean: 3.87288,
      nodes: 4,
    });
    expect(r.llamaGpuMs).toBeCloseTo(gpu.gpuMs, 12);
    // 17 binds over 2 computes x 4 ops.
    expect(r.llamaPipelines).toEqual([{ name: 'matmul_quant_f32_f16acc_aligned_0', perOp: 17 / 8 }]);
    expect(r.correctness).toMatchObject({ pass: true, samples: 2048, relToMax: 0.00484248 });
    expect(r.nmse).toBeCloseTo(6.38255e-6, 12);
    // Either check failing fails the row.
    const bad = llamaRow({ ...wall, checkAfter: { ...wall.checkAfter!, pass: false } });
    expect(bad.correctness!.pass).toBe(false);
    const { checkAfter: _dropped, ...onlyBefore } = wall;
    expect(llamaRow(onlyBefore).correctness!.pass).toBe(false);
  });
});

describe('benchLlama against a stand-in harness', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mmq-llama-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** A harness that replays the fixture: the GPU pass only under the perf logger, the wall pass only without. */
  const standIn = (name: string, wallOut: string) => {
    const d = join(dir, name);
    mkdirSync(join(d, 'bin'), { recursive: true });
    writeFileSync(join(d, 'wall.jsonl'), wallOut);
    const fix = (f: string) => new URL(f, FIX).pathname;
    writeFileSync(
      join(d, 'bin', 'mmq-llama'),
      `#!/bin/sh
echo "$*" >> "${d}/args.txt"
for a; do case "$a" in moe:*) cp "\${a#*@}" "${d}/ids.bin";; esac; done
case " $* " in
*" --gpu-log "*) [ "$GGML_VK_PERF_LOGGER" = 1 ] || { echo "GPU pass without the perf logger" >&2; exit 3; }
  cat "${fix('gpu.jsonl')}"; cat "${fix('gpu.stderr.txt')}" >&2 ;;
*) [ -z "$GGML_VK_PERF_LOGGER" ] || { echo "wall pass under the perf logger" >&2; exit 4; }
  cat "${d}/wall.jsonl"; [ -s "${d}/fail" ] && { echo "device lost" >&2; exit 1; } ;;
esac
exit 0
`,
    );
    chmodSync(join(d, 'bin', 'mmq-llama'), 0o755);
    return d;
  };
  const shapes = [
    { m: 32, n: 64, k: 256 },
    { m: 1, n: 64, k: 256 },
  ];
  const moe = [{ experts: 4, tokens: 8, topk: 2, n: 64, k: 256 }];

  it('runs the wall pass without the perf logger and the GPU pass with it, and merges them by case', async () => {
    const d = standIn('ok', WALL);
    const env = { PATH: process.env.PATH, GGML_VK_PERF_LOGGER: '1' };
    const r = await benchLlama(shapes, moe, { candidates: [d], env, quick: true });
    expect(r.note).toBeUndefined();
    expect(r.rows.map((x) => [x.m, x.experts, x.correctness?.pass, x.llamaGpuMs !== undefined])).toEqual([
      [32, undefined, true, true],
      [1, undefined, true, true],
      [16, 4, true, true],
    ]);
    expect(r.llama?.device?.matrixCores).toBe('none');
    expect(r.rows[0]!.llamaDevice).toBe('llvmpipe (LLVM 15.0.6, 256 bits)');
    const args = readFileSync(join(d, 'args.txt'), 'utf8').trim().split('\n');
    expect(args[0]).toMatch(
      /^--target-ms 1 --max-nodes 4 --min-ms 1 --min-computes 2 dense:32,64,256 dense:1,64,256 moe:4,8,2,64,256@/,
    );
    expect(args[1]).toMatch(/^--gpu-log --no-check /);
    // The routing it hands the harness is the bench's own for that case.
    const ids = readFileSync(join(d, 'ids.bin'));
    expect(new Int32Array(ids.buffer, ids.byteOffset, ids.byteLength / 4)).toEqual(
      Int32Array.from(benchMoeIds(moe[0]!)),
    );
    // The MoE row's weight traffic counts the experts its routing uses.
    expect(r.rows[2]!.weightGBs).toBeCloseTo(
      (new Set(benchMoeIds(moe[0]!)).size * 64 * 256 * 144) / 256 / (2.0045 * 1e6),
      12,
    );
  });

  it('a pass that dies keeps the rows it printed and marks the others as errors', async () => {
    const d = standIn('dies', WALL.split('\n').slice(0, 2).join('\n') + '\n');
    writeFileSync(join(d, 'fail'), '1');
    const r = await benchLlama(shapes, moe, {
      candidates: [d],
      env: { PATH: process.env.PATH },
      quick: true,
    });
    expect(r.rows[0]!.correctness?.pass).toBe(true);
    expect(r.rows.slice(1).map((x) => x.error)).toEqual([
      expect.stringMatching(/exited with 1: device lost/),
      expect.stringMatching(/exited with 1/),
    ]);
    expect(r.rows[2]).toMatchObject({ experts: 4, topk: 2, m: 16 });
    expect(r.note).toMatch(/^wall pass: .*exited with 1: device lost/);
  });

  it('says so, with no rows, when the harness is not installed', async () => {
    const r = await benchLlama(shapes, moe, { candidates: [join(dir, 'nowhere')] });
    expect(r).toEqual({
      rows: [],
      note: expect.stringMatching(/not installed \(bash bench\/install-llama.sh\)/),
    });
  });
});

describe("the MoE routing handed to llama.cpp is the bench's", () => {
  it("equals the ids the MoE family routes the bench's config with", () => {
    const c = { experts: 8, tokens: 32, topk: 2, n: 4096, k: 4096 };
    const config = resolveConfig(benchConfig(caps, 'moe-q4k-id', c), caps);
    expect(benchMoeIds(c)).toEqual(moeProblemOf(config).ids);
  });
});
