// App state and its actions. Every action is a pure function (state, args) -> partial state, so the
// whole UI logic is testable in Node without React or a GPU (state.test.ts); `./index.ts` binds them to
// the zustand store. Nothing here talks to the worker: the controller (../controller.ts) does.
import type {
  CoopmatStaging,
  KernelFamily,
  KernelId,
  OwnershipPhase,
  ProblemConfig,
  TileParams,
} from '../../kernels/family';
import { defaultInt8Arm, int8ArmSupport, type AdapterCaps, type Arm } from '../../kernels/gpu/caps';
import type { WgslMessage } from '../../kernels/gpu/run';
import type { GeneratedKernel, RunOutcome } from '../../workers/protocol';
import type { PermalinkState, ViewTab } from '../permalink/codec';

export type DeviceStatus = 'starting' | 'ready' | 'lost' | 'unavailable';

export interface DeviceState {
  status: DeviceStatus;
  caps?: AdapterCaps;
  deviceId?: string;
  /** The adapter's plane (subgroup) width. */
  plane?: number;
  /** Why the device is lost or unavailable. */
  message?: string;
  /** Times the device was lost in this session (shown so a recovery is visible). */
  losses: number;
}

/** The editor text of one kernel family: what the user has, and the generated text it started from. */
export interface EditorBuffer {
  text: string;
  base: string;
}

export interface CompileState {
  messages: WgslMessage[];
  /** Lines of the user's text; messages past it are in the host suffix. */
  editorLines: number;
}

export type RunStatus = 'idle' | 'generating' | 'running' | 'done' | 'compile-error' | 'error' | 'cancelled';

export interface RunState {
  status: RunStatus;
  /** Request id of the run in flight (for cancel). */
  id?: number;
  stage?: string;
  fraction?: number;
  error?: { kind: string; message: string };
}

export type OwnershipSource = 'recorded' | OwnershipPhase;

export interface AppState {
  device: DeviceState;
  /** The config the controls edit. `plane` 0 = the adapter's plane width (see runConfig). */
  config: ProblemConfig;
  /** The arm was chosen by the user or a link (else the adapter's fastest is taken once it is known). */
  armExplicit: boolean;
  tab: ViewTab;
  /** A permalink that could not be applied, and why. */
  linkError?: string | undefined;
  generated?: GeneratedKernel | undefined;
  /** JSON of the runConfig that `generated` belongs to. */
  generatedKey?: string | undefined;
  buffers: Partial<Record<KernelId, EditorBuffer>>;
  /** A local edit a permalink set aside (restorable, so no buffer is ever lost). */
  stash?: { kernel: KernelId; buffer: EditorBuffer } | undefined;
  compile?: CompileState | undefined;
  run: RunState;
  outcome?: RunOutcome | undefined;
  /** Which ownership to draw: the one recorded by the instrumented run, or an analytic phase. */
  ownershipSource: OwnershipSource;
  /** Draw ownership boundaries over the error heatmap. */
  overlay: boolean;
  /** Element index clicked in a view. */
  selected?: number | undefined;
  /** Timed dispatches per run. */
  iters: number;
  autoRun: boolean;
}

export const DEFAULT_KERNEL: KernelId = 'mmq-q8-tiled';

/** The family by id, or the first one. */
export function familyOf(families: readonly KernelFamily[], id: KernelId): KernelFamily | undefined {
  return families.find((f) => f.id === id) ?? families[0];
}

/** The arm a family should start on here: the adapter's fastest if the family has it, else its first runnable. */
export function pickArm(family: KernelFamily, caps: AdapterCaps | undefined, current?: Arm): Arm {
  const runnable = (a: Arm) => !caps || int8ArmSupport(caps, a).ok;
  if (current && family.arms.includes(current) && runnable(current)) return current;
  const preferred = caps ? defaultInt8Arm(caps) : 'scalar';
  if (family.arms.includes(preferred)) return preferred;
  return family.arms.find(runnable) ?? family.arms[0] ?? 'scalar';
}

/** A family's default config. */
export function defaultConfig(family: KernelFamily, caps?: AdapterCaps): ProblemConfig {
  return {
    ...family.defaults,
    tile: { ...family.defaults.tile },
    kernel: family.id,
    arm: pickArm(family, caps),
    plane: 0,
  };
}

/** The initial state (before the device answers). */
export function initialState(families: readonly KernelFamily[]): AppState {
  const family = familyOf(families, DEFAULT_KERNEL);
  if (!family) throw new Error('no kernel families registered');
  return {
    device: { status: 'starting', losses: 0 },
    config: defaultConfig(family),
    armExplicit: false,
    tab: 'ownership',
    buffers: {},
    run: { status: 'idle' },
    ownershipSource: 'recorded',
    overlay: true,
    iters: 8,
    autoRun: true,
  };
}

/** The config as the worker sees it: plane 0 resolved to the adapter's plane width. */
export function runConfig(state: Pick<AppState, 'config' | 'device'>): ProblemConfig {
  const plane = state.config.plane || state.device.plane || 32;
  return { ...state.config, plane };
}

/** Stable key of a config (for "is this result/kernel about the current config"). */
export function configKey(config: ProblemConfig): string {
  const { kernel, m, n, k, experts, topk, ytiles, tile, staging, arm, plane, dataSource, dataSeed } = config;
  return JSON.stringify({
    kernel,
    staging: staging ?? null,
    m,
    n,
    k,
    experts,
    topk,
    ytiles,
    tile: [tile.wm, tile.wn, tile.rm, tile.rn],
    arm,
    plane,
    dataSource,
    dataSeed,
  });
}

/** Why the current config cannot run, from the family's own validate() (empty when it can). */
export function configProblems(state: AppState, families: readonly KernelFamily[]): string[] {
  const family = families.find((f) => f.id === state.config.kernel);
  if (!family) return [`unknown kernel ${state.config.kernel}`];
  if (!state.device.caps) return [];
  return family.validate(runConfig(state), state.device.caps);
}

/** The current kernel's editor buffer. */
export function currentBuffer(state: AppState): EditorBuffer | undefined {
  return state.buffers[state.config.kernel];
}

/** The user's edit of the current kernel, if it differs from the generated text. */
export function editedWgsl(state: AppState): string | undefined {
  const b = currentBuffer(state);
  if (!b || !state.generated || !state.generated.wgsl) return undefined;
  return b.text !== state.generated.wgsl ? b.text : undefined;
}

/** True when the user's edit started from a generated kernel other than the current one. */
export function bufferIsStale(state: AppState): boolean {
  const b = currentBuffer(state);
  return !!b && !!state.generated?.wgsl && b.text !== b.base && b.base !== state.generated.wgsl;
}

/** The permalink view of the state. */
export function permalinkOf(state: AppState): PermalinkState {
  const wgsl = editedWgsl(state);
  return { config: state.config, tab: state.tab, ...(wgsl !== undefined ? { wgsl } : {}) };
}

// ---------------------------------------------------------------------------------------------- actions

/** The worker opened a device. */
export function deviceReady(
  state: AppState,
  caps: AdapterCaps,
  deviceId: string,
  plane: number,
  families: readonly KernelFamily[],
): Partial<AppState> {
  const family = familyOf(families, state.config.kernel);
  const arm = family
    ? pickArm(family, caps, state.armExplicit ? state.config.arm : undefined)
    : state.config.arm;
  return {
    device: { status: 'ready', caps, deviceId, plane, losses: state.device.losses },
    config: { ...state.config, arm },
  };
}

export function deviceLost(state: AppState, reason: string, message: string): Partial<AppState> {
  return {
    device: {
      ...state.device,
      status: 'lost',
      message: `${message} (reason: ${reason})`,
      losses: state.device.losses + 1,
    },
    run:
      state.run.status === 'running'
        ? { status: 'error', error: { kind: 'device-lost', message } }
        : state.run,
  };
}

export function deviceUnavailable(state: AppState, message: string): Partial<AppState> {
  return { device: { ...state.device, status: 'unavailable', message } };
}

/** Switch kernel family: its defaults (shape, tile), an arm it has and this adapter can run. */
export function selectKernel(state: AppState, family: KernelFamily): Partial<AppState> {
  const config = {
    ...defaultConfig(family, state.device.caps),
    plane: state.config.plane,
    dataSource: state.config.dataSource,
    dataSeed: state.config.dataSeed,
  };
  return {
    config,
    outcome: undefined,
    compile: undefined,
    selected: undefined,
    generated: undefined,
    generatedKey: undefined,
    ownershipSource: 'recorded',
  };
}

type ShapeField = 'm' | 'n' | 'k' | 'experts' | 'topk' | 'ytiles' | 'dataSeed';

/** Set one integer config field (controls clamp nothing: validate() explains what is wrong). */
export function setField(state: AppState, field: ShapeField, value: number): Partial<AppState> {
  if (!Number.isFinite(value)) return {};
  return { config: { ...state.config, [field]: Math.trunc(value) } };
}

export function setTile(state: AppState, field: keyof TileParams, value: number): Partial<AppState> {
  if (!Number.isFinite(value)) return {};
  return { config: { ...state.config, tile: { ...state.config.tile, [field]: Math.trunc(value) } } };
}

/** Set (or, with undefined, clear back to the arm's default) coopmat-f16's staging. */
export function setStaging(state: AppState, staging: CoopmatStaging | undefined): Partial<AppState> {
  const { staging: _old, ...rest } = state.config;
  return { config: staging === undefined ? rest : { ...rest, staging } };
}

export function setArm(state: AppState, arm: Arm): Partial<AppState> {
  return { config: { ...state.config, arm }, armExplicit: true };
}

export function setPlane(state: AppState, plane: number): Partial<AppState> {
  return { config: { ...state.config, plane } };
}

export function setDataSource(state: AppState, dataSource: ProblemConfig['dataSource']): Partial<AppState> {
  return { config: { ...state.config, dataSource } };
}

export function setTab(_state: AppState, tab: ViewTab): Partial<AppState> {
  return { tab };
}

/**
 * Apply a decoded permalink (config, view, and the edited kernel text). A different local edit of the
 * link's kernel is set aside in `stash` rather than overwritten.
 */
export function applyPermalink(state: AppState, link: PermalinkState): Partial<AppState> {
  const id = link.config.kernel;
  const buffers = { ...state.buffers };
  const local = buffers[id];
  const localEdited = !!local && local.text !== local.base;
  let stash = state.stash;
  if (localEdited && local.text !== link.wgsl) stash = { kernel: id, buffer: local };
  if (link.wgsl !== undefined) {
    // The base is unknown until the kernel is generated; '' marks "edited" until then.
    buffers[id] = { text: link.wgsl, base: '' };
  } else if (localEdited) {
    delete buffers[id];
  }
  return {
    config: link.config,
    armExplicit: true,
    tab: link.tab,
    buffers,
    stash,
    linkError: undefined,
    outcome: undefined,
    generated: undefined,
    generatedKey: undefined,
  };
}

/** Bring a stashed local edit back into its kernel's buffer. */
export function restoreStash(state: AppState): Partial<AppState> {
  if (!state.stash) return {};
  const { kernel, buffer } = state.stash;
  return { buffers: { ...state.buffers, [kernel]: buffer }, stash: undefined };
}

export function linkFailed(_state: AppState, error: string): Partial<AppState> {
  return { linkError: error };
}

export function dismissLinkError(): Partial<AppState> {
  return { linkError: undefined };
}

export function generating(state: AppState): Partial<AppState> {
  return { run: { ...state.run, status: state.run.status === 'running' ? 'running' : 'generating' } };
}

/**
 * A kernel was generated for `key`. An unedited buffer follows the new text; an edited one is kept
 * (never lost) -- bufferIsStale() then tells the user it was edited from another generated kernel.
 */
export function generated(state: AppState, kernel: GeneratedKernel, key: string): Partial<AppState> {
  const id = state.config.kernel;
  const buffers = { ...state.buffers };
  const b = buffers[id];
  if (kernel.wgsl) {
    if (!b || b.text === b.base || b.text === kernel.wgsl)
      buffers[id] = { text: kernel.wgsl, base: kernel.wgsl };
    else if (b.base === '') buffers[id] = { text: b.text, base: kernel.wgsl };
  }
  const runStatus = state.run.status === 'generating' ? 'idle' : state.run.status;
  return { generated: kernel, generatedKey: key, buffers, run: { ...state.run, status: runStatus } };
}

/** The user typed in the editor. */
export function editBuffer(state: AppState, text: string): Partial<AppState> {
  const id = state.config.kernel;
  const base = state.buffers[id]?.base ?? state.generated?.wgsl ?? '';
  return { buffers: { ...state.buffers, [id]: { text, base } } };
}

/** Throw the edit away: the editor shows the generated kernel again. */
export function resetBuffer(state: AppState): Partial<AppState> {
  const gen = state.generated?.wgsl;
  if (!gen) return {};
  return {
    buffers: { ...state.buffers, [state.config.kernel]: { text: gen, base: gen } },
    compile: undefined,
  };
}

export function runStarted(_state: AppState, id: number): Partial<AppState> {
  return { run: { status: 'running', id, stage: 'queued', fraction: 0 } };
}

export function runProgress(state: AppState, id: number, stage: string, fraction: number): Partial<AppState> {
  if (state.run.id !== id) return {};
  return { run: { ...state.run, stage, fraction } };
}

export function runFinished(state: AppState, id: number, outcome: RunOutcome): Partial<AppState> {
  if (state.run.id !== id) return {};
  const phases = Object.keys(outcome.analyticOwnership ?? {}) as OwnershipPhase[];
  const src = state.ownershipSource;
  const ownershipSource: OwnershipSource =
    src === 'recorded'
      ? outcome.ownership
        ? 'recorded'
        : (phases[0] ?? 'recorded')
      : phases.includes(src)
        ? src
        : outcome.ownership
          ? 'recorded'
          : (phases[0] ?? 'recorded');
  return { run: { status: 'done', id }, outcome, compile: undefined, selected: undefined, ownershipSource };
}

export function runCompileError(state: AppState, id: number, compile: CompileState): Partial<AppState> {
  if (state.run.id !== id) return {};
  return { run: { status: 'compile-error', id }, compile };
}

export function runFailed(state: AppState, id: number, kind: string, message: string): Partial<AppState> {
  if (state.run.id !== id) return {};
  return { run: { status: 'error', id, error: { kind, message } } };
}

export function runCancelled(state: AppState, id: number): Partial<AppState> {
  if (state.run.id !== id) return {};
  return { run: { status: 'cancelled', id } };
}

export function setOwnershipSource(_state: AppState, ownershipSource: OwnershipSource): Partial<AppState> {
  return { ownershipSource };
}

export function toggleOverlay(state: AppState): Partial<AppState> {
  return { overlay: !state.overlay };
}

export function selectElement(_state: AppState, selected: number | undefined): Partial<AppState> {
  return { selected };
}

export function setIters(_state: AppState, iters: number): Partial<AppState> {
  return Number.isFinite(iters) ? { iters: Math.max(0, Math.min(1000, Math.trunc(iters))) } : {};
}

export function setAutoRun(_state: AppState, autoRun: boolean): Partial<AppState> {
  return { autoRun };
}

/** Restore persisted editor buffers (edited ones only are stored) and a stashed edit. */
export function restoreBuffers(
  state: AppState,
  buffers: Partial<Record<KernelId, EditorBuffer>>,
  stash?: AppState['stash'],
): Partial<AppState> {
  return { buffers: { ...buffers, ...state.buffers }, stash: state.stash ?? stash };
}
