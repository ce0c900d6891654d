// What identifies a tuning problem: the family's params a search does not set (its shape and routing;
// the tile, staging and arm are what it searches) and the data. Stored runs and cached winners are keyed
// by it, per device and op.
import type { FamilyCatalog, RunConfig } from '../family';

/**
 * The key of a hunt's problem, e.g. "m=64,n=64,k=256" (",data=random#3" when not the reference data).
 * @example tuneProblemKey(catalog, config) === 'm=2048,n=4096,k=4096'
 */
export function tuneProblemKey(
  catalog: Pick<FamilyCatalog, 'controls'>,
  config: Pick<RunConfig, 'params' | 'data'>,
): string {
  const shape = catalog.controls
    .filter((c) => c.group !== 'tile')
    .map((c) => `${c.key}=${String(config.params[c.key])}`);
  const { source, seed, tensor } = config.data;
  if (source !== 'reference' || seed !== 0) shape.push(`data=${source}#${seed}`);
  // A real tensor: its file (by header hash) and name, and the activation it multiplies.
  if (source === 'tensor' && tensor)
    shape.push(`tensor=${tensor.file.headerHash}/${tensor.tensor}/${tensor.activation}`);
  return shape.join(',');
}

// The sampled gate's rows live in ./gate.ts, apart from the key: the app's first-paint chunk holds this
// module (stored runs are keyed by it) and need not carry the gate's code.
export { gateRows, ORACLE_MAC_BUDGET } from './gate';
