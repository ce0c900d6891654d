// Child processes for tests, never blocking: a vitest worker that blocks in spawnSync cannot answer its
// runner's RPC, and under load the runner then gives up on it ("Timeout calling 'onTaskUpdate'").
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';

export interface ProcessResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface ProcessOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Killed (SIGKILL) and rejected after this many ms: a hang is a failure, not a slow pass. */
  timeoutMs?: number;
  input?: string | Uint8Array;
}

/** Run a command to its end without blocking the event loop. */
export function runProcess(
  command: string,
  args: readonly string[],
  { cwd = ROOT, env = process.env, timeoutMs = 60_000, input }: ProcessOptions = {},
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not end within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({
        status,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    child.stdin.end(input);
  });
}

/** A line Node writes for a warning: `(node:1234) Warning: ...`, `(node:1234) [DEP0137] ...`. */
export const NODE_WARNING = /^\(node:\d+\) /m;

/**
 * The least environment a clean CI machine gives: PATH, a HOME of its own, CI=true, no XDG_RUNTIME_DIR
 * (Dawn then prints "XDG_RUNTIME_DIR is invalid", which must not reach the user), no display.
 */
export function minimalEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), CI: 'true' };
}

export interface MmqOptions extends ProcessOptions {
  /**
   * Run in minimalEnv() (plus `env`) instead of this process's environment. Default: MMQ_CLI_MINIMAL_ENV=1
   * runs every CLI test so (`MMQ_CLI_MINIMAL_ENV=1 npx vitest run test/cli.test.ts`).
   */
  minimal?: boolean;
}

/**
 * `mmq ...args` as a user runs it (node + tsx), on SwiftShader where no GPU is set. A Node warning on
 * its stderr (a file handle left open, a deprecation) fails the test: it is a bug whatever else passed.
 */
export async function runMmq(args: readonly string[], options: MmqOptions = {}): Promise<ProcessResult> {
  const { minimal = process.env.MMQ_CLI_MINIMAL_ENV === '1', ...rest } = options;
  const base = minimal ? minimalEnv() : process.env;
  const env = {
    ...base,
    VK_ICD_FILENAMES: base.VK_ICD_FILENAMES ?? SWIFTSHADER,
    ...options.env,
  };
  const r = await runProcess(process.execPath, ['--import', 'tsx', 'cli/mmq.ts', ...args], {
    timeoutMs: 60_000,
    ...rest,
    env,
  });
  expect(r.stderr, `a Node warning from mmq ${args.join(' ')}`).not.toMatch(NODE_WARNING);
  return r;
}

/** An expected CLI failure: exit `status`, nothing on stdout, one `mmq: ` line on stderr matching `msg`, no stack. */
export function expectOneLineError(r: ProcessResult, status: number, msg: RegExp): void {
  expect(r.stdout).toBe('');
  expect(r.stderr.split('\n')).toEqual([expect.stringMatching(/^mmq: /), '']);
  expect(r.stderr).toMatch(msg);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.status).toBe(status);
}
