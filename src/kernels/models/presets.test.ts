import { describe, expect, it } from 'vitest';
import { writeGguf, type KvValue } from '../../../test/ggufWriter';
import { GgufError, parseGguf, type GgufValue } from '../quant/gguf';
import { MODEL_PRESETS, modelPreset, presetFromGgufMetadata, type ModelGemm } from './index';

/** name -> [n, k, experts?, topk?] */
const table = (gemms: ModelGemm[]) =>
  Object.fromEntries(gemms.map((g) => [g.name, [g.n, g.k, ...(g.experts ? [g.experts, g.topk] : [])]]));

describe('built-in model presets (published configs)', () => {
  it('has the five models, each with prefill m choices', () => {
    expect(MODEL_PRESETS.map((p) => p.name)).toEqual([
      'Llama-3.1-8B',
      'Qwen2.5-7B',
      'Mixtral-8x7B',
      'Qwen3-30B-A3B',
      'gpt-oss-20b',
    ]);
    for (const p of MODEL_PRESETS) expect(p.prefillM.length).toBeGreaterThan(2);
  });

  it('Llama-3.1-8B: 32 q / 8 kv heads of 128, hidden 4096, ffn 14336', () => {
    expect(table(modelPreset('llama-3.1-8b')!.gemms)).toEqual({
      attn_q: [4096, 4096],
      attn_k: [1024, 4096],
      attn_v: [1024, 4096],
      attn_output: [4096, 4096],
      ffn_gate: [14336, 4096],
      ffn_up: [14336, 4096],
      ffn_down: [4096, 14336],
    });
  });

  it('Qwen2.5-7B: 28 q / 4 kv heads of 128, hidden 3584, ffn 18944', () => {
    expect(table(modelPreset('qwen2.5-7b')!.gemms)).toEqual({
      attn_q: [3584, 3584],
      attn_k: [512, 3584],
      attn_v: [512, 3584],
      attn_output: [3584, 3584],
      ffn_gate: [18944, 3584],
      ffn_up: [18944, 3584],
      ffn_down: [3584, 18944],
    });
  });

  it('Mixtral-8x7B: 8 experts of 14336, top-2, no dense FFN', () => {
    expect(table(modelPreset('mixtral-8x7b')!.gemms)).toEqual({
      attn_q: [4096, 4096],
      attn_k: [1024, 4096],
      attn_v: [1024, 4096],
      attn_output: [4096, 4096],
      ffn_gate_exps: [14336, 4096, 8, 2],
      ffn_up_exps: [14336, 4096, 8, 2],
      ffn_down_exps: [4096, 14336, 8, 2],
    });
  });

  it('Qwen3-30B-A3B: hidden 2048 but q is 32 x 128 = 4096 wide; 128 experts of 768, top-8', () => {
    expect(table(modelPreset('qwen3-30b-a3b')!.gemms)).toEqual({
      attn_q: [4096, 2048],
      attn_k: [512, 2048],
      attn_v: [512, 2048],
      attn_output: [2048, 4096],
      ffn_gate_exps: [768, 2048, 128, 8],
      ffn_up_exps: [768, 2048, 128, 8],
      ffn_down_exps: [2048, 768, 128, 8],
    });
  });

  it('gpt-oss-20b: 64 q / 8 kv heads of 64, hidden 2880, 32 experts of 2880, top-4; nothing fits Q4_K', () => {
    const g = modelPreset('gpt-oss-20b')!.gemms;
    expect(table(g)).toEqual({
      attn_q: [4096, 2880],
      attn_k: [512, 2880],
      attn_v: [512, 2880],
      attn_output: [2880, 4096],
      ffn_gate_exps: [2880, 2880, 32, 4],
      ffn_up_exps: [2880, 2880, 32, 4],
      ffn_down_exps: [2880, 2880, 32, 4],
    });
    // attn_output's k = 4096 does fit; every GEMM reading the 2880-wide hidden state does not.
    expect(g.filter((x) => x.fits.Q4_K).map((x) => x.name)).toEqual(['attn_output']);
    expect(g.every((x) => x.fits.Q8_0)).toBe(true);
  });

  it('marks k % 256 (Q4_K) and k % 32 (Q8_0) for every GEMM', () => {
    for (const p of MODEL_PRESETS) {
      for (const g of p.gemms) {
        expect(g.fits, `${p.id} ${g.name}`).toEqual({ Q4_K: g.k % 256 === 0, Q8_0: g.k % 32 === 0 });
      }
    }
    expect(modelPreset('qwen2.5-7b')!.gemms.find((g) => g.name === 'attn_q')!.fits).toEqual({
      Q4_K: true, // 3584 = 14 x 256
      Q8_0: true,
    });
  });
});

const md = (entries: Record<string, GgufValue>) => new Map(Object.entries(entries));

describe('presetFromGgufMetadata', () => {
  it('derives Llama-3.1-8B from llama.* keys, equal to the built-in', () => {
    const p = presetFromGgufMetadata(
      md({
        'general.architecture': 'llama',
        'general.name': 'Meta Llama 3.1 8B Instruct',
        'llama.embedding_length': 4096,
        'llama.feed_forward_length': 14336,
        'llama.attention.head_count': 32,
        'llama.attention.head_count_kv': 8,
      }),
    );
    expect(p.id).toBe('gguf:llama');
    expect(p.name).toBe('Meta Llama 3.1 8B Instruct');
    // No block_count or vocab_size among the keys: a forward pass counts per block, without a head.
    expect([p.blocks, p.vocab]).toEqual([undefined, undefined]);
    expect(p.gemms).toEqual(modelPreset('llama-3.1-8b')!.gemms);
  });

  it('derives Mixtral (arch llama with experts: the FFN width is the experts) and Qwen3-MoE (expert width)', () => {
    const mixtral = presetFromGgufMetadata(
      md({
        'general.architecture': 'llama',
        'llama.embedding_length': 4096,
        'llama.feed_forward_length': 14336,
        'llama.attention.head_count': 32,
        'llama.attention.head_count_kv': 8,
        'llama.block_count': 32,
        'llama.vocab_size': 32000,
        'llama.expert_count': 8,
        'llama.expert_used_count': 2,
      }),
    );
    expect(mixtral.gemms).toEqual(modelPreset('mixtral-8x7b')!.gemms);
    expect([mixtral.blocks, mixtral.vocab]).toEqual([32, 32000]);
    const qwen3 = presetFromGgufMetadata(
      md({
        'general.architecture': 'qwen3moe',
        'qwen3moe.embedding_length': 2048,
        'qwen3moe.feed_forward_length': 6144, // stored, but no block is dense
        'qwen3moe.expert_feed_forward_length': 768,
        'qwen3moe.attention.head_count': 32,
        'qwen3moe.attention.head_count_kv': 4,
        'qwen3moe.attention.key_length': 128,
        'qwen3moe.attention.value_length': 128,
        'qwen3moe.expert_count': 128n, // u64 in some writers
        'qwen3moe.expert_used_count': 8,
      }),
    );
    expect(qwen3.gemms).toEqual(modelPreset('qwen3-30b-a3b')!.gemms);
  });

  it('per-layer head counts (arrays) take their largest entry; shared experts are listed', () => {
    const p = presetFromGgufMetadata(
      md({
        'general.architecture': 'qwen2moe',
        'qwen2moe.embedding_length': 2048,
        'qwen2moe.attention.head_count': [16, 16],
        'qwen2moe.attention.head_count_kv': [16, 0],
        'qwen2moe.expert_count': 60,
        'qwen2moe.expert_used_count': 4,
        'qwen2moe.expert_feed_forward_length': 1408,
        'qwen2moe.expert_shared_feed_forward_length': 5632,
      }),
    );
    expect(table(p.gemms)).toMatchObject({ attn_k: [2048, 2048], ffn_up_shexp: [5632, 2048] });
  });

  it('says which keys are missing', () => {
    expect(() => presetFromGgufMetadata(md({}))).toThrow(/no general.architecture/);
    expect(() => presetFromGgufMetadata(md({ 'general.architecture': 'llama' }))).toThrow(
      new GgufError(
        'no model preset: the GGUF metadata lacks llama.embedding_length, llama.attention.head_count',
      ),
    );
  });

  it('a file string is cut and escaped in the preset name and the message; an empty tensor is no GEMM', () => {
    const arch = `\x1b[2J${'a'.repeat(1 << 20)}`;
    const e = (() => {
      try {
        presetFromGgufMetadata(md({ 'general.architecture': arch }));
      } catch (x) {
        return x as Error;
      }
    })();
    expect(e!.message.length).toBeLessThan(400);
    expect(e!.message).toContain('\\x1b[2Jaaa');
    const empty = parseGguf(
      writeGguf({
        kv: [['general.architecture', { t: 'str', v: arch }]],
        tensors: [{ name: 'blk.0.ffn_down.weight', dims: [0, 4], type: 8, data: new Uint8Array(0) }],
      }),
    );
    expect(() => presetFromGgufMetadata(empty.metadata, empty.tensors)).toThrow(/lacks/);
    const named = parseGguf(
      writeGguf({
        kv: [['general.architecture', { t: 'str', v: arch }]],
        tensors: [{ name: 'blk.0.ffn_down.weight', dims: [32, 4], type: 8, data: new Uint8Array(136) }],
      }),
    );
    expect(presetFromGgufMetadata(named.metadata, named.tensors).name).toMatch(
      /^\\x1b\[2Ja{76}… \(1048580 chars\)$/,
    );
  });

  it("with the file's tensors, lists the GEMM tensors it has (ne, type), topk from metadata", () => {
    const kv: [string, KvValue][] = [
      ['general.architecture', { t: 'str', v: 'qwen3moe' }],
      ['qwen3moe.expert_used_count', { t: 'u32', v: 2 }],
    ];
    const t = (name: string, dims: number[], type: number) => ({
      name,
      dims,
      type,
      data: new Uint8Array((dims.reduce((a, b) => a * b, 1) / 256) * (type === 12 ? 144 : 272)),
    });
    const file = parseGguf(
      writeGguf({
        kv,
        tensors: [
          t('blk.1.attn_q.weight', [256, 512], 12),
          t('blk.0.attn_q.weight', [256, 512], 12),
          t('blk.0.ffn_down_exps.weight', [512, 256, 4], 12),
          t('blk.0.attn_norm.weight', [256, 1], 12), // not a GEMM name: ignored
        ],
      }),
    );
    const p = presetFromGgufMetadata(file.metadata, file.tensors);
    expect(p.gemms).toEqual([
      {
        name: 'attn_q',
        n: 512,
        k: 256,
        fits: { Q4_K: true, Q8_0: true },
        tensor: { name: 'blk.0.attn_q.weight', typeName: 'Q4_K' },
      },
      {
        name: 'ffn_down_exps',
        n: 256,
        k: 512,
        experts: 4,
        topk: 2,
        fits: { Q4_K: true, Q8_0: true },
        tensor: { name: 'blk.0.ffn_down_exps.weight', typeName: 'Q4_K' },
      },
    ]);
  });
});
