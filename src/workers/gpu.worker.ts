// The GPU web worker: a thin shell that hands every message to the pure core (./core.ts), which owns the
// GPUDevice. Results go back with their typed arrays transferred, not copied.
/// <reference lib="webworker" />
import { KERNEL_FAMILIES } from '../kernels';
import { createGpuCore } from './core';
import type { WorkerRequest } from './protocol';
import { handleTuneRequest } from './tune/handler';

declare const self: DedicatedWorkerGlobalScope;

const core = createGpuCore({
  gpu: navigator.gpu,
  families: KERNEL_FAMILIES,
  post: (msg, transfer) => self.postMessage(msg, transfer),
  tune: (req, ctx) => handleTuneRequest({ ...ctx, isCancelled: () => ctx.isCancelled() }, req, ctx.post),
});

self.addEventListener('message', (ev: MessageEvent<WorkerRequest>) => {
  void core.handle(ev.data);
});
