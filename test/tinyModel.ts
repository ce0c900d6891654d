// A tiny model file for tests of whole-model runs (mmq model, the app's model view), small enough for
// SwiftShader: `blocks` llama blocks of a 256-wide hidden state, attn_q and attn_output in Q8_0 (one
// GEMM shape, two uses), ffn_down in Q4_K, and a Q6_K output head (no kernel here takes Q6_K). The data
// is zeros: a model run times generated data and reads only the header.
import { ggmlTensorByteLength, GgmlType } from '../src/kernels/quant';
import { writeGguf } from './ggufWriter';

/**
 * The tiny model's GGUF bytes; `name` is its general.name (a test may make it hostile).
 * @example writeFileSync(path, tinyModelGguf());
 */
export function tinyModelGguf(blocks = 2, name = 'tiny-llama'): Uint8Array<ArrayBuffer> {
  const t = (tname: string, dims: number[], type: number) => ({
    name: tname,
    dims,
    type,
    data: new Uint8Array(ggmlTensorByteLength(type, dims)!),
  });
  const tensors = Array.from({ length: blocks }, (_, b) => [
    t(`blk.${b}.attn_q.weight`, [256, 64], GgmlType.Q8_0),
    t(`blk.${b}.attn_output.weight`, [256, 64], GgmlType.Q8_0),
    t(`blk.${b}.ffn_down.weight`, [256, 64], GgmlType.Q4_K),
  ]).flat();
  return writeGguf({
    kv: [
      ['general.architecture', { t: 'str', v: 'llama' }],
      ['general.name', { t: 'str', v: name }],
      ['llama.block_count', { t: 'u32', v: blocks }],
    ],
    tensors: [...tensors, t('output.weight', [256, 100], GgmlType.Q6_K)],
  });
}
