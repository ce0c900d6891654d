import { describe, expect, it } from 'vitest';
import { ggufPass, modelPreset, passRows, presetPass, type ForwardPass } from './index';

/** key -> [count, uses as "name xN"] */
const table = (p: ForwardPass) =>
  Object.fromEntries(
    p.gemms.map((g) => [g.key, [g.count, g.uses.map((u) => `${u.name} x${u.count}`).join(', ')]]),
  );

describe("a preset's forward pass (published configs: layers, widths, vocabulary)", () => {
  it('Llama-3.1-8B: 32 blocks, q/o 4096x4096, k/v 1024x4096, gate/up 14336x4096, down 4096x14336, head 128256', () => {
    const p = presetPass(modelPreset('llama-3.1-8b')!, 'Q4_K');
    expect(p.blocks).toBe(32);
    expect(table(p)).toEqual({
      'Q4_K 4096x4096': [64, 'attn_q x32, attn_output x32'],
      'Q4_K 1024x4096': [64, 'attn_k x32, attn_v x32'],
      'Q4_K 14336x4096': [64, 'ffn_gate x32, ffn_up x32'],
      'Q4_K 4096x14336': [32, 'ffn_down x32'],
      'Q4_K 128256x4096': [1, 'output x1'],
    });
    expect(p.gemms.filter((g) => g.head).map((g) => g.key)).toEqual(['Q4_K 128256x4096']);
  });

  it('Qwen2.5-7B: 28 blocks of 3584 wide, 4 kv heads of 128, ffn 18944, head 152064', () => {
    expect(table(presetPass(modelPreset('qwen2.5-7b')!))).toEqual({
      'Q4_K 3584x3584': [56, 'attn_q x28, attn_output x28'],
      'Q4_K 512x3584': [56, 'attn_k x28, attn_v x28'],
      'Q4_K 18944x3584': [56, 'ffn_gate x28, ffn_up x28'],
      'Q4_K 3584x18944': [28, 'ffn_down x28'],
      'Q4_K 152064x3584': [1, 'output x1'],
    });
  });

  it('Mixtral-8x7B: 32 blocks, every FFN a bank of 8 experts top-2, head 32000', () => {
    expect(table(presetPass(modelPreset('mixtral-8x7b')!))).toEqual({
      'Q4_K 4096x4096': [64, 'attn_q x32, attn_output x32'],
      'Q4_K 1024x4096': [64, 'attn_k x32, attn_v x32'],
      'Q4_K 14336x4096 x8 top2': [64, 'ffn_gate_exps x32, ffn_up_exps x32'],
      'Q4_K 4096x14336 x8 top2': [32, 'ffn_down_exps x32'],
      'Q4_K 32000x4096': [1, 'output x1'],
    });
  });

  it('gpt-oss-20b: 24 blocks, 32 experts top-4; k = 2880 fits no Q4_K block, so those are listed as Q8_0', () => {
    const p = presetPass(modelPreset('gpt-oss-20b')!, 'Q4_K');
    expect(table(p)).toEqual({
      'Q8_0 4096x2880': [24, 'attn_q x24'],
      'Q8_0 512x2880': [48, 'attn_k x24, attn_v x24'],
      'Q4_K 2880x4096': [24, 'attn_output x24'],
      'Q8_0 2880x2880 x32 top4': [72, 'ffn_gate_exps x24, ffn_up_exps x24, ffn_down_exps x24'],
      'Q8_0 201088x2880': [1, 'output x1'],
    });
    expect(p.gemms[0]!.note).toMatch(/k = 2880 is no whole number of 256-wide Q4_K blocks/);
    expect(p.gemms.find((g) => g.key === 'Q4_K 2880x4096')!.note).toBeUndefined();
    // Asked in Q8_0, every GEMM is Q8_0.
    expect(presetPass(modelPreset('gpt-oss-20b')!, 'Q8_0').gemms.every((g) => g.type === 'Q8_0')).toBe(true);
  });

  it('a preset without blocks or vocabulary counts per block and says what it leaves out', () => {
    // Llama's GEMMs under another id (as a GGUF's metadata preset without block_count or vocab_size).
    const bare = { ...modelPreset('llama-3.1-8b')!, id: 'gguf:no-sizes' };
    const p = presetPass(bare, 'Q8_0');
    expect(p.gemms.map((g) => g.count)).toEqual([2, 2, 2, 1]);
    expect(p.notes.join(' ')).toMatch(/counts are per block.*output head is left out/);
  });

  it('rows: M at prefill, 1 at decode, 1 for the head at both', () => {
    const [q, , , , head] = presetPass(modelPreset('llama-3.1-8b')!).gemms;
    expect([passRows(q!, 'prefill', 512), passRows(q!, 'decode', 512)]).toEqual([512, 1]);
    expect([passRows(head!, 'prefill', 512), passRows(head!, 'decode', 512)]).toEqual([1, 1]);
  });
});

describe("an opened GGUF's forward pass (its own tensors)", () => {
  const t = (name: string, typeName: string, ne: number[]) => ({ name, typeName, ne });
  it('counts every block tensor by its own type and shape, a bank with its top-k, the head once', () => {
    const tensors = [
      t('token_embd.weight', 'Q4_K', [256, 1000]),
      ...[0, 1, 2].flatMap((b) => [
        t(`blk.${b}.attn_q.weight`, 'Q4_K', [256, 256]),
        t(`blk.${b}.attn_norm.weight`, 'F32', [256]),
        // Q4_K_M keeps some ffn_down in Q6_K.
        t(`blk.${b}.ffn_down.weight`, b === 1 ? 'Q6_K' : 'Q4_K', [512, 256]),
        t(`blk.${b}.ffn_up_exps.weight`, 'Q4_K', [256, 512, 4]),
      ]),
      t('output.weight', 'Q6_K', [256, 1000]),
    ];
    const p = ggufPass('tiny', tensors, {
      gemms: [{ name: 'ffn_up_exps', n: 512, k: 256, experts: 4, topk: 2, fits: { Q4_K: true, Q8_0: true } }],
    });
    expect(p.blocks).toBe(3);
    expect(table(p)).toEqual({
      'Q4_K 256x256': [3, 'attn_q x3'],
      'Q4_K 256x512': [2, 'ffn_down x2'],
      'Q6_K 256x512': [1, 'ffn_down x1'],
      'Q4_K 512x256 x4 top2': [3, 'ffn_up_exps x3'],
      'Q6_K 1000x256': [1, 'output x1'],
    });
    expect(p.gemms.at(-1)!.head).toBe(true);
  });

  it('a file without output.weight has a tied head (token_embd); one without either says so', () => {
    const tied = ggufPass('t', [
      t('token_embd.weight', 'Q8_0', [64, 300]),
      t('blk.0.attn_k.weight', 'Q8_0', [64, 32]),
    ]);
    expect(tied.gemms.map((g) => [g.key, g.uses[0]!.name, g.head ?? false])).toEqual([
      ['Q8_0 32x64', 'attn_k', false],
      ['Q8_0 300x64', 'token_embd (tied output)', true],
    ]);
    expect(tied.gemms[1]!.note).toMatch(/tied head/);
    const none = ggufPass('\x1b[2Jevil', [t('blk.0.attn_k.weight', 'Q8_0', [64, 0])]);
    expect(none.gemms).toEqual([]);
    expect(none.notes.join(' ')).toMatch(/no output.weight.*no blk.N GEMM tensors/);
    expect(none.name).toBe('\\x1b[2Jevil');
  });
});
