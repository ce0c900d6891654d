// The worker's 'pick' and 'model-run' requests (kernels/tune/pick.ts is the pure half): for a GEMM, every
// family whose `takes` is its weight offers its pick -- its stored tuned winner where the request brings
// one and it still runs here, else its search's incumbent, else its defaults -- and each offer is built by
// its family, gated on the family's own gate (on the rows the gate samples of a large output) and timed by
// the one runner, in a problem session of its own with cold weight banks, as the tuner and the bench time
// it. A family that refuses the shape says why; a cancel takes effect between candidates and between
// timed batches.
import { CancelledError, checkCancelled } from '../../kernels/cancel';
import { knobLabel, ShapeError, type KernelFamily, type RunConfig } from '../../kernels/family';
import { isSoftwareAdapter } from '../../kernels/gpu/caps';
import { banksFor } from '../../kernels/gpu/runner';
import { clockWarmMs } from '../../kernels/gpu/timing';
import { planTraffic, totalTraffic } from '../../kernels/perf/traffic';
import { PASS, pickAutokernel, reject } from '../../kernels/tune';
import {
  pickBase,
  pickCatalogs,
  settlePick,
  type PickCandidate,
  type PickGemm,
  type PickResult,
} from '../../kernels/tune/pick';
import { ProblemSession } from '../../kernels/tune/session';
import { WEIGHT_BYTES } from '../../kernels/work';
import type { AdapterCaps } from '../../kernels/gpu/caps';
import type { Registry } from '../../kernels/registry';
import type { WeightOperand } from '../../kernels/family';
import type { StoredPicks, TimingRequest, WorkerRequest, WorkerResponse } from '../protocol';

export type PickWorkerRequest = Extract<WorkerRequest, { type: 'pick' | 'model-run' }>;

/** What a pick needs from the worker core (the tune handler's context serves). */
export interface PickContext {
  device: GPUDevice;
  caps: AdapterCaps;
  kernels: Registry<KernelFamily>;
  weight?: WeightOperand;
  isCancelled(id: number): boolean;
}

/**
 * L2 bytes the weight banks must exceed 4x (banksFor), where the adapter does not say its own: larger
 * than any current GPU's L2 (50 MB on an H100), so no GEMM of a model times from a warm cache. In a
 * forward pass every launch reads another layer's weight.
 */
export const PICK_L2_BYTES = 64 * 2 ** 20;

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Where a pick reports its stage ('progress' of the request): what it waits on, and for how long. */
export type PickProgress = (
  stage: string,
  done: number,
  busy: { busy: 'cpu' | 'gpu'; gpuMs?: number },
) => void;

/** One family's offer for the GEMM, gated and timed. */
async function candidateOf(
  ctx: PickContext,
  family: KernelFamily,
  gemm: PickGemm,
  stored: string | undefined,
  timing: TimingRequest,
  cancelled: () => boolean,
  progress: (stage: string, busy: { busy: 'cpu' | 'gpu'; gpuMs?: number }) => void,
): Promise<PickCandidate> {
  const { caps } = ctx;
  const base = pickBase(family, gemm, caps);
  const head = { kernel: family.id, title: family.title, knobs: knobLabel(family, base.params) };
  const refused = (config: RunConfig, reason: string, served = 'defaults'): PickCandidate => ({
    ...head,
    served,
    config,
    knobs: knobLabel(family, config.params),
    verdict: 'refused',
    reason,
  });
  const anywhere = family.validate(base, caps);
  if (anywhere.length) return refused(base, anywhere.join('; '));
  // The family's own pick: its stored winner when it still runs here, else its incumbent.
  let config = base;
  let served = 'defaults';
  let fallback: string | undefined;
  try {
    if (family.tuning && family.search) {
      const search = family.search(base, caps);
      const choice = pickAutokernel(search.space, stored, search.incumbent, (cfg) => {
        const why = family.validate(search.apply(cfg), caps);
        return why.length ? reject(why.join('; ')) : PASS;
      });
      config = search.apply(choice.config);
      served = choice.served;
      fallback = choice.fallback;
    }
  } catch (e) {
    if (e instanceof ShapeError || e instanceof RangeError) return refused(base, message(e));
    throw e;
  }
  const offer = {
    ...head,
    served,
    ...(fallback !== undefined ? { fallback } : {}),
    config,
    knobs: knobLabel(family, config.params),
  };
  const here = family.validate(config, caps);
  if (here.length) return { ...offer, verdict: 'refused', reason: here.join('; ') };
  const weightBytes = gemm.n * gemm.k * (gemm.experts ?? 1) * (WEIGHT_BYTES[gemm.type as 'Q4_K'] ?? 1);
  let session: ProblemSession | undefined;
  try {
    progress(`${family.id}: building its data and the oracle of the rows its gate checks`, { busy: 'cpu' });
    session = new ProblemSession(ctx.device, caps, family, config, {
      banks: isSoftwareAdapter(caps) ? 1 : banksFor(weightBytes, PICK_L2_BYTES),
      warmMs: clockWarmMs(caps),
      cancelled,
      ...(ctx.weight ? { weight: ctx.weight } : {}),
    });
    checkCancelled(cancelled);
    progress(`${family.id}: gated and timed`, { busy: 'gpu', gpuMs: 2 * timing.targetMs * timing.batches });
    const r = await session.run(config, timing);
    const v = r.verdict;
    const gate = v.gate.kind === 'bit-exact' ? 'bit-exact' : `rel_to_max < ${v.gate.tol.toExponential(0)}`;
    const built = session.build(config);
    const common = {
      ...offer,
      arithmetic: r.facts.arithmetic ?? family.arithmetic,
      gate,
      relToMax: v.relToMax,
      ops: r.facts.ops,
      bytes: totalTraffic(planTraffic(built.plan, r.facts.ops)).bytes,
    };
    if (!r.timing)
      return {
        ...common,
        verdict: 'failed-gate',
        reason: `${v.mismatches} elements off the oracle${session.sampled ? ` on ${session.sampled.length} sampled rows` : ''}${r.unwritten ? ` (${r.unwritten} never written)` : ''}`,
      };
    return {
      ...common,
      verdict: 'measured',
      ms: r.timing.ms,
      samples: r.timing.samples,
      timing: r.timing.method,
    };
  } catch (e) {
    if (e instanceof CancelledError || cancelled())
      throw e instanceof CancelledError ? e : new CancelledError();
    // The plan's limits (a buffer past the adapter's binding size) are the shape's, not a failure.
    if (e instanceof ShapeError || e instanceof RangeError)
      return { ...offer, verdict: 'refused', reason: message(e) };
    return { ...offer, verdict: 'failed', reason: message(e) };
  } finally {
    session?.destroy();
  }
}

/**
 * The pick for one GEMM on the context's device: each family that takes it, in the registry's order.
 * @example const result = await pickGemm(ctx, req.id, req.gemm, req.stored, req.timing, () => {});
 */
export async function pickGemm(
  ctx: PickContext,
  id: number,
  gemm: PickGemm,
  stored: StoredPicks | undefined,
  timing: TimingRequest,
  progress: PickProgress,
): Promise<PickResult> {
  const cancelled = () => ctx.isCancelled(id);
  const families = pickCatalogs(ctx.kernels.families, gemm);
  const candidates: PickCandidate[] = [];
  for (const [i, family] of families.entries()) {
    checkCancelled(cancelled);
    candidates.push(
      await candidateOf(ctx, family, gemm, stored?.[family.id], timing, cancelled, (stage, busy) =>
        progress(stage, i / families.length, busy),
      ),
    );
  }
  return settlePick(gemm, candidates, true);
}

/**
 * Serve a 'pick' or 'model-run' request: its answers are posted ('progress' and 'model-progress' on the
 * way, then 'pick-result' or 'model-run-done'); a cancel or an error is the caller's to post.
 */
export async function servePick(
  ctx: PickContext,
  req: PickWorkerRequest,
  post: (msg: WorkerResponse) => void,
): Promise<void> {
  const { id } = req;
  let reached = 0;
  const at =
    (index: number, count: number, what: string): PickProgress =>
    (stage, done, busy) => {
      reached = Math.max(reached, Math.min(1, (index + done) / count));
      post({ type: 'progress', id, stage: `${what}: ${stage}`, fraction: reached, ...busy });
    };
  const shape = (g: PickGemm) =>
    `${g.type} ${g.n}x${g.k}${g.experts && g.experts > 1 ? ` x${g.experts}` : ''} at ${g.rows} rows`;
  if (req.type === 'pick') {
    const result = await pickGemm(ctx, id, req.gemm, req.stored, req.timing, at(0, 1, shape(req.gemm)));
    post({ type: 'pick-result', id, result });
    return;
  }
  const results: PickResult[] = [];
  for (const [index, { gemm, stored }] of req.gemms.entries()) {
    const what = `GEMM ${index + 1} of ${req.gemms.length} (${shape(gemm)})`;
    const result = await pickGemm(ctx, id, gemm, stored, req.timing, at(index, req.gemms.length, what));
    results.push(result);
    post({ type: 'model-progress', id, index, result });
  }
  post({ type: 'model-run-done', id, results });
}
