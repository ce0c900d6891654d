// The seed's small tile hunt (m = n = 16, k = 256 over mmqQ4kSpace, seeded with the incumbent) that the
// GPU tuner tests run on SwiftShader, so the int8 and f16 hunts search the same problem.
import { mmqQ4kIncumbent, mmqQ4kSpace, shapeKey, tileConfig } from '../src/kernels/tune';

const space = mmqQ4kSpace();

export const HUNT = {
  space,
  incumbent: tileConfig(space, mmqQ4kIncumbent()),
  shape: shapeKey(16, 16, 256),
  /** Evaluator options: the seed's shape, two cold weight banks, one timed pass. */
  evalOptions: { m: 16, n: 16, k: 256, banks: 2, repeats: 1 },
} as const;
