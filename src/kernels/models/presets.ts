// The GEMMs of real models, as data: one transformer block's weight multiplications in GEMM terms
// out[m, n] = x[m, k] @ W[n, k]^T (a GGUF weight of ne = [k, n], or [k, n, experts] for an expert bank).
// Names are llama.cpp's tensor names (blk.N.<name>.weight), so a preset lines up with an opened GGUF.
// Dimensions are the published configs (Hugging Face config.json of each model); where a value needs a
// remark, the remark sits next to it.
import { GgufError, type GgufTensorInfo, type GgufValue } from '../quant/gguf';

/** One weight GEMM of a transformer block. */
export interface ModelGemm {
  /** llama.cpp's tensor name: attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down, ffn_*_exps. */
  name: string;
  /** Output features (weight rows). */
  n: number;
  /** Reduction length (weight row length, GGUF ne[0]). */
  k: number;
  /** Experts in the bank, for a routed (MoE) GEMM. */
  experts?: number;
  /** Experts each token is routed to (each token's row meets topk of the experts). */
  topk?: number;
  /** Whether k is a whole number of blocks: Q4_K needs k % 256 === 0, Q8_0 needs k % 32 === 0. */
  fits: { Q4_K: boolean; Q8_0: boolean };
  /** From an opened GGUF: the first tensor of this GEMM and its ggml type. */
  tensor?: { name: string; typeName: string };
}

export interface ModelPreset {
  id: string;
  name: string;
  gemms: ModelGemm[];
  /** Prefill token counts (GEMM m) worth trying. */
  prefillM: number[];
}

/** Prefill m choices: one short prompt to a long one. */
export const PREFILL_M = [64, 256, 512, 1024, 2048, 4096];

/** What fixes a block's GEMMs. */
export interface ModelDims {
  hidden: number;
  heads: number;
  kvHeads: number;
  /** Query/key head size. */
  headDim: number;
  /** Value head size where it differs from headDim. */
  valueDim?: number;
  /** Dense FFN width; omitted when every block is MoE. */
  ffn?: number;
  /** Routed experts. */
  moe?: { experts: number; topk: number; ffn: number };
  /** Shared-expert FFN width (Qwen2-MoE style), where there is one. */
  sharedFfn?: number;
}

const fits = (k: number) => ({ Q4_K: k % 256 === 0, Q8_0: k % 32 === 0 });

function gemm(name: string, n: number, k: number, moe?: { experts: number; topk: number }): ModelGemm {
  return { name, n, k, ...(moe ? { experts: moe.experts, topk: moe.topk } : {}), fits: fits(k) };
}

/**
 * One block's GEMMs from its dimensions: q/k/v/o projections, the dense FFN, the experts.
 * @example modelGemms({ hidden: 4096, heads: 32, kvHeads: 8, headDim: 128, ffn: 14336 })[0] // attn_q 4096 x 4096
 */
export function modelGemms(d: ModelDims): ModelGemm[] {
  const v = d.valueDim ?? d.headDim;
  const out = [
    gemm('attn_q', d.heads * d.headDim, d.hidden),
    gemm('attn_k', d.kvHeads * d.headDim, d.hidden),
    gemm('attn_v', d.kvHeads * v, d.hidden),
    gemm('attn_output', d.hidden, d.heads * v),
  ];
  if (d.ffn !== undefined) {
    out.push(
      gemm('ffn_gate', d.ffn, d.hidden),
      gemm('ffn_up', d.ffn, d.hidden),
      gemm('ffn_down', d.hidden, d.ffn),
    );
  }
  if (d.moe) {
    const { ffn, ...route } = d.moe;
    out.push(
      gemm('ffn_gate_exps', ffn, d.hidden, route),
      gemm('ffn_up_exps', ffn, d.hidden, route),
      gemm('ffn_down_exps', d.hidden, ffn, route),
    );
  }
  if (d.sharedFfn !== undefined) {
    out.push(
      gemm('ffn_gate_shexp', d.sharedFfn, d.hidden),
      gemm('ffn_up_shexp', d.sharedFfn, d.hidden),
      gemm('ffn_down_shexp', d.hidden, d.sharedFfn),
    );
  }
  return out;
}

// Left out on purpose: the MoE router (ffn_gate_inp, n = experts, tiny and usually F32 in a GGUF) and
// the output head (n = vocabulary, run once per prompt for the last token in prefill).
const PRESET_DIMS: readonly { id: string; name: string; dims: ModelDims }[] = [
  {
    id: 'llama-3.1-8b',
    name: 'Llama-3.1-8B',
    dims: { hidden: 4096, heads: 32, kvHeads: 8, headDim: 128, ffn: 14336 },
  },
  {
    id: 'qwen2.5-7b',
    name: 'Qwen2.5-7B',
    // q/k/v carry biases in Qwen2.5; the GEMMs are the same.
    dims: { hidden: 3584, heads: 28, kvHeads: 4, headDim: 128, ffn: 18944 },
  },
  {
    id: 'mixtral-8x7b',
    name: 'Mixtral-8x7B',
    // Every block is MoE: 8 experts of Mistral-7B's FFN width, top-2; no dense FFN.
    dims: { hidden: 4096, heads: 32, kvHeads: 8, headDim: 128, moe: { experts: 8, topk: 2, ffn: 14336 } },
  },
  {
    id: 'qwen3-30b-a3b',
    name: 'Qwen3-30B-A3B',
    // head_dim 128 is explicit in its config: 32 q heads x 128 = 4096 > hidden 2048, so attn_q is 4096 x 2048
    // and attn_output 2048 x 4096. All 48 blocks are MoE (the dense intermediate_size 6144 is unused).
    dims: { hidden: 2048, heads: 32, kvHeads: 4, headDim: 128, moe: { experts: 128, topk: 8, ffn: 768 } },
  },
  {
    id: 'gpt-oss-20b',
    name: 'gpt-oss-20b',
    // 64 q heads x 64 = 4096 > hidden 2880. hidden = expert FFN = 2880 = 11.25 x 256: no GEMM of this model
    // fits Q4_K, all fit Q8_0 (its experts ship as MXFP4, 32-wide blocks). Each expert's gate and up are one
    // fused [2 x 2880, 2880] tensor in the checkpoint; llama.cpp's GGUF splits them as listed here.
    dims: { hidden: 2880, heads: 64, kvHeads: 8, headDim: 64, moe: { experts: 32, topk: 4, ffn: 2880 } },
  },
];

/** The built-in model presets. */
export const MODEL_PRESETS: readonly ModelPreset[] = PRESET_DIMS.map(({ id, name, dims }) => ({
  id,
  name,
  gemms: modelGemms(dims),
  prefillM: [...PREFILL_M],
}));

/**
 * A built-in preset by id, or undefined.
 * @example modelPreset('mixtral-8x7b')?.gemms.find((g) => g.name === 'ffn_up_exps') // n 14336, experts 8, topk 2
 */
export function modelPreset(id: string): ModelPreset | undefined {
  return MODEL_PRESETS.find((p) => p.id === id);
}

// ---- from an opened GGUF ----

/** A non-negative integer metadata value; per-layer arrays give their largest entry. */
function count(metadata: ReadonlyMap<string, GgufValue>, key: string): number | undefined {
  const v = metadata.get(key);
  const one = (x: GgufValue): number | undefined => {
    const n = typeof x === 'bigint' && x <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(x) : x;
    return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  };
  if (v === undefined) return undefined;
  if (Array.isArray(v)) {
    const all = v.map(one).filter((x): x is number => x !== undefined);
    return all.length ? Math.max(...all) : undefined;
  }
  return one(v);
}

// The GEMM tensor names a block can hold, in the order presets list them.
const GEMM_NAMES = [
  'attn_q',
  'attn_k',
  'attn_v',
  'attn_qkv',
  'attn_output',
  'ffn_gate',
  'ffn_up',
  'ffn_down',
  'ffn_gate_exps',
  'ffn_up_exps',
  'ffn_down_exps',
  'ffn_gate_shexp',
  'ffn_up_shexp',
  'ffn_down_shexp',
];
const BLOCK_WEIGHT = /^blk\.(\d+)\.([a-z_]+)\.weight$/;

/** Each GEMM tensor kind of the file, with the first block's tensor of that kind (blocks may differ). */
function gemmTensors(tensors: readonly GgufTensorInfo[]): Map<string, GgufTensorInfo> {
  const found = new Map<string, { block: number; t: GgufTensorInfo }>();
  for (const t of tensors) {
    const m = BLOCK_WEIGHT.exec(t.name);
    if (!m || !GEMM_NAMES.includes(m[2]!) || t.ne.length < 2) continue;
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
 * `.expert_shared_feed_forward_length` where present. With the file's tensors, the file is the truth:
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
  const preset = (gemms: ModelGemm[]): ModelPreset => ({
    id: `gguf:${arch}`,
    name: typeof name === 'string' && name ? name : arch,
    gemms,
    prefillM: [...PREFILL_M],
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
      `no model preset: the GGUF metadata lacks ${missing.join(', ')}${tensors ? ' and it has no blk.N GEMM tensors' : ''}`,
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
