// Behaviour checks for mutants that once survived the whole suite (issue 30; scripts/mutate.ts runs each
// mutant against these): what a user would see go wrong -- a timer step, the clock warm-up, weight bytes,
// a split-K refusal, a BF16 value, a link's defaults, what the GA breeds, the CLI's flags, the bench's
// ratio, a long file read -- asserted without GPU (the GPU ones are in test/survivors.gpu.test.ts).
import { mkdtempSync, openSync, rmSync, writeSync, closeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compressToEncodedURIComponent } from 'lz-string';
import { describe, expect, it } from 'vitest';
import { deriveRatios } from '../bench/derive';
import type { BenchRow } from '../bench/result';
import { CliError, parseArgs } from '../cli/args';
import { fileSource } from '../cli/fileSource';
import { decodePermalink } from '../src/app/permalink/codec';
import { initialState } from '../src/app/store/state';
import { CATALOG } from '../src/kernels/catalog';
import { KERNELS } from '../src/kernels';
import type { RunConfig } from '../src/kernels/family';
import { resolveConfig } from '../src/kernels/arms';
import { fakeCaps } from '../src/kernels/gpu/testCaps';
import { timeWork, type TimedWork } from '../src/kernels/gpu/timing';
import { GgmlType, ggufTensor, ggufTensorBytes, parseGguf, tensorToF32 } from '../src/kernels/quant';
import { Evolution, PASS, Space, type Config, type Evaluator, type Measurement } from '../src/kernels/tune';
import { writeGguf } from './ggufWriter';

// The WebGPU flags the timing names, with the spec's values: defined here rather than taken from the webgpu
// package, whose import would load Dawn and keep this file (no device is opened) out of Stryker's runs
// (vitest.stryker.config.ts leaves out the files that import it).
Object.assign(globalThis, {
  GPUBufferUsage: { MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, QUERY_RESOLVE: 512 },
  GPUMapMode: { READ: 1, WRITE: 2 },
});

/**
 * A device whose timestamps tick in `stepNs` steps, each run taking `runNs`: what Dawn and Chrome give
 * with timestamp quantization on. Counts the runs encoded with and without timestamps.
 */
function quantizedClock(stepNs: number, runNs: number) {
  let now = 7n * BigInt(stepNs);
  const counts = { timed: 0, untimed: 0 };
  const device = {
    features: new Set(['timestamp-query']),
    createCommandEncoder: () => ({ resolveQuerySet: () => undefined, finish: () => ({}) }),
    createQuerySet: () => ({ destroy: () => undefined }),
    createBuffer: () => ({ destroy: () => undefined }),
    queue: { submit: () => undefined, onSubmittedWorkDone: async () => undefined },
  } as unknown as GPUDevice;
  let lastRuns = 0;
  const work: TimedWork = {
    device,
    probeRuns: 1,
    encode: (_enc, runs, ts) => {
      if (ts) counts.timed += runs;
      else counts.untimed += runs;
      lastRuns = runs;
    },
    read: async () => {
      const t0 = now;
      const span = BigInt(Math.ceil((lastRuns * runNs) / stepNs) * stepNs);
      now += span + BigInt(stepNs);
      return new BigUint64Array([t0, t0 + span]).buffer;
    },
  };
  return { work, counts };
}

describe('timing (a quantized GPU clock)', () => {
  it('reports the timer step the timestamps show, and calls a batch of under 10 steps coarse', async () => {
    const { work } = quantizedClock(100_000, 30_000);
    const t = await timeWork(work, { targetMs: 0.5, batches: 2, estimateMs: 0.03 });
    expect(t.method).toBe('timestamp');
    expect(t.resolutionNs).toBe(100_000);
    expect(t.coarse).toBe(true);
    const long = await timeWork(work, { targetMs: 20, batches: 2, estimateMs: 0.03 });
    expect(long.resolutionNs).toBe(100_000);
    expect(long.coarse).toBe(false);
  });

  it('a timer that reads every batch as 0 falls back to the wall clock over as many batches, sliced when long', async () => {
    const { work, counts } = quantizedClock(1_000_000, 0);
    const short = await timeWork(work, { targetMs: 1, batches: 3, estimateMs: 0.01 });
    expect(short.method).toBe('wall');
    expect(short.coarse).toBe(true);
    expect(short.samples.length).toBeGreaterThanOrEqual(3);
    expect(short.ms).toBe(Math.min(...short.samples));
    // A long run: every batch, timed or not, goes through the slices; nothing is submitted whole.
    let sliced = 0;
    const before = counts.untimed + counts.timed;
    const long = await timeWork(
      { ...work, runSliced: async () => void sliced++ },
      { targetMs: 1, batches: 2, upperMs: 10_000 },
    );
    expect(long.method).toBe('wall');
    expect(long.runs).toBe(1);
    expect(long.samples.length).toBeGreaterThanOrEqual(2);
    expect(sliced).toBe(long.samples.length + 2); // the timestamped batches, then as many by the wall clock
    expect(counts.untimed + counts.timed).toBe(before);
  });

  it('runs untimed warm-up work before the first timed batch when asked, and none otherwise', async () => {
    const cold = quantizedClock(1000, 10_000);
    await timeWork(cold.work, { targetMs: 1, batches: 1, estimateMs: 0.01 });
    expect(cold.counts.untimed).toBe(1); // the probe alone
    const warm = quantizedClock(1000, 10_000);
    await timeWork(warm.work, { targetMs: 1, batches: 1, estimateMs: 0.01, warmMs: 5 });
    expect(warm.counts.untimed).toBeGreaterThan(100);
  });
});

describe('MoE weight bytes', () => {
  it('count only the experts the routing sends rows to', () => {
    const family = KERNELS.get('moe-q4k-id');
    const caps = fakeCaps();
    const facts = (experts: number) =>
      family.build(
        resolveConfig(
          {
            kernel: 'moe-q4k-id',
            arm: 'scalar',
            data: { source: 'reference', seed: 0 },
            params: { ...family.defaults, tokens: 2, topk: 2, n: 64, k: 256, experts },
          },
          caps,
        ),
        caps,
      ).facts;
    // 2 tokens x top-2 reach at most 4 of the 64 experts; an expert's 64 x 256 Q4_K weights are 64 x 148
    // bytes as the kernel reads them. The 60 idle experts add nothing.
    const bytes = facts(64).weightBytes;
    expect(bytes).toBeLessThanOrEqual(4 * 64 * 148);
    expect(bytes).toBeGreaterThan(0);
  });
});

describe('split-K', () => {
  it('is refused when k is not a multiple of ksplit x the 64-wide stage', () => {
    const family = KERNELS.get('coopmat-f16');
    const config = (k: number, ksplit: number): RunConfig => ({
      kernel: 'coopmat-f16',
      arm: 'scalar',
      data: { source: 'reference', seed: 0 },
      params: { ...family.defaults, k, ksplit, staging: 'prepass' },
    });
    expect(family.validate(config(512, 8), fakeCaps())).toEqual([]);
    for (const [k, ks] of [
      [256, 8],
      [768, 8],
      [256, 3],
    ] as const)
      expect(family.validate(config(k, ks), fakeCaps()).join('; '), `k ${k} ksplit ${ks}`).toMatch(/split-K/);
  });
});

describe('BF16 tensors', () => {
  it('decode to their f32 values', () => {
    const values = [1, -2, 0.5, 3.140625, -0.0078125, 65280];
    const data = new Uint8Array(values.length * 2);
    const f = new Float32Array(values);
    const u = new Uint32Array(f.buffer);
    const dv = new DataView(data.buffer);
    u.forEach((bits, i) => dv.setUint16(2 * i, bits >>> 16, true));
    const g = parseGguf(
      writeGguf({ kv: [], tensors: [{ name: 't', dims: [values.length], type: GgmlType.BF16, data }] }),
    );
    expect([...tensorToF32(ggufTensor(g, 't'), ggufTensorBytes(g, 't'))]).toEqual(values);
  });
});

describe('permalinks', () => {
  const config: RunConfig = {
    kernel: 'mmq-q4k-tile',
    arm: 'scalar',
    data: { source: 'random', seed: 0 },
    params: { m: 48, n: 80, k: 256, wm: 2, wn: 2, rm: 1, rn: 2 },
  };
  const link = (c: RunConfig, tab?: string) =>
    `#v=2&s=${compressToEncodedURIComponent(JSON.stringify(tab ? { c, t: tab } : { c }))}`;
  const decode = (hash: string) => decodePermalink(hash, CATALOG.families);

  it('a link without a view opens the view a fresh start opens', () => {
    const r = decode(link(config));
    expect(r.ok && r.state.tab).toBe(initialState(CATALOG.families).tab);
  });

  it('takes every 32-bit seed and refuses the first one past it', () => {
    const seeded = (seed: number) => decode(link({ ...config, data: { source: 'random', seed } }));
    for (const seed of [0, 0x7fffffff, 0xfffffffe, 0xffffffff]) {
      const r = seeded(seed);
      expect(r.ok && r.state.config.data.seed, String(seed)).toBe(seed);
    }
    for (const seed of [-1, 2 ** 32]) expect(seeded(seed)).toMatchObject({ ok: false });
  });
});

describe('the GA breeds from the better members', () => {
  // Five genes of six values; fitness = the sum of the genes (all-0 fastest, all-5 slowest).
  const space = new Space()
    .param('A', [0, 1, 2, 3, 4, 5])
    .param('B', [0, 1, 2, 3, 4, 5])
    .param('C', [0, 1, 2, 3, 4, 5])
    .param('D', [0, 1, 2, 3, 4, 5])
    .param('E', [0, 1, 2, 3, 4, 5]);
  const sum: Evaluator = {
    staticCheck: () => PASS,
    measure: async (c: Config): Promise<Measurement> => ({
      ms: 1 + c.reduce((a, b) => a + b, 0),
      worstRel: 0,
    }),
  };
  const all = (v: number): Config => [v, v, v, v, v];
  const seeds = [all(0), all(5), [0, 5, 0, 5, 0], [5, 0, 5, 0, 5]];
  const hamming = (a: Config, b: Config) => a.filter((v, i) => v !== b[i]).length;
  const children = async (
    opts: { tournament: number; crossoverRate: number; mutationRate: number },
    seed: number,
  ) => {
    const evo = new Evolution({
      population: 4,
      generations: 2,
      elitism: 1,
      finalists: 0,
      measureMs: 1,
      ...opts,
    });
    const r = await evo.run(space, sum, seed, { seeds });
    return r.entries.filter((e) => e.generation === 1).map((e) => e.values);
  };

  it('tournaments pick the faster member: children stay near the fastest, far from the slowest', async () => {
    for (const seed of [1, 2, 3]) {
      const kids = await children({ tournament: 40, crossoverRate: 0, mutationRate: 0.2 }, seed);
      expect(kids.length).toBe(3);
      for (const k of kids)
        expect(hamming(k, all(0)), `seed ${seed}: ${k.join()}`).toBeLessThan(hamming(k, all(5)));
    }
  });

  it('a mutated gene always takes a different value', async () => {
    for (const seed of [1, 2, 3]) {
      const kids = await children({ tournament: 40, crossoverRate: 0, mutationRate: 1 }, seed);
      expect(kids.length).toBe(3);
      for (const k of kids) expect(hamming(k, all(0)), `seed ${seed}: ${k.join()}`).toBe(5);
    }
  });

  it('crossover mixes the parents: without mutation every child gene comes from a parent', async () => {
    for (const seed of [1, 2, 3]) {
      const kids = await children({ tournament: 1, crossoverRate: 1, mutationRate: 0 }, seed);
      expect(kids.length).toBe(3);
      for (const k of kids)
        expect(
          k.every((v) => v === 0 || v === 5),
          `seed ${seed}: ${k.join()}`,
        ).toBe(true);
    }
  });
});

describe('CLI flags', () => {
  const spec = { value: ['--k'], boolean: ['--json'] };
  it('a flag given twice is a usage error, not the last one silently winning', () => {
    expect(() => parseArgs('quantize', ['--k', '256', '--k', '512'], spec)).toThrow(/--k given twice/);
    expect(() => parseArgs('quantize', ['--k=256', '--k=512'], spec)).toThrow(CliError);
    expect(() => parseArgs('quantize', ['--json', '--json'], spec)).toThrow(/--json given twice/);
  });
  it('`--` ends the flags and is not itself an argument', () => {
    const p = parseArgs('quantize', ['--k', '256', '--', '--json', 'x'], spec);
    expect(p.positionals).toEqual(['--json', 'x']);
    expect(p.booleans.size).toBe(0);
  });
});

describe('the bench ratios', () => {
  it('vsIncumbent is the incumbent time over the tuned time: a faster tuned row is above 1', () => {
    const row = (role: string, ms: number) =>
      ({
        id: role,
        role,
        family: 'mmq-q4k-tile',
        arm: 'scalar',
        tile: 't',
        m: 16,
        n: 16,
        k: 256,
        ms,
        correctness: { pass: true, relToMax: 0 },
      }) as unknown as BenchRow;
    const rows = [row('incumbent', 2), row('tuned', 0.5)];
    deriveRatios(rows);
    expect(rows[1]!.vsIncumbent).toBe(4);
  });
});

describe('the CLI file source', () => {
  it('reads a range longer than one chunk (1 GiB) with each chunk from its own offset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mmq-chunk-'));
    const path = join(dir, 'sparse.bin');
    const at = 2 ** 30;
    const fd = openSync(path, 'w');
    try {
      ftruncateSync(fd, at + 8);
      writeSync(fd, Uint8Array.of(1, 2, 3, 4), 0, 4, 0);
      writeSync(fd, Uint8Array.of(9, 8, 7, 6), 0, 4, at);
    } finally {
      closeSync(fd);
    }
    const src = await fileSource(path);
    try {
      const b = await src.read(0, at + 8);
      expect(b.length).toBe(at + 8);
      expect([...b.subarray(0, 4)]).toEqual([1, 2, 3, 4]);
      expect([...b.subarray(at, at + 8)]).toEqual([9, 8, 7, 6, 0, 0, 0, 0]);
    } finally {
      await src.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
