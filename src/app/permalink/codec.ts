// Permalink codec: the whole playground config (kernel, shape, tile, staging, arm, plane, data source and seed, the
// edited WGSL if any, and the open view) as a versioned, lz-string compressed URL hash. Pure, so it is
// unit-tested in Node. Decoding validates every field: a link is user input, and a bad one must give a
// clear message and a sane default, never a half-applied state.
import { compressToEncodedURIComponent, decompressFromEncodedURIComponent } from 'lz-string';
import {
  COOPMAT_STAGINGS,
  type CoopmatStaging,
  type DataSource,
  type KernelId,
  type ProblemConfig,
  type TileParams,
} from '../../kernels/family';
import { ARMS, type Arm } from '../../kernels/gpu/caps';

export const PERMALINK_VERSION = 1;

export const VIEW_TABS = ['ownership', 'errors', 'tuner', 'config'] as const;
export type ViewTab = (typeof VIEW_TABS)[number];

/** Plane widths the override offers; 0 = the adapter's own. */
export const PLANE_CHOICES = [0, 4, 8, 16, 32, 64] as const;

/** Bounds a link may carry: generous, but a link can never ask for an absurd allocation. */
export const LIMITS = { dim: 16384, experts: 256, ytiles: 64, tile: 64, wgslChars: 200_000 } as const;

/** What a permalink restores. `config.plane` 0 means "the adapter's plane width". */
export interface PermalinkState {
  config: ProblemConfig;
  /** The user's edited kernel text; absent = the generated kernel. */
  wgsl?: string;
  tab: ViewTab;
}

export type DecodeResult = { ok: true; state: PermalinkState } | { ok: false; error: string };

/**
 * Encode a state as a URL hash (with the leading '#').
 * @example location.hash = encodePermalink({ config, tab: 'errors' });
 */
export function encodePermalink(state: PermalinkState): string {
  const body: Record<string, unknown> = { c: state.config, t: state.tab };
  if (state.wgsl !== undefined) body.w = state.wgsl;
  return `#v=${PERMALINK_VERSION}&s=${compressToEncodedURIComponent(JSON.stringify(body))}`;
}

class LinkError extends Error {}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function int(obj: Record<string, unknown>, key: string, lo: number, hi: number, where = 'config'): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) {
    throw new LinkError(
      `${where}.${key} must be an integer in ${lo}..${hi} (got ${JSON.stringify(v) ?? 'nothing'})`,
    );
  }
  return v;
}

function oneOf<T extends string | number>(
  obj: Record<string, unknown>,
  key: string,
  options: readonly T[],
  where = 'config',
): T {
  const v = obj[key];
  const hit = options.find((o) => o === v);
  if (hit === undefined)
    throw new LinkError(
      `${where}.${key} must be one of ${options.join(', ')} (got ${JSON.stringify(v) ?? 'nothing'})`,
    );
  return hit;
}

function parseTile(x: unknown): TileParams {
  if (!isRecord(x)) throw new LinkError('config.tile must be an object {wm, wn, rm, rn}');
  return {
    wm: int(x, 'wm', 1, LIMITS.tile, 'config.tile'),
    wn: int(x, 'wn', 1, LIMITS.tile, 'config.tile'),
    rm: int(x, 'rm', 1, LIMITS.tile, 'config.tile'),
    rn: int(x, 'rn', 1, LIMITS.tile, 'config.tile'),
  };
}

/** Validate an untrusted object as a ProblemConfig (every field, nothing extra kept). */
export function parseConfig(x: unknown, kernels: readonly KernelId[]): ProblemConfig {
  if (!isRecord(x)) throw new LinkError('config is missing');
  const experts = int(x, 'experts', 1, LIMITS.experts);
  return {
    kernel: oneOf(x, 'kernel', kernels),
    m: int(x, 'm', 1, LIMITS.dim),
    n: int(x, 'n', 1, LIMITS.dim),
    k: int(x, 'k', 1, LIMITS.dim),
    experts,
    topk: int(x, 'topk', 1, experts),
    ytiles: int(x, 'ytiles', 1, LIMITS.ytiles),
    tile: parseTile(x.tile),
    // Optional: links made before the staging existed run the arm's default.
    ...(x.staging === undefined ? {} : { staging: oneOf<CoopmatStaging>(x, 'staging', COOPMAT_STAGINGS) }),
    arm: oneOf<Arm>(x, 'arm', ARMS),
    plane: oneOf(x, 'plane', PLANE_CHOICES),
    dataSource: oneOf<DataSource>(x, 'dataSource', ['seed', 'random']),
    dataSeed: int(x, 'dataSeed', 0, 0xffffffff),
  };
}

/**
 * Decode a URL hash. `kernels` lists the kernel ids this build knows. Never throws.
 * @example const r = decodePermalink(location.hash, KERNEL_FAMILIES.map((f) => f.id)); if (!r.ok) showBanner(r.error);
 */
export function decodePermalink(hash: string, kernels: readonly KernelId[]): DecodeResult {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const v = params.get('v');
  const s = params.get('s');
  if (v === null || s === null)
    return { ok: false, error: 'This link has no playground state (expected #v=1&s=...).' };
  if (v !== String(PERMALINK_VERSION)) {
    return {
      ok: false,
      error: `This link is format v=${v}; this build reads v=${PERMALINK_VERSION}. Showing the default config instead.`,
    };
  }
  let text: string | null;
  try {
    text = decompressFromEncodedURIComponent(s);
  } catch {
    text = null;
  }
  if (!text)
    return {
      ok: false,
      error: 'This link is corrupt (its state does not decompress). Showing the default config instead.',
    };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {
      ok: false,
      error: 'This link is corrupt (its state is not valid JSON). Showing the default config instead.',
    };
  }
  try {
    if (!isRecord(body)) throw new LinkError('state is not an object');
    const config = parseConfig(body.c, kernels);
    const tab = body.t === undefined ? 'ownership' : oneOf(body, 't', VIEW_TABS, 'view');
    const state: PermalinkState = { config, tab };
    if (body.w !== undefined) {
      if (typeof body.w !== 'string' || body.w.length > LIMITS.wgslChars) {
        throw new LinkError(`edited WGSL must be a string of at most ${LIMITS.wgslChars} characters`);
      }
      state.wgsl = body.w;
    }
    return { ok: true, state };
  } catch (e) {
    if (e instanceof LinkError)
      return { ok: false, error: `This link is invalid: ${e.message}. Showing the default config instead.` };
    throw e;
  }
}
