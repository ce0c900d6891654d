// Pure numerics behind the views: error fields, log colour scales, ownership flags, "who owns the bad
// elements", the error split, tile geometry and stable hashes. No DOM, so everything the canvases draw
// is unit-tested in Node (analysis.test.ts) and snapshot-tested numerically in e2e through window.__mmq.
import type { Gate } from '../../kernels/compare';
import type { OwnershipBuffers } from '../../workers/protocol';

export type Numeric = ArrayLike<number>;
export type Rgb = readonly [number, number, number];

/** Log colour scale bounds: 1e-7 (about one f32 ulp of the max) up to 1 (the size of the output). */
export const LOG_MIN = -7;
export const LOG_MAX = 0;

/**
 * Per-element |got - want| / max|want|: the seed's rel_to_max, unfolded over the output.
 * NaN or infinite `got` gives Infinity.
 * @example errorField([1, 2], [1, 4])  // Float32Array [0, 0.5]
 */
export function errorField(got: Numeric, want: Numeric): Float32Array {
  if (got.length !== want.length) throw new RangeError(`length ${got.length} != ${want.length}`);
  let ref = 1e-9;
  for (let i = 0; i < want.length; i++) ref = Math.max(ref, Math.abs(want[i]!));
  const out = new Float32Array(want.length);
  for (let i = 0; i < want.length; i++) {
    const g = got[i]!;
    out[i] = Number.isFinite(g) ? Math.abs(g - want[i]!) / ref : Infinity;
  }
  return out;
}

/** Elements whose bit patterns differ (for bit-exact gates an error of 0.0 can still hide a -0 vs +0). */
export function bitDiffers(got: Float32Array | Int32Array, want: Float32Array | Int32Array): Uint8Array {
  const a = new Uint32Array(got.buffer, got.byteOffset, got.length);
  const b = new Uint32Array(want.buffer, want.byteOffset, want.length);
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] === b[i] ? 0 : 1;
  return out;
}

/** Which elements fail the gate: bit differences for bit-exact, error > tol for rel-to-max. */
export function badMask(
  got: Float32Array | Int32Array,
  want: Float32Array | Int32Array,
  err: Float32Array,
  gate: Gate,
): Uint8Array {
  if (gate.kind === 'bit-exact') return bitDiffers(got, want);
  const out = new Uint8Array(err.length);
  for (let i = 0; i < err.length; i++) out[i] = err[i]! > gate.tol || Number.isNaN(err[i]!) ? 1 : 0;
  return out;
}

/** Position of an error on the log scale in [0, 1]; -1 for exactly 0, 2 for NaN/Infinity. */
export function logPosition(e: number): number {
  if (!Number.isFinite(e)) return 2;
  if (e <= 0) return -1;
  const t = (Math.log10(e) - LOG_MIN) / (LOG_MAX - LOG_MIN);
  return Math.min(1, Math.max(0, t));
}

// A perceptual dark-to-hot ramp (approximating "inferno"): readable on a dark background.
const RAMP: readonly Rgb[] = [
  [40, 11, 84],
  [101, 21, 110],
  [159, 42, 99],
  [212, 72, 66],
  [245, 125, 21],
  [250, 193, 39],
  [252, 255, 164],
];

export const EXACT_COLOR: Rgb = [24, 30, 40];
export const NONFINITE_COLOR: Rgb = [0, 230, 255];
export const OUTSIDE_COLOR: Rgb = [12, 14, 18];

/** Colour of a log-scale position from logPosition(). */
export function rampColor(t: number): Rgb {
  if (t < 0) return EXACT_COLOR;
  if (t > 1) return NONFINITE_COLOR;
  const x = t * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const f = x - i;
  const a = RAMP[i]!;
  const b = RAMP[i + 1]!;
  return [
    Math.round(a[0] + (b[0] - a[0]) * f),
    Math.round(a[1] + (b[1] - a[1]) * f),
    Math.round(a[2] + (b[2] - a[2]) * f),
  ];
}

function hslToRgb(h: number, s: number, l: number): Rgb {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

/**
 * Owner colour: hue by plane (golden-angle steps so neighbours differ), lightness by lane within it.
 * @example ownerColor(0, 0, 4) // the darkest shade of plane 0's hue
 */
export function ownerColor(plane: number, lane: number, planeWidth: number): Rgb {
  const hue = (plane * 137.508 + 200) % 360;
  const t = planeWidth > 1 ? lane / (planeWidth - 1) : 0.5;
  return hslToRgb(hue, 0.62, 0.3 + 0.42 * t);
}

export interface OwnershipFlags {
  never: number;
  twice: number;
  /** Up to 16 indices of each, for the message. */
  firstNever: number[];
  firstTwice: number[];
}

/** Elements the recorded run stored never or more than once (both are bugs of the kernel). */
export function ownershipFlags(own: OwnershipBuffers): OwnershipFlags {
  const flags: OwnershipFlags = { never: 0, twice: 0, firstNever: [], firstTwice: [] };
  for (let i = 0; i < own.count.length; i++) {
    const c = own.count[i]!;
    if (c === 0) {
      flags.never++;
      if (flags.firstNever.length < 16) flags.firstNever.push(i);
    } else if (c > 1) {
      flags.twice++;
      if (flags.firstTwice.length < 16) flags.firstTwice.push(i);
    }
  }
  return flags;
}

/**
 * Elements where two ownership maps name a different (workgroup, plane, lane) -- the count the kernels'
 * tests use (gpu/instrument.ts), kept here so the main thread imports no kernel code.
 * @example ownershipDiff(outcome.ownership, outcome.analyticOwnership['scalar-epilogue']) // 0
 */
export function ownershipDiff(a: OwnershipBuffers, b: OwnershipBuffers): number {
  if (a.rows !== b.rows || a.cols !== b.cols) return a.rows * a.cols;
  let n = 0;
  for (let i = 0; i < a.count.length; i++)
    if (a.workgroup[i] !== b.workgroup[i] || a.plane[i] !== b.plane[i] || a.lane[i] !== b.lane[i]) n++;
  return n;
}

/** Number of lanes of a plane: the largest recorded lane + 1, at least the configured width. */
export function lanesOf(own: OwnershipBuffers, configured: number): number {
  let max = 0;
  for (let i = 0; i < own.lane.length; i++) max = Math.max(max, own.lane[i]!);
  return Math.max(configured, max + 1);
}

/** Lane-local element number: the k-th element (row-major) this (workgroup, plane, lane) owns. */
export function laneElementIndex(own: OwnershipBuffers): Uint32Array {
  const seen = new Map<string, number>();
  const out = new Uint32Array(own.count.length);
  for (let i = 0; i < own.count.length; i++) {
    const key = `${own.workgroup[i]}:${own.plane[i]}:${own.lane[i]}`;
    const k = seen.get(key) ?? 0;
    out[i] = k;
    seen.set(key, k + 1);
  }
  return out;
}

export interface BadSummary {
  total: number;
  bad: number;
  byLane: [lane: number, count: number][];
  byPlane: [plane: number, count: number][];
  byWorkgroup: [workgroup: number, count: number][];
  /** One sentence, e.g. "all 64 bad elements belong to lane 3". */
  sentence: string;
}

function tally(mask: Uint8Array, key: Uint32Array): [number, number][] {
  const m = new Map<number, number>();
  for (let i = 0; i < mask.length; i++) if (mask[i]) m.set(key[i]!, (m.get(key[i]!) ?? 0) + 1);
  return [...m.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
}

/**
 * Who owns the bad elements: counts by lane, plane and workgroup and a one-line finding.
 * @example badByOwner(mask, ownership).sentence // "all 64 bad elements belong to lane 3"
 */
export function badByOwner(mask: Uint8Array, own: OwnershipBuffers | undefined): BadSummary {
  let bad = 0;
  for (let i = 0; i < mask.length; i++) bad += mask[i]!;
  if (!own || own.count.length !== mask.length) {
    return {
      total: mask.length,
      bad,
      byLane: [],
      byPlane: [],
      byWorkgroup: [],
      sentence: bad ? `${bad} bad elements (no ownership recorded)` : 'no bad elements',
    };
  }
  // An element no lane stored has no owner: its recorded workgroup, plane and lane are the buffer's
  // zeros, and blaming "workgroup 0, plane 0, lane 0" for it was wrong. It is counted apart.
  const stored = mask.map((m, i) => (m && own.count[i] ? 1 : 0));
  const never = bad - stored.reduce((a, m) => a + m, 0);
  const byLane = tally(stored, own.lane);
  const byPlane = tally(stored, own.plane);
  const byWorkgroup = tally(stored, own.workgroup);
  const neverText = `${never} bad element${never > 1 ? 's were' : ' was'} never stored (the Ownership view shows where ${never > 1 ? 'they belong' : 'it belongs'})`;
  let sentence = 'no bad elements';
  if (never > 0) sentence = neverText;
  if (bad > never) {
    const storedBad = bad - never;
    const only = (list: [number, number][], what: string) =>
      list.length === 1 ? `${what} ${list[0]![0]}` : undefined;
    const parts = [only(byWorkgroup, 'workgroup'), only(byPlane, 'plane'), only(byLane, 'lane')].filter(
      Boolean,
    );
    if (parts.length)
      sentence = `all ${storedBad} bad element${storedBad > 1 ? 's' : ''} stored belong to ${parts.join(', ')}`;
    else {
      const [lane, n] = byLane[0]!;
      sentence = `${storedBad} bad elements over ${byLane.length} lanes, ${byPlane.length} planes, ${byWorkgroup.length} workgroups (most: lane ${lane} with ${n})`;
    }
    if (never > 0) sentence = `${sentence}; ${neverText}`;
  }
  return { total: mask.length, bad, byLane, byPlane, byWorkgroup, sentence };
}

export interface ErrorSplit {
  /** max|oracle - f32| / max|f32|: what quantizing the weights and activation costs. */
  quantization: number;
  /** max|gpu - oracle| / max|oracle|: what the kernel adds beyond the quantized math. */
  kernel: number;
  /** max|gpu - f32| / max|f32|. */
  total: number;
}

function relMax(got: Numeric, want: Numeric): number {
  let num = 0;
  let den = 1e-9;
  for (let i = 0; i < want.length; i++) {
    const g = got[i]!;
    if (!Number.isFinite(g)) return Infinity;
    num = Math.max(num, Math.abs(g - want[i]!));
    den = Math.max(den, Math.abs(want[i]!));
  }
  return num / den;
}

/** The error split of a run against the full-precision f32 GEMM on dequantized weights. */
export function errorSplit(gpu: Numeric, oracle: Numeric, fullPrecision: Numeric): ErrorSplit {
  return {
    quantization: relMax(oracle, fullPrecision),
    kernel: relMax(gpu, oracle),
    total: relMax(gpu, fullPrecision),
  };
}

export interface TileGeometry {
  /** Rows x cols one workgroup tile covers. */
  tileRows: number;
  tileCols: number;
  /** The output padded up to whole tiles: what the grid covers; rows >= `rows` are outside m. */
  paddedRows: number;
  paddedCols: number;
}

/**
 * The workgroup tile from an ownership map: the smallest positive step between workgroup origins
 * (their top-left owned element), so a partial edge tile shows as the tail it is.
 */
export function tileGeometry(own: OwnershipBuffers): TileGeometry {
  const originRow = new Map<number, number>();
  const originCol = new Map<number, number>();
  for (let i = 0; i < own.count.length; i++) {
    const wg = own.workgroup[i]!;
    const r = Math.floor(i / own.cols);
    const c = i % own.cols;
    originRow.set(wg, Math.min(originRow.get(wg) ?? r, r));
    originCol.set(wg, Math.min(originCol.get(wg) ?? c, c));
  }
  const step = (origins: Iterable<number>, extent: number) => {
    const s = [...new Set(origins)].sort((a, b) => a - b);
    let d = Infinity;
    for (let i = 1; i < s.length; i++) d = Math.min(d, s[i]! - s[i - 1]!);
    return Number.isFinite(d) && d > 0 ? d : extent;
  };
  const tileRows = step(originRow.values(), own.rows);
  const tileCols = step(originCol.values(), own.cols);
  return {
    tileRows,
    tileCols,
    paddedRows: Math.ceil(own.rows / tileRows) * tileRows,
    paddedCols: Math.ceil(own.cols / tileCols) * tileCols,
  };
}

/**
 * FNV-1a over the bytes of typed arrays: a short stable fingerprint for numeric snapshots.
 * @example fnv1a([new Uint32Array([1, 2])]) // '8-hex-digit string'
 */
export function fnv1a(arrays: readonly ArrayBufferView[]): string {
  let h = 0x811c9dc5;
  for (const a of arrays) {
    const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    for (let i = 0; i < bytes.length; i++) {
      h ^= bytes[i]!;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  }
  return h.toString(16).padStart(8, '0');
}

/** The error field binned to the colour scale's 64 steps (so its hash ignores sub-pixel noise). */
export function errorBins(err: Float32Array): Uint8Array {
  const out = new Uint8Array(err.length);
  for (let i = 0; i < err.length; i++) {
    const t = logPosition(err[i]!);
    out[i] = t < 0 ? 0 : t > 1 ? 255 : 1 + Math.round(t * 63);
  }
  return out;
}

/** Compact number formatting for the panels. */
export function fmt(x: number | undefined, digits = 3): string {
  if (x === undefined) return '–';
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '-∞';
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) return x.toExponential(digits - 1);
  return Number(x.toPrecision(digits)).toString();
}

/**
 * Why a pass timed alone can be slower than the whole plan, when one is (undefined otherwise): the
 * figures are separate measurements, each the fastest of its own batches at another moment.
 * @example passSlowerNote(8.69, [{ label: 'GEMM', ms: 16.8 }]) // 'Pass 1 (GEMM) alone, 16.8 ms, ...'
 */
export function passSlowerNote(
  planMs: number,
  passes: readonly { label: string; ms: number }[],
): string | undefined {
  const i = passes.findIndex((p) => p.ms > planMs);
  const p = passes[i];
  if (!p) return undefined;
  return `Pass ${i + 1} (${p.label}) alone, ${fmt(p.ms)} ms, took longer than the whole plan, ${fmt(planMs)} ms. They are separate measurements: each is the fastest of its own batches, taken at another moment (other work on the adapter -- on a CPU adapter, anything else the machine runs -- slows one and not the other), and a pass repeated back to back alone meets the caches and the scheduler differently than between the plan's other passes. Compare passes with each other, and plans by their whole-plan time.`;
}
