// The store's pure actions in Node: arms from the adapter, family switches, validation once per config,
// drafts that block runs, editor buffers and pass tabs, permalinks, runs, the tuner's and the models'
// slices -- no React, no GPU, no worker.
import { describe, expect, it, vi } from 'vitest';
import { CATALOG } from '../../kernels/catalog';
import type { FamilyCatalog, RunConfig } from '../../kernels/family';
import type { TensorListing } from '../../kernels/tensors';
import type { GeneratedKernel, OpenedModel, RunOutcome, TuneReport } from '../../workers/protocol';
import { SWIFTSHADER_CAPS } from './caps.fixture';
import { draftProblems, parseDraft, stepValue } from './drafts';
import {
  applyGemm,
  chooseTensor,
  modelFileKey,
  modelFileLabels,
  modelOpened,
  modelPresets,
  tensorOffers,
  tensorRunConfig,
  wantTensor,
} from './models';
import {
  applyPermalink,
  bufferIsStale,
  clearDraft,
  configKey,
  configProblems,
  defaultSideWidth,
  deviceLost,
  deviceReady,
  editBuffer,
  editedWgsl,
  generated,
  generating,
  initialState,
  isCurrentResult,
  permalinkOf,
  resetBuffer,
  restoreStash,
  runBlockers,
  runFinished,
  runProgress,
  runStarted,
  selectKernel,
  setArm,
  setDataSource,
  setDraft,
  setParam,
  setPlane,
  showPass,
  type AppState,
} from './state';
import {
  huntDone,
  huntEnded,
  huntOfRun,
  huntProgress,
  huntStarted,
  partialReport,
  type HuntState,
} from './tunerState';

const family = (id: string) => CATALOG.get(id);
const apply = (s: AppState, patch: Partial<AppState>): AppState => ({ ...s, ...patch });
const pass = (wgsl: string, label = 'main') => ({
  label,
  wgsl,
  suffix: '\n// ---- host suffix',
  entryPoint: 'main',
  workgroupSize: 4,
  workgroups: [1, 1, 1] as const,
});
const kernel = (wgsl: string, pre: string[] = []): GeneratedKernel => ({
  passes: [...pre.map((p) => pass(p, 'pre-pass')), pass(wgsl)],
  mainPass: pre.length,
  phases: ['scalar-epilogue'],
  plane: 4,
  problems: [],
});

function ready(kernelId = 'mmq-q8-tiled'): AppState {
  const s = initialState(CATALOG.families, kernelId);
  return apply(s, deviceReady(s, SWIFTSHADER_CAPS, 'google/swiftshader#plane4', 4));
}

describe('a param that takes the arm away', () => {
  it('moves the arm to the fastest one the new params allow (the MoE f16 route has no dp4a)', () => {
    const caps = SWIFTSHADER_CAPS;
    let s = apply(initialState(CATALOG.families), {});
    s = apply(s, deviceReady(s, caps, 'dev', 4));
    s = apply(s, selectKernel(s, family('moe-q4k-id')));
    s = apply(s, setArm(s, 'dp4a'));
    s = apply(s, setParam(s, 'route', 'f16'));
    expect(s.config.arm).toBe('scalar');
    expect(configProblems(s)).toEqual([]);
    // A change that leaves the arm available keeps it.
    s = apply(s, setArm(s, 'scalar'));
    s = apply(s, setParam(s, 'tokens', 16));
    expect(s.config.arm).toBe('scalar');
  });
});

describe('playground state', () => {
  it('starts on the first family with a shape, on its portable arm until the adapter is known', () => {
    const s = initialState(CATALOG.families);
    expect(s.config.kernel).toBe(CATALOG.families.find((c) => c.controls.length)!.id);
    expect(s.config.arm).toBe('scalar');
    expect(s.config.plane).toBeUndefined();
    expect(s.config.data).toEqual({ source: 'reference', seed: 0 });
  });

  it("takes the adapter's fastest arm; an arm the user chose survives the device re-opening", () => {
    const s = ready();
    expect(s.config.arm).toBe('dp4a'); // SwiftShader: dp4a, no subgroup matrix
    const chosen = apply(s, setArm(s, 'scalar'));
    expect(apply(chosen, deviceReady(chosen, SWIFTSHADER_CAPS, 'x', 4)).config.arm).toBe('scalar');
  });

  it('switching family takes its defaults and an arm it can run here, keeps plane and data, drops drafts', () => {
    let s = ready();
    s = apply(s, setPlane(s, 16));
    s = apply(s, setDataSource(s, 'random'));
    s = apply(s, setDraft(s, 'param:m', '1.5', 'm = 1.5 must be a whole number'));
    s = apply(s, selectKernel(s, family('coopmat-f16')));
    expect(s.config).toMatchObject({ kernel: 'coopmat-f16', plane: 16, data: { source: 'random', seed: 0 } });
    expect(s.config.params).toEqual(family('coopmat-f16').defaults);
    expect(s.config.arm).toBe('scalar'); // coopmat: scalar + subgroup-matrix; SwiftShader lacks the latter
    expect(s.drafts).toEqual({});
    expect(s.outcome).toBeUndefined();
  });

  it("reports the family's own validation, computed once per config", () => {
    let s = ready();
    const spy = vi.spyOn(family('mmq-q8-tiled'), 'validate');
    try {
      s = apply(s, setParam(s, 'm', 30));
      const first = configProblems(s);
      expect(first.join(' ')).toMatch(/m = 30 is not a multiple of 32/);
      expect(configProblems(s)).toBe(first);
      expect(runBlockers(s)).toEqual(first);
      expect(spy).toHaveBeenCalledTimes(1);
      s = apply(s, setParam(s, 'm', 64));
      expect(configProblems(s)).toEqual([]);
      expect(spy).toHaveBeenCalledTimes(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('one message per problem: a routed top-k above the experts is one sentence, nothing internal', () => {
    let s = ready('moe-q4k-id');
    s = apply(s, setParam(s, 'topk', 9));
    expect(configProblems(s)).toEqual(["top-k = 9 > experts = 8: each token's experts must be distinct"]);
    s = ready('mmq-q4k-tile');
    s = apply(s, setParam(s, 'wm', 0));
    expect(configProblems(s)).toEqual(['wm = 0 must be at least 1']);
  });

  it('a draft that is not a value blocks runs and says why; clearing it unblocks', () => {
    let s = ready();
    s = apply(
      s,
      setDraft(
        s,
        'param:n',
        '',
        parseDraft('', { label: 'n', min: 1, max: 8 }).ok ? undefined : 'n is empty',
      ),
    );
    expect(runBlockers(s)).toEqual(['n is empty']);
    s = apply(s, setDraft(s, 'tuner:evo:population', 'x', 'population is not a number'));
    expect(draftProblems(s.drafts)).toEqual(['n is empty']); // the tuner's drafts block only the tuner
    expect(draftProblems(s.drafts, ['tuner'])).toEqual(['population is not a number']);
    s = apply(s, clearDraft(s, 'param:n'));
    expect(runBlockers(s)).toEqual([]);
  });

  it('without WebGPU a run is blocked with one reason, the config still validated', () => {
    let s = initialState(CATALOG.families, 'mmq-q4k-rt');
    s = apply(s, { device: { status: 'unavailable', losses: 0, message: 'navigator.gpu is missing' } });
    expect(runBlockers(s)).toEqual(['WebGPU is not available here (the banner says what is missing)']);
    s = apply(s, setParam(s, 'k', 300));
    expect(runBlockers(s)).toHaveLength(2);
  });

  it("a regenerate of the same kernel (a replaced worker's) keeps the last run's end; a new kernel is idle", () => {
    let s = ready();
    s = apply(s, generated(s, kernel('A'), 'k1'));
    s = apply(s, { run: { status: 'cancelled' } });
    s = apply(s, generating(s));
    expect(s.run.status).toBe('generating');
    s = apply(s, generated(s, kernel('A'), 'k1'));
    expect(s.run.status).toBe('cancelled');
    s = apply(s, generating(s));
    s = apply(s, generated(s, kernel('B'), 'k2'));
    expect(s.run.status).toBe('idle');
    // A failed run's error (say a lost device's) is not carried onto the recovered device.
    s = apply(s, { run: { status: 'error', error: { kind: 'device-lost', message: 'lost' } } });
    s = apply(s, generating(s));
    s = apply(s, generated(s, kernel('B'), 'k2'));
    expect(s.run.status).toBe('idle');
    // A run in flight is not interrupted by a generate.
    s = apply(s, { run: { status: 'running' } });
    s = apply(s, generating(s));
    expect(s.run.status).toBe('running');
  });

  it('an unedited buffer follows the main pass; an edited one is kept and marked stale', () => {
    let s = ready();
    s = apply(s, generated(s, kernel('A'), 'k1'));
    expect(s.buffers['mmq-q8-tiled']).toEqual({ text: 'A', base: 'A' });
    expect(editedWgsl(s)).toBeUndefined();
    s = apply(s, generated(s, kernel('B', ['pre']), 'k2'));
    expect(s.buffers['mmq-q8-tiled']!.text).toBe('B'); // the main pass, not the pre-pass
    s = apply(s, editBuffer(s, 'B edited'));
    expect(editedWgsl(s)).toBe('B edited');
    s = apply(s, generated(s, kernel('C'), 'k3'));
    expect(s.buffers['mmq-q8-tiled']).toEqual({ text: 'B edited', base: 'B' });
    expect(bufferIsStale(s)).toBe(true);
    s = apply(s, resetBuffer(s));
    expect(s.buffers['mmq-q8-tiled']).toEqual({ text: 'C', base: 'C' });
    expect(bufferIsStale(s)).toBe(false);
  });

  it('pass tabs: another pass is shown, the main pass is the default, a shorter plan resets the tab', () => {
    let s = ready();
    s = apply(s, generated(s, kernel('G', ['w', 'x']), 'k'));
    s = apply(s, showPass(s, 0));
    expect(s.editorPass).toBe(0);
    s = apply(s, showPass(s, 2));
    expect(s.editorPass).toBeUndefined(); // 2 is the main pass
    s = apply(s, showPass(s, 1));
    s = apply(s, generated(s, kernel('G'), 'k2'));
    expect(s.editorPass).toBeUndefined();
  });

  it('a permalink carries the edit; a different local edit is stashed, not lost', () => {
    let s = ready();
    s = apply(s, generated(s, kernel('G'), 'k'));
    s = apply(s, editBuffer(s, 'mine'));
    const link = {
      config: { ...s.config, params: { ...s.config.params, m: 96 } },
      tab: 'errors' as const,
      wgsl: 'theirs',
    };
    s = apply(s, applyPermalink(s, link));
    expect(s.config.params.m).toBe(96);
    expect(s.tab).toBe('errors');
    expect(s.buffers['mmq-q8-tiled']).toEqual({ text: 'theirs', base: '' });
    expect(s.stash).toEqual({ kernel: 'mmq-q8-tiled', buffer: { text: 'mine', base: 'G' } });
    s = apply(s, generated(s, kernel('G96'), 'k96'));
    expect(s.buffers['mmq-q8-tiled']).toEqual({ text: 'theirs', base: 'G96' });
    expect(permalinkOf(s)).toEqual({ config: s.config, tab: 'errors', wgsl: 'theirs' });
    s = apply(s, restoreStash(s));
    expect(s.buffers['mmq-q8-tiled']!.text).toBe('mine');
    expect(s.stash).toBeUndefined();
  });

  it('ignores progress and results of a run that is not the current one', () => {
    let s = ready();
    s = apply(s, runStarted(s, 7, true, 0));
    expect(s.run).toMatchObject({ status: 'running', queued: true, stage: 'queued' });
    expect(runProgress(s, 6, 'x', 0.5)).toEqual({});
    s = apply(s, runProgress(s, 7, 'timing', 0.5));
    expect(s.run).toMatchObject({ status: 'running', stage: 'timing', fraction: 0.5, queued: false });
    const outcome = { analyticOwnership: { 'scalar-epilogue': {} } } as unknown as RunOutcome;
    expect(runFinished(s, 6, outcome)).toEqual({});
    s = apply(s, runFinished(s, 7, outcome));
    expect(s.run.status).toBe('done');
    expect(s.ownershipSource).toBe('scalar-epilogue'); // nothing recorded: the analytic phase
  });

  it('a lost device ends the run in flight with an error and counts the loss', () => {
    let s = ready();
    s = apply(s, runStarted(s, 3, false, 0));
    s = apply(s, deviceLost(s, 'destroyed', 'gone'));
    expect(s.device).toMatchObject({ status: 'lost', losses: 1 });
    expect(s.run).toMatchObject({ status: 'error', error: { kind: 'device-lost' } });
  });

  it("keys configs stably (param order aside), and tells the result of the current config by the adapter's plane", () => {
    const s = ready('coopmat-f16');
    const reordered: RunConfig = {
      ...s.config,
      params: Object.fromEntries(Object.entries(s.config.params).reverse()),
    };
    expect(configKey(s.config)).toBe(configKey(reordered));
    expect(configKey(s.config)).not.toBe(
      configKey({ ...s.config, params: { ...s.config.params, staging: 'in-gemm' } }),
    );
    expect(isCurrentResult(s, { ...s.config, plane: 4 })).toBe(true);
    expect(isCurrentResult(s, { ...s.config, plane: 8 })).toBe(false);
  });

  it('sizes the results column so the editor keeps 80 columns at 1440 px', () => {
    expect(defaultSideWidth(1600)).toBe(620);
    expect(1440 - 250 - 8 - defaultSideWidth(1440)).toBeGreaterThanOrEqual(720);
    expect(defaultSideWidth(1024)).toBe(380);
  });
});

describe('drafts', () => {
  const spec = { label: 'n', min: 1, max: 1 << 20 };
  it('reads whole numbers in digits and says why anything else is not one', () => {
    expect(parseDraft('256', spec)).toEqual({ ok: true, value: 256 });
    expect(parseDraft(' 64 ', spec)).toEqual({ ok: true, value: 64 });
    expect(parseDraft('', spec)).toEqual({
      ok: false,
      problem: 'n is empty: type a whole number from 1 to 1048576',
    });
    expect(parseDraft('3.5', spec)).toEqual({ ok: false, problem: 'n = 3.5 must be a whole number' });
    expect(parseDraft('1e9', spec)).toEqual({
      ok: false,
      problem: 'n = 1e9: write the number in digits (no exponent)',
    });
    expect(parseDraft('-5', spec)).toEqual({ ok: false, problem: 'n = -5 must be at least 1' });
    expect(parseDraft('2000000', spec)).toEqual({
      ok: false,
      problem: 'n = 2000000 must be at most 1048576',
    });
    expect(parseDraft('abc', spec)).toEqual({ ok: false, problem: "n 'abc' is not a number" });
  });

  it('steps to the next multiple of the valid step, within range', () => {
    const k = { label: 'k', min: 256, max: 1 << 20 };
    expect(stepValue(300, 256, 1, k)).toBe(512);
    expect(stepValue(300, 256, -1, k)).toBe(256);
    expect(stepValue(256, 256, -1, k)).toBe(256);
    expect(stepValue(100, 1, 1, spec)).toBe(101);
    expect(stepValue(33, 32, -1, spec)).toBe(32);
  });
});

describe('models', () => {
  const file = { name: 'm.gguf', size: 1234, headerHash: '0123456789abcdef' };
  const listing = (name: string, ne: number[], kernels: string[]): TensorListing => ({
    name,
    typeName: 'Q4_K',
    ne,
    shape: [...ne].reverse(),
    offset: 0,
    bytes: 100,
    kernels: kernels.map((k) => ({ kernel: k, title: k, problems: [] })),
  });
  const model = (ref = file): OpenedModel => ({
    file: ref,
    version: 3,
    bytesRead: 100,
    metadata: [],
    tensors: [
      listing('blk.0.ffn_down.weight', [512, 10], ['mmq-q4k-rt']),
      listing('blk.0.ffn_down_exps.weight', [256, 8, 4], ['moe-q4k-id']),
    ],
  });

  it('choosing a tensor sets n, k (and experts) from it, the rows from the panel, and data source tensor', () => {
    let s = ready('mmq-q4k-rt');
    s = apply(s, modelOpened(s, model()));
    s = apply(s, { models: { ...s.models, rows: 16, activation: 'outliers' } });
    s = apply(s, chooseTensor(s, family('mmq-q4k-rt'), file, model().tensors[0]!));
    expect(s.config.params).toMatchObject({ m: 16, n: 10, k: 512 });
    expect(s.config.data).toEqual({
      source: 'tensor',
      seed: 0,
      tensor: { file, tensor: 'blk.0.ffn_down.weight', activation: 'outliers' },
    });
    expect(configProblems(s)).toEqual([]);
    const moe: FamilyCatalog = family('moe-q4k-id');
    s = apply(s, chooseTensor(s, moe, file, model().tensors[1]!));
    expect(s.config).toMatchObject({
      kernel: 'moe-q4k-id',
      arm: 'dp4a',
      params: { tokens: 16, n: 8, k: 256, experts: 4 },
    });
    expect(configProblems(s)).toEqual([]);
    // A model preset's GEMM is generated data of that shape.
    s = apply(
      s,
      applyGemm(
        s,
        { name: 'ffn_up_exps', n: 64, k: 512, experts: 8, topk: 2, fits: { Q4_K: true, Q8_0: true } },
        32,
      ),
    );
    expect(s.config.params).toMatchObject({ tokens: 32, n: 64, k: 512, experts: 8, topk: 2 });
    expect(s.config.data.source).toBe('reference');
  });

  it('a link to a tensor of a file not open asks for it, and says so when another file is picked', () => {
    let s = ready('mmq-q4k-rt');
    const wanted = { file, tensor: 'blk.0.ffn_down.weight', activation: 'normal' as const };
    s = apply(s, wantTensor(s, wanted));
    s = apply(s, modelOpened(s, model({ ...file, headerHash: 'ffffffffffffffff' })));
    expect(s.models.wanted).toBe(wanted);
    expect(s.models.mismatch).toMatch(
      /The file picked, m.gguf \(1,234 bytes, header ffffffffffffffff\), is not the file this link names: m.gguf \(1,234 bytes, header 0123456789abcdef\)/,
    );
    // The wrong file is let go: its tensors and its model preset are not listed as the link's.
    expect(s.models.files).toEqual([]);
    s = apply(s, modelOpened(s, model()));
    expect(s.models.wanted).toBeUndefined();
    expect(s.models.mismatch).toBeUndefined();
    expect(s.models.files.map((f) => f.file.headerHash)).toEqual([file.headerHash]);
    expect(s.tab).toBe('model');
  });

  it('offers a family for a tensor at the rows it can run, or says which rows it needs', () => {
    let s = ready('mmq-q4k-rt');
    const q8 = {
      ...listing('blk.0.attn_q.weight', [64, 64], ['mmq-q8-naive', 'mmq-q8-tiled']),
      typeName: 'Q8_0',
    };
    s = apply(s, { models: { ...s.models, rows: 16 } });
    const offers = tensorOffers(s, file, q8);
    // The tiled kernel's 32-row tile refuses 16 rows (what the run said after the click) and runs at 32.
    expect(offers.find((o) => o.kernel === 'mmq-q8-tiled')).toMatchObject({
      problems: [expect.stringMatching(/m = 16 is not a multiple of 32/)],
      runsAt: 32,
    });
    expect(offers.find((o) => o.kernel === 'mmq-q8-naive')).toEqual({
      kernel: 'mmq-q8-naive',
      title: 'mmq-q8-naive',
      problems: [],
    });
    // What it offers is what the click loads: runs at its rows, and the same config fails at the panel's.
    const tiled = family('mmq-q8-tiled');
    expect(tiled.validate(tensorRunConfig(s, tiled, file, q8, 32), s.device.caps)).toEqual([]);
    expect(tiled.validate(tensorRunConfig(s, tiled, file, q8), s.device.caps)).not.toEqual([]);
    s = apply(s, { models: { ...s.models, rows: 64 } });
    expect(tensorOffers(s, file, q8).every((o) => o.problems.length === 0)).toBe(true);
    // A problem no row count fixes (the fixed 32x64 kernel and n = 10) offers no rows.
    const narrow = listing('blk.0.ffn_down.weight', [512, 10], ['mmq-q4k-blk']);
    const blk = tensorOffers(s, file, narrow)[0]!;
    expect(blk.problems.join()).toMatch(/n = 10/);
    expect(blk.runsAt).toBeUndefined();
  });

  it('two files with one header hash (a copy cut short) stay two: keys, names and presets apart', () => {
    let s = ready('mmq-q4k-rt');
    const preset = { id: 'gguf:llama', name: 'tiny', gemms: [], prefillM: [16] };
    const cut = { ...file, size: 1000 };
    s = apply(s, modelOpened(s, { ...model(), preset }));
    s = apply(s, modelOpened(s, { ...model(cut), preset }));
    const refs = s.models.files.map((f) => f.file);
    expect(refs).toEqual([cut, file]);
    expect(new Set(refs.map(modelFileKey)).size).toBe(2);
    const labels = modelFileLabels(refs);
    expect(labels).toEqual([
      'm.gguf (1,000 bytes, header 0123456789abcdef)',
      'm.gguf (1,234 bytes, header 0123456789abcdef)',
    ]);
    const ids = modelPresets(s.models.files).map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(modelPresets(s.models.files)[0]!.name).toBe(`tiny (${labels[0]!})`);
    // A name alone where it is unique, escaped as the CLI prints names from files.
    expect(modelFileLabels([{ ...file, name: 'a\u202elive.gguf' }])).toEqual(['a\\u202elive.gguf']);
  });
});

describe('tuner state', () => {
  const base: RunConfig = {
    kernel: 'mmq-q4k-tile',
    arm: 'scalar',
    data: { source: 'reference', seed: 0 },
    params: { m: 16, n: 16, k: 256 },
  };
  const entry = (config: string, ms: number, generation = 0) => ({
    config,
    params: { wm: 1 },
    arm: 'scalar' as const,
    generation,
    verdict: 'measured' as const,
    ms,
  });
  const hunt: HuntState = {
    key: 'd|op|p',
    id: 5,
    base,
    evo: { population: 4, generations: 2, seed: 1, measureMs: 1, batches: 1, banks: 1 },
    op: 'op',
    deviceId: 'd',
    problem: 'p',
    status: 'running',
    generation: 0,
    evaluated: 0,
    bestMs: Infinity,
    entries: [],
    resumed: 0,
    startedAt: '2026-01-01T00:00:00.000Z',
    stored: false,
  };

  it('streams entries into the hunt, ends interrupted on cancel, and its partial report lists them', () => {
    let s = ready();
    s = apply(s, huntStarted(s, hunt));
    s = apply(
      s,
      huntProgress(s, 5, {
        type: 'tune-progress',
        id: 5,
        generation: 0,
        evaluated: 1,
        bestMs: 2,
        entry: entry('A', 2),
      }),
    );
    s = apply(
      s,
      huntProgress(s, 9, {
        type: 'tune-progress',
        id: 9,
        generation: 0,
        evaluated: 1,
        bestMs: 2,
        entry: entry('X', 2),
      }),
    );
    s = apply(
      s,
      huntProgress(s, 5, {
        type: 'tune-progress',
        id: 5,
        generation: 1,
        evaluated: 2,
        bestMs: 1,
        entry: entry('B', 1, 1),
      }),
    );
    expect(s.tuner.hunt!.entries.map((e) => e.config)).toEqual(['A', 'B']);
    const partial = partialReport(s.tuner.hunt!, 'mmq-q4k-tile', 1500);
    expect(partial).toMatchObject({
      status: 'interrupted',
      winner: '',
      bestMs: 1,
      bestPerGeneration: [2, 1],
      durationMs: 1500,
    });
    s = apply(s, huntEnded(s, 5, 'interrupted'));
    expect(s.tuner.hunt).toMatchObject({ status: 'interrupted', id: undefined });
    // A stored interrupted run shows as such, entries and all.
    const shown = huntOfRun({
      key: 'd|op|p',
      deviceId: 'd',
      op: 'op',
      kernel: 'mmq-q4k-tile',
      problem: 'p',
      status: 'interrupted',
      winner: '',
      bestMs: 1,
      date: partial.startedAt,
      report: partial,
    });
    expect(shown).toMatchObject({ status: 'interrupted', stored: true, entries: partial.entries });
  });

  it('a finished hunt keeps its report on display (until another is shown)', () => {
    let s = ready();
    s = apply(s, huntStarted(s, hunt));
    const report = {
      ...partialReport(hunt, 'mmq-q4k-tile', 1),
      status: 'complete',
      winner: '',
    } as TuneReport;
    s = apply(s, huntDone(s, 5, report, false));
    expect(s.tuner.hunt).toMatchObject({ status: 'complete', report, stored: false });
  });
});
