// The GEMMs of real models, as data: one transformer block's weight multiplications in GEMM terms
// out[m, n] = x[m, k] @ W[n, k]^T (a GGUF weight of ne = [k, n], or [k, n, experts] for an expert bank).
// Names are llama.cpp's tensor names (blk.N.<name>.weight), so a preset lines up with an opened GGUF.
// Dimensions are the published configs (Hugging Face config.json of each model); where a value needs a
// remark, the remark sits next to it.

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
  /** Transformer blocks (each runs the block's GEMMs once per forward pass), where known. */
  blocks?: number;
  /** Vocabulary: the output head's n (hidden -> logits), where known. */
  vocab?: number;
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

/** Whether k is a whole number of Q4_K / Q8_0 blocks. */
export const fits = (k: number) => ({ Q4_K: k % 256 === 0, Q8_0: k % 32 === 0 });

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
// the output head (n = vocabulary, run once per prompt for the last token in prefill): a block's GEMMs are
// what a preset sets a shape from; a whole forward pass (./forward.ts) adds the blocks and the head.
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
