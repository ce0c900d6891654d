// bench/peers.ts: ORT's profile read from a real WebGPU-EP profile (test/fixtures/ort-profile-webgpu.json,
// written by onnxruntime-node 1.30 on SwiftShader: three runs of MatMulNBits at accuracy_level 4), the
// CPU-bound rule, and that a peer row the rule refuses can never make a ratio.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CPU_BOUND_MARGIN,
  ORT_FAMILY,
  ortRatioLines,
  ortRatios,
  parseOrtProfile,
  peerRefusal,
  peerTable,
  PIPELINED,
} from '../bench/peers';
import type { BenchRow } from '../bench/result';
import { benchRow, PASS as pass } from './benchRow';

const PROFILE = readFileSync(new URL('./fixtures/ort-profile-webgpu.json', import.meta.url), 'utf8');

describe("reading ORT's profile", () => {
  it('reads the programs and their GPU time from the Api events, leaving out the first run', () => {
    const p = parseOrtProfile(PROFILE, 3);
    expect(p.kernels).toEqual(['DP4AMatMulQuantize', 'DP4AMatMulNBits']);
    expect(p.dispatches).toBe(6);
    // Runs 2 and 3 of the fixture: Quantize 2982 + 4008 us, NBits 21710 + 9434 us; the Node and Session
    // events (CPU time, e.g. model_run 2.2 s) are not GPU time.
    expect(p.kernelMs[0]).toBeCloseTo((2982 + 4008) / 1000 / 2, 12);
    expect(p.kernelMs[1]).toBeCloseTo((21710 + 9434) / 1000 / 2, 12);
    expect(p.gpuMsPerRun).toBeCloseTo((2982 + 4008 + 21710 + 9434) / 1000 / 2, 12);
  });

  it('keeps every run when the dispatches do not divide into the runs, and refuses a non-profile', () => {
    expect(parseOrtProfile(PROFILE, 4).gpuMsPerRun).toBeCloseTo(89559 / 1000 / 4, 12);
    expect(() => parseOrtProfile('{"traceEvents": []}', 1)).toThrow(/JSON array/);
  });
});

type Row = BenchRow & { ortGpuMs?: number; ortKernels?: string[]; ortTiming?: string };
const row = (id: string, family: string, role: string, ms: number, extra: Partial<Row> = {}): Row =>
  benchRow<Row>(id, family, role, ms, extra);
const ort = (arm: string, ms: number, gpu: number | undefined, extra: Partial<Row> = {}) =>
  row(`${ORT_FAMILY}/${arm}/-`, ORT_FAMILY, 'baseline', ms, {
    ortTiming: PIPELINED,
    ...(gpu === undefined ? {} : { ortGpuMs: gpu }),
    ortKernels: ['SubgroupMatrixMatMulLayout', 'SubgroupMatrixMatMulNBits'],
    ...extra,
  });

describe('the CPU-bound rule', () => {
  it(`flags a wall time over ${100 * CPU_BOUND_MARGIN}% above the profiler's GPU time, and a row without one`, () => {
    const p = { ortTiming: PIPELINED };
    expect(peerRefusal({ ...p, ms: 1.09, ortGpuMs: 1 })).toBeUndefined();
    expect(peerRefusal({ ...p, ms: 1.11, ortGpuMs: 1 })).toMatch(/^CPU-bound: wall 1.11x/);
    expect(peerRefusal({ ...p, ms: 1 })).toMatch(/no profiler GPU time/);
    expect(peerRefusal({ ...p, ortGpuMs: 1 })).toMatch(/no wall time/);
    // A file from before pipelining (each run awaited) is not the peer at its best, however it compares.
    expect(peerRefusal({ ms: 1, ortGpuMs: 1 })).toMatch(/not timed pipelined/);
  });

  it('a CPU-bound ORT row cannot make a ratio; a usable one beside it does', () => {
    const ours = row('coopmat-f16/subgroup-matrix/8,1,2,8', 'coopmat-f16', 'tuned', 0.25);
    // f32-al4: 1.5x its GPU time (kernels slower than f16's wall); f16: within 10% of its GPU time.
    const rows = [ours, ort('f32-al4', 0.93, 0.62), ort('f16', 0.6, 0.58)];
    const [r] = ortRatios(rows);
    expect(r).toMatchObject({ ortId: `${ORT_FAMILY}/f16/-`, ortMs: 0.6, oursMs: 0.25 });
    expect(r!.ratio).toBeCloseTo(2.4, 12);
    // Every ORT row CPU-bound (or unchecked): no ratio, and the line says why.
    const refused = ortRatios([ours, ort('f32-al4', 0.5, 1 / 3), ort('f16', 0.6, undefined)]);
    expect(refused[0]!.ratio).toBeUndefined();
    expect(refused[0]!.refused).toMatch(/f32-al4 CPU-bound.*f16 no profiler GPU time/);
    const [line] = ortRatioLines(refused);
    expect(line).toMatch(/2048x4096x4096: no ratio \(f32-al4 CPU-bound: wall 1.50x its GPU time/);
    const table = peerTable(rows, {
      f16_mm: [{ m: 2048, n: 4096, k: 4096, ms: 0.1 }],
    });
    expect(table[2]).toContain('| f32-al4 | 0.9300 | 0.6200 |');
    expect(table[2]).toContain('| no ratio: CPU-bound: wall 1.50x its GPU time |');
    expect(table[3]).toContain(
      '| f16 | 0.6000 | 0.5800 | SubgroupMatrixMatMulLayout + SubgroupMatrixMatMulNBits | 2.40 | 0.1000 | 0.400 |',
    );
  });

  it("no ratio from a usable row when a CPU-bound variant's GPU time beats it (that ratio flatters us)", () => {
    const ours = row('coopmat-f16/subgroup-matrix/2,1,1,2', 'coopmat-f16', 'tuned', 0.0221, { m: 32 });
    // H100 at a656c82, 32x4096x4096: f16 usable at 0.2311 ms, f32-al4 CPU-bound with kernels at 0.1464 ms.
    const rows = [ours, ort('f16', 0.2311, 0.2144, { m: 32 }), ort('f32-al4', 0.1715, 0.1464, { m: 32 })];
    const [r] = ortRatios(rows);
    expect(r!.ratio).toBeUndefined();
    expect(r!.ortMs).toBeUndefined();
    expect(r!.refused).toBe(
      "f32-al4's kernels take 0.1464 ms, under this wall time, but it is CPU-bound: wall 1.17x its GPU time",
    );
    const table = peerTable(rows);
    expect(table[2]).toContain('| f16 | 0.2311 | 0.2144 |');
    expect(table[2]).toContain("| no ratio: f32-al4's kernels take 0.1464 ms");
    // The CPU-bound variant's kernels slower than the usable row: the usable row makes the ratio.
    const [s] = ortRatios([
      ours,
      ort('f16', 0.2311, 0.2144, { m: 32 }),
      ort('f32-al4', 0.3, 0.25, { m: 32 }),
    ]);
    expect(s!.ratio).toBeCloseTo(0.2311 / 0.0221, 12);
  });

  it('ratios: baselines, failed rows and MoE rows of ours left out; torch beside ORT', () => {
    const rows = [
      ort('f16', 0.54, 0.53),
      row('gemm-f32/x', 'gemm-f32', 'baseline', 0.1),
      row('coopmat-f16/a', 'coopmat-f16', 'fixed', 0.3),
      row('coopmat-f16/b', 'coopmat-f16', 'fixed', 0.2, { correctness: { ...pass, pass: false } }),
      row('moe/x', 'moe-q4k-id', 'fixed', 0.01, { experts: 8 }),
      row('mmq/x', 'mmq-q4k-tile', 'tuned', 0.27),
      ort('f16', 0.02, 0.02, { m: 32 }),
    ];
    const r = ortRatios(rows);
    expect(r).toHaveLength(2);
    expect(r[0]).toMatchObject({ oursId: 'mmq/x', oursMs: 0.27 });
    expect(r[0]!.ratio).toBeCloseTo(2, 12);
    expect(r[1]!.ratio).toBeUndefined();
    const lines = ortRatioLines(r, {
      int_mm: [
        { m: 2048, n: 4096, k: 4096, ms: 0.1 },
        { m: 2048, n: 4096, k: 4096, ms: 0.081 },
      ],
      f16_mm: [{ m: 2048, n: 4096, k: 4096, ms: 0.0925 }],
    });
    expect(lines[0]).toContain('RATIO ORT MatMulNBits / ours at 2048x4096x4096: 2.000');
    expect(lines[0]).toContain('torch._int_mm / ours 0.300');
    expect(lines[0]).toContain('torch f16 / ours 0.343');
    expect(lines[1]).toContain('no row of ours');
  });
});
