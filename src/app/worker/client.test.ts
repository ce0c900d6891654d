import { describe, expect, it } from 'vitest';
import type { WorkerRequest, WorkerResponse } from '../../workers/protocol';
import { createWorkerClient, type WorkerPort } from './client';

/** A port whose replies the test pushes by hand. */
function fakePort() {
  const sent: WorkerRequest[] = [];
  const on: { message: ((ev: MessageEvent<WorkerResponse>) => void)[]; error: ((ev: Event) => void)[] } = {
    message: [],
    error: [],
  };
  const port: WorkerPort = {
    postMessage: (m) => void sent.push(m),
    addEventListener: ((type: 'message' | 'error', l: never) =>
      void on[type].push(l)) as WorkerPort['addEventListener'],
  };
  const push = (data: WorkerResponse) =>
    on.message.forEach((l) => l({ data } as MessageEvent<WorkerResponse>));
  const fail = (message: string) =>
    on.error.forEach((l) => l(Object.assign(new Event('error'), { message })));
  return { port, sent, push, fail };
}

describe('worker client', () => {
  it('numbers requests, streams progress to the caller and resolves on the final message', async () => {
    const f = fakePort();
    const client = createWorkerClient(f.port);
    const progress: string[] = [];
    const { id, done } = client.request(
      { type: 'run', config: {} as never, iters: 0, instrument: false },
      (m) => {
        if (m.type === 'progress') progress.push(m.stage);
      },
    );
    expect(f.sent).toEqual([{ type: 'run', config: {}, iters: 0, instrument: false, id }]);
    f.push({ type: 'progress', id, stage: 'compiling', fraction: 0.2 });
    f.push({ type: 'progress', id: id + 99, stage: 'someone else', fraction: 0.2 });
    f.push({ type: 'cancelled', id });
    await expect(done).resolves.toEqual({ type: 'cancelled', id });
    expect(progress).toEqual(['compiling']);
  });

  it("resolves init on 'ready' and sends cancel only for requests in flight", async () => {
    const f = fakePort();
    const client = createWorkerClient(f.port);
    const init = client.request({ type: 'init' });
    client.cancel(init.id);
    f.push({ type: 'ready', id: init.id, caps: {} as never, deviceId: 'd', plane: 4 });
    await init.done;
    client.cancel(init.id); // finished: nothing to cancel
    expect(f.sent.filter((m) => m.type === 'cancel')).toEqual([{ type: 'cancel', id: init.id }]);
  });

  it('tells listeners about device loss and ends a lose-device request with it', async () => {
    const f = fakePort();
    const client = createWorkerClient(f.port);
    const seen: string[] = [];
    client.onEvent((m) => seen.push(m.type));
    const lose = client.request({ type: 'lose-device' });
    f.push({ type: 'device-lost', reason: 'destroyed', message: 'gone' });
    await expect(lose.done).resolves.toMatchObject({ type: 'device-lost' });
    expect(seen).toEqual(['device-lost']);
  });

  it('fails every pending request when the worker itself errors', async () => {
    const f = fakePort();
    const client = createWorkerClient(f.port);
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
