// A model run: one forward pass's GEMMs (./forward.ts) picked across families and timed on one adapter
// (../tune/pick.ts), at prefill of M tokens and at decode, with the adapter's info and measured peaks.
// What the app's model view and `mmq model` show, export and import: JSON of format
// 'mmq-playground/model-run', runs of several adapters side by side, each GEMM's winner as a Kernel Tuner
// cache. Pure and light (the app's main thread renders and validates with it).
import { knobLabel, type FamilyCatalog, type GgufFileRef, type KernelId } from '../family';
import { toKtCache, tuningKeys, type KtCacheFile } from '../perf/ktCache';
import {
  peakOpsOf,
  rooflinePoint,
  roofOf,
  type ComputeRoof,
  type Peaks,
  type RooflinePoint,
} from '../perf/roofline';
import { excerpt } from '../quant/untrustedText';
import type { PickCandidate, PickGemm, PickResult } from '../tune/pick';
import { tuneProblemKey } from '../tune/problem';
import { passRows, type ForwardPass, type PassFormat, type PassGemm, type PassPhase } from './forward';

export const MODEL_RUN_FORMAT = 'mmq-playground/model-run';
export const MODEL_RUN_VERSION = 1;

/** The adapter a run was measured on, as an export names it. */
export interface ModelRunAdapter {
  /** In words ("nvidia hopper", "google SwiftShader"). */
  name: string;
  /** The device id stored winners are filed under (its plane width included). */
  deviceId: string;
  vendor: string;
  architecture: string;
  description: string;
  plane: number;
  /** A CPU adapter (SwiftShader): its times are not a GPU's. */
  software: boolean;
}

/** One phase of a run: prefill at m tokens, or decode (m = 1); picks line up with the run's gemms. */
export interface ModelRunPhase {
  phase: PassPhase;
  m: number;
  /** null: not picked (yet, or the run was cancelled first). */
  picks: (PickResult | null)[];
}

export interface ModelRun {
  format: typeof MODEL_RUN_FORMAT;
  version: typeof MODEL_RUN_VERSION;
  model: {
    name: string;
    source: 'preset' | 'gguf';
    /** The preset's id and the format its weights were listed in. */
    id?: string;
    format?: PassFormat;
    file?: GgufFileRef;
  };
  adapter: ModelRunAdapter;
  /** The adapter's measured peaks (the % of peak and roofline point of each GEMM). */
  peaks?: Peaks;
  /** ISO time the run started; how long it took, ms. */
  startedAt: string;
  durationMs?: number;
  /** How each candidate was timed. */
  timing: { targetMs: number; batches: number };
  /** False: picked by guessPick, nothing measured. */
  measured: boolean;
  status: 'running' | 'complete' | 'cancelled';
  gemms: PassGemm[];
  notes: string[];
  phases: ModelRunPhase[];
}

/**
 * A run about to start: every pick empty.
 * @example newModelRun(presetPass(p), { name: p.name, source: 'preset', id: p.id }, adapter, [{ phase: 'prefill', m: 512 }], opts)
 */
export function newModelRun(
  pass: ForwardPass,
  model: ModelRun['model'],
  adapter: ModelRunAdapter,
  phases: readonly { phase: PassPhase; m: number }[],
  opts: { timing: ModelRun['timing']; measured: boolean; startedAt: string; peaks?: Peaks },
): ModelRun {
  return {
    format: MODEL_RUN_FORMAT,
    version: MODEL_RUN_VERSION,
    model,
    adapter,
    ...(opts.peaks ? { peaks: opts.peaks } : {}),
    startedAt: opts.startedAt,
    timing: opts.timing,
    measured: opts.measured,
    status: 'running',
    gemms: pass.gemms,
    notes: pass.notes,
    phases: phases.map((p) => ({
      phase: p.phase,
      m: p.phase === 'decode' ? 1 : p.m,
      picks: pass.gemms.map(() => null),
    })),
  };
}

/**
 * Each GEMM of a phase as the pick takes it (its rows at that phase).
 * @example phaseGemms(run, 0).map((g) => g.rows) // [512, 512, 512, 512, 1]: the head's one row
 */
export function phaseGemms(run: Pick<ModelRun, 'gemms' | 'phases'>, phase: number): PickGemm[] {
  const p = run.phases[phase]!;
  return run.gemms.map((g) => ({
    type: g.type,
    n: g.n,
    k: g.k,
    ...(g.experts !== undefined ? { experts: g.experts } : {}),
    ...(g.topk !== undefined ? { topk: g.topk } : {}),
    rows: passRows(g, p.phase, p.m),
  }));
}

/** The run with one pick set. */
export function withPick(run: ModelRun, phase: number, gemm: number, pick: PickResult): ModelRun {
  return {
    ...run,
    phases: run.phases.map((p, i) =>
      i === phase ? { ...p, picks: p.picks.map((x, j) => (j === gemm ? pick : x)) } : p,
    ),
  };
}

/** The winning candidate of a pick. */
export function winnerOf(pick: PickResult | null | undefined): PickCandidate | undefined {
  return pick?.winner === undefined ? undefined : pick.candidates.find((c) => c.kernel === pick.winner);
}

/** What a phase's GEMMs cost per forward pass. */
export interface PhaseTotals {
  /** Sum over GEMMs with a winner of launches x the winner's ms. */
  ms: number;
  /** Launches per pass, and those with a winner (the rest are not in `ms`). */
  launches: number;
  coveredLaunches: number;
  /** GEMM keys with no winner (not picked, no family takes them, every family refused). */
  missing: string[];
  /**
   * Tokens per second of GEMM time: M / ms at prefill, 1 / ms at decode (GEMM-bound tokens/s while
   * generating). Only where every launch is covered.
   */
  tokensPerS?: number;
}

/**
 * A phase's totals per forward pass.
 * @example phaseTotals(run, 1).tokensPerS // decode: 1000 / (GEMM ms per token)
 */
export function phaseTotals(run: Pick<ModelRun, 'gemms' | 'phases'>, phase: number): PhaseTotals {
  const p = run.phases[phase]!;
  let ms = 0;
  let launches = 0;
  let covered = 0;
  const missing: string[] = [];
  run.gemms.forEach((g, i) => {
    launches += g.count;
    const w = winnerOf(p.picks[i]);
    if (w?.ms === undefined) {
      missing.push(g.key);
      return;
    }
    ms += g.count * w.ms;
    covered += g.count;
  });
  const out: PhaseTotals = { ms, launches, coveredLaunches: covered, missing };
  if (!missing.length && ms > 0) out.tokensPerS = ((p.phase === 'decode' ? 1 : p.m) * 1000) / ms;
  return out;
}

/**
 * A candidate's point under its adapter's roofs (its bytes, ops and ms against the roof its arithmetic
 * and arm run on); undefined without peaks or without a measurement.
 * @example pickPoint(winnerOf(pick)!, run.peaks)?.peakFraction
 */
export function pickPoint(
  c: PickCandidate,
  peaks: Peaks | undefined,
): (RooflinePoint & { roof: ComputeRoof }) | undefined {
  if (!peaks || !(peaks.bandwidthGBs > 0) || !c.ms || !(c.ms > 0) || !c.ops || c.bytes === undefined)
    return undefined;
  const roof = roofOf(c.arithmetic ?? 'int8', c.config?.arm ?? 'scalar');
  return {
    ...rooflinePoint(
      { label: c.kernel, ms: c.ms, bytes: c.bytes, ops: c.ops },
      peaks.bandwidthGBs,
      peakOpsOf(peaks, roof),
    ),
    roof,
  };
}

/** ms in words at 4 significant digits. */
const ms4 = (ms: number) => (ms >= 100 ? ms.toFixed(1) : ms.toPrecision(4));

/** A candidate as a table names it: family, arm, knobs. */
export const candidateText = (c: PickCandidate): string =>
  `${c.kernel} ${c.config?.arm ?? ''}${c.knobs ? ` ${c.knobs}` : ''}${c.served !== 'incumbent' && c.served !== 'defaults' ? ' (tuned)' : ''}`.replace(
    /\s+/g,
    ' ',
  );

/** A GEMM's uses in words: "attn_q x32, attn_output x32" (names escaped: they may come from a file). */
export const usesText = (g: Pick<PassGemm, 'uses'>): string =>
  g.uses.map((u) => `${excerpt(u.name, 40)} x${u.count}`).join(', ');

/**
 * A phase as a table: a header, then one row per GEMM (its uses, type and shape, launches, rows, the
 * pick, its ms and batch spread, % of the roof, the next family and the margin, its share of the pass),
 * then the total. The CLI prints it aligned, docs/benchmarks.md as markdown.
 * @example modelRunTable(run, 0).map((row) => row.join(' | '))
 */
export function modelRunTable(run: ModelRun, phase: number): string[][] {
  const p = run.phases[phase]!;
  const rows: string[][] = [
    ['GEMM', 'weight', 'x/pass', 'm', 'pick', 'ms', 'batches ms', '% of roof', 'next family', 'ms/pass'],
  ];
  run.gemms.forEach((g, i) => {
    const pick = p.picks[i];
    const w = winnerOf(pick);
    const rowsAt = passRows(g, p.phase, p.m);
    const shape = `${excerpt(g.type, 16)} ${g.n}x${g.k}${g.experts ? ` x${g.experts} top${g.topk ?? '?'}` : ''}`;
    const head = [usesText(g), shape, String(g.count), String(rowsAt)];
    if (!pick) return void rows.push([...head, 'not run', '-', '-', '-', '-', '-']);
    if (!w)
      return void rows.push([
        ...head,
        pick.candidates.length
          ? `none: ${pick.candidates.map((c) => `${c.kernel} ${c.verdict}`).join(', ')}`
          : `none: no kernel takes ${excerpt(g.type, 16)}${g.experts ? ' banks' : ''}`,
        '-',
        '-',
        '-',
        '-',
        '-',
      ]);
    const point = pickPoint(w, run.peaks);
    const spread = w.samples?.length ? `${ms4(Math.min(...w.samples))}-${ms4(Math.max(...w.samples))}` : '-';
    const next = pick.runnerUp
      ? `${pick.runnerUp} ${pick.margin!.toFixed(2)}x${pick.measured && !pick.clear ? ' (within noise)' : ''}`
      : 'none ran';
    rows.push([
      ...head,
      candidateText(w) + (pick.measured ? '' : ' (guess)'),
      ms4(w.ms!),
      spread,
      point ? `${(100 * point.peakFraction).toFixed(1)} (${point.bound})` : '-',
      next,
      ms4(g.count * w.ms!),
    ]);
  });
  const t = phaseTotals(run, phase);
  rows.push([
    p.phase === 'decode' ? 'total per token' : `total per prefill of ${p.m}`,
    '',
    String(t.launches),
    '',
    t.missing.length
      ? `${t.missing.length} GEMM shape${t.missing.length === 1 ? '' : 's'} not covered (${t.coveredLaunches} of ${t.launches} launches)`
      : '',
    '',
    '',
    '',
    t.tokensPerS !== undefined ? `${t.tokensPerS.toPrecision(4)} tokens/s (GEMMs only)` : '',
    ms4(t.ms),
  ]);
  return rows;
}

/**
 * Why each GEMM of a phase has no winner, one line each: every candidate's verdict and reason, or that no
 * kernel takes its weight (what a table's short "none" cell leaves out).
 * @example phaseNotes(run, 1) // ['Q8_0 64x256 at m = 1: mmq-q8-naive refused (m = 1 is not a multiple of 16 ...)']
 */
export function phaseNotes(run: ModelRun, phase: number): string[] {
  const p = run.phases[phase]!;
  return run.gemms.flatMap((g, i) => {
    const pick = p.picks[i];
    if (!pick || pick.winner !== undefined) return [];
    const why = pick.candidates.length
      ? pick.candidates
          .map((c) => `${c.kernel} ${c.verdict}${c.reason ? ` (${excerpt(c.reason, 240)})` : ''}`)
          .join('; ')
      : excerpt(pick.note ?? 'no kernel takes it', 240);
    return [`${excerpt(g.key, 60)} at m = ${passRows(g, p.phase, p.m)}: ${why}`];
  });
}

/** One GEMM of one phase across runs of several adapters. */
export interface ComparedGemm {
  phase: PassPhase;
  m: number;
  key: string;
  uses: string;
  /** Per run (in the order given): its winner's family, arithmetic, arm, ms and % of its own roof. */
  cells: (
    { kernel: KernelId; arithmetic?: string; arm?: string; ms: number; peakFraction?: number } | undefined
  )[];
}

/**
 * Runs of several adapters side by side: every (phase, m, GEMM) any of them has, each run's winner there.
 * @example compareModelRuns([mine, theirs]).filter((r) => r.cells.every(Boolean))
 */
export function compareModelRuns(runs: readonly ModelRun[]): ComparedGemm[] {
  const out = new Map<string, ComparedGemm>();
  runs.forEach((run, r) => {
    run.phases.forEach((p) =>
      run.gemms.forEach((g, i) => {
        const id = `${p.phase}|${p.m}|${g.key}`;
        let row = out.get(id);
        if (!row)
          out.set(
            id,
            (row = {
              phase: p.phase,
              m: p.m,
              key: g.key,
              uses: usesText(g),
              cells: runs.map(() => undefined),
            }),
          );
        const w = winnerOf(p.picks[i]);
        if (w?.ms === undefined) return;
        const point = pickPoint(w, run.peaks);
        row.cells[r] = {
          kernel: w.kernel,
          ...(w.arithmetic ? { arithmetic: w.arithmetic } : {}),
          ...(w.config ? { arm: w.config.arm } : {}),
          ms: w.ms,
          ...(point ? { peakFraction: point.peakFraction } : {}),
        };
      }),
    );
  });
  return [...out.values()];
}

/**
 * Each measured candidate of the run as a Kernel Tuner 1.1.0 cache file (its family's tuning keys, one
 * entry: the config the family offered, with its batches), keyed by a file name
 * ("prefill-m512-Q4_K-4096x4096-mmq-q4k-tile.kt.json"): what an export carries so Kernel Tuner users read
 * each shape's times.
 * @example Object.keys(modelRunKtCaches(run, CATALOG.families))
 */
export function modelRunKtCaches(
  run: ModelRun,
  catalogs: readonly Pick<FamilyCatalog, 'id' | 'controls' | 'knobLabel'>[],
): Record<string, KtCacheFile> {
  const out: Record<string, KtCacheFile> = {};
  run.phases.forEach((p) =>
    run.gemms.forEach((g, i) => {
      for (const c of p.picks[i]?.candidates ?? []) {
        const family = catalogs.find((f) => f.id === c.kernel);
        if (!family || !c.config || (c.verdict !== 'measured' && c.verdict !== 'failed-gate')) continue;
        const measured = c.verdict === 'measured' && c.ms !== undefined;
        const keys = tuningKeys(family.controls);
        const file = `${p.phase}-m${passRows(g, p.phase, p.m)}-${g.key.replace(/[^\w.-]+/g, '-')}-${c.kernel}.kt.json`;
        out[file] = toKtCache(
          {
            kernel: c.kernel,
            deviceId: run.adapter.deviceId,
            startedAt: run.startedAt,
            base: { params: c.config.params },
            entries: [
              {
                config: knobLabel(family, c.config.params),
                params: c.config.params,
                arm: c.config.arm,
                generation: 0,
                verdict: measured ? 'measured' : 'failed-gate',
                ms: measured ? c.ms! : Infinity,
                ...(c.reason !== undefined ? { reason: c.reason } : {}),
                ...(c.relToMax !== undefined ? { worstRel: c.relToMax } : {}),
                ...(c.samples ? { samples: c.samples } : {}),
              },
            ],
            ...(c.ops ? { ops: c.ops } : {}),
            problem: tuneProblemKey(family, c.config),
          },
          { keys, deviceName: run.adapter.name },
        );
      }
    }),
  );
  return out;
}

/** A file that is not a model run this project can show; the message says where. */
export class ModelRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelRunError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON's Infinity: written as the string "Infinity" (JSON has no such number). */
const revive = (_k: string, v: unknown) => (v === 'Infinity' ? Infinity : v);

/**
 * A model run as JSON text (Infinity written "Infinity"), with each candidate's Kernel Tuner cache when
 * `ktCaches` is given.
 * @example await writeFile('run.json', modelRunJson(run, modelRunKtCaches(run, KERNELS.families)))
 */
export function modelRunJson(run: ModelRun, ktCaches?: Record<string, KtCacheFile>): string {
  return (
    JSON.stringify(
      ktCaches ? { ...run, ktCaches } : run,
      (_k, v: unknown) => (v === Infinity ? 'Infinity' : v),
      2,
    ) + '\n'
  );
}

/**
 * Read a model run from JSON text, checking what the views and tables read: format and version, the
 * adapter, the GEMMs' shapes and counts, each phase's picks (one per GEMM, null or a pick whose numbers
 * are numbers). Throws ModelRunError naming the first thing wrong; strings stay as they are (shown escaped).
 * @example const run = parseModelRun(await file.text());
 */
export function parseModelRun(text: string): ModelRun {
  let j: unknown;
  try {
    j = JSON.parse(text, revive);
  } catch (e) {
    throw new ModelRunError(`not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const fail = (where: string, what: string): never => {
    throw new ModelRunError(`${where}: ${what}`);
  };
  if (!isObject(j)) return fail('the file', 'not a JSON object');
  if (j.format !== MODEL_RUN_FORMAT)
    fail('format', `expected "${MODEL_RUN_FORMAT}", got ${excerpt(JSON.stringify(j.format) ?? 'nothing')}`);
  if (j.version !== MODEL_RUN_VERSION)
    fail('version', `expected ${MODEL_RUN_VERSION}, got ${excerpt(String(j.version))}`);
  const str = (v: unknown, where: string) => (typeof v === 'string' ? v : fail(where, 'expected a string'));
  const pos = (v: unknown, where: string) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v > 0
      ? v
      : fail(where, 'expected a whole number > 0');
  const ms = (v: unknown, where: string) =>
    typeof v === 'number' && (v > 0 || v === Infinity) ? v : fail(where, 'expected a time in ms > 0');
  if (!isObject(j.model)) fail('model', 'expected an object');
  const model = j.model as Record<string, unknown>;
  str(model.name, 'model.name');
  if (model.source !== 'preset' && model.source !== 'gguf')
    fail('model.source', 'expected "preset" or "gguf"');
  if (!isObject(j.adapter)) fail('adapter', 'expected an object');
  const adapter = j.adapter as Record<string, unknown>;
  for (const k of ['name', 'deviceId', 'vendor', 'architecture', 'description'])
    str(adapter[k], `adapter.${k}`);
  pos(adapter.plane, 'adapter.plane');
  if (typeof adapter.software !== 'boolean') fail('adapter.software', 'expected true or false');
  if (j.peaks !== undefined) {
    const p = j.peaks;
    if (!isObject(p) || !(typeof p.bandwidthGBs === 'number' && p.bandwidthGBs > 0) || !isObject(p.ops))
      fail('peaks', 'expected { bandwidthGBs > 0, ops: { roof: ops/s } }');
    for (const [roof, v] of Object.entries((p as { ops: Record<string, unknown> }).ops))
      if (typeof v !== 'number' || !(v > 0)) fail(`peaks.ops.${excerpt(roof, 40)}`, 'expected ops/s > 0');
  }
  str(j.startedAt, 'startedAt');
  if (typeof j.measured !== 'boolean') fail('measured', 'expected true or false');
  if (!['running', 'complete', 'cancelled'].includes(j.status as string))
    fail('status', 'expected "running", "complete" or "cancelled"');
  if (!isObject(j.timing)) fail('timing', 'expected an object');
  const timing = j.timing as Record<string, unknown>;
  pos(timing.targetMs, 'timing.targetMs');
  pos(timing.batches, 'timing.batches');
  if (!Array.isArray(j.gemms)) return fail('gemms', 'expected an array');
  const gemms = j.gemms as unknown[];
  gemms.forEach((g, i) => {
    const w = `gemms[${i}]`;
    if (!isObject(g)) return fail(w, 'expected an object');
    str(g.key, `${w}.key`);
    str(g.type, `${w}.type`);
    for (const k of ['n', 'k', 'count']) pos(g[k], `${w}.${k}`);
    for (const k of ['experts', 'topk']) if (g[k] !== undefined) pos(g[k], `${w}.${k}`);
    if (
      !Array.isArray(g.uses) ||
      !g.uses.every((u) => isObject(u) && typeof u.name === 'string' && typeof u.count === 'number')
    )
      fail(`${w}.uses`, 'expected [{ name, count }]');
  });
  if (!Array.isArray(j.notes) || !j.notes.every((n) => typeof n === 'string'))
    fail('notes', 'expected strings');
  if (!Array.isArray(j.phases) || !j.phases.length) return fail('phases', 'expected a non-empty array');
  (j.phases as unknown[]).forEach((p, i) => {
    const w = `phases[${i}]`;
    if (!isObject(p)) return fail(w, 'expected an object');
    if (p.phase !== 'prefill' && p.phase !== 'decode') fail(`${w}.phase`, 'expected "prefill" or "decode"');
    pos(p.m, `${w}.m`);
    if (!Array.isArray(p.picks) || p.picks.length !== gemms.length)
      fail(`${w}.picks`, `expected one per GEMM (${gemms.length})`);
    (p.picks as unknown[]).forEach((pick, g) => {
      const at = `${w}.picks[${g}]`;
      if (pick === null) return;
      if (!isObject(pick) || !Array.isArray(pick.candidates))
        return fail(at, 'expected null or { candidates: [...] }');
      if (typeof pick.measured !== 'boolean') fail(`${at}.measured`, 'expected true or false');
      (pick.candidates as unknown[]).forEach((c, k) => {
        const cw = `${at}.candidates[${k}]`;
        if (!isObject(c)) return fail(cw, 'expected an object');
        str(c.kernel, `${cw}.kernel`);
        str(c.verdict, `${cw}.verdict`);
        str(c.served ?? '', `${cw}.served`);
        if (c.ms !== undefined) ms(c.ms, `${cw}.ms`);
        for (const k2 of ['ops', 'bytes', 'relToMax'])
          if (c[k2] !== undefined && (typeof c[k2] !== 'number' || (c[k2] as number) < 0))
            fail(`${cw}.${k2}`, 'expected a number >= 0');
        if (
          c.samples !== undefined &&
          (!Array.isArray(c.samples) || !c.samples.every((s) => typeof s === 'number' && s > 0))
        )
          fail(`${cw}.samples`, 'expected times in ms > 0');
        if (
          c.config !== undefined &&
          (!isObject(c.config) || typeof c.config.arm !== 'string' || !isObject(c.config.params))
        )
          fail(`${cw}.config`, 'expected { arm, params }');
      });
      const kernels = (pick.candidates as { kernel: string }[]).map((c) => c.kernel);
      for (const k of ['winner', 'runnerUp'])
        if (pick[k] !== undefined && !kernels.includes(pick[k] as string))
          fail(`${at}.${k}`, 'names no candidate');
      if (pick.margin !== undefined && (typeof pick.margin !== 'number' || !(pick.margin > 0)))
        fail(`${at}.margin`, 'expected a number > 0');
      const win = (pick.candidates as { kernel: string; ms?: number }[]).find(
        (c) => c.kernel === pick.winner,
      );
      if (win && win.ms === undefined) fail(`${at}.winner`, 'has no ms');
    });
  });
  const { ktCaches: _kt, ...run } = j;
  return run as unknown as ModelRun;
}
