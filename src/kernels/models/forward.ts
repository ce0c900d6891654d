// One forward pass of a model as GEMMs: every weight multiplication a token's trip through the network
// makes, grouped by what a kernel sees -- the weight's type, n, k and expert bank -- with how many times a
// pass runs each (per tensor kind: attn_q x32, attn_output x32). From a built-in preset (its blocks x the
// block's GEMMs, and the output head from its vocabulary) or from an opened GGUF's own tensors (every
// blk.N.<gemm>.weight it holds, and output.weight). The rows a GEMM multiplies at prefill of M tokens are
// M, at decode 1; the output head runs at one row in both, since a prompt's logits are needed for its last
// token only (llama.cpp's default). Pure and light: the app's main thread, the worker and the CLI use it.
import { excerpt } from '../quant/untrustedText';
import { GEMM_NAMES } from './gemmNames';
import type { ModelPreset } from './presets';
import { weightShape } from '../tensors';

/** Prefill of M tokens, or one token's decode step. */
export type PassPhase = 'prefill' | 'decode';

/** A GEMM of a forward pass: one (type, n, k, bank) and the tensors of that shape it stands for. */
export interface PassGemm {
  /** gemmKey: the type and shape, e.g. "Q4_K 4096x4096" or "Q4_K 14336x4096 x8 top2". */
  key: string;
  /** The tensor kinds of this shape (llama.cpp names), each with its launches per pass. */
  uses: { name: string; count: number }[];
  /** The weight's ggml type (Q4_K, Q8_0, Q6_K, F16, ...). */
  type: string;
  /** Output features (weight rows) and the reduction length. */
  n: number;
  k: number;
  /** An expert bank's experts, and the experts each token is routed to. */
  experts?: number;
  topk?: number;
  /** Launches per forward pass (the uses' counts summed). */
  count: number;
  /** The output head: one row at prefill too (the last token's logits). */
  head?: boolean;
  /** What to know about its type (a preset's stand-in format, a tied head). */
  note?: string;
}

/** A model's forward pass as its distinct GEMMs. */
export interface ForwardPass {
  /** The model's name (escaped where it came from a file). */
  name: string;
  source: 'preset' | 'gguf';
  /** Transformer blocks, where known. */
  blocks?: number;
  gemms: PassGemm[];
  /** What the list leaves out or assumes, in words. */
  notes: string[];
}

/** The weight formats a preset's pass can be listed in (those the kernels take). */
export const PASS_FORMATS = ['Q4_K', 'Q8_0'] as const;
export type PassFormat = (typeof PASS_FORMATS)[number];

/**
 * The key of a GEMM shape: its type, n x k, and for an expert bank its experts and top-k.
 * @example gemmKey({ type: 'Q4_K', n: 14336, k: 4096, experts: 8, topk: 2 }) // 'Q4_K 14336x4096 x8 top2'
 */
export function gemmKey(g: { type: string; n: number; k: number; experts?: number; topk?: number }): string {
  const bank =
    g.experts !== undefined && g.experts > 1 ? ` x${g.experts}${g.topk ? ` top${g.topk}` : ''}` : '';
  return `${g.type} ${g.n}x${g.k}${bank}`;
}

/**
 * The rows (tokens) a pass's GEMM multiplies: M at prefill, 1 at decode, 1 for the output head always.
 * @example passRows({ head: true }, 'prefill', 512) // 1
 */
export function passRows(g: Pick<PassGemm, 'head'>, phase: PassPhase, m: number): number {
  return phase === 'decode' || g.head ? 1 : m;
}

/** Groups GEMM launches by key, in the order keys first appear. */
class Grouper {
  private readonly byKey = new Map<string, PassGemm>();
  add(g: Omit<PassGemm, 'key' | 'uses' | 'count'>, name: string, count: number): void {
    const key = gemmKey(g);
    let group = this.byKey.get(key);
    if (!group) this.byKey.set(key, (group = { ...g, key, uses: [], count: 0 }));
    const use = group.uses.find((u) => u.name === name);
    if (use) use.count += count;
    else group.uses.push({ name, count });
    group.count += count;
    if (g.note && !group.note) group.note = g.note;
  }
  get gemms(): PassGemm[] {
    return [...this.byKey.values()];
  }
}

/**
 * The built-in presets' num_hidden_layers and vocab_size (the published configs), by preset id: here and
 * not in ./presets.ts, whose data the app's first-paint chunk carries for the problem picker.
 */
export const PRESET_PASS_SIZES: Readonly<Record<string, { blocks: number; vocab: number }>> = {
  'llama-3.1-8b': { blocks: 32, vocab: 128256 },
  'qwen2.5-7b': { blocks: 28, vocab: 152064 },
  'mixtral-8x7b': { blocks: 32, vocab: 32000 },
  'qwen3-30b-a3b': { blocks: 48, vocab: 151936 },
  'gpt-oss-20b': { blocks: 24, vocab: 201088 },
};

/**
 * A built-in (or metadata-derived) preset's forward pass with its weights in `format`: each block GEMM
 * `blocks` times, and the output head once. A GEMM whose k is no whole number of 256-wide Q4_K blocks is
 * listed as Q8_0 (llama.cpp's own fallback for such a tensor is Q5_0, which no kernel here takes).
 * @example presetPass(modelPreset('llama-3.1-8b')!, 'Q4_K').gemms.map((g) => `${g.key} x${g.count}`)
 */
export function presetPass(preset: ModelPreset, format: PassFormat = 'Q4_K'): ForwardPass {
  const groups = new Grouper();
  const notes: string[] = [];
  const sizes = PRESET_PASS_SIZES[preset.id];
  const blocks = preset.blocks ?? sizes?.blocks;
  const vocab = preset.vocab ?? sizes?.vocab;
  if (blocks === undefined) notes.push('the block count is unknown: counts are per block');
  const typeOf = (k: number) =>
    format === 'Q4_K' && k % 256 !== 0
      ? {
          type: 'Q8_0',
          note: `k = ${k} is no whole number of 256-wide Q4_K blocks: listed as Q8_0 (llama.cpp's own fallback, Q5_0, no kernel here takes)`,
        }
      : { type: format };
  for (const g of preset.gemms) {
    const t = typeOf(g.k);
    const bank = g.experts !== undefined ? { experts: g.experts, ...(g.topk ? { topk: g.topk } : {}) } : {};
    groups.add({ n: g.n, k: g.k, ...bank, ...t }, g.name, blocks ?? 1);
  }
  // The head reads the hidden state: the width the block's first projection reads.
  const hidden = preset.gemms.find((g) => g.name === 'attn_q' || g.name === 'attn_qkv')?.k;
  if (vocab !== undefined && hidden !== undefined)
    groups.add({ n: vocab, k: hidden, head: true, ...typeOf(hidden) }, 'output', 1);
  else notes.push('the vocabulary is unknown: the output head is left out');
  notes.push(
    'left out: the MoE router (ffn_gate_inp, tiny, usually F32) and attention itself (QK^T, softmax x V: no weights)',
  );
  return {
    name: preset.name,
    source: 'preset',
    ...(blocks !== undefined ? { blocks } : {}),
    gemms: groups.gemms,
    notes,
  };
}

const BLOCK_WEIGHT = /^blk\.(\d+)\.([a-z_]+)\.weight$/;

/**
 * An opened GGUF's forward pass from its tensors: every blk.N.<gemm>.weight (each block's own type and
 * shape, so a file mixing Q4_K and Q6_K lists both), and output.weight as the head (token_embd.weight
 * where the file has no output.weight: a tied head). Top-k for an expert bank comes from `preset` (the
 * file's metadata).
 * @example ggufPass('Llama', gguf.tensors, opened.preset).gemms.length
 */
export function ggufPass(
  name: string,
  tensors: readonly { name: string; typeName: string; ne: readonly number[] }[],
  preset?: Pick<ModelPreset, 'gemms'>,
): ForwardPass {
  const groups = new Grouper();
  const notes: string[] = [];
  let blocks = 0;
  const usable = (ne: readonly number[]) => ne.length >= 2 && !ne.includes(0);
  for (const t of tensors) {
    const hit = BLOCK_WEIGHT.exec(t.name);
    if (!hit || !GEMM_NAMES.includes(hit[2]!) || !usable(t.ne)) continue;
    blocks = Math.max(blocks, Number(hit[1]) + 1);
    const s = weightShape(t);
    const topk = preset?.gemms.find((g) => g.name === hit[2])?.topk;
    const bank = s.experts > 1 ? { experts: s.experts, ...(topk ? { topk } : {}) } : {};
    groups.add({ type: s.type, n: s.n, k: s.k, ...bank }, hit[2]!, 1);
  }
  const head =
    tensors.find((t) => t.name === 'output.weight' && usable(t.ne)) ??
    tensors.find((t) => t.name === 'token_embd.weight' && usable(t.ne));
  if (head) {
    const s = weightShape(head);
    const tied = head.name !== 'output.weight';
    groups.add(
      {
        type: s.type,
        n: s.n,
        k: s.k,
        head: true,
        ...(tied ? { note: 'a tied head: the file has no output.weight, token_embd.weight serves' } : {}),
      },
      tied ? 'token_embd (tied output)' : 'output',
      1,
    );
  } else notes.push('no output.weight or token_embd.weight: the output head is left out');
  if (!groups.gemms.length) notes.push('no blk.N GEMM tensors in the file');
  notes.push('left out: the MoE router (ffn_gate_inp) and attention itself (QK^T, softmax x V: no weights)');
  return {
    name: excerpt(name),
    source: 'gguf',
    ...(blocks ? { blocks } : {}),
    gemms: groups.gemms,
    notes,
  };
}
