// Real tensors and model GEMMs as kernel configs: which families take a GGUF tensor, and the config that
// runs one (or a preset's GEMM shape) on a family. Pure and light: the app lists tensors with it, the
// worker and the CLI build configs with it; the families' own `takes` declarations decide.
import type { FamilyCatalog, FamilyParams, GgufFileRef, KernelId, RunConfig, TensorChoice } from './family';

/** The weight formats the kernels take. */
export const TAKEN_FORMATS = ['Q8_0', 'Q4_K'] as const;

/** A weight's GEMM shape: ne = [k, n] is one matrix, ne = [k, n, experts...] an expert bank. */
export interface WeightShape {
  type: string;
  n: number;
  k: number;
  experts: number;
}

/**
 * The GEMM shape of a tensor from its ggml dims.
 * @example weightShape({ typeName: 'Q4_K', ne: [256, 8, 4] }) // { type: 'Q4_K', n: 8, k: 256, experts: 4 }
 */
export function weightShape(t: { typeName: string; ne: readonly number[] }): WeightShape {
  return {
    type: t.typeName,
    k: t.ne[0] ?? 0,
    n: t.ne[1] ?? 1,
    experts: t.ne.slice(2).reduce((a, b) => a * b, 1),
  };
}

/** A GEMM shape to set on a family: a preset's GEMM or a tensor's, with the activation rows. */
export interface GemmShape {
  n: number;
  k: number;
  /** Activation rows (m, or the routed tokens of an expert GEMM); absent keeps the config's. */
  rows?: number;
  experts?: number;
  topk?: number;
}

/**
 * A family's params with a GEMM shape set: n and k, the family's rows param, and for a family that takes
 * expert banks the expert count and top-k (top-k kept at most the experts). A family that takes no real
 * weights keeps its params.
 * @example shapeParams(CATALOG.get('moe-q4k-id'), p, { n: 8, k: 256, rows: 16, experts: 4, topk: 2 })
 */
export function shapeParams(
  family: Pick<FamilyCatalog, 'takes'>,
  params: FamilyParams,
  shape: GemmShape,
): FamilyParams {
  const takes = family.takes;
  if (!takes) return params;
  const out: Record<string, FamilyParams[string]> = { ...params, n: shape.n, k: shape.k };
  if (shape.rows !== undefined) out[takes.rows] = shape.rows;
  if (takes.bank && shape.experts !== undefined) {
    out.experts = shape.experts;
    const topk = shape.topk ?? (typeof params.topk === 'number' ? params.topk : 1);
    out.topk = Math.max(1, Math.min(topk, shape.experts));
  }
  return out;
}

/** Whether a family takes a tensor of this format and kind (matrix or expert bank) at all. */
function takesShape(family: Pick<FamilyCatalog, 'takes'>, s: WeightShape): boolean {
  const takes = family.takes;
  return !!takes && s.type === takes.format && takes.bank === s.experts > 1;
}

/**
 * A family's config that runs `tensor` as its weight: shape params from the tensor, data source
 * 'tensor', the rest from `base` when it is this family's config (else the family's defaults).
 * @example tensorConfig(CATALOG.get('mmq-q4k-rt'), current, { file, tensor: 'blk.0.ffn_down.weight', activation: 'normal' }, info)
 */
export function tensorConfig(
  family: FamilyCatalog,
  base: RunConfig,
  choice: TensorChoice,
  info: { typeName: string; ne: readonly number[] },
): RunConfig {
  const own = base.kernel === family.id;
  const params = own ? base.params : family.defaults;
  const s = weightShape(info);
  return {
    kernel: family.id,
    arm: own ? base.arm : (family.arms.at(-1)?.arm ?? 'scalar'),
    ...(own && base.plane !== undefined ? { plane: base.plane } : {}),
    data: { source: 'tensor', seed: base.data.seed, tensor: choice },
    params: shapeParams(family, params, { n: s.n, k: s.k, ...(s.experts > 1 ? { experts: s.experts } : {}) }),
  };
}

/** A tensor of an opened GGUF as the tensor list shows it. */
export interface TensorListing {
  name: string;
  typeName: string;
  /** ggml dims (ne[0] = k) and the row-major shape. */
  ne: number[];
  shape: number[];
  offset: number;
  bytes: number | null;
  /** The families that take its format and kind; `problems` = why it cannot run there as is (empty: it runs). */
  kernels: { kernel: KernelId; title: string; problems: string[] }[];
  /** Why no family takes it ("not taken by these kernels (Q8_0, Q4_K)"), when none does. */
  note?: string;
}

/**
 * Each tensor with the families that take it: a family's own validation of the tensor's shape at its
 * default rows and tile says whether it runs there as is.
 * @example listTensors(gguf.tensors, CATALOG.families, ref).filter((t) => t.kernels.length)
 */
export function listTensors(
  tensors: readonly {
    name: string;
    typeName: string;
    ne: number[];
    shape: number[];
    offset: number;
    byteLength: number | undefined;
  }[],
  catalogs: readonly FamilyCatalog[],
  file: GgufFileRef,
): TensorListing[] {
  return tensors.map((t) => {
    const s = weightShape(t);
    const row: TensorListing = {
      name: t.name,
      typeName: t.typeName,
      ne: t.ne,
      shape: t.shape,
      offset: t.offset,
      bytes: t.byteLength ?? null,
      kernels: [],
    };
    if (!(TAKEN_FORMATS as readonly string[]).includes(s.type)) {
      row.note = `not taken by these kernels (${TAKEN_FORMATS.join(', ')})`;
      return row;
    }
    if (t.ne.length < 2) {
      row.note = 'a vector, not a weight matrix';
      return row;
    }
    const choice: TensorChoice = { file, tensor: t.name, activation: 'normal' };
    for (const f of catalogs) {
      if (!takesShape(f, s)) continue;
      const seedConfig: RunConfig = {
        kernel: f.id,
        arm: f.arms[0]?.arm ?? 'scalar',
        data: { source: 'tensor', seed: 0 },
        params: f.defaults,
      };
      const config = tensorConfig(f, seedConfig, choice, t);
      row.kernels.push({ kernel: f.id, title: f.title, problems: f.validate(config) });
    }
    if (!row.kernels.length)
      row.note = `no kernel here takes a ${s.type} ${s.experts > 1 ? 'expert bank' : 'matrix'}`;
    return row;
  });
}
