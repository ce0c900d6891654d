// Performance analysis: the bytes each pass moves, the roofline against measured peaks, the spread of
// timed batches, the peaks probe, and Kernel Tuner cache files. The light modules (roofline, spread,
// traffic, ktCache) are what the app's main thread may import one by one; this entry serves the rest.
export * from './traffic';
export * from './roofline';
export * from './spread';
export * from './ktCache';
export * from './probe';
export * from './probe.run';
