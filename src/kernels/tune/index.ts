// The autotuner, pure: search spaces, the seeded GA, the fitness contract, the cache-fronted Tuner and
// the register-tile space. No DOM and no GPU: the GPU side (problem sessions, the plan evaluator) is
// ./session.ts, imported by itself.
export * from '../space';
export * from './evaluator';
export * from './rng';
export * from './evolution';
export * from './tuner';
export * from './tileSpace';
export * from './problem';
export * from './finals';
export * from './rounds';
