// Progress of a long command on stderr: nothing for a run under a second, then the stage it is in and
// the time so far, every few seconds, so a 5-minute run is never a silent one. Lines, not a redrawn
// status: stderr is often a file or a CI log.

/** Where a long command has got to. */
export interface Progress {
  /** The stage now ('compiling', 'running'...) and the fraction of the whole done (0..1; shown never lower than before). */
  update(stage: string, fraction?: number): void;
  /** The command ended: no more lines. */
  stop(): void;
}

export interface ProgressOptions {
  /** The first line comes after this long. Default 1000 ms. */
  firstMs?: number;
  /** Then one line per this long at most. Default 5000 ms. */
  everyMs?: number;
  now?: () => number;
}

/**
 * Start reporting `what` on `write` (one line each time). Lines come from a timer and also from update(),
 * since a long stage on this thread (a CPU oracle) holds the timer back.
 * @example const p = startProgress(io.stderr, 'mmq run: mmq-q4k-rt m=4096'); try { ... } finally { p.stop(); }
 */
export function startProgress(
  write: (line: string) => void,
  what: string,
  { firstMs = 1000, everyMs = 5000, now = () => performance.now() }: ProgressOptions = {},
): Progress {
  const t0 = now();
  let stage = 'starting';
  let fraction: number | undefined;
  let lastLine: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const say = () => {
    const t = now();
    lastLine = t;
    const done = fraction === undefined ? '' : ` (${Math.round(fraction * 100)}%)`;
    write(`${what}: ${stage}${done}, ${((t - t0) / 1000).toFixed(0)} s so far\n`);
  };
  const due = () => {
    const t = now();
    return t - t0 >= firstMs && (lastLine === undefined || t - lastLine >= everyMs);
  };
  const schedule = (ms: number) => {
    timer = setTimeout(() => {
      if (due()) say();
      schedule(everyMs);
    }, ms);
    // A pending line never keeps the process alive.
    timer.unref?.();
  };
  schedule(firstMs);
  return {
    update(s, f) {
      stage = s;
      // Never backwards: the worker core's stage fractions dip when a timing doubles its batches (its
      // own estimate of what is left grows), and a line that reads 60% after 70% says nothing true.
      if (f !== undefined) fraction = fraction === undefined ? f : Math.max(fraction, f);
      if (due()) say();
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
