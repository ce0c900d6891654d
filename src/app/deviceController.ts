// The GPU device's wiring: opening it (the worker's 'init'), and what the worker says of it unasked -- ready
// (a new or re-opened device), lost, unsupported, a worker replaced after a cancel, its old GPU work
// draining -- turned into the store's device state. The run controller re-opens a lost device through it.
import type { WorkerResponse } from '../workers/protocol';
import type { Guard } from './guard';
import { act, deviceLost, deviceReady, deviceRestarting, deviceUnavailable, gpuDraining } from './store';
import type { WorkerClient } from './worker/client';

export interface DeviceController {
  /** Open the device; a failure says WebGPU is unavailable here (and why). */
  init(): void;
  /** Diagnostics: destroy the device; the next request re-opens it. */
  loseDevice(): void;
}

/**
 * The device controller over the app's worker client; it listens to the worker from creation on.
 * @example const device = createDeviceController({ client, guard }); device.init();
 */
export function createDeviceController(env: { client: WorkerClient; guard: Guard }): DeviceController {
  const { client, guard } = env;
  client.onEvent((msg: WorkerResponse) => {
    if (msg.type === 'ready') act(deviceReady, msg.caps, msg.deviceId, msg.plane);
    else if (msg.type === 'device-lost') act(deviceLost, msg.reason, msg.message);
    else if (msg.type === 'error' && msg.kind === 'unsupported') act(deviceUnavailable, msg.message);
  });
  client.onRespawn((reason) => {
    // A new worker has compiled nothing yet: the guard's estimates count compiling again.
    guard.forgetCompiled();
    act(deviceRestarting, `restarting the GPU worker: ${reason}`);
  });
  client.onDrain((d) => act(gpuDraining, d));
  return {
    init() {
      void client.request({ type: 'init' }).done.then((msg) => {
        if (msg.type === 'error') act(deviceUnavailable, msg.message);
      });
    },
    loseDevice() {
      client.request({ type: 'lose-device' });
    },
  };
}
