// The model view's controller against a scripted worker and fake IndexedDB: a run sends one 'model-run'
// per phase with each GEMM's rows and the stored winners a family may serve (a finished hunt that beat its
// incumbent, not an unproven one), its picks land as they come, the guard asks first, a cancel reaches
// the request in flight, a guess sends nothing, "tune all" hunts what is not stored (resuming an
// interrupted hunt, skipping a finished one), stores each hunt and then runs; runs export and import.
import 'fake-indexeddb/auto';
import { beforeEach, describe, expect, it } from 'vitest';
import { CATALOG } from '../kernels/catalog';
import { parseModelRun } from '../kernels/models/modelRun';
import { pickBase, settlePick, type PickGemm } from '../kernels/tune/pick';
import { tuneProblemKey } from '../kernels/tune/problem';
import { compareRounds } from '../kernels/perf/spread';
import type { TuneReport, WorkerResponse } from '../workers/protocol';
import { createGuard } from './guard';
import {
  createModelRunController,
  modelRunBlockers,
  modelRunControllerFor,
  type ModelRunController,
} from './modelRunController';
import { openTuneRuns, runKey, type TuneRunStore } from './persistence/tuneRuns';
import { act, createAppStore, getApp, initialState, setDraft, type AppState } from './store';
import { modelRunOf, setModelRunForm } from './store/modelRun';
import { SWIFTSHADER_CAPS } from './store/caps.fixture';
import type { RequestBody, WorkerClient } from './worker/client';

const DEVICE = 'google/swiftshader#plane4';

/** Answers 'model-run' with a pick per GEMM (mmq-q4k-tile 1 ms, coopmat 2 ms), 'tune' with a report. */
class ScriptedWorker implements WorkerClient {
  sent: (RequestBody & { id: number })[] = [];
  cancelled: number[] = [];
  /** Hold 'model-run' answers until release() (to cancel one in flight). */
  hold = false;
  private held: (() => void)[] = [];
  private nextId = 1;
  request(body: RequestBody, on?: (m: WorkerResponse) => void) {
    const id = this.nextId++;
    this.sent.push({ ...body, id });
    const done = new Promise<WorkerResponse>((resolve) => {
      const answer = () => {
        if (this.cancelled.includes(id)) return resolve({ type: 'cancelled', id });
        if (body.type === 'model-run') {
          const results = body.gemms.map(({ gemm }, index) => {
            on?.({ type: 'progress', id, stage: `GEMM ${index + 1}`, fraction: index / body.gemms.length });
            const r = pickOf(gemm);
            on?.({ type: 'model-progress', id, index, result: r });
            return r;
          });
          return resolve({ type: 'model-run-done', id, results });
        }
        if (body.type === 'tune') {
          const entry = {
            config: 'C1',
            params: body.base.params,
            arm: body.base.arm,
            generation: 0,
            verdict: 'measured' as const,
            ms: 1,
          };
          on?.({ type: 'tune-progress', id, generation: 0, evaluated: 1, bestMs: 1, entry });
          const report: TuneReport = {
            op: CATALOG.get(body.base.kernel).tuning!.op,
            kernel: body.base.kernel,
            deviceId: DEVICE,
            problem: tuneProblemKey(CATALOG.get(body.base.kernel), body.base),
            base: body.base,
            winner: 'C1',
            bestMs: 1,
            entries: [entry],
            bestPerGeneration: [1],
            evo: body.evo,
            startedAt: '2026-12-06T00:00:00.000Z',
            durationMs: 1,
            status: 'complete',
          };
          return resolve({ type: 'tune-done', id, report, fromCache: false });
        }
        resolve({ type: 'error', id, kind: 'internal', message: `not scripted: ${body.type}` });
      };
      if (this.hold && body.type === 'model-run') this.held.push(answer);
      else setTimeout(answer, 1);
    });
    return { id, done };
  }
  release() {
    for (const a of this.held.splice(0)) a();
  }
  cancel(id: number) {
    this.cancelled.push(id);
    this.release();
  }
  inFlight = () => true;
  onEvent = () => () => {};
  onRespawn = () => () => {};
  onDrain = () => () => {};
}

function pickOf(gemm: PickGemm) {
  const c = (kernel: string, ms: number) => ({
    kernel,
    title: kernel,
    served: 'incumbent',
    verdict: 'measured' as const,
    ms,
    samples: [ms],
  });
  return gemm.type === 'Q4_K' && (gemm.experts ?? 1) === 1
    ? settlePick(gemm, [c('mmq-q4k-tile', 1), c('coopmat-f16', 2)], true)
    : settlePick(gemm, [], true);
}

const until = async (what: () => boolean, label: string) => {
  for (let i = 0; i < 400 && !what(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!what()) throw new Error(`timed out waiting for ${label}`);
};

let worker: ScriptedWorker;
let ctl: ModelRunController;
let db: TuneRunStore;
let name = 0;

function setup(confirmMs = 1e12) {
  createAppStore(initialState(CATALOG.families));
  act((s: AppState) => ({
    device: { ...s.device, status: 'ready', caps: SWIFTSHADER_CAPS, deviceId: DEVICE, plane: 4 },
  }));
  worker = new ScriptedWorker();
  const dbName = `model-run-test-${name++}`;
  ctl = createModelRunController({
    client: worker,
    openStore: async () => (db ??= await openTuneRuns(dbName)),
    guard: createGuard(confirmMs),
    confirmMs,
  });
}

beforeEach(() => {
  (db as TuneRunStore | undefined) = undefined;
  setup();
});

const state = () => modelRunOf(getApp());
const modelRuns = () => worker.sent.filter((r) => r.type === 'model-run');

/** A finished hunt of `family` at a GEMM, its winner shown faster (or not) than the incumbent. */
async function storeHunt(
  family: string,
  gemm: PickGemm,
  faster: boolean,
  status: 'complete' | 'interrupted' = 'complete',
) {
  const f = CATALOG.get(family);
  const base = pickBase(f, gemm, SWIFTSHADER_CAPS);
  const store = await openTuneRuns(`model-run-test-${name - 1}`);
  db = store;
  const entry = (config: string, generation: number) => ({
    config,
    params: base.params,
    arm: base.arm,
    generation,
    verdict: 'measured' as const,
    ms: 1,
  });
  await store.put({
    op: f.tuning!.op,
    kernel: f.id,
    deviceId: DEVICE,
    problem: tuneProblemKey(f, base),
    base,
    winner: status === 'complete' ? 'WINNER' : '',
    bestMs: 1,
    entries: [entry('INCUMBENT', 0), entry('WINNER', 1)],
    bestPerGeneration: [1],
    evo: { population: 2, generations: 1, seed: 1, measureMs: 1, batches: 1, banks: 1 },
    startedAt: '2026-12-05T00:00:00.000Z',
    durationMs: 1,
    status,
    incumbentMs: 2,
    claim: {
      ...compareRounds(faster ? [2, 2] : [1, 1], [1, 1]),
      rounds: { incumbentMs: [], winnerMs: [] },
    },
  });
  return runKey({ deviceId: DEVICE, op: f.tuning!.op, problem: tuneProblemKey(f, base) });
}

describe('a model run', () => {
  it('one model-run per phase, each GEMM at its rows; picks land; the totals follow', async () => {
    ctl.run();
    await until(() => state().current?.status === 'complete', 'the run');
    const [prefill, decode] = modelRuns();
    if (prefill?.type !== 'model-run' || decode?.type !== 'model-run') throw new Error('two model-runs');
    expect(prefill.gemms.map((g) => g.gemm.rows)).toEqual([512, 512, 512, 512, 1]);
    expect(prefill.gemms[2]!.gemm).toEqual({ type: 'Q4_K', n: 14336, k: 4096, rows: 512 });
    expect(decode.gemms.every((g) => g.gemm.rows === 1)).toBe(true);
    expect(prefill.timing).toEqual({
      targetMs: getApp().runOptions.targetMs,
      batches: getApp().runOptions.batches,
    });
    const run = state().current!;
    expect(run.phases.map((p) => p.picks.map((x) => x?.winner))).toEqual([
      Array(5).fill('mmq-q4k-tile'),
      Array(5).fill('mmq-q4k-tile'),
    ]);
    expect(run.adapter).toMatchObject({ deviceId: DEVICE, software: true, plane: 4 });
    expect(state().busy).toBeUndefined();
  });

  it("serves a family's stored winner that beat its incumbent, never an unproven one", async () => {
    const ffn: PickGemm = { type: 'Q4_K', n: 14336, k: 4096, rows: 512 };
    await storeHunt('mmq-q4k-tile', ffn, true);
    await storeHunt('coopmat-f16', ffn, false);
    ctl.run();
    await until(() => state().current?.status === 'complete', 'the run');
    const prefill = modelRuns()[0]!;
    if (prefill.type !== 'model-run') throw new Error('model-run');
    expect(prefill.gemms[2]!.stored).toEqual({ 'mmq-q4k-tile': 'WINNER' });
    expect(prefill.gemms[0]!.stored).toEqual({});
  });

  it('blocked: a half-typed prefill field, no phase, no device; each said, nothing sent', async () => {
    act(setDraft, 'modelrun:m', '51x', "prefill tokens '51x' is not a number");
    act(setModelRunForm, { decode: false });
    expect(modelRunBlockers(getApp())).toEqual(["prefill tokens '51x' is not a number"]);
    ctl.run();
    expect(state().error).toBe("prefill tokens '51x' is not a number");
    act(setModelRunForm, { prefill: false });
    expect(modelRunBlockers(getApp())).toContain('pick prefill, decode or both');
    act((s: AppState) => ({ device: { ...s.device, status: 'lost' } }));
    expect(modelRunBlockers(getApp())[0]).toBe('no GPU device is ready');
    await new Promise((r) => setTimeout(r, 10));
    expect(worker.sent).toEqual([]);
  });

  it('the guard asks past its limit (in the view); the go-ahead runs it', async () => {
    setup(0);
    ctl.run();
    expect(state().confirm).toMatchObject({ what: 'run' });
    expect(state().confirm!.basis).toMatch(/candidate configs over 10 GEMMs/);
    expect(worker.sent).toEqual([]);
    ctl.run(true);
    await until(() => state().current?.status === 'complete', 'the run');
    expect(state().confirm).toBeUndefined();
  });

  it('a cancel reaches the request in flight; the run ends cancelled with the picks it has', async () => {
    worker.hold = true;
    ctl.run();
    await until(() => modelRuns().length === 1, 'the request');
    ctl.cancel();
    await until(() => state().busy === undefined, 'the end');
    expect(worker.cancelled).toEqual([modelRuns()[0]!.id]);
    expect(state().current!.status).toBe('cancelled');
    expect(modelRuns()).toHaveLength(1);
  });

  it('a guess sends nothing and says it is one', () => {
    ctl.guess();
    const run = state().current!;
    expect(worker.sent).toEqual([]);
    expect(run.measured).toBe(false);
    expect(run.phases[0]!.picks.every((p) => p!.measured === false && p!.winner !== undefined)).toBe(true);
  });
});

describe('tune all', () => {
  it('hunts what is not stored (resuming an interrupted hunt, skipping a finished one), stores each, then runs', async () => {
    act(setModelRunForm, { prefill: false });
    const kv: PickGemm = { type: 'Q4_K', n: 1024, k: 4096, rows: 1 };
    await storeHunt('mmq-q4k-tile', kv, true);
    const interrupted = await storeHunt('matvec-q4k', kv, true, 'interrupted');
    ctl.tuneAll(true);
    await until(
      () => modelRuns().length === 1 && state().current?.status === 'complete',
      'the hunts and the run',
    );
    const tunes = worker.sent.filter((r) => r.type === 'tune');
    // Decode: 5 GEMM shapes x (tile, matvec, coopmat), less the finished tile hunt at 1024 x 4096.
    expect(tunes).toHaveLength(14);
    const resumed = tunes.filter((t) => t.type === 'tune' && t.resume?.length);
    expect(resumed.map((t) => t.type === 'tune' && t.base.kernel)).toEqual(['matvec-q4k']);
    // Every hunt is stored, finished; the interrupted one replaced by its finished report.
    const runs = await db.list();
    expect(runs.filter((r) => r.status === 'complete')).toHaveLength(15);
    expect((await db.get(interrupted))!.status).toBe('complete');
    // The run after the hunts.
    expect(worker.sent.at(-1)!.type).toBe('model-run');
  });

  it('past the guard it asks first, hunts and run together', () => {
    setup(0);
    ctl.tuneAll();
    return until(() => state().confirm !== undefined, 'the question').then(() => {
      expect(state().confirm).toMatchObject({ what: 'tune' });
      // Prefill at 512: 4 shapes x (tile, coopmat), the head at 1 row x (tile, matvec, coopmat); decode:
      // 5 shapes x 3, the head's 3 already counted.
      expect(state().confirm!.basis).toMatch(/^23 hunts of 8 x 4 configs, then the model run/);
      expect(worker.sent).toEqual([]);
    });
  });
});

describe('export and import', () => {
  it("exports the run with a Kernel Tuner cache per shape; imports another adapter's beside it", async () => {
    expect(ctl.exportJson()).toBeUndefined();
    ctl.run();
    await until(() => state().current?.status === 'complete', 'the run');
    const text = ctl.exportJson()!;
    const j = JSON.parse(text) as { ktCaches: Record<string, unknown> };
    expect(Object.keys(j.ktCaches)).toHaveLength(0); // the scripted candidates carry no config
    const other = { ...parseModelRun(text), adapter: { ...parseModelRun(text).adapter, name: 'other GPU' } };
    ctl.importJson(JSON.stringify(other));
    expect(state().imported.map((r) => r.adapter.name)).toEqual(['other GPU']);
    ctl.importJson('{"format": "mmq-playground/tune-runs"}');
    expect(state().error).toMatch(/^not a model run \(mmq-playground\/model-run\): format: expected/);
    expect(state().imported).toHaveLength(1);
    ctl.removeImported(0);
    expect(state().imported).toEqual([]);
  });
});

describe('the controller the view takes', () => {
  it('is one per app controller: a run goes on, and can be cancelled, when the view mounts again', async () => {
    const env = {
      client: worker,
      openStore: () => openTuneRuns(`model-run-test-${name - 1}`),
      guard: createGuard(1e12),
      confirmMs: 1e12,
    };
    worker.hold = true;
    modelRunControllerFor(env).run();
    await until(() => modelRuns().length === 1, 'the model-run request');
    // The view unmounted and mounted again: the same controller, so the cancel reaches the request.
    expect(modelRunControllerFor(env)).toBe(modelRunControllerFor(env));
    expect(modelRunControllerFor({ ...env })).not.toBe(modelRunControllerFor(env));
    modelRunControllerFor(env).cancel();
    expect(worker.cancelled).toEqual([modelRuns()[0]!.id]);
    await until(() => state().current?.status === 'cancelled', 'the cancelled run');
  });
});
