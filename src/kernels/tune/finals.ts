// Reading a hunt's finalists (pure and light: the app's tuner view imports it).

/**
 * What the finalists' re-timings added to a hunt in all, ms; undefined when one was not clocked (a run
 * stored before FinalTiming.wallMs existed).
 */
export function finalsWallMs(finals: readonly { wallMs?: number }[]): number | undefined {
  let sum = 0;
  for (const f of finals) {
    if (f.wallMs === undefined) return undefined;
    sum += f.wallMs;
  }
  return sum;
}
