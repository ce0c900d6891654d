// App state and the playground's actions. Every action is a pure function (state, args) -> partial
// state, so the UI logic is tested in Node without React or a GPU (state.test.ts); `./index.ts` binds
// them to the zustand store. Nothing here talks to the worker: the controllers do.
//
// The kernel families are data here: their light catalogs (ids, controls, arms, defaults, validate) sit
// in the state, and every control, arm and rule is read from them -- no family is named.
import {
  tensorProblems,
  type FamilyCatalog,
  type KernelId,
  type OwnershipPhase,
  type ParamValue,
  type RunConfig,
  type TensorChoice,
} from '../../kernels/family';
import { defaultArm } from '../../kernels/arms';
import type { AdapterCaps, Arm } from '../../kernels/gpu/caps';
import type { WgslMessage } from '../../kernels/gpu/runner';
import { tensorConfig, weightShape } from '../../kernels/tensors';
import { UnknownFamilyError } from '../../kernels/registry';
import type { GeneratedKernel, OpenedModel, RunOutcome } from '../../workers/protocol';
import type { PermalinkState, ViewTab } from '../permalink/codec';
import { abAfterRun, abFromLink, abLinkOf, type AbState } from './ab';
import { draftProblems, dropDrafts, type Draft } from './drafts';
import { INITIAL_PEAKS, type PeaksState } from './peaks';
import type { ModelRunState } from './modelRun';
import { INITIAL_SWEEP, type SweepState } from './sweep';
import { formFor, initialTuner, type TunerState } from './tunerState';

export type DeviceStatus = 'starting' | 'ready' | 'lost' | 'unavailable';

export interface DeviceState {
  status: DeviceStatus;
  caps?: AdapterCaps | undefined;
  deviceId?: string | undefined;
  /** The adapter's plane (subgroup) width. */
  plane?: number | undefined;
  /** Why the device is lost or unavailable, or what is being restarted. */
  message?: string | undefined;
  /** Times the device was lost in this session (shown so a recovery is visible). */
  losses: number;
  /** Times the GPU worker was replaced because a cancelled request did not stop in time. */
  restarts?: number | undefined;
  /**
   * A replaced worker's cancelled GPU work still running (WebGPU cannot take submitted work back): when
   * the cancel replaced it (performance.now()) and what it still had submitted then, ms.
   */
  draining?: { since: number; expectedMs?: number } | undefined;
}

/** The editor text of one family's main pass: what the user has, and the generated text it started from. */
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
  id?: number | undefined;
  stage?: string | undefined;
  fraction?: number | undefined;
  error?: { kind: string; message: string } | undefined;
  /** The run waits in the worker's queue behind the tuner's hunt (no progress of its own yet). */
  queued?: boolean | undefined;
  /** When the run was sent (ms, performance.now()); for the cancel latency shown. */
  sentAt?: number | undefined;
  /** How long a cancel took to answer, ms. */
  cancelMs?: number | undefined;
  /** The status a regenerate interrupted ('cancelled', 'done', ...), restored when it yields the same kernel. */
  beforeGenerating?: RunStatus | undefined;
}

/** The actions that run GPU work, each asked about first when it is expected to take long. */
export type GuardedAction = 'run' | 'sweep' | 'hunt';

/** An action expected to take long on this adapter: the controller asks before sending it. */
export interface RunEstimate {
  ms: number;
  /** What the estimate is based on, in words. */
  basis: string;
  /** The same run without timing, estimated (a run only). */
  untimedMs: number;
  /** What is asked about (default: a run). */
  action?: GuardedAction;
  /** A hunt's resume (the go-ahead resumes rather than starts). */
  resume?: boolean;
  /** A hunt's force (measure again rather than replay a stored winner). */
  force?: boolean;
}

/** The CPU oracle's output, shown where there is no GPU to run on. */
export interface OraclePreview {
  key: string;
  status: 'running' | 'done' | 'error';
  rows?: number;
  cols?: number;
  values?: Float32Array | Int32Array;
  error?: string;
}

export type OwnershipSource = 'recorded' | OwnershipPhase;

export interface RunOptions {
  /** Time the plan (and each pass) after the correctness run. */
  timed: boolean;
  /** GPU time per timed batch, ms (the batch's run count is calibrated to it). */
  targetMs: number;
  /** Timed batches; the fastest counts. */
  batches: number;
  /** Also run the ownership-recording variant. */
  instrument: boolean;
  /** Re-run after edits. */
  autoRun: boolean;
}

/** The timing the app asks for unless changed: the same defaults as the tuner and the bench (runner.ts). */
export const DEFAULT_RUN_OPTIONS: RunOptions = {
  timed: true,
  targetMs: 25,
  batches: 6,
  instrument: true,
  autoRun: true,
};

export interface ModelsState {
  /** GGUF files opened in this session, newest first. */
  files: OpenedModel[];
  /** A file being opened (its name). */
  opening?: string | undefined;
  /** Why the last file could not be opened. */
  error?: string | undefined;
  /** The tensor list's filter text. */
  filter: string;
  /** Activation rows a tensor runs with (m, or the routed tokens). */
  rows: number;
  activation: TensorChoice['activation'];
  /** A permalink names this tensor of a file that is not open: the app asks for the file. */
  wanted?: TensorChoice | undefined;
  /** The file picked for `wanted` was another one: why. */
  mismatch?: string | undefined;
}

export interface LayoutState {
  controlsCollapsed: boolean;
  /** The user moved the splitter: the sizes no longer follow the window. */
  dragged: boolean;
  /** Width of the results column beside the editor (wide screens), px. */
  sideWidth: number;
  /** Height of the editor above the results (narrow screens), px. */
  editorHeight: number;
}

/** A link waiting for the visitor's go-ahead (see AppState.pendingLink). */
export interface PendingLink {
  /** The link carries edited WGSL (not the generated kernel). */
  edited: boolean;
  before: Pick<AppState, 'config' | 'armExplicit' | 'tab' | 'buffers' | 'stash'>;
}

export interface AppState {
  /** The families' light declarations (the app's whole knowledge of them). */
  catalogs: readonly FamilyCatalog[];
  device: DeviceState;
  /** The config the controls edit; `plane` absent = the adapter's. */
  config: RunConfig;
  /** The arm was chosen by the user or a link (else the adapter's fastest is taken once it is known). */
  armExplicit: boolean;
  /** Number fields' drafts by field id ("param:m", "data:seed", "tuner:evo:population"...). */
  drafts: Readonly<Record<string, Draft>>;
  tab: ViewTab;
  /** A permalink that could not be applied, and why (the sentence includes what happened instead). */
  linkError?: string | undefined;
  /**
   * A link opened but not yet accepted: its config and kernel are shown, nothing runs and nothing is
   * stored until the visitor accepts; `before` is what declining brings back.
   */
  pendingLink?: PendingLink | undefined;
  generated?: GeneratedKernel | undefined;
  /** configKey of the config `generated` belongs to. */
  generatedKey?: string | undefined;
  /** The pass the editor shows (undefined = the plan's main pass, the editable one). */
  editorPass?: number | undefined;
  buffers: Readonly<Record<KernelId, EditorBuffer>>;
  /** A local edit a permalink set aside (restorable, so no buffer is ever lost). */
  stash?: { kernel: KernelId; buffer: EditorBuffer } | undefined;
  compile?: CompileState | undefined;
  run: RunState;
  outcome?: RunOutcome | undefined;
  oracle?: OraclePreview | undefined;
  /** A run waiting for the user's go-ahead (it is expected to take long). */
  confirm?: RunEstimate | undefined;
  /** Which ownership to draw: the one recorded by the instrumented run, or an analytic phase. */
  ownershipSource: OwnershipSource;
  /** Draw ownership boundaries over the error heatmap. */
  overlay: boolean;
  /** Element index clicked in a view. */
  selected?: number | undefined;
  runOptions: RunOptions;
  models: ModelsState;
  tuner: TunerState;
  /** The A/B comparison: a pinned run and the runs after it (./ab.ts). */
  ab: AbState;
  /** The shape sweep (./sweep.ts). */
  sweep: SweepState;
  /** The adapter's measured peaks on screen (./peaks.ts). */
  peaks: PeaksState;
  /** The model view: a model's GEMMs picked and timed on this adapter (./modelRun.ts; absent until used). */
  modelRun?: ModelRunState | undefined;
  layout: LayoutState;
  glossaryOpen: boolean;
}

/** The family by id, or undefined. */
export function catalogIn(state: Pick<AppState, 'catalogs'>, id: KernelId): FamilyCatalog | undefined {
  return state.catalogs.find((f) => f.id === id);
}

/** The current family (the config's, else the first). */
export function currentCatalog(state: Pick<AppState, 'catalogs' | 'config'>): FamilyCatalog {
  const c = catalogIn(state, state.config.kernel) ?? state.catalogs[0];
  if (!c) throw new Error('no kernel families registered');
  return c;
}

/** A family's default config on an adapter (or without one: its portable arm). */
export function defaultConfig(catalog: FamilyCatalog, caps?: AdapterCaps): RunConfig {
  return {
    kernel: catalog.id,
    arm: defaultArm(catalog, caps, catalog.defaults),
    data: { source: 'reference', seed: 0 },
    params: { ...catalog.defaults },
  };
}

/**
 * The initial state (before the device answers), on `kernel` or else the first family with a shape to
 * edit (the reference's order starts with fixed-shape hello kernels).
 */
export function initialState(catalogs: readonly FamilyCatalog[], kernel?: KernelId): AppState {
  const catalog =
    catalogs.find((c) => c.id === kernel) ?? catalogs.find((c) => c.controls.length) ?? catalogs[0];
  if (!catalog) throw new Error('no kernel families registered');
  const config = defaultConfig(catalog);
  return {
    catalogs,
    device: { status: 'starting', losses: 0 },
    config,
    armExplicit: false,
    drafts: {},
    tab: 'ownership',
    buffers: {},
    run: { status: 'idle' },
    ownershipSource: 'recorded',
    overlay: true,
    runOptions: { ...DEFAULT_RUN_OPTIONS },
    models: { files: [], filter: '', rows: 16, activation: 'normal' },
    tuner: initialTuner(catalogs, config),
    ab: {},
    sweep: INITIAL_SWEEP,
    peaks: INITIAL_PEAKS,
    layout: { controlsCollapsed: false, dragged: false, sideWidth: 460, editorHeight: 420 },
    glossaryOpen: false,
  };
}

/** Width of the controls column, px (styles.css .layout). */
export const CONTROLS_PX = 250;
/** What the editor needs for 80 columns of 13 px monospace, with its gutter and scrollbar, px. */
export const EDITOR_80_COLUMNS_PX = 720;

/**
 * The results column's width beside the editor for a window width: what is left after the controls and
 * 80 editor columns, between 380 and 620 px (620 leaves the 560 px views unscaled).
 * @example defaultSideWidth(1440) // 462: the editor keeps its 80 columns
 */
export function defaultSideWidth(windowWidth: number): number {
  return Math.max(380, Math.min(620, windowWidth - CONTROLS_PX - 8 - EDITOR_80_COLUMNS_PX));
}

/** The editor's height above the results when they are stacked: about half the window. */
export function defaultEditorHeight(windowHeight: number): number {
  return Math.max(240, Math.min(480, Math.round(windowHeight * 0.48)));
}

/** Whether a result belongs to the current config (its plane resolved as the adapter's when unset). */
export function isCurrentResult(state: Pick<AppState, 'config' | 'device'>, result: RunConfig): boolean {
  const plane = state.config.plane ?? state.device.plane;
  return configKey({ ...state.config, ...(plane !== undefined ? { plane } : {}) }) === configKey(result);
}

/**
 * Stable key of a config ("is this result / kernel about the current config"): params in key order.
 * @example configKey(state.config) === configKey(outcome.config)
 */
export function configKey(config: RunConfig): string {
  const params = Object.fromEntries(Object.entries(config.params).sort(([a], [b]) => (a < b ? -1 : 1)));
  const { source, seed, tensor } = config.data;
  return JSON.stringify({
    kernel: config.kernel,
    arm: config.arm,
    plane: config.plane ?? null,
    data: { source, seed, tensor: tensor ?? null },
    params,
  });
}

/** The plane width a run uses: the config's, else the adapter's. */
export function effectivePlane(state: Pick<AppState, 'config' | 'device'>): number | undefined {
  return state.config.plane ?? state.device.plane;
}

/** The listing of a tensor in the opened files (by file hash and size, then name). */
export function openTensor(models: ModelsState, choice: TensorChoice | undefined) {
  if (!choice) return undefined;
  const file = models.files.find(
    (f) => f.file.headerHash === choice.file.headerHash && f.file.size === choice.file.size,
  );
  return file?.tensors.find((t) => t.name === choice.tensor);
}

// Validation runs once per config on this side: the result is kept for the (config, caps, files) it
// was computed for, and every component reads it from here.
let validated:
  | { config: RunConfig; caps: AdapterCaps | undefined; files: ModelsState['files']; problems: string[] }
  | undefined;

/**
 * Why the current config cannot run, in the family's own words: its validate() (with the adapter's
 * caps once known), and for a model tensor whether the opened file's tensor fits. Empty when it can.
 */
export function configProblems(state: Pick<AppState, 'catalogs' | 'config' | 'device' | 'models'>): string[] {
  const { config, models } = state;
  const caps = state.device.caps;
  if (validated && validated.config === config && validated.caps === caps && validated.files === models.files)
    return validated.problems;
  const catalog = catalogIn(state, config.kernel);
  let problems: string[];
  if (!catalog)
    problems = [
      new UnknownFamilyError(
        config.kernel,
        state.catalogs.map((c) => c.id),
      ).message,
    ];
  else {
    problems = catalog.validate(config, caps);
    const t = openTensor(models, config.data.tensor);
    problems.push(...tensorProblems(catalog, config, t ? weightShape(t) : undefined));
  }
  problems = [...new Set(problems)];
  validated = { config, caps, files: models.files, problems };
  return problems;
}

/**
 * Why a run cannot start now, first reason first: no WebGPU, a field holding an invalid draft, the
 * config's problems, or the worker's (limits only the generated plan knows). Empty when it can.
 */
export function runBlockers(state: AppState): string[] {
  const out: string[] = [];
  if (state.device.status === 'unavailable')
    out.push('WebGPU is not available here (the banner says what is missing)');
  out.push(...draftProblems(state.drafts));
  const problems = configProblems(state);
  out.push(...problems);
  if (!problems.length && state.generatedKey === configKey(state.config))
    out.push(...(state.generated?.problems ?? []));
  if (state.pendingLink) out.push(LINK_NOT_ACCEPTED);
  return [...new Set(out)];
}

/** The current family's editor buffer. */
export function currentBuffer(state: Pick<AppState, 'buffers' | 'config'>): EditorBuffer | undefined {
  return state.buffers[state.config.kernel];
}

/** The generated text of the plan's main pass, if a kernel was generated. */
export function generatedMain(state: Pick<AppState, 'generated'>): string | undefined {
  const g = state.generated;
  return g?.passes[g.mainPass]?.wgsl;
}

/** The user's edit of the current kernel's main pass, if it differs from the generated text. */
export function editedWgsl(state: Pick<AppState, 'buffers' | 'config' | 'generated'>): string | undefined {
  const b = currentBuffer(state);
  const gen = generatedMain(state);
  if (!b || gen === undefined) return undefined;
  return b.text !== gen ? b.text : undefined;
}

/** True when the user's edit started from a generated kernel other than the current one. */
export function bufferIsStale(state: Pick<AppState, 'buffers' | 'config' | 'generated'>): boolean {
  const b = currentBuffer(state);
  const gen = generatedMain(state);
  return !!b && gen !== undefined && b.text !== b.base && b.base !== gen;
}

/** The permalink view of the state. */
export function permalinkOf(state: AppState): PermalinkState {
  const wgsl = editedWgsl(state);
  const ab = abLinkOf(state.ab);
  return {
    config: state.config,
    tab: state.tab,
    ...(wgsl !== undefined ? { wgsl } : {}),
    ...(ab ? { ab } : {}),
  };
}

const CONFIG_DRAFTS = ['param', 'data'];

/**
 * The tuner's form follows the playground to another tunable family (while no hunt runs), so the Tuner
 * tab opens on the family being looked at; within one family the form keeps what was typed.
 */
function followTuner(state: AppState, config: RunConfig): Partial<AppState> {
  const catalog = catalogIn(state, config.kernel);
  const t = state.tuner;
  if (!catalog?.tuning || t.form.kernel === config.kernel || t.hunt?.status === 'running') return {};
  return { tuner: { ...t, form: formFor(catalog, config, t.form.evo) } };
}

/** A new config replaces the old one: its results, kernel and field drafts go with it. */
function withConfig(state: AppState, config: RunConfig): Partial<AppState> {
  return {
    ...followTuner(state, config),
    config,
    drafts: dropDrafts(state.drafts, CONFIG_DRAFTS),
    selected: undefined,
    editorPass: undefined,
    confirm: undefined,
    ...(config.kernel !== state.config.kernel
      ? { outcome: undefined, compile: undefined, generated: undefined, generatedKey: undefined }
      : {}),
  };
}

// ---------------------------------------------------------------------------------------------- actions

/** The worker opened a device: the adapter's fastest arm unless one was chosen. */
export function deviceReady(
  state: AppState,
  caps: AdapterCaps,
  deviceId: string,
  plane: number,
): Partial<AppState> {
  const catalog = currentCatalog(state);
  const current = catalog.arms.find((a) => a.arm === state.config.arm);
  const keep = state.armExplicit && current && !current.unavailable(caps, state.config.params);
  const arm = keep ? state.config.arm : defaultArm(catalog, caps, state.config.params);
  return {
    device: {
      status: 'ready',
      caps,
      deviceId,
      plane,
      losses: state.device.losses,
      restarts: state.device.restarts,
    },
    config: arm === state.config.arm ? state.config : { ...state.config, arm },
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

/** The worker is being restarted (a cancelled run did not stop in time): a new device will open. */
export function deviceRestarting(state: AppState, message: string): Partial<AppState> {
  return {
    device: { ...state.device, status: 'starting', message, restarts: (state.device.restarts ?? 0) + 1 },
  };
}

/** A replaced worker's GPU work started (or, undefined, ended) draining. */
export function gpuDraining(
  state: AppState,
  draining: { since: number; expectedMs?: number } | undefined,
): Partial<AppState> {
  return { device: { ...state.device, draining } };
}

/**
 * Switch family: its defaults and an arm this adapter runs; the data choice stays, and a model tensor
 * stays when the new family takes it (its shape set from the tensor).
 */
export function selectKernel(state: AppState, catalog: FamilyCatalog): Partial<AppState> {
  const config = defaultConfig(catalog, state.device.caps);
  if (state.config.plane !== undefined) config.plane = state.config.plane;
  const data = state.config.data;
  const t = data.source === 'tensor' ? openTensor(state.models, data.tensor) : undefined;
  if (t && data.tensor && t.kernels.some((k) => k.kernel === catalog.id)) {
    const next = tensorConfig(catalog, config, data.tensor, t);
    return { ...withConfig(state, { ...next, arm: config.arm }), armExplicit: false };
  }
  config.data = { source: data.source === 'tensor' ? 'reference' : data.source, seed: data.seed };
  return { ...withConfig(state, config), armExplicit: false, ownershipSource: 'recorded' };
}

/** Back to the current family's defaults (the "defaults" button next to the problems). */
export function resetToDefaults(state: AppState): Partial<AppState> {
  return selectKernel(state, currentCatalog(state));
}

/** Replace the whole config (a tuner winner, a tensor choice): the arm counts as chosen. */
export function loadConfig(state: AppState, config: RunConfig): Partial<AppState> {
  return { ...withConfig(state, config), armExplicit: true };
}

/** Set one family param (the controls' committed values). */
/**
 * A param changed. When the change takes the config's arm away (an arm's availability may depend on the
 * params: a family's route), the arm follows: the adapter's fastest for the new params.
 */
export function setParam(state: AppState, key: string, value: ParamValue): Partial<AppState> {
  if (state.config.params[key] === value) return {};
  const params = { ...state.config.params, [key]: value };
  const caps = state.device.caps;
  const catalog = currentCatalog(state);
  const current = catalog.arms.find((a) => a.arm === state.config.arm);
  const arm =
    !caps || (current && !current.unavailable(caps, params))
      ? state.config.arm
      : defaultArm(catalog, caps, params);
  return { config: { ...state.config, params, arm }, confirm: undefined };
}

/** Set a number field's draft text and its problem (undefined: the text is a valid value). */
export function setDraft(state: AppState, id: string, text: string, problem?: string): Partial<AppState> {
  const old = state.drafts[id];
  if (old && old.text === text && old.problem === problem) return {};
  return { drafts: { ...state.drafts, [id]: { text, problem } } };
}

export function clearDraft(state: AppState, id: string): Partial<AppState> {
  if (!(id in state.drafts)) return {};
  const { [id]: _gone, ...rest } = state.drafts;
  return { drafts: rest };
}

export function setArm(state: AppState, arm: Arm): Partial<AppState> {
  return { config: { ...state.config, arm }, armExplicit: true };
}

export function setPlane(state: AppState, plane: number | undefined): Partial<AppState> {
  const { plane: _old, ...rest } = state.config;
  return { config: plane === undefined ? rest : { ...rest, plane } };
}

/** Choose generated data (reference generator, random, synthetic): a model tensor is let go. */
export function setDataSource(
  state: AppState,
  source: Exclude<RunConfig['data']['source'], 'tensor'>,
): Partial<AppState> {
  return { config: { ...state.config, data: { source, seed: state.config.data.seed } } };
}

export function setDataSeed(state: AppState, seed: number): Partial<AppState> {
  if (state.config.data.seed === seed) return {};
  return { config: { ...state.config, data: { ...state.config.data, seed } } };
}

export function setTab(_state: AppState, tab: ViewTab): Partial<AppState> {
  return { tab };
}

export function setRunOptions(state: AppState, patch: Partial<RunOptions>): Partial<AppState> {
  return { runOptions: { ...state.runOptions, ...patch }, confirm: undefined };
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
    ...withConfig(state, link.config),
    armExplicit: true,
    tab: link.tab,
    ab: abFromLink(link.ab),
    buffers,
    stash,
    linkError: undefined,
    outcome: undefined,
    generated: undefined,
    generatedKey: undefined,
  };
}

/**
 * Show a link without running it: its config and kernel are applied to the screen, and `before` keeps
 * what the visitor had (a second link opened meanwhile keeps the first `before`).
 */
export function previewPermalink(state: AppState, link: PermalinkState): Partial<AppState> {
  const before = state.pendingLink?.before ?? {
    config: state.config,
    armExplicit: state.armExplicit,
    tab: state.tab,
    buffers: state.buffers,
    stash: state.stash,
  };
  return { ...applyPermalink(state, link), pendingLink: { edited: link.wgsl !== undefined, before } };
}

/** Why nothing runs while a link waits (runBlockers). */
export const LINK_NOT_ACCEPTED = 'this config came from a link: accept it ("Run this linked kernel") first';

/** The visitor accepts the link: it runs, and from now on it is theirs (stored like any edit). */
export function acceptLink(): Partial<AppState> {
  return { pendingLink: undefined };
}

/** The visitor declines the link: their own config, view and editor buffers come back untouched. */
export function declineLink(state: AppState): Partial<AppState> {
  const before = state.pendingLink?.before;
  if (!before) return {};
  return {
    ...withConfig(state, before.config),
    ...before,
    pendingLink: undefined,
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
  const r = state.run;
  if (r.status === 'running') return {};
  const before = r.status === 'generating' ? r.beforeGenerating : r.status;
  return { run: { ...r, status: 'generating', beforeGenerating: before } };
}

/**
 * A kernel was generated for `key`. An unedited buffer follows the new main pass; an edited one is kept
 * (never lost) -- bufferIsStale() then tells the user it was edited from another generated kernel.
 */
export function generated(state: AppState, kernel: GeneratedKernel, key: string): Partial<AppState> {
  const id = state.config.kernel;
  const buffers = { ...state.buffers };
  const b = buffers[id];
  const main = kernel.passes[kernel.mainPass]?.wgsl;
  if (main !== undefined) {
    if (!b || b.text === b.base || b.text === main) buffers[id] = { text: main, base: main };
    else if (b.base === '') buffers[id] = { text: b.text, base: main };
  }
  // The same kernel again (a replaced worker's first generate) keeps a cancelled or finished run's
  // status, so a cancel still reads cancelled; a new kernel (or a recovered device's) has no run yet.
  const before = state.run.beforeGenerating;
  const keep = key === state.generatedKey && (before === 'cancelled' || before === 'done');
  const runStatus = state.run.status === 'generating' ? (keep ? before : 'idle') : state.run.status;
  const editorPass =
    state.editorPass !== undefined && state.editorPass < kernel.passes.length ? state.editorPass : undefined;
  return {
    generated: kernel,
    generatedKey: key,
    buffers,
    editorPass,
    run: { ...state.run, status: runStatus, beforeGenerating: undefined },
  };
}

/** Show a pass of the plan in the editor (undefined: the main pass). */
export function showPass(state: AppState, pass: number | undefined): Partial<AppState> {
  const main = state.generated?.mainPass;
  return { editorPass: pass === main ? undefined : pass };
}

/** The user typed in the editor (always the main pass). */
export function editBuffer(state: AppState, text: string): Partial<AppState> {
  const id = state.config.kernel;
  const base = state.buffers[id]?.base ?? generatedMain(state) ?? '';
  return { buffers: { ...state.buffers, [id]: { text, base } } };
}

/** Throw the edit away: the editor shows the generated kernel again. */
export function resetBuffer(state: AppState): Partial<AppState> {
  const gen = generatedMain(state);
  if (gen === undefined) return {};
  return {
    buffers: { ...state.buffers, [state.config.kernel]: { text: gen, base: gen } },
    compile: undefined,
  };
}

export function askToRun(_state: AppState, estimate: RunEstimate): Partial<AppState> {
  return { confirm: estimate };
}

export function dismissConfirm(): Partial<AppState> {
  return { confirm: undefined };
}

export function runStarted(_state: AppState, id: number, queued: boolean, sentAt: number): Partial<AppState> {
  return {
    run: { status: 'running', id, stage: queued ? 'queued' : 'starting', fraction: 0, queued, sentAt },
    confirm: undefined,
  };
}

export function runProgress(state: AppState, id: number, stage: string, fraction: number): Partial<AppState> {
  if (state.run.id !== id) return {};
  return { run: { ...state.run, stage, fraction, queued: false } };
}

export function runFinished(state: AppState, id: number, outcome: RunOutcome): Partial<AppState> {
  if (state.run.id !== id) return {};
  const phases = Object.keys(outcome.analyticOwnership ?? {}) as OwnershipPhase[];
  const src = state.ownershipSource;
  const fallback: OwnershipSource = outcome.ownership ? 'recorded' : (phases[0] ?? 'recorded');
  const ownershipSource: OwnershipSource =
    src === 'recorded' ? fallback : phases.includes(src) ? src : fallback;
  const ran = outcome.edited ? currentBuffer(state)?.text : generatedMain(state);
  return {
    run: { status: 'done', id },
    outcome,
    compile: undefined,
    selected: undefined,
    ownershipSource,
    ab: abAfterRun(state.ab, { config: outcome.config, wgsl: ran, edited: outcome.edited, outcome }),
  };
}

export function runCompileError(state: AppState, id: number, compile: CompileState): Partial<AppState> {
  if (state.run.id !== id) return {};
  return { run: { status: 'compile-error', id }, compile };
}

export function runFailed(state: AppState, id: number, kind: string, message: string): Partial<AppState> {
  if (state.run.id !== id) return {};
  return { run: { status: 'error', id, error: { kind, message } } };
}

export function runCancelled(state: AppState, id: number, cancelMs?: number): Partial<AppState> {
  if (state.run.id !== id) return {};
  return { run: { status: 'cancelled', id, cancelMs } };
}

export function oracleStarted(_state: AppState, key: string): Partial<AppState> {
  return { oracle: { key, status: 'running' } };
}

export function oracleFinished(
  state: AppState,
  key: string,
  result: { rows: number; cols: number; values: Float32Array | Int32Array } | { error: string },
): Partial<AppState> {
  if (state.oracle?.key !== key) return {};
  return {
    oracle:
      'error' in result ? { key, status: 'error', error: result.error } : { key, status: 'done', ...result },
  };
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

export function setLayout(state: AppState, patch: Partial<LayoutState>): Partial<AppState> {
  return { layout: { ...state.layout, ...patch } };
}

export function setGlossary(_state: AppState, open: boolean): Partial<AppState> {
  return { glossaryOpen: open };
}

/** Restore persisted editor buffers (edited ones only are stored) and a stashed edit. */
export function restoreBuffers(
  state: AppState,
  buffers: Readonly<Partial<Record<KernelId, EditorBuffer>>>,
  stash?: AppState['stash'],
): Partial<AppState> {
  const restored: Record<KernelId, EditorBuffer> = {};
  for (const [id, b] of Object.entries(buffers)) if (b) restored[id] = b;
  return { buffers: { ...restored, ...state.buffers }, stash: state.stash ?? stash };
}
