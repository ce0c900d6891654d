// The worker client against fake ports: request ids, progress, final messages, device loss, worker
// errors, and cancel: a queued request answered at once, the one in flight given a grace period and the
// worker replaced when it does not answer (requests behind it sent again, open files re-opened).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WorkerRequest, WorkerResponse } from '../../workers/protocol';
import { createWorkerClient, type WorkerPort } from './client';

/** A port whose replies the test pushes by hand. */
function fakePort() {
  const sent: WorkerRequest[] = [];
  const on: { message: ((ev: MessageEvent<WorkerResponse>) => void)[]; error: ((ev: Event) => void)[] } = {
    message: [],
    error: [],
  };
  let terminated = false;
  const port: WorkerPort = {
    postMessage: (m) => void sent.push(m),
    addEventListener: ((type: 'message' | 'error', l: never) =>
      void on[type].push(l)) as WorkerPort['addEventListener'],
    terminate: () => void (terminated = true),
  };
  const push = (data: WorkerResponse) =>
    on.message.forEach((l) => l({ data } as MessageEvent<WorkerResponse>));
  const fail = (message: string) =>
    on.error.forEach((l) => l(Object.assign(new Event('error'), { message })));
  return { port, sent, push, fail, terminated: () => terminated };
}

const RUN = { type: 'run', config: {} as never, instrument: false } as const;

describe('worker client', () => {
  it('numbers requests, streams progress to the caller and resolves on the final message', async () => {
    const f = fakePort();
    const client = createWorkerClient(() => f.port);
    const progress: string[] = [];
    const { id, done } = client.request(RUN, (m) => {
      if (m.type === 'progress') progress.push(m.stage);
    });
    expect(f.sent).toEqual([{ ...RUN, id }]);
    f.push({ type: 'progress', id, stage: 'compiling', fraction: 0.2 });
    f.push({ type: 'progress', id: id + 99, stage: 'someone else', fraction: 0.2 });
    f.push({ type: 'cancelled', id });
    await expect(done).resolves.toEqual({ type: 'cancelled', id });
    expect(progress).toEqual(['compiling']);
  });

  it("resolves init on 'ready' and a gguf open on 'gguf-opened'", async () => {
    const f = fakePort();
    const client = createWorkerClient(() => f.port);
    const init = client.request({ type: 'init' });
    f.push({ type: 'ready', id: init.id, caps: {} as never, deviceId: 'd', plane: 4 });
    await expect(init.done).resolves.toMatchObject({ type: 'ready' });
    const open = client.request({ type: 'open-gguf', file: new Blob(['x']), name: 'a.gguf' });
    f.push({ type: 'gguf-opened', id: open.id, model: {} as never });
    await expect(open.done).resolves.toMatchObject({ type: 'gguf-opened' });
    client.cancel(init.id); // finished: nothing to cancel
    expect(f.sent.filter((m) => m.type === 'cancel')).toEqual([]);
  });

  it("a model run streams 'model-progress' and ends on 'model-run-done'; a pick on 'pick-result'", async () => {
    const f = fakePort();
    const client = createWorkerClient(() => f.port);
    const timing = { targetMs: 1, batches: 1 };
    const picked: number[] = [];
    const gemm = { type: 'Q4_K', n: 1, k: 256, rows: 1 };
    const result = { gemm, candidates: [], measured: true };
    const run = client.request({ type: 'model-run', gemms: [{ gemm }], timing }, (m) => {
      if (m.type === 'model-progress') picked.push(m.index);
    });
    f.push({ type: 'model-progress', id: run.id, index: 0, result });
    f.push({ type: 'model-run-done', id: run.id, results: [result] });
    await expect(run.done).resolves.toMatchObject({ type: 'model-run-done' });
    expect(picked).toEqual([0]);
    const pick = client.request({ type: 'pick', gemm, timing });
    f.push({ type: 'pick-result', id: pick.id, result });
    await expect(pick.done).resolves.toMatchObject({ type: 'pick-result' });
  });

  it('tells listeners about device loss and ends a lose-device request with it', async () => {
    const f = fakePort();
    const client = createWorkerClient(() => f.port);
    const seen: string[] = [];
    client.onEvent((m) => seen.push(m.type));
    const lose = client.request({ type: 'lose-device' });
    f.push({ type: 'device-lost', reason: 'destroyed', message: 'gone' });
    await expect(lose.done).resolves.toMatchObject({ type: 'device-lost' });
    expect(seen).toEqual(['device-lost']);
  });

  it('fails every pending request when the worker itself errors', async () => {
    const f = fakePort();
    const client = createWorkerClient(() => f.port);
    const a = client.request({ type: 'init' });
    f.fail('worker script failed to load');
    await expect(a.done).resolves.toEqual({
      type: 'error',
      id: a.id,
      kind: 'internal',
      message: 'worker script failed to load',
    });
  });
});

describe('cancel within a second', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('answers a request queued behind another at once, and lets the worker drop it', async () => {
    const f = fakePort();
    const client = createWorkerClient(() => f.port);
    const hunt = client.request({ type: 'tune', base: {} as never, evo: {} as never });
    const run = client.request(RUN);
    expect(client.inFlight(hunt.id)).toBe(true);
    expect(client.inFlight(run.id)).toBe(false);
    client.cancel(run.id);
    await expect(run.done).resolves.toEqual({ type: 'cancelled', id: run.id });
    expect(f.sent.at(-1)).toEqual({ type: 'cancel', id: run.id });
    expect(client.inFlight(hunt.id)).toBe(true); // the hunt goes on
  });

  it('answers the request in flight when the worker does', async () => {
    const f = fakePort();
    const spawn = vi.fn(() => f.port);
    const client = createWorkerClient(spawn, { cancelGraceMs: 800 });
    const run = client.request(RUN);
    client.cancel(run.id);
    f.push({ type: 'cancelled', id: run.id });
    await expect(run.done).resolves.toEqual({ type: 'cancelled', id: run.id });
    vi.advanceTimersByTime(2000);
    expect(spawn).toHaveBeenCalledTimes(1);
  });

  it('replaces a worker stuck in a dispatch: answers the cancel, re-sends the queue, re-opens files', async () => {
    const ports = [fakePort(), fakePort()];
    let n = 0;
    const client = createWorkerClient(() => ports[n++]!.port, { cancelGraceMs: 800 });
    const respawns: string[] = [];
    client.onRespawn((why) => respawns.push(why));
    const file = new Blob(['gguf']);
    const open = client.request({ type: 'open-gguf', file, name: 'model.gguf' });
    ports[0]!.push({ type: 'gguf-opened', id: open.id, model: {} as never });
    await open.done;
    const run = client.request(RUN);
    const gen = client.request({ type: 'generate', config: {} as never });
    client.cancel(run.id);
    vi.advanceTimersByTime(799);
    expect(n).toBe(1);
    vi.advanceTimersByTime(1);
    await expect(run.done).resolves.toEqual({ type: 'cancelled', id: run.id });
    expect(respawns).toHaveLength(1);
    // The old worker is not terminated mid-dispatch (its device's destruction waited for the dispatch
    // where the page is drawn); it is told to drop its queue, and terminated once it answers the cancel.
    expect(ports[0]!.terminated()).toBe(false);
    expect(ports[0]!.sent.filter((m) => m.type === 'cancel').map((m) => m.id)).toContain(gen.id);
    ports[0]!.push({ type: 'cancelled', id: run.id });
    expect(ports[0]!.terminated()).toBe(true);
    // The new worker: a device first, the open file again, then the generate that was queued (same id).
    const sent = ports[1]!.sent;
    expect(sent.map((m) => m.type)).toEqual(['init', 'open-gguf', 'generate']);
    expect(sent[1]).toMatchObject({ file, name: 'model.gguf' });
    expect(sent[2]!.id).toBe(gen.id);
    // Late messages of the old worker are ignored; the new one answers the generate.
    ports[0]!.push({
      type: 'generated',
      id: gen.id,
      kernel: { passes: [], mainPass: 0, phases: [], plane: 4, problems: ['old'] },
    });
    ports[1]!.push({
      type: 'generated',
      id: gen.id,
      kernel: { passes: [], mainPass: 0, phases: [], plane: 4, problems: [] },
    });
    await expect(gen.done).resolves.toMatchObject({ kernel: { problems: [] } });
  });

  it('by default a stuck request is answered within 0.4 s, leaving the second for the respawn and the page', async () => {
    const ports = [fakePort(), fakePort()];
    let n = 0;
    const client = createWorkerClient(() => ports[n++]!.port);
    const run = client.request(RUN);
    client.cancel(run.id);
    vi.advanceTimersByTime(400);
    await expect(run.done).resolves.toEqual({ type: 'cancelled', id: run.id });
    expect(n).toBe(2);
  });

  it('a replacement worker re-opens the files opened last, at most filesKept of them', async () => {
    const ports = [fakePort(), fakePort()];
    let n = 0;
    const client = createWorkerClient(() => ports[n++]!.port, { cancelGraceMs: 100, filesKept: 2 });
    for (const name of ['a.gguf', 'b.gguf', 'c.gguf']) {
      const open = client.request({ type: 'open-gguf', file: new Blob([name]), name });
      ports[0]!.push({ type: 'gguf-opened', id: open.id, model: {} as never });
      await open.done;
    }
    const run = client.request(RUN);
    client.cancel(run.id);
    vi.advanceTimersByTime(100);
    await run.done;
    const reopened = ports[1]!.sent.flatMap((m) => (m.type === 'open-gguf' ? [m.name] : []));
    expect(reopened).toEqual(['b.gguf', 'c.gguf']);
  });

  it('a worker stuck on the CPU (an oracle: nothing on the GPU) is terminated at once, no drain', () => {
    const ports = [fakePort(), fakePort()];
    let n = 0;
    const client = createWorkerClient(() => ports[n++]!.port, { cancelGraceMs: 100 });
    const drains: unknown[] = [];
    client.onDrain((d) => drains.push(d));
    const run = client.request(RUN);
    ports[0]!.push({ type: 'progress', id: run.id, stage: 'oracle', fraction: 0.6, busy: 'cpu' });
    client.cancel(run.id);
    vi.advanceTimersByTime(100);
    expect(ports[0]!.terminated()).toBe(true);
    expect(drains).toEqual([]);
  });

  it('a worker stuck on the GPU drains: listeners hear what was left and when the GPU is free', () => {
    const ports = [fakePort(), fakePort()];
    let n = 0;
    let t = 1000;
    const client = createWorkerClient(() => ports[n++]!.port, { cancelGraceMs: 100, now: () => t });
    const drains: unknown[] = [];
    client.onDrain((d) => drains.push(d));
    const run = client.request(RUN);
    ports[0]!.push({
      type: 'progress',
      id: run.id,
      stage: 'running',
      fraction: 0.2,
      busy: 'gpu',
      gpuMs: 3000,
    });
    client.cancel(run.id);
    t = 2000; // a second of the 3 s it had submitted has gone
    vi.advanceTimersByTime(100);
    expect(ports[0]!.terminated()).toBe(false);
    expect(drains).toEqual([{ since: 2000, expectedMs: 2000 }]);
    ports[0]!.push({ type: 'cancelled', id: run.id }); // its slice ended and it saw the cancel
    expect(ports[0]!.terminated()).toBe(true);
    expect(drains).toEqual([{ since: 2000, expectedMs: 2000 }, undefined]);
  });

  it('a drain with nothing known says so (no estimate), and ends at retireMs at the latest', () => {
    const ports = [fakePort(), fakePort()];
    let n = 0;
    const client = createWorkerClient(() => ports[n++]!.port, {
      cancelGraceMs: 100,
      retireMs: 5_000,
      now: () => 7,
    });
    const drains: unknown[] = [];
    client.onDrain((d) => drains.push(d));
    const run = client.request(RUN);
    client.cancel(run.id);
    vi.advanceTimersByTime(100);
    expect(drains).toEqual([{ since: 7 }]);
    vi.advanceTimersByTime(5_000);
    expect(drains).toEqual([{ since: 7 }, undefined]);
    expect(ports[0]!.terminated()).toBe(true);
  });

  it("serves 'oracle' outside the queue: it is never the request in flight", () => {
    const f = fakePort();
    const client = createWorkerClient(() => f.port);
    const oracle = client.request({ type: 'oracle', config: {} as never });
    const run = client.request(RUN);
    expect(client.inFlight(oracle.id)).toBe(false);
    expect(client.inFlight(run.id)).toBe(true);
  });

  it('terminates a replaced worker that never answers after retireMs', () => {
    const ports = [fakePort(), fakePort()];
    let n = 0;
    const client = createWorkerClient(() => ports[n++]!.port, { cancelGraceMs: 100, retireMs: 5_000 });
    const run = client.request(RUN);
    client.cancel(run.id);
    vi.advanceTimersByTime(100);
    expect(n).toBe(2);
    vi.advanceTimersByTime(4_999);
    expect(ports[0]!.terminated()).toBe(false);
    vi.advanceTimersByTime(1);
    expect(ports[0]!.terminated()).toBe(true);
  });
});
