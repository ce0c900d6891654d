// The autotuner, pure: search spaces, the seeded GA, the fitness contract, the cache-fronted Tuner and
// the Q4_K tile space with its static tier. No DOM and no GPU: evaluators live in src/workers/tune.
export * from './space';
export * from './evaluator';
export * from './rng';
export * from './evolution';
export * from './tuner';
export * from './tileSpace';
export * from './staticTiers';
