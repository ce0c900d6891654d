import { describe, expect, it } from 'vitest';
import { KERNEL_FAMILIES } from '../../kernels';
import type { GeneratedKernel, RunOutcome } from '../../workers/protocol';
import { SWIFTSHADER_CAPS } from './caps.fixture';
import {
  setStaging,
  applyPermalink,
  bufferIsStale,
  configKey,
  configProblems,
  deviceLost,
  deviceReady,
  editBuffer,
  editedWgsl,
  generated,
  initialState,
  permalinkOf,
  resetBuffer,
  restoreStash,
  runConfig,
  runFinished,
  runProgress,
  runStarted,
  selectKernel,
  setArm,
  setField,
  setIters,
  type AppState,
} from './state';

const family = (id: string) => KERNEL_FAMILIES.find((f) => f.id === id)!;
const apply = (s: AppState, patch: Partial<AppState>): AppState => ({ ...s, ...patch });
const kernel = (wgsl: string): GeneratedKernel => ({
  wgsl,
  suffix: '\n// ---- host suffix',
  entryPoint: 'main',
  workgroupSize: 4,
  workgroups: [1, 1, 1],
  phases: ['scalar-epilogue'],
  problems: [],
});

function ready(): AppState {
  const s = initialState(KERNEL_FAMILIES);
  return apply(s, deviceReady(s, SWIFTSHADER_CAPS, 'google/swiftshader#plane4', 4, KERNEL_FAMILIES));
}

describe('app state actions', () => {
  it('starts on the default kernel and resolves the plane from the adapter', () => {
    const s = ready();
    expect(s.config.kernel).toBe('mmq-q8-tiled');
    expect(s.config.plane).toBe(0);
    expect(runConfig(s).plane).toBe(4);
    expect(s.config.arm).toBe('dp4a'); // the fastest arm this adapter has
    // An arm the user (or a link) chose survives the device re-opening.
    const chosen = apply(s, setArm(s, 'scalar'));
    expect(apply(chosen, deviceReady(chosen, SWIFTSHADER_CAPS, 'x', 4, KERNEL_FAMILIES)).config.arm).toBe(
      'scalar',
    );
  });

  it('switching kernel takes its defaults, keeps plane and data choices, and never picks an unavailable arm', () => {
    let s = ready();
    s = apply(s, { config: { ...s.config, plane: 16, dataSource: 'random', dataSeed: 9 } });
    s = apply(s, selectKernel(s, family('coopmat-f16')));
    expect(s.config).toMatchObject({ kernel: 'coopmat-f16', plane: 16, dataSource: 'random', dataSeed: 9 });
    expect(s.config.arm).toBe('scalar'); // coopmat has scalar + subgroup-matrix; SwiftShader lacks the latter
    expect(s.outcome).toBeUndefined();
  });

  it("reports the family's validate() messages for a bad shape", () => {
    let s = ready();
    s = apply(s, setField(s, 'm', 30));
    expect(configProblems(s, KERNEL_FAMILIES).join(' ')).toMatch(/m = 30 is not a multiple of BM 32/);
  });

  it('an unedited buffer follows the generated kernel; an edited one is kept and marked stale', () => {
    let s = ready();
    s = apply(s, generated(s, kernel('A'), 'k1'));
    expect(s.buffers['mmq-q8-tiled']).toEqual({ text: 'A', base: 'A' });
    expect(editedWgsl(s)).toBeUndefined();
    s = apply(s, generated(s, kernel('B'), 'k2'));
    expect(s.buffers['mmq-q8-tiled']!.text).toBe('B');
    s = apply(s, editBuffer(s, 'B edited'));
    expect(editedWgsl(s)).toBe('B edited');
    s = apply(s, generated(s, kernel('C'), 'k3'));
    expect(s.buffers['mmq-q8-tiled']).toEqual({ text: 'B edited', base: 'B' });
    expect(bufferIsStale(s)).toBe(true);
    s = apply(s, resetBuffer(s));
    expect(s.buffers['mmq-q8-tiled']).toEqual({ text: 'C', base: 'C' });
    expect(bufferIsStale(s)).toBe(false);
  });

  it('a permalink carries the edit; a different local edit is stashed, not lost', () => {
    let s = ready();
    s = apply(s, generated(s, kernel('G'), 'k'));
    s = apply(s, editBuffer(s, 'mine'));
    const link = { config: { ...s.config, m: 96 }, tab: 'errors' as const, wgsl: 'theirs' };
    s = apply(s, applyPermalink(s, link));
    expect(s.config.m).toBe(96);
    expect(s.tab).toBe('errors');
    expect(s.buffers['mmq-q8-tiled']).toEqual({ text: 'theirs', base: '' });
    expect(s.stash).toEqual({ kernel: 'mmq-q8-tiled', buffer: { text: 'mine', base: 'G' } });
    // The generated text arrives: it becomes the base, the link's edit stays.
    s = apply(s, generated(s, kernel('G96'), 'k96'));
    expect(s.buffers['mmq-q8-tiled']).toEqual({ text: 'theirs', base: 'G96' });
    expect(permalinkOf(s)).toEqual({ config: s.config, tab: 'errors', wgsl: 'theirs' });
    s = apply(s, restoreStash(s));
    expect(s.buffers['mmq-q8-tiled']!.text).toBe('mine');
    expect(s.stash).toBeUndefined();
  });

  it('a link without WGSL shows the generated kernel but stashes a local edit', () => {
    let s = ready();
    s = apply(s, generated(s, kernel('G'), 'k'));
    s = apply(s, editBuffer(s, 'mine'));
    s = apply(s, applyPermalink(s, { config: s.config, tab: 'ownership' }));
    expect(s.buffers['mmq-q8-tiled']).toBeUndefined();
    expect(s.stash?.buffer.text).toBe('mine');
    s = apply(s, generated(s, kernel('G'), 'k'));
    expect(editedWgsl(s)).toBeUndefined();
  });

  it('ignores progress and results of a run that is not the current one', () => {
    let s = ready();
    s = apply(s, runStarted(s, 7));
    expect(runProgress(s, 6, 'x', 0.5)).toEqual({});
    s = apply(s, runProgress(s, 7, 'timing', 0.5));
    expect(s.run).toMatchObject({ status: 'running', stage: 'timing', fraction: 0.5 });
    const outcome = { analyticOwnership: { 'scalar-epilogue': {} } } as unknown as RunOutcome;
    expect(runFinished(s, 6, outcome)).toEqual({});
    s = apply(s, runFinished(s, 7, outcome));
    expect(s.run.status).toBe('done');
    expect(s.ownershipSource).toBe('scalar-epilogue'); // nothing recorded: fall back to the analytic phase
  });

  it('a lost device ends the run in flight with an error and counts the loss', () => {
    let s = ready();
    s = apply(s, runStarted(s, 3));
    s = apply(s, deviceLost(s, 'destroyed', 'gone'));
    expect(s.device).toMatchObject({ status: 'lost', losses: 1 });
    expect(s.run).toMatchObject({ status: 'error', error: { kind: 'device-lost' } });
  });

  it('clamps the timed dispatch count and keys configs stably', () => {
    const s = ready();
    expect(setIters(s, -5)).toEqual({ iters: 0 });
    expect(setIters(s, 1e9)).toEqual({ iters: 1000 });
    expect(setIters(s, NaN)).toEqual({});
    expect(configKey(s.config)).toBe(configKey({ ...s.config, tile: { ...s.config.tile } }));
    expect(configKey(s.config)).not.toBe(configKey({ ...s.config, dataSeed: 1 }));
  });

  it('sets and clears the coopmat staging; the key tells stagings apart and a kernel switch resets it', () => {
    const coop = KERNEL_FAMILIES.find((f) => f.id === 'coopmat-f16')!;
    const s = { ...ready(), ...selectKernel(ready(), coop) };
    expect(s.config.staging).toBeUndefined();
    const split = { ...s, ...setStaging(s, 'in-gemm') };
    expect(split.config.staging).toBe('in-gemm');
    expect(configKey(split.config)).not.toBe(configKey(s.config));
    expect(configKey(split.config)).not.toBe(configKey({ ...split.config, staging: 'prepass' }));
    const cleared = setStaging(split, undefined);
    expect(cleared.config).not.toHaveProperty('staging');
    expect(selectKernel(split, coop).config).not.toHaveProperty('staging');
  });
});
