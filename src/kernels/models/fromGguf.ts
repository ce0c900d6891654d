// A model preset derived from an opened GGUF (its metadata and GEMM tensors). Apart from presets.ts so
// the app's main thread can import the built-in presets without the GGUF reader; the worker and the CLI
// derive these.
import { GgufError, type GgufTensorInfo, type GgufValue } from '../quant/gguf';
import { excerpt } from '../quant/untrustedText';
import { GEMM_NAMES } from './gemmNames';
import { fits, modelGemms, PREFILL_M, type ModelDims, type ModelGemm, type ModelPreset } from './presets';

/** A non-negative integer metadata value; per-layer arrays give their largest entry. */
function count(metadata: ReadonlyMap<string, GgufValue>, key: string): number | undefined {
  const v = metadata.get(key);
  const one = (x: GgufValue): number | undefined => {
    const n = typeof x === 'bigint' && x <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(x) : x;
    return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  };
  if (v === undefined) return undefined;
  if (Array.isArray(v)) {
    // A loop, not Math.max(...all): an array from the file may be longer than a call's argument limit.
    let max: number | undefined;
    for (const x of v) {
      const n = one(x);
      if (n !== undefined && (max === undefined || n > max)) max = n;
    }
    return max;
  }
  return one(v);
}

const BLOCK_WEIGHT = /^blk\.(\d+)\.([a-z_]+)\.weight$/;

/** Each GEMM tensor kind of the file, with the first block's tensor of that kind (blocks may differ). */
function gemmTensors(tensors: readonly GgufTensorInfo[]): Map<string, GgufTensorInfo> {
  const found = new Map<string, { block: number; t: GgufTensorInfo }>();
  for (const t of tensors) {
    const m = BLOCK_WEIGHT.exec(t.name);
    // An empty tensor (ne[0] = 0 is legal GGUF) is no GEMM: it would show as one with k = 0.
    if (!m || !GEMM_NAMES.includes(m[2]!) || t.ne.length < 2 || t.ne.includes(0)) continue;
    const block = Number(m[1]);
    const prev = found.get(m[2]!);
    if (!prev || block < prev.block) found.set(m[2]!, { block, t });
  }
  return new Map(
    GEMM_NAMES.filter((n) => found.has(n)).map((n) => [n, found.get(n)!.t] as [string, GgufTensorInfo]),
  );
}

/**
 * A model preset from a GGUF's metadata: `general.architecture`, then `<arch>.embedding_length`,
 * `.attention.head_count`, `.attention.head_count_kv`, `.attention.key_length` / `.value_length`,
 * `.feed_forward_length`, `.expert_count`, `.expert_used_count`, `.expert_feed_forward_length` and
 * `.expert_shared_feed_forward_length` where present, and `.block_count` and `.vocab_size` for a whole
 * forward pass (./forward.ts). With the file's tensors, the file is the truth:
 * the list is the GEMM tensors it has (n, k, experts from their ne, with their type), topk from metadata.
 * Throws GgufError when neither says enough.
 * @example const p = presetFromGgufMetadata(g.metadata, g.tensors); p.gemms.map((x) => `${x.name} ${x.n}x${x.k}`)
 */
export function presetFromGgufMetadata(
  metadata: ReadonlyMap<string, GgufValue>,
  tensors?: readonly GgufTensorInfo[],
): ModelPreset {
  const arch = metadata.get('general.architecture');
  if (typeof arch !== 'string' || !arch) {
    throw new GgufError('no model preset: the GGUF has no general.architecture string');
  }
  const name = metadata.get('general.name');
  const key = (k: string) => `${arch}.${k}`;
  const hidden = count(metadata, key('embedding_length'));
  const heads = count(metadata, key('attention.head_count'));
  const experts = count(metadata, key('expert_count')) ?? 0;
  const topk = count(metadata, key('expert_used_count'));
  const blocks = count(metadata, key('block_count'));
  const vocab = count(metadata, key('vocab_size'));
  const preset = (gemms: ModelGemm[]): ModelPreset => ({
    id: `gguf:${arch}`,
    // Strings from the file, shown in lists: escaped and cut.
    name: excerpt(typeof name === 'string' && name ? name : arch),
    gemms,
    prefillM: [...PREFILL_M],
    ...(blocks ? { blocks } : {}),
    ...(vocab ? { vocab } : {}),
  });

  if (tensors) {
    const have = gemmTensors(tensors);
    if (have.size > 0) {
      const gemms = [...have].map(([gname, t]): ModelGemm => {
        const [k, n, e] = [t.ne[0]!, t.ne[1]!, t.ne.slice(2).reduce((a, b) => a * b, 1)];
        const moe = t.ne.length > 2 ? { experts: e, ...(topk !== undefined ? { topk } : {}) } : {};
        return { name: gname, n, k, ...moe, fits: fits(k), tensor: { name: t.name, typeName: t.typeName } };
      });
      return preset(gemms);
    }
  }

  const missing = [
    hidden === undefined ? key('embedding_length') : '',
    heads === undefined ? key('attention.head_count') : '',
    experts > 0 && topk === undefined ? key('expert_used_count') : '',
  ].filter(Boolean);
  if (hidden === undefined || heads === undefined || missing.length) {
    throw new GgufError(
      `no model preset: the GGUF metadata lacks ${missing.map((k) => excerpt(k)).join(', ')}${tensors ? ' and it has no blk.N GEMM tensors' : ''}`,
    );
  }
  const ffn = count(metadata, key('feed_forward_length'));
  const headDim = count(metadata, key('attention.key_length')) ?? Math.floor(hidden / heads);
  const valueDim = count(metadata, key('attention.value_length'));
  const expertFfn = count(metadata, key('expert_feed_forward_length')) ?? ffn;
  const sharedFfn = count(metadata, key('expert_shared_feed_forward_length'));
  // A MoE model's dense FFN exists only in its leading dense blocks (DeepSeek's leading_dense_block_count);
  // Qwen3-MoE still stores feed_forward_length though no block uses it.
  const leadingDense = count(metadata, key('leading_dense_block_count')) ?? 0;
  const moe = experts > 0 && expertFfn !== undefined ? { experts, topk: topk!, ffn: expertFfn } : undefined;
  const dims: ModelDims = {
    hidden,
    heads,
    kvHeads: count(metadata, key('attention.head_count_kv')) ?? heads,
    headDim,
    ...(valueDim !== undefined && valueDim !== headDim ? { valueDim } : {}),
    ...(ffn !== undefined && (!moe || leadingDense > 0) ? { ffn } : {}),
    ...(moe ? { moe } : {}),
    ...(sharedFfn ? { sharedFfn } : {}),
  };
  return preset(modelGemms(dims));
}
