// The weight multiplications a transformer block can hold, by llama.cpp's tensor names. Apart from the
// presets: a GGUF's forward pass and the worker's preset from metadata read it, the app's first paint not.

/** The GEMM tensor names a block can hold (blk.N.<name>.weight), in the order presets list them. */
export const GEMM_NAMES: readonly string[] = [
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
