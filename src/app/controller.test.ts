// The controller against a scripted worker: boot, generate -> auto-run, debounced edit runs with the
// edited WGSL, compile errors, permalinks in and out, device loss and recovery -- no GPU, no React.
import { beforeAll, describe, expect, it } from 'vitest';
import { KERNEL_FAMILIES } from '../kernels';
import type { WorkerRequestBody, WorkerResponse } from '../workers/protocol';
import { createController, type Controller } from './controller';
import { encodePermalink } from './permalink/codec';
import { act, createAppStore, dismissLinkError, getApp, initialState, permalinkOf, setTab } from './store';
import { SWIFTSHADER_CAPS } from './store/caps.fixture';
import type { WorkerClient } from './worker/client';

type Body = Exclude<WorkerRequestBody, { type: 'cancel' }>;

class ScriptedWorker implements WorkerClient {
  sent: (Body & { id: number })[] = [];
  cancelled: number[] = [];
  private listeners = new Set<(m: WorkerResponse) => void>();
  private nextId = 1;

  request(body: Body, onMessage?: (m: WorkerResponse) => void) {
    const id = this.nextId++;
    this.sent.push({ ...body, id });
    const emit = (m: WorkerResponse) => {
      for (const l of this.listeners) l(m);
      onMessage?.(m);
    };
    const done = new Promise<WorkerResponse>((resolve) => {
      setTimeout(() => {
        const reply = this.reply(body, id);
        if (!reply) return;
        emit(reply);
        resolve(reply);
      }, 1);
    });
    return { id, done };
  }

  private reply(body: Body, id: number): WorkerResponse | undefined {
    switch (body.type) {
      case 'init':
        return { type: 'ready', id, caps: SWIFTSHADER_CAPS, deviceId: 'google/swiftshader#plane4', plane: 4 };
      case 'generate':
        return {
          type: 'generated',
          id,
          kernel: {
            wgsl: `// kernel m=${body.config.m}`,
            suffix: '\n// suffix',
            entryPoint: 'main',
            workgroupSize: 4,
            workgroups: [1, 1, 1],
            phases: [],
            problems: [],
          },
        };
      case 'run':
        if (body.wgsl?.includes('oops')) {
          return {
            type: 'compile-error',
            id,
            messages: [{ type: 'error', message: 'oops', lineNum: 2, linePos: 1, offset: 0, length: 4 }],
            code: body.wgsl,
            editorLines: 2,
          };
        }
        return {
          type: 'run-result',
          id,
          outcome: {
            config: body.config,
            rows: 1,
            cols: 1,
            output: new Float32Array(1),
            oracle: new Float32Array(1),
            verdict: {
              pass: true,
              gate: { kind: 'bit-exact' },
              relToMax: 0,
              maxAbsDelta: 0,
              maxAbsRef: 0,
              mismatches: 0,
              firstBad: [],
            },
            warnings: [],
            edited: body.wgsl !== undefined,
          },
        };
      case 'lose-device':
        setTimeout(() => this.broadcast({ type: 'device-lost', reason: 'destroyed', message: 'gone' }), 1);
        return undefined;
      default:
        return { type: 'error', id, kind: 'unsupported', message: 'no tuner here' };
    }
  }

  broadcast(m: WorkerResponse) {
    for (const l of this.listeners) l(m);
  }

  cancel(id: number) {
    this.cancelled.push(id);
  }

  onEvent(l: (m: WorkerResponse) => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

const settle = (ms = 30) => new Promise((r) => setTimeout(r, ms));
const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 200; i++) {
    if (cond()) return;
    await settle(5);
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe('controller', () => {
  const worker = new ScriptedWorker();
  const storage = new Map<string, string>();
  let hash = '';
  let ctl: Controller;

  beforeAll(() => {
    createAppStore(initialState(KERNEL_FAMILIES));
    const link = encodePermalink({ config: { ...getApp().config, m: 96 }, tab: 'errors' });
    hash = link;
    ctl = createController({
      client: worker,
      families: KERNEL_FAMILIES,
      storage: {
        getItem: (k) => storage.get(k) ?? null,
        setItem: (k, v) => void storage.set(k, v),
        removeItem: (k) => void storage.delete(k),
      },
      getHash: () => hash,
      replaceHash: (h) => {
        hash = h;
      },
      delays: { generate: 1, run: 5, hash: 1 },
    });
    ctl.start();
  });

  it('opens the device, applies the permalink, generates and auto-runs', async () => {
    await until(() => getApp().run.status === 'done', 'the first run');
    expect(getApp().config.m).toBe(96);
    expect(getApp().tab).toBe('errors');
    const types = worker.sent.map((r) => r.type);
    expect(types.slice(0, 3)).toEqual(['init', 'generate', 'run']);
    const run = worker.sent.find((r) => r.type === 'run');
    expect(run).toMatchObject({ config: { m: 96, plane: 4 }, instrument: true });
    expect(run && 'wgsl' in run).toBe(false);
  });

  it('an edit runs again after the debounce with the edited WGSL, and is stored', async () => {
    const before = worker.sent.length;
    ctl.edit('// kernel m=96\n// mine');
    ctl.edit('// kernel m=96\n// mine!');
    await until(() => worker.sent.length > before && getApp().run.status === 'done', 'the edit run');
    const runs = worker.sent.slice(before).filter((r) => r.type === 'run');
    expect(runs).toHaveLength(1); // two keystrokes, one run
    expect(runs[0]).toMatchObject({ wgsl: '// kernel m=96\n// mine!' });
    expect([...storage.values()].some((v) => v.includes('mine!'))).toBe(true);
    await settle();
    expect(hash).toMatch(/^#v=1&s=/);
  });

  it('a compile error lands in the state with its positions', async () => {
    ctl.edit('// kernel m=96\noops');
    await until(() => getApp().run.status === 'compile-error', 'the compile error');
    expect(getApp().compile).toEqual({
      messages: [expect.objectContaining({ lineNum: 2, message: 'oops' })],
      editorLines: 2,
    });
    ctl.reset();
    await until(() => getApp().run.status === 'done', 'the reset run');
    expect(getApp().compile).toBeUndefined();
  });

  it('a corrupt hash gives a message and keeps the current config', () => {
    hash = '#v=1&s=garbage';
    ctl.openHash();
    expect(getApp().linkError).toMatch(/corrupt/);
    expect(getApp().config.m).toBe(96);
  });

  it('an opened link wins over a pending hash write of the previous state', async () => {
    act(setTab, 'ownership'); // schedules a debounced write of the current state's hash
    const pasted = '#v=1&s=garbage-pasted';
    ctl.openHash(pasted); // the hashchange event carries the new hash; location may already be stale
    expect(getApp().linkError).toMatch(/corrupt/);
    await settle();
    expect(hash).not.toBe(encodePermalink(permalinkOf(getApp()))); // the pending write was cancelled
    act(dismissLinkError);
  });

  it('a lost device is reported, and recover() re-opens it and runs', async () => {
    ctl.loseDevice();
    await until(() => getApp().device.status === 'lost', 'the loss');
    expect(getApp().device.losses).toBe(1);
    const before = worker.sent.length;
    ctl.recover();
    await until(
      () =>
        getApp().device.status === 'ready' &&
        getApp().run.status === 'done' &&
        worker.sent.length > before + 1,
      'recovery',
    );
    expect(worker.sent.slice(before).map((r) => r.type)).toEqual(['init', 'generate', 'run']);
  });

  it('loads a tuned config into the playground: kernel, shape, tile and staging, and runs it', async () => {
    const before = worker.sent.length;
    ctl.tuner.loadTile(
      { wm: 4, wn: 1, rm: 1, rn: 2 },
      'mmq_q4k_coopmat',
      { m: 128, n: 64, k: 256 },
      'in-gemm',
    );
    const c = getApp().config;
    expect(c).toMatchObject({
      kernel: 'coopmat-f16',
      m: 128,
      n: 64,
      k: 256,
      tile: { wm: 4, wn: 1, rm: 1, rn: 2 },
      staging: 'in-gemm',
    });
    expect(getApp().tab).toBe('ownership');
    await until(
      () => worker.sent.slice(before).some((r) => r.type === 'run' && r.config.staging === 'in-gemm'),
      'a run of the loaded config',
    );
    // An int8 winner has no staging, and the coopmat one is not carried over to it.
    ctl.tuner.loadTile({ wm: 2, wn: 4, rm: 1, rn: 1 }, 'mmq_q4k_tile', { m: 32, n: 64, k: 256 });
    expect(getApp().config.kernel).toBe('mmq-q4k-tile');
    expect(getApp().config).not.toHaveProperty('staging');
  });

  it('builds the permalink of the current state from a base URL', () => {
    expect(ctl.link('http://127.0.0.1:4173/#old')).toMatch(/^http:\/\/127\.0\.0\.1:4173\/#v=1&s=/);
  });
});
