// The app's one way to the GPU: a typed client over the worker protocol. Each request gets an id; its
// intermediate messages (progress) go to the caller's callback and its final message resolves `done`.
// Messages that belong to no request (device-lost, a 'ready' after a re-open) go to `onEvent` listeners.
//
// Cancel answers within a second whatever the worker is doing. The worker serves requests one at a time
// in order, so the client knows which one is in flight: a request still queued behind it is answered
// 'cancelled' at once (the worker drops it when it gets there); the one in flight is asked to stop, and
// when it has not answered within `cancelGraceMs` (a long dispatch cannot be interrupted) a new worker is
// started (the old one is terminated once its dispatch ends): the cancelled request is answered, the requests queued behind it
// are sent again in order, and the GGUF files the old worker had open are opened again. Nothing of the
// app's state (editor buffers, results, the tuner's measurements) lives in the worker, so nothing is lost.
import type { WorkerRequest, WorkerRequestBody, WorkerResponse } from '../../workers/protocol';

/** What the client needs of a worker: a Worker, or an in-process port for tests. */
export interface WorkerPort {
  postMessage(msg: WorkerRequest): void;
  addEventListener(type: 'message', listener: (ev: MessageEvent<WorkerResponse>) => void): void;
  addEventListener(type: 'error', listener: (ev: ErrorEvent | Event) => void): void;
  terminate?(): void;
}

export type RequestBody = Exclude<WorkerRequestBody, { type: 'cancel' }>;

export interface Pending {
  id: number;
  /** The request's final message (result, error, cancelled). */
  done: Promise<WorkerResponse>;
}

export interface WorkerClient {
  /** Send a request; `onMessage` sees every message for it, progress included. */
  request(body: RequestBody, onMessage?: (msg: WorkerResponse) => void): Pending;
  /** Stop request `id`: its `done` resolves with 'cancelled' within about `cancelGraceMs`. */
  cancel(id: number): void;
  /** Whether `id` is the request the worker is serving now (false: queued behind another, or done). */
  inFlight(id: number): boolean;
  /** Listen to every message (and to messages of no request); returns the unsubscribe function. */
  onEvent(listener: (msg: WorkerResponse) => void): () => void;
  /** Called after the worker was replaced by a new one (with the reason). */
  onRespawn(listener: (reason: string) => void): () => void;
  /**
   * Called when a replaced worker's GPU work starts and ends draining (undefined: the GPU is free):
   * submitted work cannot be taken back, so the next run waits behind it and the app says so.
   */
  onDrain(listener: (draining: Draining | undefined) => void): () => void;
}

/** A replaced worker's GPU work still running after its cancel. */
export interface Draining {
  /** performance.now() when the cancel replaced the worker. */
  since: number;
  /** What it still had submitted then, ms (unknown: undefined). */
  expectedMs?: number;
}

/**
 * How long the request in flight has by default to answer a cancel, ms. A worker between timed batches
 * answers well within it; past it, replacing the worker and showing the answer took up to ~0.25 s more
 * on a loaded two-core machine (e2e/app.spec.ts measures it from the press): the README's second keeps
 * a margin.
 */
const CANCEL_GRACE_MS = 400;

export interface ClientOptions {
  /** How long the request in flight has to answer a cancel before the worker is replaced, ms. */
  cancelGraceMs?: number;
  /** Open files re-opened in a new worker (the worker keeps this many). */
  filesKept?: number;
  /** How long a replaced worker may take to finish the dispatch it is stuck in before it is terminated, ms. */
  retireMs?: number;
  /** The clock (tests pass their own). */
  now?: () => number;
}

const FINAL: ReadonlySet<WorkerResponse['type']> = new Set([
  'generated',
  'run-result',
  'compile-error',
  'tune-done',
  'probe-result',
  'autokernel-result',
  'pick-result',
  'model-run-done',
  'gguf-opened',
  'oracle-result',
  'partials-result',
  'cancelled',
  'error',
]);

/** Requests the worker's shell answers at once from the CPU, outside the GPU queue. */
const CPU_ONLY: ReadonlySet<RequestBody['type']> = new Set(['oracle', 'partials']);

interface Waiting {
  body: RequestBody;
  onMessage: ((msg: WorkerResponse) => void) | undefined;
  resolve: (msg: WorkerResponse) => void;
  /** Served outside the worker's queue (answered at once by the shell). */
  immediate: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

/** A request's last 'progress': what it was waiting on, the GPU time it expected, and when it said so. */
interface LastBusy {
  busy?: 'cpu' | 'gpu';
  gpuMs?: number;
  at: number;
}

/**
 * The replaced workers still draining their GPU work, and who listens to it (the header's indicator).
 * Retiring lets a replaced worker finish the dispatch it is stuck in, then terminates it: terminating it
 * at once destroyed its device mid-dispatch, and the GPU process waited for the dispatch on the thread
 * that also draws the page (after Cancel of a large run the tab stopped painting for minutes). Its queue
 * is cancelled (the new worker serves it), and it stops at its next cancel check and answers.
 */
function createRetirer(now: () => number, retireMs: number) {
  const listeners = new Set<(d: Draining | undefined) => void>();
  /** Replaced workers whose GPU work has not ended yet. */
  let draining = 0;
  return {
    /** Retire `old`, stuck in request `stuckId`; `busy` is that request's last progress. */
    retire(old: WorkerPort, stuckId: number, busy: LastBusy | undefined) {
      // A worker busy on the CPU (an oracle, a data build) has nothing on the GPU: it goes at once.
      if (busy?.busy === 'cpu') {
        old.terminate?.();
        return;
      }
      const t = now();
      const left = busy?.gpuMs !== undefined ? Math.max(0, busy.gpuMs - (t - busy.at)) : undefined;
      draining++;
      for (const l of listeners) l({ since: t, ...(left !== undefined ? { expectedMs: left } : {}) });
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        old.terminate?.();
        draining--;
        if (!draining) for (const l of listeners) l(undefined);
      };
      const timer = setTimeout(end, retireMs);
      old.addEventListener('message', (ev: MessageEvent<WorkerResponse>) => {
        const msg = ev.data;
        if ('id' in msg && msg.id === stuckId && FINAL.has(msg.type)) end();
      });
    },
    onDrain(listener: (d: Draining | undefined) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** What the client keeps: the worker, the requests it has not answered, and who listens. */
interface ClientSession {
  spawn: () => WorkerPort;
  grace: number;
  /** Open files re-opened in a new worker. */
  kept: number;
  now: () => number;
  retirer: ReturnType<typeof createRetirer>;
  port: WorkerPort;
  nextId: number;
  waiting: Map<number, Waiting>;
  listeners: Set<(msg: WorkerResponse) => void>;
  respawnListeners: Set<(reason: string) => void>;
  /** The last 'progress' of each request: what it was waiting on, and when it said so. */
  lastBusy: Map<number, LastBusy>;
  /** Files opened in the current worker (their requests, to open them again in a new one). */
  opened: RequestBody[];
}

/** Answer request `id` with `msg` (its final message), once. */
function finish(c: ClientSession, id: number, msg: WorkerResponse) {
  const w = c.waiting.get(id);
  if (!w) return;
  c.waiting.delete(id);
  c.lastBusy.delete(id);
  clearTimeout(w.timer);
  if (msg.type === 'gguf-opened' && w.body.type === 'open-gguf')
    c.opened = [...c.opened, w.body].slice(-c.kept);
  w.resolve(msg);
}

/** The request the worker is serving: the oldest one of its queue not yet answered. */
function head(c: ClientSession): number | undefined {
  for (const [id, w] of c.waiting) if (!w.immediate) return id;
  return undefined;
}

/** A message of worker `p`: to the listeners, and to its request (a final one answers it). */
function onPortMessage(c: ClientSession, p: WorkerPort, msg: WorkerResponse) {
  if (p !== c.port) return; // a replaced worker's late messages
  for (const l of c.listeners) l(msg);
  if (msg.type === 'device-lost') {
    // A loss ends the diagnostic request that caused it; runs in flight end with their own error.
    for (const [id, w] of c.waiting) if (w.body.type === 'lose-device') finish(c, id, msg);
    return;
  }
  const w = c.waiting.get(msg.id);
  if (!w) return;
  if (msg.type === 'progress')
    c.lastBusy.set(msg.id, {
      ...(msg.busy ? { busy: msg.busy } : {}),
      ...(msg.gpuMs !== undefined ? { gpuMs: msg.gpuMs } : {}),
      at: c.now(),
    });
  w.onMessage?.(msg);
  if (FINAL.has(msg.type) || (msg.type === 'ready' && w.body.type === 'init')) finish(c, msg.id, msg);
}

function attach(c: ClientSession, p: WorkerPort) {
  p.addEventListener('message', (ev: MessageEvent<WorkerResponse>) => onPortMessage(c, p, ev.data));
  p.addEventListener('error', (ev: ErrorEvent | Event) => {
    if (p !== c.port) return;
    const text = 'message' in ev && ev.message ? ev.message : 'the GPU worker failed to start';
    for (const id of [...c.waiting.keys()]) {
      const msg: WorkerResponse = { type: 'error', id, kind: 'internal', message: text };
      for (const l of c.listeners) l(msg);
      finish(c, id, msg);
    }
  });
}

const post = (c: ClientSession, body: RequestBody, id: number) =>
  c.port.postMessage({ ...body, id } as WorkerRequest);

/** Replace the worker: answer `cancelledId`, reopen files, send everything still waiting again. */
function respawn(c: ClientSession, cancelledId: number, reason: string) {
  const old = c.port;
  c.port = c.spawn();
  attach(c, c.port);
  // The old worker's queue is cancelled: the new one serves it.
  for (const id of c.waiting.keys()) old.postMessage({ type: 'cancel', id });
  c.retirer.retire(old, cancelledId, c.lastBusy.get(cancelledId));
  finish(c, cancelledId, { type: 'cancelled', id: cancelledId });
  // A new device opens with the first request that needs one; 'ready' reaches the listeners.
  post(c, { type: 'init' }, c.nextId++);
  for (const body of c.opened) post(c, body, c.nextId++);
  for (const [id, w] of c.waiting) post(c, w.body, id);
  for (const l of c.respawnListeners) l(reason);
}

/** Stop request `id`: a queued one is answered at once; past the grace the worker is replaced. */
function cancel(c: ClientSession, id: number) {
  const w = c.waiting.get(id);
  if (!w) return;
  c.port.postMessage({ type: 'cancel', id });
  if (head(c) !== id) {
    // Queued behind another request: the worker drops it when it gets there.
    finish(c, id, { type: 'cancelled', id });
    return;
  }
  if (!w.timer)
    w.timer = setTimeout(() => {
      if (c.waiting.has(id))
        respawn(c, id, `request ${id} (${w.body.type}) did not stop within ${c.grace} ms of its cancel`);
    }, c.grace);
}

/**
 * Start a worker with `spawn` and wrap it in the typed client (spawn is called again to replace it).
 * @example
 * const client = createWorkerClient(() => new Worker(new URL('../../workers/gpu.worker.ts', import.meta.url), { type: 'module' }));
 * const { done } = client.request({ type: 'init' });
 */
export function createWorkerClient(spawn: () => WorkerPort, opts: ClientOptions = {}): WorkerClient {
  const now = opts.now ?? (() => performance.now());
  const c: ClientSession = {
    spawn,
    grace: opts.cancelGraceMs ?? CANCEL_GRACE_MS,
    kept: opts.filesKept ?? 4,
    now,
    retirer: createRetirer(now, opts.retireMs ?? 120_000),
    port: spawn(),
    nextId: 1,
    waiting: new Map(),
    listeners: new Set(),
    respawnListeners: new Set(),
    lastBusy: new Map(),
    opened: [],
  };
  attach(c, c.port);

  return {
    request(body, onMessage) {
      const id = c.nextId++;
      const done = new Promise<WorkerResponse>((resolve) =>
        c.waiting.set(id, { body, onMessage, resolve, immediate: CPU_ONLY.has(body.type) }),
      );
      post(c, body, id);
      return { id, done };
    },
    cancel: (id) => cancel(c, id),
    inFlight: (id) => head(c) === id,
    onEvent(listener) {
      c.listeners.add(listener);
      return () => c.listeners.delete(listener);
    },
    onRespawn(listener) {
      c.respawnListeners.add(listener);
      return () => c.respawnListeners.delete(listener);
    },
    onDrain: c.retirer.onDrain,
  };
}
