// MMQ problem inputs. 'reference': the reference module's generators (gen_mmq / gen_mmq_q4k), bit for bit. 'random':
// f32 tensors quantized through the real ggml codecs (q8_1 activation, Q8_0 / Q4_K weight), so the
// unquantized activation exists and the error split can separate quantization error from kernel error.
import type { DataSource, TensorChoice, WeightOperand } from '../family';
import {
  modelActivation,
  genMmq,
  genMmqQ4k,
  GEN_MMQ_Q4K_SEED,
  GEN_MMQ_SEED,
  streamSeed,
  type MmqQ4kData,
  type MmqQ8Data,
} from '../quant/gen';
import { dequantizeQ4K, quantizeQ4K } from '../quant/q4k';
import { dequantizeQ8_0, quantizeQ8_0, quantizeQ8_1 } from '../quant/q8';
import { fastQ4kData, fastQ8Data } from '../quant/synthetic';
import { XorShift64 } from '../quant/xorshift';
import type { MmqWeights } from './catalog';
import { dequantizeActivation, gemmF32 } from './mmq.oracle';

/** Inputs of one MMQ problem in the kernels' split layout. */
export type MmqInputs = { weights: 'q8_0'; data: MmqQ8Data } | { weights: 'q4k'; data: MmqQ4kData };

export interface MmqDataset {
  inputs: MmqInputs;
  /** Activation rows (m, or slots for MoE) and weight rows (n, or experts*n). */
  rows: number;
  wrows: number;
  k: number;
  /** The f32 activation the q8_1 codes came from ('random' only). */
  activationF32?: Float32Array;
}

/** Seed of the 'random' stream when dataSeed is 0. */
export const MMQ_RANDOM_SEED = 0x9e3779b97f4a7c15n;

function uniformF32(r: XorShift64, len: number, scale: number): Float32Array {
  const out = new Float32Array(len);
  for (let i = 0; i < len; i++) out[i] = Math.fround((r.nextU32() / 4294967296) * 2 * scale - scale);
  return out;
}

/**
 * Build the inputs of a [rows x k] activation against a [wrows x k] weight.
 * @example const ds = mmqDataset('q4k', 32, 64, 256, 'reference', 0); // === genMmqQ4k(32, 64, 256)
 */
export function mmqDataset(
  weights: MmqWeights,
  rows: number,
  wrows: number,
  k: number,
  source: DataSource,
  dataSeed: number,
): MmqDataset {
  if (source === 'synthetic') {
    // Distinct streams for the activation and the weight of each format (fastQ*Data take a seed per problem).
    const inputs: MmqInputs =
      weights === 'q8_0'
        ? { weights, data: fastQ8Data(rows, wrows, k, 2 * dataSeed + 1) }
        : { weights, data: fastQ4kData(rows, wrows, k, 2 * dataSeed + 1) };
    return { inputs, rows, wrows, k };
  }
  if (source === 'reference') {
    const inputs: MmqInputs =
      weights === 'q8_0'
        ? { weights, data: genMmq(rows, wrows, k, streamSeed(dataSeed, GEN_MMQ_SEED)) }
        : { weights, data: genMmqQ4k(rows, wrows, k, streamSeed(dataSeed, GEN_MMQ_Q4K_SEED)) };
    return { inputs, rows, wrows, k };
  }
  const r = new XorShift64(streamSeed(dataSeed, MMQ_RANDOM_SEED));
  const x = uniformF32(r, rows * k, 1);
  const w = uniformF32(r, wrows * k, 0.1);
  const act = quantizeQ8_1(x, rows, k).split;
  if (weights === 'q8_0') {
    const wq = quantizeQ8_0(w, wrows, k).split;
    return {
      inputs: { weights, data: { xq: act.q, xs: act.d, wq: wq.q, wd: wq.d } },
      rows,
      wrows,
      k,
      activationF32: x,
    };
  }
  // xsum = s = f16(d * sum(q)): the llama q8_1 convention; kernel and oracle read the same value.
  const data: MmqQ4kData = { xq: act.q, xs: act.d, xsum: act.s, w: quantizeQ4K(w, wrows, k).split };
  return { inputs: { weights, data }, rows, wrows, k, activationF32: x };
}

/**
 * f32 GEMM on the dequantized weight and the unquantized activation (dequantized when there is none),
 * for the error split. `rowExpert` indexes MoE slots into the expert bank (weight rows ids[s]*n + j).
 * @example fullPrecisionOf(ds, 64) // [rows, 64]
 */
export function fullPrecisionOf(ds: MmqDataset, n: number, rowExpert?: ArrayLike<number>): Float32Array {
  const { inputs, rows, wrows, k } = ds;
  const x = ds.activationF32 ?? dequantizeActivation(inputs.data.xq, inputs.data.xs, rows, k);
  const w =
    inputs.weights === 'q8_0'
      ? dequantizeQ8_0({ q: inputs.data.wq, d: inputs.data.wd }, wrows, k)
      : dequantizeQ4K(inputs.data.w, wrows, k);
  return gemmF32(x, w, rows, n, k, rowExpert);
}

/** Bytes of weight a kernel reads once for `wrows` rows (the split layout as uploaded: f32 scales). */
export function mmqWeightBytes(weights: MmqWeights, wrows: number, k: number): number {
  return weights === 'q8_0' ? wrows * k + wrows * (k / 32) * 4 : wrows * (k / 256) * (128 + 12 + 4 + 4);
}

/**
 * The activation rows `rows` of a problem's inputs, the weight shared: the oracle of a row sample.
 * @example mmqQ4kRef(activationRows(inputs, [0, 31], k).data, 2, n, k)
 */
export function activationRows(inputs: MmqInputs, rows: readonly number[], k: number): MmqInputs {
  const pick = <T extends Int8Array | Float32Array>(a: T, width: number): T => {
    const out = new (a.constructor as new (n: number) => T)(rows.length * width);
    rows.forEach((r, i) => out.set(a.subarray(r * width, (r + 1) * width), i * width));
    return out;
  };
  const d = inputs.data;
  if (inputs.weights === 'q8_0')
    return { weights: 'q8_0', data: { ...inputs.data, xq: pick(d.xq, k), xs: pick(d.xs, k / 32) } };
  return {
    weights: 'q4k',
    data: { ...inputs.data, xq: pick(d.xq, k), xs: pick(d.xs, k / 32), xsum: pick(inputs.data.xsum, k / 32) },
  };
}

/**
 * A real tensor's problem: the tensor as the weight, a generated activation [rows x k] (normal, or with
 * outlier channels) quantized to q8_1 as ggml does; the f32 activation stays for the error split.
 * @example mmqTensorDataset(weight, 32, 'normal', 0)
 */
export function mmqTensorDataset(
  weight: WeightOperand,
  rows: number,
  activation: TensorChoice['activation'],
  seed: number,
): MmqDataset {
  const { k } = weight;
  const x = modelActivation(rows, k, activation, seed);
  const act = quantizeQ8_1(x, rows, k).split;
  const wrows = weight.n * weight.experts;
  const inputs: MmqInputs =
    weight.type === 'Q8_0'
      ? { weights: 'q8_0', data: { xq: act.q, xs: act.d, wq: weight.weight.q, wd: weight.weight.d } }
      : { weights: 'q4k', data: { xq: act.q, xs: act.d, xsum: act.s, w: weight.weight } };
  return { inputs, rows, wrows, k, activationF32: x };
}
