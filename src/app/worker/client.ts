// The app's one way to the GPU: a typed client over the worker protocol. Each request gets an id; its
// intermediate messages (progress) go to the caller's callback and its final message resolves `done`.
// Messages that belong to no request (device-lost, a 'ready' after a re-open) go to `onEvent` listeners.
import type { WorkerRequest, WorkerRequestBody, WorkerResponse } from '../../workers/protocol';

/** What the client needs of a worker: a Worker, or an in-process port for tests. */
export interface WorkerPort {
  postMessage(msg: WorkerRequest): void;
  addEventListener(type: 'message', listener: (ev: MessageEvent<WorkerResponse>) => void): void;
  addEventListener(type: 'error', listener: (ev: ErrorEvent | Event) => void): void;
  terminate?(): void;
}

export interface Pending {
  id: number;
  /** The request's final message (result, error, cancelled). */
  done: Promise<WorkerResponse>;
}

export interface WorkerClient {
  /** Send a request; `onMessage` sees every message for it, progress included. */
  request(
    body: Exclude<WorkerRequestBody, { type: 'cancel' }>,
    onMessage?: (msg: WorkerResponse) => void,
  ): Pending;
  /** Ask the worker to stop request `id` at its next stage boundary. */
  cancel(id: number): void;
  /** Listen to every message (and to messages of no request); returns the unsubscribe function. */
  onEvent(listener: (msg: WorkerResponse) => void): () => void;
}

const FINAL: ReadonlySet<WorkerResponse['type']> = new Set([
  'generated',
  'run-result',
  'compile-error',
  'tune-done',
  'autokernel-result',
  'cancelled',
  'error',
]);

interface Waiting {
  type: WorkerRequest['type'];
  onMessage: ((msg: WorkerResponse) => void) | undefined;
  resolve: (msg: WorkerResponse) => void;
}

/**
 * Wrap a worker in the typed client.
 * @example
 * const client = createWorkerClient(new Worker(new URL('../../workers/gpu.worker.ts', import.meta.url), { type: 'module' }));
 * const { done } = client.request({ type: 'init' });
 */
export function createWorkerClient(port: WorkerPort): WorkerClient {
  let nextId = 1;
  const waiting = new Map<number, Waiting>();
  const listeners = new Set<(msg: WorkerResponse) => void>();

  const finish = (id: number, msg: WorkerResponse) => {
    const w = waiting.get(id);
    if (!w) return;
    waiting.delete(id);
    w.resolve(msg);
  };

  port.addEventListener('message', (ev: MessageEvent<WorkerResponse>) => {
    const msg = ev.data;
    for (const l of listeners) l(msg);
    if (msg.type === 'device-lost') {
      // A loss ends the diagnostic request that caused it; runs in flight end with their own error.
      for (const [id, w] of waiting) if (w.type === 'lose-device') finish(id, msg);
      return;
    }
    const w = waiting.get(msg.id);
    if (!w) return;
    w.onMessage?.(msg);
    if (FINAL.has(msg.type) || (msg.type === 'ready' && w.type === 'init')) finish(msg.id, msg);
  });

  port.addEventListener('error', (ev: ErrorEvent | Event) => {
    const text = 'message' in ev && ev.message ? ev.message : 'the GPU worker failed to start';
    for (const id of [...waiting.keys()]) {
      const msg: WorkerResponse = { type: 'error', id, kind: 'internal', message: text };
      for (const l of listeners) l(msg);
      finish(id, msg);
    }
  });

  return {
    request(body, onMessage) {
      const id = nextId++;
      const done = new Promise<WorkerResponse>((resolve) =>
        waiting.set(id, { type: body.type, onMessage, resolve }),
      );
      port.postMessage({ ...body, id } as WorkerRequest);
      return { id, done };
    },
    cancel(id) {
      if (waiting.has(id)) port.postMessage({ type: 'cancel', id });
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
