// The hardware tier: every family of the registry x every arm it declares x every value of its choice
// controls, on each of the family's conformance shapes (FamilyCatalog.checks), run on whatever adapter is
// present and compared IN FULL with the family's own oracle and gate (bit-exact for the int8 families,
// the f16 emulation gate for the twin), plus the full-precision gate where a family declares one. Nothing
// here names a family: new families, arms and choice controls are picked up from their declarations.
// CI runs it on SwiftShader (test/hw/checks.test.ts checks the enumeration); `npm run test:gpu` and the
// bundle bench/h200.sh runs (`tier` step) run it on a real GPU.
import { gateText, judge, type Gate } from '../../src/kernels/compare';
import {
  checkApplies,
  type ConformanceCheck,
  type FamilyParams,
  type KernelFamily,
  type ResolvedConfig,
  type RunConfig,
} from '../../src/kernels/family';
import { resolveConfig } from '../../src/kernels/arms';
import type { AdapterCaps, Arm } from '../../src/kernels/gpu/caps';
import { runPlan } from '../../src/kernels/gpu/runner';

/** One value of each choice control (key -> option value); {} for a family without choice controls. */
export type ChoiceValues = Record<string, string>;

/**
 * Every combination of the family's kernel-variant choice controls' options (their cartesian product), in
 * declaration order; one empty combination when it has none. Choices of the problem rather than the kernel
 * (the 'shape' and 'route' groups, e.g. MoE's routing) come from the checks' own params instead.
 * @example choiceCombos(coopmat) // [{ staging: 'one-pass' }, { staging: 'prepass' }, ...]
 */
export function choiceCombos(family: Pick<KernelFamily, 'controls'>): ChoiceValues[] {
  let combos: ChoiceValues[] = [{}];
  for (const c of family.controls) {
    if (c.kind !== 'choice' || c.group !== 'tile') continue;
    combos = combos.flatMap((combo) => c.options.map((o) => ({ ...combo, [c.key]: o.value })));
  }
  return combos;
}

/** The checks a family runs: its declared ones, else its defaults alone (flagged in the summary). */
export function checksOf(family: Pick<KernelFamily, 'checks'>): readonly ConformanceCheck[] {
  return family.checks?.length ? family.checks : [{ label: 'defaults (no checks declared)', params: {} }];
}

/**
 * The config of one check: defaults, the check's params, the choice values, on `arm` with the adapter's
 * plane (the matrix arms need the hardware's own; planeWidth is it wherever subgroups exist).
 */
export function checkConfig(
  family: Pick<KernelFamily, 'id' | 'defaults'>,
  check: ConformanceCheck,
  choice: ChoiceValues,
  arm: Arm,
  caps: AdapterCaps,
): ResolvedConfig {
  const config: RunConfig = {
    kernel: family.id,
    arm,
    data: { source: 'reference', seed: 0 },
    params: { ...family.defaults, ...check.params, ...choice } as FamilyParams,
  };
  return resolveConfig(config, caps);
}

/** 'pass' = every check met every gate; 'not-offered' = the adapter lacks the arm (reason given). */
export type RowStatus = 'pass' | 'fail' | 'not-offered';
/**
 * 'invalid' = the family's validate() or the plan's limit checks refused the check on an adapter that
 * offers the arm (a declaration problem: it fails the tier); 'error' = compile, validation or run error.
 */
export type CheckStatus = 'pass' | 'fail' | 'error' | 'invalid' | 'not-offered';

export interface GateResult {
  gate: string;
  pass: boolean;
  relToMax: number;
  maxAbsDelta: number;
  mismatches: number;
  /** First differing output elements as [row, col]. */
  firstBad: [number, number][];
}

export interface CheckResult {
  label: string;
  params: FamilyParams;
  status: CheckStatus;
  /** Why it did not run (not-offered, invalid) or how it broke (error). */
  reason?: string;
  plane?: number;
  /** Output [rows, cols]; workgroups of the main pass; whether rows/cols leave a partial output tile. */
  rows?: number;
  cols?: number;
  workgroups?: number;
  tail?: boolean;
  /** The family's gate vs its oracle, on the full output. */
  oracle?: GateResult;
  /** The family's full-precision gate (FamilyCatalog facts.fullPrecisionGate), where it has one. */
  fullPrecision?: GateResult;
  /** Build, run, read back and judge, ms. */
  ms: number;
}

export interface TierRow {
  family: string;
  arm: Arm;
  armLabel: string;
  choice: ChoiceValues;
  status: RowStatus;
  /** not-offered: the arm's own reason on this adapter. */
  reason?: string;
  checks: CheckResult[];
  ms: number;
}

export interface TierSummary {
  tool: 'mmq-hw-tier';
  version: 1;
  date: string;
  commit: string;
  /** adapter.info as plain data (vendor, architecture, description, subgroup sizes, matrix configs). */
  adapter: Record<string, unknown>;
  features: string[];
  dawnFlags: readonly string[];
  node: string;
  /** Families that declare no checks (they ran their defaults only). */
  undeclared: string[];
  rows: TierRow[];
  totals: { rows: number; pass: number; fail: number; notOffered: number; checks: number };
  wallMs: number;
}

function gateResult(
  got: Float32Array | Int32Array,
  want: Float32Array | Int32Array,
  gate: Gate,
  cols: number,
): GateResult {
  const v = judge(got, want, gate);
  return {
    gate: gateText(gate),
    pass: v.pass,
    relToMax: v.relToMax,
    maxAbsDelta: v.maxAbsDelta,
    mismatches: v.mismatches,
    firstBad: v.firstBad.slice(0, 8).map((i) => [Math.floor(i / cols), i % cols]),
  };
}

const message = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

/** Run one check: build (validate + plan), run, read the whole output, judge it. */
async function runCheck(
  device: GPUDevice,
  caps: AdapterCaps,
  family: KernelFamily,
  check: ConformanceCheck,
  choice: ChoiceValues,
  arm: Arm,
): Promise<CheckResult> {
  const t0 = performance.now();
  const base = { label: check.label, params: check.params };
  const config = checkConfig(family, check, choice, arm, caps);
  const decl = family.arms.find((a) => a.arm === arm)!;
  const missing = decl.unavailable(caps, config.params);
  if (missing) return { ...base, status: 'not-offered', reason: missing, ms: performance.now() - t0 };
  const problems = family.validate(config, caps);
  if (problems.length)
    return { ...base, status: 'invalid', reason: problems.join('; '), ms: performance.now() - t0 };
  let built;
  try {
    built = family.build(config, caps);
  } catch (e) {
    return { ...base, status: 'invalid', reason: message(e), ms: performance.now() - t0 };
  }
  const { facts, plan } = built;
  const main = plan.passes[plan.mainPass]!;
  const shape = {
    plane: config.plane,
    rows: facts.rows,
    cols: facts.cols,
    workgroups: main.workgroups[0] * main.workgroups[1] * main.workgroups[2],
    tail: facts.outputTile
      ? facts.rows % facts.outputTile.rows !== 0 || facts.cols % facts.outputTile.cols !== 0
      : false,
  };
  try {
    const out = (await runPlan(device, plan)).output;
    const want = facts.oracle();
    const n = want.length;
    if (out.byteLength < n * 4) throw new RangeError(`output holds ${out.byteLength / 4} elements, not ${n}`);
    const got = want instanceof Int32Array ? new Int32Array(out, 0, n) : new Float32Array(out, 0, n);
    const oracle = gateResult(got, want, facts.gate, facts.cols);
    const full =
      facts.fullPrecisionGate && facts.fullPrecision && got instanceof Float32Array
        ? gateResult(got, facts.fullPrecision(), facts.fullPrecisionGate, facts.cols)
        : undefined;
    const pass = oracle.pass && (full?.pass ?? true);
    return {
      ...base,
      ...shape,
      status: pass ? 'pass' : 'fail',
      oracle,
      ...(full ? { fullPrecision: full } : {}),
      ms: performance.now() - t0,
    };
  } catch (e) {
    return { ...base, ...shape, status: 'error', reason: message(e), ms: performance.now() - t0 };
  }
}

export interface TierOptions {
  /** Only rows whose `family/arm/choice` id matches. */
  filter?: RegExp;
  /** After each row (progress). */
  onRow?: (row: TierRow) => void;
}

/** The id a row is filtered and listed by: family/arm, then the choice values. */
export const rowId = (r: Pick<TierRow, 'family' | 'arm' | 'choice'>): string =>
  [r.family, r.arm, ...Object.values(r.choice)].join('/');

/**
 * Run the tier on a device: every family x arm x choice combination x check.
 * @example const rows = await runTier(device, caps, KERNELS.families, { onRow: (r) => console.log(rowId(r), r.status) });
 */
export async function runTier(
  device: GPUDevice,
  caps: AdapterCaps,
  families: readonly KernelFamily[],
  opts: TierOptions = {},
): Promise<TierRow[]> {
  const rows: TierRow[] = [];
  for (const family of families) {
    for (const decl of family.arms) {
      for (const choice of choiceCombos(family)) {
        const key = { family: family.id, arm: decl.arm, choice };
        if (opts.filter && !opts.filter.test(rowId(key))) continue;
        const t0 = performance.now();
        const checks: CheckResult[] = [];
        for (const check of checksOf(family).filter((c) => checkApplies(c, choice)))
          checks.push(await runCheck(device, caps, family, check, choice, decl.arm));
        const offered = checks.filter((c) => c.status !== 'not-offered');
        const row: TierRow = {
          ...key,
          armLabel: decl.label,
          status: !offered.length
            ? 'not-offered'
            : offered.every((c) => c.status === 'pass')
              ? 'pass'
              : 'fail',
          ...(!offered.length ? { reason: checks[0]?.reason ?? 'no checks' } : {}),
          checks,
          ms: performance.now() - t0,
        };
        rows.push(row);
        opts.onRow?.(row);
      }
    }
  }
  return rows;
}

/** Counts of a tier's rows and checks. */
export function tierTotals(rows: readonly TierRow[]): TierSummary['totals'] {
  return {
    rows: rows.length,
    pass: rows.filter((r) => r.status === 'pass').length,
    fail: rows.filter((r) => r.status === 'fail').length,
    notOffered: rows.filter((r) => r.status === 'not-offered').length,
    checks: rows.reduce((a, r) => a + r.checks.filter((c) => c.status !== 'not-offered').length, 0),
  };
}

/**
 * One line per row: status, id, and for a failure each failing check's gate, rel error and mismatches.
 * @example console.log(rowLine(row)) // 'pass  mmq-q4k-rt/dp4a  3 checks  412 ms'
 */
export function rowLine(r: TierRow): string {
  const head = `${r.status.padEnd(11)} ${rowId(r)}`;
  if (r.status === 'not-offered') return `${head}: ${r.reason ?? ''}`;
  const ran = r.checks.filter((c) => c.status !== 'not-offered');
  const bad = ran
    .filter((c) => c.status !== 'pass')
    .map((c) => `\n    ${c.status} ${c.label} ${JSON.stringify(c.params)}: ${checkDetail(c)}`);
  return `${head}  ${ran.length} checks  ${Math.round(r.ms)} ms${bad.join('')}`;
}

/** A check's outcome in words: its gates' verdicts, or why it did not run. */
export function checkDetail(c: CheckResult): string {
  if (c.reason) return c.reason;
  const g = (name: string, x?: GateResult) =>
    x
      ? `${name} ${x.gate}: ${x.pass ? 'pass' : 'FAIL'}, rel_to_max ${x.relToMax.toExponential(2)}, ${x.mismatches}/${(c.rows ?? 0) * (c.cols ?? 0)} off${x.firstBad.length ? ` (first at ${x.firstBad.map(([i, j]) => `[${i},${j}]`).join(' ')})` : ''}`
      : '';
  return [g('oracle', c.oracle), g('full precision', c.fullPrecision)].filter(Boolean).join('; ');
}
