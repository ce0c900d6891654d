// The device and probe controllers alone, over a worker client that only delivers what the test sends.
import { beforeEach, describe, expect, it } from 'vitest';
import { CATALOG } from '../kernels/catalog';
import type { WorkerResponse } from '../workers/protocol';
import { createDeviceController } from './deviceController';
import { createGuard } from './guard';
import { createProbeController } from './probeController';
import { createAppStore, getApp, initialState } from './store';
import { SWIFTSHADER_CAPS } from './store/caps.fixture';
import type { Draining, RequestBody, WorkerClient } from './worker/client';

/** A client whose events and replies the test makes. */
function fakeClient(reply: (body: RequestBody) => WorkerResponse) {
  const events = new Set<(m: WorkerResponse) => void>();
  const respawns = new Set<(reason: string) => void>();
  const drains = new Set<(d: Draining | undefined) => void>();
  const sent: RequestBody[] = [];
  const client: WorkerClient = {
    request(body) {
      sent.push(body);
      return { id: sent.length, done: Promise.resolve(reply(body)) };
    },
    cancel: () => undefined,
    inFlight: () => false,
    onEvent: (l) => (events.add(l), () => events.delete(l)),
    onRespawn: (l) => (respawns.add(l), () => respawns.delete(l)),
    onDrain: (l) => (drains.add(l), () => drains.delete(l)),
  } as WorkerClient;
  return {
    client,
    sent,
    event: (m: WorkerResponse) => events.forEach((l) => l(m)),
    respawn: (r: string) => respawns.forEach((l) => l(r)),
    drain: (d: Draining | undefined) => drains.forEach((l) => l(d)),
  };
}

beforeEach(() => createAppStore(initialState(CATALOG.families, 'mmq-q4k-tile')));

describe('the device controller', () => {
  it("turns the worker's unasked messages into the device state", () => {
    const w = fakeClient(() => ({ type: 'error', id: 1, kind: 'internal', message: 'x' }));
    createDeviceController({ client: w.client, guard: createGuard() });
    w.event({
      type: 'ready',
      id: 0,
      caps: SWIFTSHADER_CAPS,
      deviceId: 'google/swiftshader#plane4',
      plane: 4,
    });
    expect(getApp().device).toMatchObject({ status: 'ready', plane: 4 });
    w.event({ type: 'device-lost', reason: 'destroyed', message: 'gone' });
    expect(getApp().device).toMatchObject({ status: 'lost', message: 'gone (reason: destroyed)', losses: 1 });
    w.respawn('a cancelled run did not stop');
    expect(getApp().device).toMatchObject({ status: 'starting', restarts: 1 });
    w.drain({ since: 5 });
    expect(getApp().device.draining).toEqual({ since: 5 });
    w.event({ type: 'error', id: 0, kind: 'unsupported', message: 'no adapter' });
    expect(getApp().device).toMatchObject({ status: 'unavailable', message: 'no adapter' });
  });

  it('says WebGPU is unavailable when opening the device fails', async () => {
    const w = fakeClient(() => ({
      type: 'error',
      id: 1,
      kind: 'unsupported',
      message: 'navigator.gpu is missing',
    }));
    createDeviceController({ client: w.client, guard: createGuard() }).init();
    expect(w.sent).toEqual([{ type: 'init' }]);
    await Promise.resolve();
    expect(getApp().device).toMatchObject({ status: 'unavailable', message: 'navigator.gpu is missing' });
  });
});

describe('the probe controller', () => {
  it("answers the worker's peaks, and rejects with its message", async () => {
    const failing = fakeClient(() => ({ type: 'error', id: 1, kind: 'internal', message: 'probe failed' }));
    await expect(createProbeController({ client: failing.client }).probe()).rejects.toThrow('probe failed');
    const odd = fakeClient(() => ({ type: 'cancelled', id: 1 }));
    await expect(createProbeController({ client: odd.client }).probe()).rejects.toThrow(
      "the probe ended with 'cancelled'",
    );
  });
});
