// The worker's 'tune' and 'autokernel' requests (the seed's mmq_q4k_hunt / mmq_q4k_autokernel and their
// coopmat twins). The app owns persistence (IndexedDB): it passes its stored run in `cached` /
// `cachedWinner`, the worker's Tuner decides hit or miss over a cache seeded with it, and the app
// stores what comes back. Progress is posted per evaluated config; a cancel takes effect between configs
// (and inside timing batches).
import { ShapeError } from '../../kernels/family';
import { deviceId as deviceIdOf, type AdapterCaps } from '../../kernels/gpu/caps';
import { clockWarmMs, GpuValidationError, WgslCompileError } from '../../kernels/gpu/run';
import { defaultCoopmatStaging } from '../../kernels/coopmat';
import {
  choiceOf,
  Evolution,
  MemoryTuneCache,
  mmqQ4kIncumbent,
  pickAutokernel,
  shapeKey,
  stagingOf,
  tileConfig,
  tileGeometry,
  huntSeeds,
  tileSpaceFor,
  TuneCancelledError,
  Tuner,
  type Config,
  type Evaluation,
  type Evaluator,
  type Space,
  type TuneCacheRecord,
} from '../../kernels/tune';
import type { TuneOp, TuneRecordEntry, TuneReport, WorkerRequest, WorkerResponse } from '../protocol';
import { CoopmatF16Eval, defaultCoopmatArm } from './coopmatF16Eval';
import { MmqQ4kEval } from './mmqQ4kEval';
import type { TileEvalOptions } from './q4kTileEval';
import type { TileEvaluator } from './tileEval';

export type TuneWorkerRequest = Extract<WorkerRequest, { type: 'tune' | 'autokernel' }>;

/** What the handler needs from the worker core. */
export interface TuneHandlerContext {
  device: GPUDevice;
  caps: AdapterCaps;
  /** The core's device id; defaults to deviceId(caps). */
  deviceId?: string;
  isCancelled(id: number): boolean;
}

/** Timed dispatches of the autokernel's one measurement. */
export const AUTOKERNEL_TIMING_ITERS = 8;

const OPS: readonly TuneOp[] = ['mmq_q4k_tile', 'mmq_q4k_coopmat'];

/**
 * The evaluator of an op, over the op's tile space (tileSpaceFor: the same space the handlers decode its
 * configs with, so the two cannot disagree).
 */
export function evaluatorFor(
  op: TuneOp,
  device: GPUDevice,
  caps: AdapterCaps,
  opts: TileEvalOptions,
): TileEvaluator & { arm: string; plane: number } {
  switch (op) {
    case 'mmq_q4k_tile':
      return MmqQ4kEval.create(device, caps, opts, tileSpaceFor(op));
    case 'mmq_q4k_coopmat':
      return CoopmatF16Eval.create(device, caps, opts, tileSpaceFor(op));
  }
}

/**
 * The config a hunt starts from and the autokernel falls back to: the incumbent tile and, for the
 * coopmat twin, the staging its arm runs by default.
 */
export function incumbentConfig(op: TuneOp, space: Space, caps: AdapterCaps): Config {
  return op === 'mmq_q4k_coopmat'
    ? tileConfig(space, mmqQ4kIncumbent(), defaultCoopmatStaging(defaultCoopmatArm(caps)))
    : tileConfig(space, mmqQ4kIncumbent());
}

/** A report entry from a GA evaluation. */
export function entryOf(space: Space, e: Evaluation): TuneRecordEntry {
  const { tile, staging } = choiceOf(space, e.values);
  const { bm, bn } = tileGeometry(tile);
  return {
    config: e.config,
    tile,
    ...(staging ? { staging } : {}),
    generation: e.generation,
    verdict: e.verdict,
    ms: e.ms,
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
    ...(e.worstRel !== undefined ? { worstRel: e.worstRel } : {}),
    bm,
    bn,
  };
}

/** Defers building an evaluator (buffers, oracle) until the GA first asks, so a cache hit costs nothing. */
class LazyEvaluator implements Evaluator {
  private made: (TileEvaluator & { arm: string; plane: number }) | undefined;
  constructor(private readonly make: () => TileEvaluator & { arm: string; plane: number }) {}
  get(): TileEvaluator & { arm: string; plane: number } {
    return (this.made ??= this.make());
  }
  get built() {
    return this.made;
  }
  staticCheck(cfg: Config) {
    return this.get().staticCheck(cfg);
  }
  measure(cfg: Config, iters: number) {
    return this.get().measure(cfg, iters);
  }
}

function errorKind(e: unknown): 'shape' | 'validation' | 'internal' {
  if (e instanceof ShapeError || e instanceof RangeError) return 'shape';
  if (e instanceof GpuValidationError || e instanceof WgslCompileError) return 'validation';
  return 'internal';
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function checkOp(op: string): asserts op is TuneOp {
  if (!OPS.includes(op as TuneOp))
    throw new ShapeError(`unknown tuning op '${op}' (expected ${OPS.join(' or ')})`);
}

/** A cached report usable for this request: same key and a winner that names a feasible config. */
function cacheRecordOf(
  req: Extract<TuneWorkerRequest, { type: 'tune' }>,
  deviceId: string,
): TuneCacheRecord | undefined {
  const c = req.cached;
  if (!c || c.winner === '' || !Number.isFinite(c.bestMs)) return undefined;
  if (c.deviceId !== deviceId || c.op !== req.op || c.m !== req.m || c.n !== req.n || c.k !== req.k)
    return undefined;
  return {
    deviceId,
    op: req.op,
    shape: shapeKey(req.m, req.n, req.k),
    winner: c.winner,
    bestMs: c.bestMs,
    date: c.startedAt,
  };
}

async function tune(
  ctx: TuneHandlerContext,
  req: Extract<TuneWorkerRequest, { type: 'tune' }>,
  post: (msg: WorkerResponse) => void,
) {
  const { id, op, m, n, k, evo } = req;
  checkOp(op);
  const deviceId = ctx.deviceId ?? deviceIdOf(ctx.caps);
  const shape = shapeKey(m, n, k);
  const space = tileSpaceFor(op);
  const evolution = new Evolution({
    population: evo.population,
    generations: evo.generations,
    measureIters: evo.measureIters,
  });
  const incumbent = incumbentConfig(op, space, ctx.caps);
  const cancelled = () => ctx.isCancelled(id);
  const seeded = cacheRecordOf(req, deviceId);
  const tuner = new Tuner(new MemoryTuneCache(seeded ? [seeded] : []));
  const lazy = new LazyEvaluator(() =>
    evaluatorFor(op, ctx.device, ctx.caps, {
      m,
      n,
      k,
      banks: evo.banks,
      repeats: evo.repeats,
      warmMs: clockWarmMs(ctx.caps),
      cancelled,
    }),
  );
  const started = new Date();
  const t0 = performance.now();
  try {
    const r = await tuner.evolve(deviceId, op, shape, space, lazy, evolution, evo.seed, {
      seeds: huntSeeds(space, mmqQ4kIncumbent(), stagingOf(space, incumbent)),
      cancelled,
      onEvaluated: (e, p) =>
        post({
          type: 'tune-progress',
          id,
          generation: p.generation,
          evaluated: p.evaluated,
          bestMs: p.bestMs,
          entry: entryOf(space, e),
        }),
    });
    if (r.fromCache && req.cached) {
      post({ type: 'tune-done', id, report: req.cached, fromCache: true });
      return;
    }
    const rep = r.report;
    if (!rep) throw new Error('tuner returned neither a cached winner nor a report');
    const ev = lazy.built;
    const inc = rep.entries.find((e) => e.config === space.name(incumbent));
    // The incumbent is a finalist whenever it was measured: its re-timing is what the winner beat.
    const incFinal = rep.finals.find((f) => f.config === space.name(incumbent));
    const report: TuneReport = {
      op,
      deviceId,
      m,
      n,
      k,
      winner: rep.winner ?? '',
      bestMs: rep.bestMs,
      ...(incFinal && Number.isFinite(incFinal.ms)
        ? { incumbentMs: incFinal.ms }
        : inc && inc.verdict === 'measured'
          ? { incumbentMs: inc.ms }
          : {}),
      entries: rep.entries.map((e) => entryOf(space, e)),
      bestPerGeneration: rep.bestPerGeneration,
      evo,
      startedAt: started.toISOString(),
      durationMs: performance.now() - t0,
      ...(ev ? { arm: ev.arm, plane: ev.plane, worstRel: ev.worstRel } : {}),
      ...(ev?.timing ? { timing: ev.timing } : {}),
      ...(ev?.gatedRows !== undefined ? { gatedRows: ev.gatedRows } : {}),
      ...(rep.finals.length ? { finals: rep.finals } : {}),
    };
    post({ type: 'tune-done', id, report, fromCache: false });
  } finally {
    lazy.built?.destroy();
  }
}

async function autokernel(
  ctx: TuneHandlerContext,
  req: Extract<TuneWorkerRequest, { type: 'autokernel' }>,
  post: (msg: WorkerResponse) => void,
) {
  const { id, op, m, n, k } = req;
  checkOp(op);
  const space = tileSpaceFor(op);
  const ev = evaluatorFor(op, ctx.device, ctx.caps, {
    m,
    n,
    k,
    banks: 1,
    repeats: 1,
    warmMs: clockWarmMs(ctx.caps),
    cancelled: () => ctx.isCancelled(id),
  });
  try {
    const incumbent = incumbentConfig(op, space, ctx.caps);
    const choice = pickAutokernel(space, req.cachedWinner, incumbent, (cfg) => ev.staticCheck(cfg));
    const own = ev.staticCheck(choice.config);
    if (own.kind === 'reject')
      throw new ShapeError(`the ${choice.served} tile cannot run on this adapter: ${own.reason}`);
    const { tile, staging } = choiceOf(space, choice.config);
    const verdict = await ev.check(choice.config);
    if (ctx.isCancelled(id)) throw new TuneCancelledError();
    const t = await ev.time(choice.config, AUTOKERNEL_TIMING_ITERS);
    post({
      type: 'autokernel-result',
      id,
      served: choice.served,
      tile,
      ...(staging ? { staging } : {}),
      verdict,
      msPerDispatch: t.ms,
      ...(choice.fallback ? { fallback: choice.fallback } : {}),
    });
  } finally {
    ev.destroy();
  }
}

/**
 * Serve a 'tune' or 'autokernel' request: every outcome is posted ('tune-progress'* then 'tune-done',
 * or 'autokernel-result', or 'cancelled', or 'error' with kind shape / validation / internal); it does not throw.
 * @example
 * // in the worker core:
 * case 'tune': case 'autokernel': return handleTuneRequest({ device, caps, deviceId, isCancelled }, req, post);
 */
export async function handleTuneRequest(
  ctx: TuneHandlerContext,
  req: TuneWorkerRequest,
  post: (msg: WorkerResponse) => void,
): Promise<void> {
  try {
    if (req.type === 'tune') await tune(ctx, req, post);
    else await autokernel(ctx, req, post);
  } catch (e) {
    if (e instanceof TuneCancelledError || ctx.isCancelled(req.id)) post({ type: 'cancelled', id: req.id });
    else post({ type: 'error', id: req.id, kind: errorKind(e), message: message(e) });
  }
}

/**
 * The same handler in the worker core's TuneHandler shape: `(req, ctx) => Promise<void>` with the
 * core's context (device, caps, deviceId, post, isCancelled()).
 * @example createGpuCore({ gpu, families, post, tune: tuneHandler })
 */
export function tuneHandler(
  req: TuneWorkerRequest,
  ctx: {
    device: GPUDevice;
    caps: AdapterCaps;
    deviceId: string;
    post: (msg: WorkerResponse) => void;
    isCancelled: () => boolean;
  },
): Promise<void> {
  return handleTuneRequest(
    { device: ctx.device, caps: ctx.caps, deviceId: ctx.deviceId, isCancelled: () => ctx.isCancelled() },
    req,
    ctx.post,
  );
}
