// Configs for the GPU tests: a family's defaults with some params overridden, resolved on an adapter.
import type { FamilyParams, KernelFamily, ResolvedConfig, RunConfig } from '../src/kernels/family';
import { defaultArm, resolveConfig } from '../src/kernels/arms';
import type { AdapterCaps, Arm } from '../src/kernels/gpu/caps';

/**
 * The family's default config on `caps` (its default arm, the adapter's plane), with `params` merged in
 * and `over` applied last.
 * @example configOf(family, caps, { m: 32 }, { arm: 'scalar', data: { source: 'random', seed: 0 } })
 */
export function configOf(
  family: Pick<KernelFamily, 'id' | 'defaults' | 'arms'>,
  caps: AdapterCaps,
  params: Partial<Record<string, number | string>> = {},
  over: Partial<RunConfig> & { arm?: Arm } = {},
): ResolvedConfig {
  const merged = { ...family.defaults, ...params } as FamilyParams;
  const config: RunConfig = {
    kernel: family.id,
    arm: defaultArm(family, caps, merged),
    data: { source: 'reference', seed: 0 },
    params: merged,
    ...over,
  };
  return resolveConfig(config, caps);
}
