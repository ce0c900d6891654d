// A wall-clock limit per test file, kept by vitest's main process over the fork that runs the files.
// vitest's own testTimeout is a timer inside the fork: a test that spins without yielding (a loop that never
// awaits) blocks that fork's event loop, the timer never fires, and the run waits for .ci/run's tier limit
// (an hour). The main process is another process, so its timers still fire: this reporter starts one when
// the fork queues a file (before importing it, so an import that spins counts too) and clears it when the
// file ends. When it fires, it prints the file's name, appends it to .test-results/file-limit.jsonl (which
// .ci/verdict.ts reads), and kills the fork and what the fork started; vitest then reports the fork's death,
// the files after it never run, and the verdict names them too.
//
// The fork is found through /proc (Linux; CI's machine): the main process's children that run vitest's fork
// worker. Elsewhere the limit only prints.
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

/** The default limit: twice the 120 s test timeout plus the file's setup, far above any file's need. */
export const FILE_LIMIT_S = 300;

/** The limit in force: $MMQ_FILE_LIMIT_S when it is a positive number, else FILE_LIMIT_S. */
export function fileLimitS(env: Record<string, string | undefined> = process.env): number {
  const s = Number(env.MMQ_FILE_LIMIT_S);
  return Number.isFinite(s) && s > 0 ? s : FILE_LIMIT_S;
}

/** Each process's parent, from /proc/PID/stat (empty where there is no /proc). */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return out;
  }
  for (const pid of pids) {
    try {
      // "PID (comm) STATE PPID ...": the command may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.set(Number(pid), ppid);
    } catch {
      // The process ended while being read.
    }
  }
  return out;
}

const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

/**
 * The forks vitest runs test files in (children of this process running its fork worker), each with its
 * descendants, deepest first: the order to kill them in.
 * @example forkTrees(process.pid) // [[4321, 4400, 4401], ...]: a fork's grandchildren, children, then itself
 */
export function forkTrees(main: number): number[][] {
  const ppid = parents();
  const children = (pid: number) => [...ppid].filter(([, p]) => p === pid).map(([c]) => c);
  const below = (pid: number): number[] => [...children(pid).flatMap(below), pid];
  return (
    children(main)
      // A fork renames itself `node (vitest N)`; before that it is tinypool's process entry.
      .filter((pid) => /\(vitest \d+\)|tinypool[/\\]dist|vitest[/\\]dist[/\\]workers/.test(commandLine(pid)))
      .map(below)
  );
}

/**
 * The vitest reporter that keeps the limit (vitest.config.ts and `npm run test:unit` add it).
 * @example reporters: ['default', new FileLimitReporter()]
 */
export default class FileLimitReporter implements Reporter {
  private readonly limitS: number;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private root = process.cwd();
  private record = join(process.cwd(), '.test-results', 'file-limit.jsonl');

  /** `limitS`, or vitest's reporter options (`--reporter=./.ci/fileLimit.ts` passes `{}`): the env's limit. */
  constructor(options?: number | { limitS?: number }) {
    const given = typeof options === 'number' ? options : options?.limitS;
    this.limitS = given !== undefined && given > 0 ? given : fileLimitS();
  }

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
    this.record = join(this.root, '.test-results', 'file-limit.jsonl');
  }

  onTestModuleQueued(module: TestModule): void {
    const file = relative(this.root, module.moduleId);
    const started = Date.now();
    const timer = setTimeout(() => this.stop(file, started), this.limitS * 1000);
    // Never what keeps the run alive.
    timer.unref();
    this.timers.set(module.moduleId, timer);
  }

  onTestModuleEnd(module: TestModule): void {
    clearTimeout(this.timers.get(module.moduleId));
    this.timers.delete(module.moduleId);
  }

  onTestRunEnd(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private stop(file: string, started: number): void {
    const elapsedS = Math.round((Date.now() - started) / 1000);
    const trees = forkTrees(process.pid);
    process.stderr.write(
      `\n[file limit] ${file} has run ${elapsedS} s, past its ${this.limitS} s limit (MMQ_FILE_LIMIT_S): ` +
        (trees.length
          ? `killing the test fork (pid ${trees.map((t) => t.at(-1)).join(', ')}) and its children\n`
          : 'no fork found to kill (no /proc here?)\n'),
    );
    try {
      mkdirSync(dirname(this.record), { recursive: true });
      appendFileSync(this.record, `${JSON.stringify({ file, limitS: this.limitS, elapsedS })}\n`);
    } catch (e) {
      process.stderr.write(`[file limit] could not record it in ${this.record}: ${String(e)}\n`);
    }
    for (const pid of trees.flat()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}
