// The controllers against a scripted worker: boot, generate -> auto-run, debounced edit runs with the
// edited WGSL, compile errors, permalinks in and out (the corrupt-link text true to what happens),
// drafts that hold runs back, the long-run question, device loss and recovery, a run queued behind a
// hunt, and the tuner: entries persisted one by one, an interrupted hunt listed and resumed -- no GPU,
// no React.
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../kernels/catalog';
import { judge } from '../kernels/compare';
import { compareRounds } from '../kernels/perf/spread';
import { tuneProblemKey } from '../kernels/tune/problem';
import type { TuneRecordEntry, WorkerResponse } from '../workers/protocol';
import { createController, type Controller } from './controller';
import { tunerBlockers } from './tunerController';
import { decodePermalink, encodePermalink } from './permalink/codec';
import { openTuneRuns, type TuneRunStore } from './persistence/tuneRuns';
import {
  act,
  clearAb,
  pinCurrentRun,
  createAppStore,
  dismissLinkError,
  getApp,
  initialState,
  permalinkOf,
  selectKernel,
  setDraft,
  setParam,
  setSweepForm,
  setTab,
  setTunerForm,
  setTunerParam,
  clearDraft,
} from './store';
import { SWIFTSHADER_CAPS } from './store/caps.fixture';
import type { Draining, RequestBody, WorkerClient } from './worker/client';

/** A worker client that answers like the real worker would, in a few ms. */
class ScriptedWorker implements WorkerClient {
  sent: (RequestBody & { id: number })[] = [];
  cancelled: number[] = [];
  /** Entries a hunt reports, one per 5 ms. */
  huntEntries = 4;
  /** Requests the worker has not reached: it serves one at a time, and a hunt takes a while. */
  private hunting = false;
  private deferred: (() => void)[] = [];
  private listeners = new Set<(m: WorkerResponse) => void>();
  private waiting = new Map<
    number,
    { resolve: (m: WorkerResponse) => void; on?: (m: WorkerResponse) => void }
  >();
  private nextId = 1;

  request(body: RequestBody, onMessage?: (m: WorkerResponse) => void) {
    const id = this.nextId++;
    this.sent.push({ ...body, id });
    const done = new Promise<WorkerResponse>((resolve) => {
      this.waiting.set(id, { resolve, ...(onMessage ? { on: onMessage } : {}) });
      setTimeout(() => this.serve(body, id), 1);
    });
    return { id, done };
  }

  private emit(id: number, m: WorkerResponse, final: boolean) {
    for (const l of this.listeners) l(m);
    const w = this.waiting.get(id);
    w?.on?.(m);
    if (final) {
      this.waiting.delete(id);
      w?.resolve(m);
    }
  }

  private serve(body: RequestBody, id: number) {
    if (this.hunting && body.type !== 'tune') {
      this.deferred.push(() => this.serve(body, id));
      return;
    }
    switch (body.type) {
      case 'init':
        return this.emit(
          id,
          { type: 'ready', id, caps: SWIFTSHADER_CAPS, deviceId: 'google/swiftshader#plane4', plane: 4 },
          true,
        );
      case 'generate':
        return this.emit(
          id,
          {
            type: 'generated',
            id,
            kernel: {
              passes: [
                {
                  label: 'main',
                  wgsl: `// kernel m=${String(body.config.params.m)}`,
                  suffix: '\n// suffix',
                  entryPoint: 'main',
                  workgroupSize: 4,
                  workgroups: [1, 1, 1],
                },
              ],
              mainPass: 0,
              phases: [],
              plane: 4,
              problems: [],
            },
          },
          true,
        );
      case 'run':
        if (body.wgsl?.includes('oops'))
          return this.emit(
            id,
            {
              type: 'compile-error',
              id,
              messages: [{ type: 'error', message: 'oops', lineNum: 2, linePos: 1, offset: 0, length: 4 }],
              code: body.wgsl,
              editorLines: 2,
            },
            true,
          );
        this.emit(id, { type: 'progress', id, stage: 'running', fraction: 0.1 }, false);
        if (body.wgsl?.includes('spin')) return; // a dispatch that does not end: only a cancel answers it
        // A run takes a few ms here: the long-run estimate scales what runs took.
        return setTimeout(
          () =>
            this.emit(
              id,
              {
                type: 'run-result',
                id,
                outcome: {
                  config: { ...body.config, plane: 4 },
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
                  runWallMs: 5,
                  ops: 2,
                },
              },
              true,
            ),
          3,
        );
      case 'tune':
        return this.hunt(body, id);
      case 'autokernel':
        return this.emit(
          id,
          {
            type: 'autokernel-result',
            id,
            served: body.cachedWinner ?? 'incumbent',
            config: body.base,
            verdict: judge(new Float32Array(1), new Float32Array(1), { kind: 'bit-exact' }),
          },
          true,
        );
      case 'lose-device':
        this.waiting.delete(id);
        return setTimeout(
          () => this.broadcast({ type: 'device-lost', reason: 'destroyed', message: 'gone' }),
          1,
        );
      default:
        return this.emit(
          id,
          { type: 'error', id, kind: 'unsupported', message: `no ${body.type} here` },
          true,
        );
    }
  }

  private hunt(body: Extract<RequestBody, { type: 'tune' }>, id: number) {
    const replay = body.resume ?? [];
    let i = 0;
    this.hunting = true;
    const end = () => {
      this.hunting = false;
      for (const f of this.deferred.splice(0)) f();
    };
    const step = () => {
      if (this.cancelled.includes(id)) {
        this.emit(id, { type: 'cancelled', id }, true);
        return end();
      }
      if (i < this.huntEntries) {
        const entry: TuneRecordEntry = replay[i] ?? {
          config: `C${i}`,
          params: { wm: 1 + i },
          arm: 'scalar',
          generation: Math.floor(i / 2),
          verdict: 'measured',
          ms: 1 + i,
        };
        i++;
        this.emit(
          id,
          {
            type: 'tune-progress',
            id,
            generation: entry.generation,
            evaluated: i,
            bestMs: 1,
            entry,
            stage: 'searching',
          },
          false,
        );
        return setTimeout(step, 5);
      }
      const entries = Array.from(
        { length: this.huntEntries },
        (_, j) =>
          replay[j] ?? {
            config: `C${j}`,
            params: { wm: 1 + j },
            arm: 'scalar' as const,
            generation: Math.floor(j / 2),
            verdict: 'measured' as const,
            ms: 1 + j,
          },
      );
      this.emit(
        id,
        {
          type: 'tune-done',
          id,
          fromCache: false,
          report: {
            op: 'mmq_q4k_tile',
            kernel: body.base.kernel,
            deviceId: 'google/swiftshader#plane4',
            problem: tuneProblemKey(CATALOG.get(body.base.kernel), body.base),
            base: body.base,
            winner: 'C0',
            winnerConfig: { ...body.base, params: { ...body.base.params, wm: 1 } },
            bestMs: 1,
            entries,
            bestPerGeneration: [1, 1],
            evo: body.evo,
            startedAt: new Date().toISOString(),
            durationMs: 20,
            status: 'complete',
          },
        },
        true,
      );
      end();
    };
    setTimeout(step, 5);
  }

  broadcast(m: WorkerResponse) {
    for (const l of this.listeners) l(m);
  }
  cancel(id: number) {
    this.cancelled.push(id);
    const run = this.sent.find((r) => r.id === id);
    if (run?.type === 'run' && run.wgsl?.includes('spin') && this.waiting.has(id)) {
      // As the real client does with a dispatch that cannot stop: answer, replace the worker, re-open.
      setTimeout(() => {
        this.emit(id, { type: 'cancelled', id }, true);
        for (const l of this.respawned) l('did not stop');
        this.broadcast({
          type: 'ready',
          id: 0,
          caps: SWIFTSHADER_CAPS,
          deviceId: 'google/swiftshader#plane4',
          plane: 4,
        });
      }, 5);
    }
  }
  private respawned = new Set<(reason: string) => void>();
  inFlight(id: number) {
    // The worker serves in order: the oldest request still waiting is the one in flight.
    return [...this.waiting.keys()][0] === id;
  }
  onEvent(l: (m: WorkerResponse) => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  onRespawn(l: (reason: string) => void) {
    this.respawned.add(l);
    return () => this.respawned.delete(l);
  }
  readonly drains = new Set<(d: Draining | undefined) => void>();
  onDrain(l: (d: Draining | undefined) => void) {
    this.drains.add(l);
    return () => this.drains.delete(l);
  }
}

const settle = (ms = 30) => new Promise((r) => setTimeout(r, ms));
const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await settle(5);
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe('controller', () => {
  const worker = new ScriptedWorker();
  const storage = new Map<string, string>();
  const session = new Map<string, string>();
  let hash = '';
  let ctl: Controller;
  let tuneStore: TuneRunStore;

  beforeAll(async () => {
    createAppStore(initialState(CATALOG.families, 'mmq-q4k-tile'));
    const c = getApp().config;
    hash = encodePermalink({ config: { ...c, params: { ...c.params, m: 96 } }, tab: 'errors' });
    tuneStore = await openTuneRuns('controller-test');
    ctl = createController({
      client: worker,
      storage: {
        getItem: (k) => storage.get(k) ?? null,
        setItem: (k, v) => void storage.set(k, v),
        removeItem: (k) => void storage.delete(k),
      },
      session: { getItem: (k) => session.get(k) ?? null, setItem: (k, v) => void session.set(k, v) },
      getHash: () => hash,
      replaceHash: (h) => {
        hash = h;
      },
      openTuneStore: () => Promise.resolve(tuneStore),
      delays: { generate: 1, run: 5, hash: 1 },
    });
    ctl.start();
  });

  it('shows an opened link without running it; accepted, it generates and runs', async () => {
    await until(() => getApp().generated !== undefined && getApp().device.status === 'ready', 'the kernel');
    await settle(40);
    expect(getApp().pendingLink).toMatchObject({ edited: false });
    expect(getApp().config.params.m).toBe(96);
    expect(worker.sent.map((r) => r.type)).toEqual(['init', 'generate']);
    ctl.runNow();
    await settle(40);
    expect(worker.sent.map((r) => r.type)).toEqual(['init', 'generate']);
    ctl.acceptLink();
    await until(() => getApp().run.status === 'done', 'the first run');
    expect(getApp().config.params.m).toBe(96);
    expect(getApp().tab).toBe('errors');
    expect(worker.sent.map((r) => r.type).slice(0, 3)).toEqual(['init', 'generate', 'run']);
    const run = worker.sent.find((r) => r.type === 'run');
    expect(run).toMatchObject({
      config: { params: { m: 96 } },
      instrument: true,
      timing: { targetMs: 25, batches: 6 },
    });
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
    expect(hash).toMatch(/^#v=2&s=/);
  });

  it('pinning a run as A writes the comparison into the link', async () => {
    await settle();
    act(pinCurrentRun);
    await settle();
    const link = decodePermalink(hash, CATALOG.families);
    expect(link.ok && link.state.ab?.a.config.params.m).toBe(96);
    act(clearAb);
    await settle();
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

  it('nothing runs while a field holds an invalid draft, nor for a config its family rejects', async () => {
    await settle();
    const before = worker.sent.length;
    act(setDraft, 'param:n', '', 'n is empty: type a whole number from 1 to 1048576');
    ctl.runNow();
    act(setParam, 'k', 300); // not a multiple of 256: the family's validate() says so; no worker request
    await settle(40);
    expect(worker.sent.slice(before).filter((r) => r.type === 'run' || r.type === 'generate')).toEqual([]);
    expect(getApp().generated?.problems.join()).toMatch(/k = 300 is not a multiple of 256/);
    act(clearDraft, 'param:n');
    act(setParam, 'k', 256);
    await until(() => worker.sent.slice(before).some((r) => r.type === 'run'), 'the run once fixed');
    await until(() => getApp().run.status === 'done', 'it to finish');
  });

  it('a corrupt hash edited in the tab says the current config is kept, and keeps it', () => {
    hash = '#v=2&s=garbage';
    ctl.openHash();
    expect(getApp().linkError).toMatch(/corrupt.*The config you had is kept\./);
    expect(getApp().config.params.m).toBe(96);
    act(dismissLinkError);
  });

  it('an opened link wins over a pending hash write of the previous state', async () => {
    act(setTab, 'ownership');
    ctl.openHash('#v=2&s=garbage-pasted');
    expect(getApp().linkError).toMatch(/corrupt/);
    await settle();
    expect(hash).not.toBe(encodePermalink(permalinkOf(getApp())));
    act(dismissLinkError);
  });

  it('asks before a run expected to take long, with the estimate and a way to skip the timing', async () => {
    // The last run of this family took 1 "ms" of wall clock for its work; a 10^6x bigger shape would take long.
    act(setParam, 'm', 96 * 1024);
    act(setParam, 'n', 16 * 1024);
    await until(() => getApp().confirm !== undefined, 'the question');
    const est = getApp().confirm!;
    expect(est.ms).toBeGreaterThan(5_000);
    expect(est.basis).toMatch(/the last wall-clock mmq-q4k-tile scalar run here/);
    const before = worker.sent.length;
    ctl.runNow({ confirmed: true, untimed: true });
    await until(() => getApp().run.status === 'done' && worker.sent.length > before, 'the untimed run');
    expect(worker.sent.slice(before).find((r) => r.type === 'run')).not.toHaveProperty('timing');
    act(setParam, 'm', 96);
    act(setParam, 'n', 16);
    await until(
      () => getApp().run.status === 'done' && getApp().outcome?.config.params.n === 16,
      'back to small',
    );
  });

  it("asks on a family's first run too (no rate measured: the arm's cautious default)", async () => {
    const kernel = getApp().config.kernel;
    act(selectKernel, CATALOG.get('coopmat-f16'));
    act(setParam, 'm', 2048);
    act(setParam, 'n', 4096);
    act(setParam, 'k', 4096);
    await until(() => getApp().confirm !== undefined, 'the question');
    expect(getApp().confirm!.basis).toMatch(
      /no coopmat-f16 scalar run measured here yet: a cautious default for a CPU adapter/,
    );
    expect(worker.sent.filter((r) => r.type === 'run' && r.config.kernel === 'coopmat-f16')).toEqual([]);
    act(selectKernel, CATALOG.get(kernel));
    await until(() => getApp().run.status === 'done' && getApp().outcome?.config.kernel === kernel, 'back');
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

  it('a hunt saves every measured config as it arrives; cancelled, it is listed interrupted and resumes', async () => {
    worker.huntEntries = 4;
    ctl.tuner.hunt(true, true);
    await until(() => getApp().tuner.hunt?.entries.length === 2, 'two entries');
    // A run asked for during the hunt waits behind it, and says so.
    ctl.runNow({ confirmed: true });
    await until(() => getApp().run.queued === true, 'the queued run');
    const id = getApp().tuner.hunt!.id!;
    const stored = await tuneStore.get(getApp().tuner.hunt!.key);
    expect(stored?.status).toBe('interrupted');
    expect(stored!.report.entries.length).toBeGreaterThanOrEqual(1);
    worker.cancelled.push(id);
    await until(() => getApp().tuner.hunt?.status === 'interrupted', 'the interruption');
    const key = getApp().tuner.hunt!.key;
    const run = await tuneStore.get(key);
    expect(run).toMatchObject({ status: 'interrupted', winner: '' });
    const measured = run!.report.entries.map((e) => e.config);
    expect(measured.length).toBeGreaterThanOrEqual(2);
    expect(getApp().tuner.runs?.[0]?.key).toBe(key);

    ctl.tuner.resume(true);
    await until(() => getApp().tuner.hunt?.status === 'complete', 'the resumed hunt');
    const resume = worker.sent.filter((r) => r.type === 'tune').at(-1);
    expect(resume && resume.type === 'tune' && resume.resume?.map((e) => e.config)).toEqual(measured);
    await until(() => getApp().tuner.hunt?.stored === true, 'the report stored');
    expect((await tuneStore.get(key))?.status).toBe('complete');
    // Loading the winner puts its config in the playground.
    ctl.tuner.load(getApp().tuner.hunt!.report!.winnerConfig!);
    expect(getApp().config.params.wm).toBe(1);
    expect(getApp().tab).toBe('ownership');
  }, 20_000);

  it('the autokernel serves a stored pick only when it beat the incumbent measurably', async () => {
    const key = getApp().tuner.hunt!.key;
    const stored = (await tuneStore.get(key))!.report;
    expect(tunerBlockers(getApp())).toEqual([]);
    const autokernelSent = async () => {
      const before = worker.sent.length;
      ctl.tuner.autokernel();
      await until(() => worker.sent.slice(before).some((r) => r.type === 'autokernel'), 'the request');
      const r = worker.sent.slice(before).find((x) => x.type === 'autokernel')!;
      await until(() => getApp().tuner.auto?.status !== 'running', 'done');
      return r.type === 'autokernel' ? r.cachedWinner : 'none';
    };
    const rounds = (a: number[], b: number[]) => ({
      ...compareRounds(a, b),
      rounds: { incumbentMs: a, winnerMs: b },
    });
    // A pick the interleaved rounds did not show faster (a run hunted before that was required).
    await tuneStore.put({ ...stored, winner: 'C1', bestMs: 2, claim: rounds([2, 2.1, 2], [2, 2.05, 1.9]) });
    expect(await autokernelSent()).toBeUndefined();
    // A pick they showed faster is served.
    await tuneStore.put({ ...stored, winner: 'C1', bestMs: 1, claim: rounds([2, 2.1, 2], [1, 1.05, 1]) });
    expect(await autokernelSent()).toBe('C1');
    await tuneStore.put(stored);
  });

  it('asks before a hunt estimated past the limit, and starts it on the go-ahead', async () => {
    const form = getApp().tuner.form;
    const tunes = () => worker.sent.filter((r) => r.type === 'tune').length;
    const before = tunes();
    act(setTunerParam, 'm', 4096);
    act(setTunerParam, 'n', 4096);
    ctl.tuner.hunt(true);
    await until(() => getApp().confirm?.action === 'hunt', 'the question');
    expect(getApp().confirm!.ms).toBeGreaterThan(5_000);
    expect(getApp().confirm!.basis).toMatch(/configs, each compiled, checked and timed/);
    await settle();
    expect(tunes()).toBe(before); // nothing was sent
    worker.huntEntries = 1;
    ctl.tuner.hunt(true, true);
    await until(() => tunes() === before + 1, 'the hunt sent');
    await until(() => getApp().tuner.hunt?.status === 'complete', 'the hunt done');
    act(setTunerForm, form);
  });

  it('asks before a sweep estimated past the limit, and starts it on the go-ahead', async () => {
    const runs = () => worker.sent.filter((r) => r.type === 'run').length;
    const axis = CATALOG.get(getApp().config.kernel).controls.find((c) => c.key === 'm') ? 'm' : 'n';
    act(setSweepForm, { axis, mode: 'list', list: '64, 65536' });
    const before = runs();
    ctl.sweep.start();
    await until(() => getApp().confirm?.action === 'sweep', 'the question');
    expect(getApp().confirm!.basis).toMatch(/2 points/);
    await settle();
    expect(runs()).toBe(before);
    ctl.sweep.start(true);
    await until(() => getApp().sweep.current?.status === 'complete', 'the sweep done');
    expect(runs()).toBe(before + 2);
  });

  it('a link with edited WGSL: nothing stored or run until accepted; declined, the own buffer stays', async () => {
    await settle(40);
    const kernel = getApp().config.kernel;
    const m0 = getApp().config.params.m;
    const own = [...storage.entries()];
    const sentBefore = worker.sent.length;
    const c = getApp().config;
    const spin = '// kernel m=33\nloop { }';
    ctl.openHash(
      encodePermalink({ config: { ...c, params: { ...c.params, m: 33 } }, wgsl: spin, tab: 'config' }),
    );
    await until(
      () => getApp().generatedKey !== undefined && getApp().config.params.m === 33,
      'the link shown',
    );
    await settle(40);
    expect(getApp().pendingLink).toMatchObject({ edited: true });
    expect(getApp().buffers[kernel]?.text).toBe(spin); // shown in the editor
    expect(worker.sent.slice(sentBefore).filter((r) => r.type === 'run')).toEqual([]);
    expect([...storage.entries()]).toEqual(own);
    ctl.declineLink();
    expect(getApp().pendingLink).toBeUndefined();
    expect(getApp().config.params.m).toBe(m0);
    expect(getApp().buffers[kernel]?.text).not.toBe(spin);
    await settle(40);
    expect([...storage.entries()]).toEqual(own);
    expect(worker.sent.slice(sentBefore).some((r) => r.type === 'run' && r.wgsl === spin)).toBe(false);
    // Accepted, the same link runs its WGSL once and is stored as the visitor's edit.
    ctl.openHash(
      encodePermalink({ config: { ...c, params: { ...c.params, m: 33 } }, wgsl: spin, tab: 'config' }),
    );
    await until(() => getApp().pendingLink !== undefined && getApp().generatedKey !== undefined, 'again');
    ctl.acceptLink();
    await until(() => worker.sent.some((r) => r.type === 'run' && r.wgsl === spin), 'the linked run');
    expect([...storage.values()].some((v) => v.includes('loop { }'))).toBe(true);
    await until(() => getApp().run.status === 'done', 'it to finish');
    ctl.reset();
    act(setParam, 'm', 96);
    await until(() => getApp().run.status === 'done' && getApp().outcome?.config.params.m === 96, 'back');
  });

  it("reloading one's own state (the hash this tab wrote) applies it without asking", async () => {
    await settle(40);
    expect(session.get('mmq.ownHash')).toBe(hash);
    const c = getApp().config;
    const mine = encodePermalink({ config: { ...c, params: { ...c.params, m: 80 } }, tab: 'errors' });
    ctl.openHash(mine); // not written by this tab: asks
    expect(getApp().pendingLink).toBeDefined();
    ctl.declineLink();
    session.set('mmq.ownHash', mine); // as if this tab had written it before a reload
    ctl.openHash(mine);
    expect(getApp().pendingLink).toBeUndefined();
    expect(getApp().config.params.m).toBe(80);
    await until(() => getApp().run.status === 'done' && getApp().outcome?.config.params.m === 80, 'its run');
  });

  it('a cancelled run is not started again when the restarted worker is ready', async () => {
    await until(() => getApp().run.status === 'done', 'idle');
    ctl.edit(`${getApp().buffers[getApp().config.kernel]!.text}\n// spin`);
    await until(
      () => getApp().run.status === 'running' && worker.sent.at(-1)?.type === 'run',
      'the spin run',
    );
    const before = worker.sent.length;
    ctl.cancelRun();
    await until(() => getApp().run.status === 'cancelled', 'the cancel');
    await until(() => getApp().device.status === 'ready' && getApp().device.restarts === 1, 'the new worker');
    await settle(60);
    expect(worker.sent.slice(before).map((r) => r.type)).toEqual(['generate']);
    ctl.runNow({ confirmed: true }); // asked for again: it runs
    await until(() => worker.sent.slice(before).some((r) => r.type === 'run'), 'the run asked for');
    ctl.cancelRun();
    await until(() => getApp().run.status === 'cancelled', 'the second cancel');
    ctl.reset();
    await until(() => getApp().run.status === 'done', 'the reset run');
  });

  it('builds the permalink of the current state from a base URL', () => {
    expect(ctl.link('http://127.0.0.1:4173/#old')).toMatch(/^http:\/\/127\.0\.0\.1:4173\/#v=2&s=/);
  });
});
