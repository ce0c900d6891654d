import { describe, expect, it } from 'vitest';
import { getTestGpu } from './gpu';
import { planeWidth } from '../src/kernels/gpu/caps';

describe('Dawn on SwiftShader', () => {
  it('opens a real WebGPU adapter with subgroups and dot4I8Packed', async () => {
    const { caps } = await getTestGpu();
    expect(caps.subgroups).toBe(true);
    expect(caps.dot4I8Packed).toBe(true);
    expect(planeWidth(caps)).toBeGreaterThanOrEqual(4);
    console.log(
      '[adapter]',
      caps.vendor,
      caps.architecture,
      caps.description,
      'plane',
      planeWidth(caps),
      caps.subgroupMinSize,
      caps.subgroupMaxSize,
    );
  });
});
