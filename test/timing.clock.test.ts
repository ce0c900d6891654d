// How timeWork (src/kernels/gpu/timing.ts) spends a device's time, on a fake device whose runs advance a
// fake wall clock (performance.now) and write timestamps: the clock warm-up's length after a short gap and
// after an idle one, when it stops, the batch's run count, the probe, and sliced runs. No GPU, no Dawn.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SUBMIT_BUDGET_MS } from '../src/kernels/gpu/gridSlice';
import {
  CLOCK_WARM_MS,
  clockWarmMs,
  timedBatches,
  timeWork,
  type TimedWork,
} from '../src/kernels/gpu/timing';
import { fakeCaps } from '../src/kernels/gpu/testCaps';

Object.assign(globalThis, {
  GPUBufferUsage: { MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, QUERY_RESOLVE: 512 },
});

afterEach(() => vi.restoreAllMocks());

/**
 * A device whose `n`th run takes `runMs(n)` of wall time (advanced when its submission is waited for) and
 * whose timestamps span the timed runs exactly. Logs each encoded batch's run count, timed or untimed.
 */
function fakeDevice(runMs: (n: number) => number, timestamps = true, tickMs = 0) {
  let clock = 10_000;
  let calls = 0;
  // A host clock of `tickMs` steps: it moves on every third read.
  vi.spyOn(performance, 'now').mockImplementation(() => (clock += ++calls % 3 === 0 ? tickMs : 0));
  let done = 0;
  let pendingMs = 0;
  let lastTimedMs = 0;
  const log = { untimed: [] as number[], timed: [] as number[] };
  const device = {
    features: new Set(timestamps ? ['timestamp-query'] : []),
    createCommandEncoder: () => ({ resolveQuerySet: () => undefined, finish: () => ({}) }),
    createQuerySet: () => ({ destroy: () => undefined }),
    createBuffer: () => ({ destroy: () => undefined }),
    queue: {
      submit: () => undefined,
      onSubmittedWorkDone: async () => {
        clock += pendingMs;
        pendingMs = 0;
      },
    },
  } as unknown as GPUDevice;
  const work: TimedWork = {
    device,
    probeRuns: 2,
    encode: (_enc, runs, ts) => {
      let ms = 0;
      for (let i = 0; i < runs; i++) ms += runMs(done++);
      (ts ? log.timed : log.untimed).push(runs);
      if (ts) lastTimedMs = ms;
      pendingMs += ms;
    },
    read: async () => {
      clock += pendingMs;
      pendingMs = 0;
      const t0 = 7_000n;
      return new BigUint64Array([t0, t0 + BigInt(Math.round(lastTimedMs * 1e6))]).buffer;
    },
  };
  return { work, log, idle: (ms: number) => void (clock += ms) };
}

describe('the clock warm-up', () => {
  it('is four times as long on a device idle past 500 ms as after a short gap', async () => {
    // 1 us a run: a warm-up batch is capped at 4096 runs (4.1 ms), so its length counts batches.
    const d = fakeDevice(() => 0.001);
    const o = { targetMs: 1, batches: 1, warmMs: 5 };
    await timeWork(d.work, o);
    // The probe (2 runs), then warm-up batches until 4 x 5 ms is spent: five of 4096 runs.
    expect(d.log.untimed).toEqual([2, 4096, 4096, 4096, 4096, 4096]);
    d.log.untimed.length = 0;
    d.idle(400);
    await timeWork(d.work, o);
    // 5 ms, and two batches in a row no faster than the one before: two batches.
    expect(d.log.untimed).toEqual([2, 4096, 4096]);
    d.log.untimed.length = 0;
    d.idle(600);
    await timeWork(d.work, o);
    expect(d.log.untimed).toEqual([2, 4096, 4096, 4096, 4096, 4096]);
  });

  it('sizes a warm-up batch to 25 ms of runs at the last speed seen', async () => {
    const d = fakeDevice(() => 0.5);
    await timeWork(d.work, { targetMs: 1, batches: 1, warmMs: 5 });
    // 0.5 ms a run: 50 runs a batch; 20 ms reached after one, settled after two.
    expect(d.log.untimed).toEqual([2, 50, 50]);
  });

  it('goes on while each batch runs over 2% faster than the last, and stops at ten times its length', async () => {
    // Each run faster than the last, without end (25 / (50 + n) ms): every warm-up batch runs far more
    // than 2% faster than the one before, never settled, so the warm-up stops at 10 x 10 ms of wall time;
    // the batch after the one that crosses it is never run.
    const runMs = (n: number) => 25 / (50 + n);
    const d = fakeDevice(runMs);
    const warmMs = 10;
    await timeWork(d.work, { targetMs: 1, batches: 1, warmMs });
    const warmUp = d.log.untimed.slice(1);
    expect(warmUp.length).toBeGreaterThan(2);
    let spent = 0;
    let n = 2;
    const spentBefore: number[] = [];
    for (const runs of warmUp) {
      spentBefore.push(spent);
      for (let i = 0; i < runs; i++) spent += runMs(n++);
    }
    expect(spentBefore.every((x) => x < 10 * warmMs)).toBe(true);
    expect(spent).toBeGreaterThanOrEqual(10 * warmMs);
    // Slowing down by 1% a batch counts as settled (no more than 2% faster): the usual two batches.
    const steady = fakeDevice((n) => 0.1 * 1.0001 ** n);
    steady.idle(1000);
    await timeWork(steady.work, { targetMs: 1, batches: 1, warmMs: 5 });
    expect(steady.log.untimed).toHaveLength(3);
  });

  it('is skipped without warmMs, and on a software adapter clockWarmMs is 0', async () => {
    const d = fakeDevice(() => 0.01);
    await timeWork(d.work, { targetMs: 1, batches: 1, warmMs: 0 });
    expect(d.log.untimed).toEqual([2]);
    expect(clockWarmMs(fakeCaps({ architecture: 'swiftshader' }))).toBe(0);
    expect(clockWarmMs(fakeCaps({ vendor: 'nvidia' }))).toBe(CLOCK_WARM_MS);
  });
});

describe('a timed batch', () => {
  it('takes targetMs of runs at the probed speed, at most maxRuns and at least one', async () => {
    const d = fakeDevice(() => 0.02);
    const t = await timeWork(d.work, { targetMs: 3, batches: 2 });
    expect(t.runs).toBe(150);
    expect(d.log.timed).toEqual([150, 150]);
    expect(t.ms).toBeCloseTo(0.02, 9);
    expect(t.samples).toHaveLength(2);
    expect((await timeWork(d.work, { targetMs: 3, batches: 1, maxRuns: 40 })).runs).toBe(40);
    expect((await timeWork(d.work, { targetMs: 0.001, batches: 1 })).runs).toBe(1);
    // A given estimate replaces the probe's figure (and the probe still runs when it is short).
    const e = fakeDevice(() => 0.02);
    const te = await timeWork(e.work, { targetMs: 3, batches: 1, estimateMs: 0.1 });
    expect(te.runs).toBe(30);
    expect(e.log.untimed).toEqual([2]);
  });

  it('without timestamps is timed by the wall clock', async () => {
    const d = fakeDevice(() => 0.04, false);
    const t = await timeWork(d.work, { targetMs: 2, batches: 2 });
    expect(t.method).toBe('wall');
    expect(t.runs).toBe(50);
    expect(t.ms).toBeCloseTo(0.04, 9);
    expect(d.log.untimed).toEqual([2, 50, 50]);
  });

  it("reports the wall clock's step as the resolution, and a batch of under 10 steps as coarse", async () => {
    const d = fakeDevice(() => 0.001, false, 0.002);
    const t = await timeWork(d.work, { targetMs: 0.01, batches: 1, estimateMs: 0.001 });
    expect(t.resolutionNs).toBe(2000);
    expect(t.runs).toBe(10);
    // 10 runs of 1 us and the step's share: at least 10 us, under 10 steps of 2 us.
    expect(t.coarse).toBe(t.ms * t.runs * 1e6 < 20_000);
    const fine = fakeDevice(() => 0.01, false, 0.002);
    const f = await timeWork(fine.work, { targetMs: 2, batches: 1, estimateMs: 0.01 });
    expect(f.resolutionNs).toBe(2000);
    expect(f.coarse).toBe(false);
  });
});

it('a timed batch of exactly 10 timer steps is not coarse; of fewer, it is', async () => {
  // Timestamps 7 us apart from 0 and 10 us spans: the step is 1 us.
  const ten = await timeWork(fakeDevice(() => 0.001).work, { targetMs: 0.01, batches: 1, estimateMs: 0.001 });
  expect([ten.resolutionNs, ten.runs, ten.coarse]).toEqual([1000, 10, false]);
  const nine = await timeWork(fakeDevice(() => 0.001).work, {
    targetMs: 0.009,
    batches: 1,
    estimateMs: 0.001,
  });
  expect([nine.resolutionNs, nine.runs, nine.coarse]).toEqual([1000, 9, true]);
});

describe('timedBatches', () => {
  it('plans the given batches until they are all in, then twice as many while they disagree', async () => {
    const seq = [1, 2, 1, 1, 1, 1];
    let i = 0;
    const planned: [number, number][] = [];
    const samples = await timedBatches(
      3,
      async () => seq[i++]!,
      undefined,
      (done, plan) => void planned.push([done, plan]),
    );
    expect(samples).toEqual(seq);
    // Batches that agree: just the given number.
    expect(await timedBatches(2, async () => 1)).toEqual([1, 1]);
    expect(planned).toEqual([
      [1, 3],
      [2, 3],
      [3, 6],
      [4, 6],
      [5, 6],
      [6, 6],
    ]);
  });
});

describe('a long run', () => {
  it('skips the probe where its runs would pass the submission budget, and times one sliced run a batch', async () => {
    // No timestamps: a sliced run is timed by the wall clock around it.
    const d = fakeDevice(() => 0.01, false);
    let sliced = 0;
    const long = { ...d.work, runSliced: async () => void sliced++ };
    const t = await timeWork(long, { targetMs: 1, batches: 2, upperMs: SUBMIT_BUDGET_MS + 1, warmMs: 5 });
    expect(t.runs).toBe(1);
    expect(sliced).toBe(2);
    expect(d.log.untimed).toEqual([]); // no probe, no warm-up
    // A run of half the budget is not sliced, but two probe runs would pass it: no probe either.
    const half = fakeDevice(() => 0.01);
    const th = await timeWork(
      { ...half.work, runSliced: async () => void sliced++ },
      { targetMs: 1, batches: 1, upperMs: SUBMIT_BUDGET_MS / 2 + 1 },
    );
    expect(half.log.untimed).toEqual([]);
    expect(th.runs).toBe(1);
    // Exactly the budget over the probe's runs: it runs.
    const edge = fakeDevice(() => 0.01);
    await timeWork(edge.work, { targetMs: 1, batches: 1, upperMs: SUBMIT_BUDGET_MS / 2 });
    expect(edge.log.untimed).toEqual([2]);
    // A run at the budget exactly is submitted whole.
    const whole = fakeDevice(() => 0.01);
    await timeWork(
      { ...whole.work, runSliced: async () => void sliced++ },
      { targetMs: 1, batches: 1, estimateMs: SUBMIT_BUDGET_MS },
    );
    expect(whole.log.timed).toEqual([1]);
  });
});
