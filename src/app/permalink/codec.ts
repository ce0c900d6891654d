// Permalink codec: the whole playground config (kernel, arm, plane, data source and seed -- or a model
// tensor named by its file's name, size and header hash --, every family param, the edited WGSL if any,
// and the open view) as a versioned, lz-string compressed URL hash. Pure, so it is unit-tested in Node.
// Decoding validates every field against the family's own declarations (its controls' ranges and
// choices, its arms): a link is user input, and a bad one must give one clear message, never a
// half-applied state. Links of format v=1 (before families declared their knobs) are read too.
import { compressToEncodedURIComponent } from 'lz-string';
import {
  DATA_SOURCES,
  type DataChoice,
  type DataSource,
  type FamilyCatalog,
  type FamilyParams,
  type ParamValue,
  type RunConfig,
  type TensorChoice,
} from '../../kernels/family';
import { ARMS, type Arm } from '../../kernels/gpu/caps';
import { inflateUriComponent } from './boundedLz';

export const PERMALINK_VERSION = 2;

export const VIEW_TABS = ['ownership', 'errors', 'ab', 'sweep', 'tuner', 'model', 'config'] as const;
export type ViewTab = (typeof VIEW_TABS)[number];

/** Plane widths the override offers; absent = the adapter's own. */
export const PLANE_CHOICES = [4, 8, 16, 32, 64] as const;

/**
 * Bounds a link may carry: a link can never ask for an absurd allocation or string. `stateChars` caps the
 * decompressed state (the WGSL and the config around it): decoding stops there, however small the link.
 * `shownChars` is how much of an untrusted value an error message quotes.
 */
export const LIMITS = {
  wgslChars: 200_000,
  stateChars: 210_000,
  nameChars: 256,
  shownChars: 60,
  seed: 0xffffffff,
} as const;

/**
 * Untrusted text for a message: at most `max` characters, the rest counted, control characters shown
 * as U+FFFD (the UI renders it as text, never as markup).
 * @example clipText('x'.repeat(100), 10) // 'xxxxxxxxxx… (90 more characters)'
 */
export function clipText(value: string, max: number = LIMITS.shownChars): string {
  // eslint-disable-next-line no-control-regex
  const head = value.slice(0, max).replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd');
  return value.length > max ? `${head}… (${value.length - max} more characters)` : head;
}

/** One side of a pinned A/B comparison: its config and its edited WGSL (absent: the generated kernel). */
export interface AbLinkSide {
  config: RunConfig;
  wgsl?: string;
}

/** The A/B comparison a link restores: the pinned A and, once run, B. */
export interface AbLink {
  a: AbLinkSide;
  b?: AbLinkSide;
}

/** What a permalink restores. */
export interface PermalinkState {
  config: RunConfig;
  /** The user's edited text of the plan's main pass; absent = the generated kernel. */
  wgsl?: string;
  tab: ViewTab;
  /** A pinned A/B comparison. */
  ab?: AbLink;
}

/** A decoded link, or why it cannot be applied (one sentence, without what happens instead). */
export type DecodeResult = { ok: true; state: PermalinkState } | { ok: false; error: string };

/**
 * Encode a state as a URL hash (with the leading '#').
 * @example location.hash = encodePermalink({ config, tab: 'errors' });
 */
export function encodePermalink(state: PermalinkState): string {
  const body: Record<string, unknown> = { c: state.config, t: state.tab };
  if (state.wgsl !== undefined) body.w = state.wgsl;
  if (state.ab) body.ab = encodeAb(state.ab);
  return `#v=${PERMALINK_VERSION}&s=${compressToEncodedURIComponent(JSON.stringify(body))}`;
}

class LinkError extends Error {}

const encodeSide = (s: AbLinkSide) => ({ c: s.config, ...(s.wgsl !== undefined ? { w: s.wgsl } : {}) });
const encodeAb = (ab: AbLink) => ({ a: encodeSide(ab.a), ...(ab.b ? { b: encodeSide(ab.b) } : {}) });

function parseWgsl(v: unknown, where: string): string {
  if (typeof v !== 'string' || v.length > LIMITS.wgslChars)
    throw new LinkError(`${where} must be a string of at most ${LIMITS.wgslChars} characters`);
  return v;
}

/**
 * The A/B fields of a link, each side's config validated as the link's own; all the link's WGSL texts
 * together stay within LIMITS.wgslChars, as one edited kernel does.
 */
function parseAb(x: unknown, catalogs: readonly FamilyCatalog[], mainWgsl: number): AbLink {
  if (!isRecord(x) || !isRecord(x.a)) throw new LinkError('ab must hold a pinned side a');
  let chars = mainWgsl;
  const side = (s: unknown, name: string): AbLinkSide => {
    if (!isRecord(s)) throw new LinkError(`ab.${name} must be an object`);
    const out: AbLinkSide = { config: parseConfig(s.c, catalogs) };
    if (s.w !== undefined) {
      out.wgsl = parseWgsl(s.w, `ab.${name}'s edited WGSL`);
      chars += out.wgsl.length;
    }
    return out;
  };
  const ab: AbLink = { a: side(x.a, 'a'), ...(x.b !== undefined ? { b: side(x.b, 'b') } : {}) };
  if (chars > LIMITS.wgslChars)
    throw new LinkError(
      `the link's edited WGSL texts together must be at most ${LIMITS.wgslChars} characters`,
    );
  return ab;
}

type Obj = Record<string, unknown>;

const isRecord = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const show = (v: unknown) => clipText(JSON.stringify(v) ?? 'nothing');

function intIn(v: unknown, lo: number, hi: number, where: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < lo || v > hi)
    throw new LinkError(`${where} must be a whole number from ${lo} to ${hi} (got ${show(v)})`);
  return v;
}

function oneOf<T extends string | number>(v: unknown, options: readonly T[], where: string): T {
  const hit = options.find((o) => o === v);
  if (hit === undefined)
    throw new LinkError(`${where} must be one of ${options.join(', ')} (got ${show(v)})`);
  return hit;
}

function text(v: unknown, where: string, pattern?: RegExp): string {
  if (typeof v === 'string' && v.length > LIMITS.nameChars)
    throw new LinkError(`${where} is longer than ${LIMITS.nameChars} characters (${v.length})`);
  if (typeof v !== 'string' || (pattern && !pattern.test(v)))
    throw new LinkError(`${where} is not a valid name (got ${show(v)})`);
  return v;
}

function parseTensor(x: unknown): TensorChoice {
  if (!isRecord(x) || !isRecord(x.file)) throw new LinkError('data.tensor must name a file and a tensor');
  return {
    file: {
      name: text(x.file.name, 'data.tensor.file.name'),
      size: intIn(x.file.size, 0, Number.MAX_SAFE_INTEGER, 'data.tensor.file.size'),
      headerHash: text(x.file.headerHash, 'data.tensor.file.headerHash', /^[0-9a-f]{16}$/),
    },
    tensor: text(x.tensor, 'data.tensor.tensor'),
    activation: oneOf(x.activation, ['normal', 'outliers'] as const, 'data.tensor.activation'),
  };
}

function parseData(x: unknown): DataChoice {
  if (!isRecord(x)) throw new LinkError('data is missing');
  const source = oneOf<DataSource>(x.source, DATA_SOURCES, 'data.source');
  const data: DataChoice = { source, seed: intIn(x.seed, 0, LIMITS.seed, 'data.seed') };
  if (source === 'tensor') data.tensor = parseTensor(x.tensor);
  return data;
}

/**
 * A family's params from untrusted values: every control's value in its declared range or choices; a
 * control the link does not carry takes the family's default (links made before a knob existed);
 * unknown keys are dropped.
 */
function parseParams(x: unknown, catalog: FamilyCatalog): FamilyParams {
  if (!isRecord(x)) throw new LinkError('params must be an object');
  const out: Record<string, ParamValue> = {};
  for (const c of catalog.controls) {
    const v = x[c.key] ?? catalog.defaults[c.key];
    const where = `${c.label}`;
    if (c.kind === 'int') out[c.key] = intIn(v, c.min, c.max, where);
    else
      out[c.key] = oneOf(
        v,
        c.options.map((o) => o.value),
        where,
      );
  }
  return out;
}

function parseArm(v: unknown, catalog: FamilyCatalog): Arm {
  const arm = oneOf<Arm>(v, ARMS, 'arm');
  if (!catalog.arms.some((a) => a.arm === arm))
    throw new LinkError(
      `${catalog.title} has no ${arm} arm (it has ${catalog.arms.map((a) => a.arm).join(', ')})`,
    );
  return arm;
}

/** Validate an untrusted object as a RunConfig of one of `catalogs` (every field, nothing extra kept). */
export function parseConfig(x: unknown, catalogs: readonly FamilyCatalog[]): RunConfig {
  if (!isRecord(x)) throw new LinkError('config is missing');
  const catalog = catalogs.find((c) => c.id === x.kernel);
  if (!catalog)
    throw new LinkError(
      `kernel must be one of ${catalogs.map((c) => c.id).join(', ')} (got ${show(x.kernel)})`,
    );
  const config: RunConfig = {
    kernel: catalog.id,
    arm: parseArm(x.arm, catalog),
    data: parseData(x.data),
    params: parseParams(x.params, catalog),
  };
  if (x.plane !== undefined) config.plane = oneOf(x.plane, PLANE_CHOICES, 'plane');
  return config;
}

/**
 * A v=1 config (flat shape fields, a `tile` object, `dataSource` 'seed' | 'random', plane 0 = the
 * adapter's) in today's form: every flat number that is one of the family's control keys becomes a
 * param, and v1's `m` (every family's rows then) becomes the family's rows param.
 */
function fromV1(x: unknown, catalogs: readonly FamilyCatalog[]): unknown {
  if (!isRecord(x)) return x;
  const catalog = catalogs.find((c) => c.id === x.kernel);
  const flat: Obj = { ...x, ...(isRecord(x.tile) ? x.tile : {}) };
  const params: Obj = {};
  for (const c of catalog?.controls ?? []) if (flat[c.key] !== undefined) params[c.key] = flat[c.key];
  const rows = catalog?.takes?.rows;
  if (rows && params[rows] === undefined && flat.m !== undefined) params[rows] = flat.m;
  return {
    kernel: x.kernel,
    arm: x.arm,
    ...(x.plane === 0 || x.plane === undefined ? {} : { plane: x.plane }),
    data: { source: x.dataSource === 'seed' ? 'reference' : x.dataSource, seed: x.dataSeed },
    params,
  };
}

/**
 * Decode a URL hash against the families this build knows. Never throws.
 * @example const r = decodePermalink(location.hash, CATALOG.families); if (!r.ok) showBanner(r.error);
 */
export function decodePermalink(hash: string, catalogs: readonly FamilyCatalog[]): DecodeResult {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const v = params.get('v');
  const s = params.get('s');
  if (v === null || s === null)
    return {
      ok: false,
      error: `This link has no playground state (expected #v=${PERMALINK_VERSION}&s=...).`,
    };
  if (v !== String(PERMALINK_VERSION) && v !== '1')
    return {
      ok: false,
      error: `This link is format v=${clipText(v, 12)}; this build reads v=${PERMALINK_VERSION} (and v=1).`,
    };
  const inflated = inflateUriComponent(s, LIMITS.stateChars);
  if (!inflated.ok)
    return {
      ok: false,
      error:
        inflated.reason === 'too-long'
          ? `This link is too large (its state inflates past ${LIMITS.stateChars.toLocaleString('en-US')} characters).`
          : 'This link is corrupt (its state does not decompress).',
    };
  const raw = inflated.text;
  if (!raw) return { ok: false, error: 'This link is corrupt (its state does not decompress).' };
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { ok: false, error: 'This link is corrupt (its state is not valid JSON).' };
  }
  try {
    if (!isRecord(body)) throw new LinkError('state is not an object');
    const config = parseConfig(v === '1' ? fromV1(body.c, catalogs) : body.c, catalogs);
    const tab = body.t === undefined ? 'ownership' : oneOf(body.t, VIEW_TABS, 'view');
    const state: PermalinkState = { config, tab };
    if (body.w !== undefined) state.wgsl = parseWgsl(body.w, 'edited WGSL');
    if (body.ab !== undefined) state.ab = parseAb(body.ab, catalogs, state.wgsl?.length ?? 0);
    return { ok: true, state };
  } catch (e) {
    // Stryker disable next-line ConditionalExpression: the parsers throw only LinkError; the rethrow keeps a bug's stack, and no link reaches it
    if (e instanceof LinkError) return { ok: false, error: `This link is invalid: ${e.message}.` };
    throw e;
  }
}
