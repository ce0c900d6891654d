// The shape sweep: one config run over a range of one shape param (m, or n, k, tokens), each point timed
// through the same worker runs as the playground's. Pure: the values of a range, the plan (each point's
// config, or why the family refuses it), and the record a sweep fills in point by point; the sweep
// controller runs it and the tune-runs database keeps it beside the tuning hunts.
import type { AdapterCaps, Arm } from '../../kernels/gpu/caps';
import type { FamilyCatalog, RunConfig } from '../../kernels/family';

/** Most points one sweep runs (each is a compile, a correctness run and a timing). */
export const SWEEP_MAX_POINTS = 48;

export type SweepPointStatus = 'pending' | 'running' | 'done' | 'refused' | 'failed' | 'cancelled';

export interface SweepPoint {
  value: number;
  status: SweepPointStatus;
  /** The batches' fastest and median ms per run, and how many batches. */
  ms?: number;
  medianMs?: number;
  batches?: number;
  /** ops / time in the family's unit (int8 TOPS or TFLOP/s). */
  throughput?: number;
  unit?: string;
  /** The run met the family's gate. */
  pass?: boolean;
  /** Why the point did not run ('refused': the family's preconditions; 'failed': the worker's error). */
  message?: string;
  /**
   * What the roofline needs (perf/sweepPerf.ts): the whole plan's bytes moved and ops (its traffic), and
   * the arithmetic and arm that pick the compute roof. Absent in sweeps stored before they were kept:
   * those show their times without % of peak.
   */
  bytes?: number;
  ops?: number;
  arithmetic?: 'int8' | 'f16';
  arm?: Arm;
}

export interface SweepRecord {
  /** `${deviceId}|${kernel}|${axis}|${startedAt}`: one record per sweep. */
  key: string;
  deviceId: string;
  kernel: string;
  /** The config swept (its `axis` param is each point's value). */
  base: RunConfig;
  axis: string;
  points: SweepPoint[];
  startedAt: string;
  status: 'running' | 'complete' | 'cancelled';
}

export interface SweepForm {
  axis: string;
  mode: 'pow2' | 'list';
  from: number;
  to: number;
  /** Values separated by commas or spaces (mode 'list'). */
  list: string;
}

export interface SweepState {
  form: SweepForm;
  /** The sweep on display: running, finished or loaded from the database. */
  current?: SweepRecord | undefined;
  /** Stored sweeps, newest first. */
  stored: SweepRecord[];
  /** Why the form's range cannot run, or what failed. */
  error?: string | undefined;
}

export const INITIAL_SWEEP: SweepState = {
  // axis '' = the family's first shape param (the sweep tab picks it).
  form: { axis: '', mode: 'pow2', from: 1, to: 4096, list: '1, 16, 100, 512' },
  stored: [],
};

/**
 * The values of a range: the powers of two from `from` to `to`, or a list (whole numbers >= 1,
 * ascending, once each), at most SWEEP_MAX_POINTS; or why not.
 * @example sweepValues({ ...form, mode: 'pow2', from: 1, to: 4096 }) // { values: [1, 2, 4, ..., 4096] }
 */
export function sweepValues(form: SweepForm): { values: number[] } | { error: string } {
  let values: number[];
  if (form.mode === 'pow2') {
    if (
      !Number.isSafeInteger(form.from) ||
      !Number.isSafeInteger(form.to) ||
      form.from < 1 ||
      form.to < form.from
    )
      return { error: `the range ${form.from}..${form.to} must be whole numbers with 1 <= from <= to` };
    values = [];
    for (let v = 1; v <= form.to; v *= 2) if (v >= form.from) values.push(v);
    if (!values.length) return { error: `no power of two lies in ${form.from}..${form.to}` };
  } else {
    const parts = form.list.split(/[\s,]+/).filter(Boolean);
    const bad = parts.find((p) => !/^\d+$/.test(p) || Number(p) < 1 || !Number.isSafeInteger(Number(p)));
    if (bad !== undefined) return { error: `'${bad}' is not a whole number >= 1` };
    values = [...new Set(parts.map(Number))].sort((a, b) => a - b);
    if (!values.length) return { error: 'list at least one value' };
  }
  if (values.length > SWEEP_MAX_POINTS)
    return { error: `${values.length} points: a sweep runs at most ${SWEEP_MAX_POINTS}` };
  return { values };
}

/** The int shape params of a family a sweep can walk (m, n, k, tokens...). */
export function sweepAxes(catalog: FamilyCatalog): string[] {
  return catalog.controls.filter((c) => c.group === 'shape' && c.kind === 'int').map((c) => c.key);
}

/**
 * Each point's config (the base with `axis` = value) and the family's reasons to refuse it (its
 * preconditions: a k not a multiple of the block, an m off the tile...), checked before anything runs.
 * @example sweepPlan(catalog, config, 'm', [1, 2, 4], caps).filter((p) => p.problems.length)
 */
export function sweepPlan(
  catalog: FamilyCatalog,
  base: RunConfig,
  axis: string,
  values: readonly number[],
  caps?: AdapterCaps,
): { value: number; config: RunConfig; problems: string[] }[] {
  return values.map((value) => {
    const config = { ...base, params: { ...base.params, [axis]: value } };
    return { value, config, problems: [...new Set(catalog.validate(config, caps))] };
  });
}

/** A new sweep's record: refused points are marked with their reason, the others wait. */
export function newSweep(
  deviceId: string,
  base: RunConfig,
  axis: string,
  plan: readonly { value: number; problems: string[] }[],
  startedAt: string,
): SweepRecord {
  return {
    key: `${deviceId}|${base.kernel}|${axis}|${startedAt}`,
    deviceId,
    kernel: base.kernel,
    base,
    axis,
    points: plan.map(({ value, problems }) =>
      problems.length
        ? { value, status: 'refused', message: problems.join('; ') }
        : { value, status: 'pending' },
    ),
    startedAt,
    status: 'running',
  };
}

/** The record with point `i` replaced. */
export function withPoint(r: SweepRecord, i: number, point: SweepPoint): SweepRecord {
  return { ...r, points: r.points.map((p, j) => (j === i ? point : p)) };
}

/** The record finished or cancelled: points still waiting are marked cancelled. */
export function endSweep(r: SweepRecord, status: 'complete' | 'cancelled'): SweepRecord {
  return {
    ...r,
    status,
    points: r.points.map((p) =>
      p.status === 'pending' || p.status === 'running' ? { ...p, status: 'cancelled' } : p,
    ),
  };
}
