// bench/torch_baseline.py's MoE routing is the WebGPU bench's (src/kernels/moe moeRouting, same seed), so the
// torch MoE timings and the bench's MoE rows route the same tokens to the same experts (no GPU, no torch).
import { describe, expect, it } from 'vitest';
import { MOE_ROUTING_SEED, moeRouting } from '../src/kernels/moe';
import { runProcess } from './cliProcess';

const pyRouting = async (tokens: number, experts: number, topk: number, seed?: bigint): Promise<number[]> => {
  const arg = [tokens, experts, topk, ...(seed === undefined ? [] : [`0x${seed.toString(16)}`])].join(',');
  const r = await runProcess('python3', ['bench/torch_baseline.py', '--routing', arg]);
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as number[];
};

describe('torch_baseline.py MoE routing', () => {
  it.each([
    [32, 8],
    [512, 8],
    [2048, 64],
    [7, 3],
  ])('%i tokens over %i experts, top-2: the same ids as moeRouting', async (tokens, experts) => {
    expect(await pyRouting(tokens, experts, 2)).toEqual([
      ...moeRouting(tokens, experts, 2, MOE_ROUTING_SEED),
    ]);
  });

  it('another seed and top-k', async () => {
    expect(await pyRouting(9, 5, 3, 12345n)).toEqual([...moeRouting(9, 5, 3, 12345n)]);
  });
});
