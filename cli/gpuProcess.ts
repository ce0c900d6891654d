// The GPU work of `run`, `tune` and `probe` in a child process (cli/gpuChild.ts), spoken to over IPC with
// the worker protocol's own requests and responses.
//
// Why a child: Dawn and the Vulkan loader write to file descriptor 2 from native code, at any time
// (adapter creation, device creation, shader compiles): "error: XDG_RUNTIME_DIR is invalid or not set in
// the environment." twice and adapter warnings where that variable is unset, "Found no drivers!" before
// the SwiftShader fallback. Node cannot redirect its own fd 2 around a native call, so the child's stderr
// is a pipe this parent reads: those lines are kept off the user's stderr, and shown as one
// `mmq: webgpu: ...` line only when they explain a failure (no adapter, a crash). Node's own warnings
// from the child (a file handle left open) are bugs and pass through as they are.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkerRequest, WorkerResponse } from '../src/workers/protocol';
import { CliError, EXIT } from './args';
import type { CliIo } from './subcommand';

/** A request the child serves: the worker protocol's, with a GGUF named by its path. */
export type ChildRequest =
  | Exclude<WorkerRequest, { type: 'cancel' | 'open-gguf' }>
  | { type: 'open-gguf-path'; id: number; path: string; name: string };
type Body<R> = R extends { id: number } ? Omit<R, 'id'> : never;
export type ChildRequestBody = Body<ChildRequest>;

export type ParentMessage = { type: 'open' } | { type: 'request'; req: ChildRequest } | { type: 'bye' };
export type ChildMessage =
  | { type: 'alive' }
  | { type: 'opened'; notes: string[] }
  | { type: 'response'; msg: WorkerResponse }
  | { type: 'done'; id: number }
  | { type: 'failed'; message: string; exitCode: number };

/** Responses on the way to a request's answer: they go to the caller's callback as they come. */
export const PROGRESS_TYPES: ReadonlySet<WorkerResponse['type']> = new Set([
  'progress',
  'tune-progress',
  'model-progress',
]);

/** How a worker error exits: the input's fault (2), the machine's (3), or mmq's (70). */
const ERROR_EXIT = {
  shape: EXIT.input,
  validation: EXIT.input,
  file: EXIT.input,
  unsupported: EXIT.machine,
  internal: EXIT.internal,
} as const;

// Lines from the child that say nothing to the user in any case.
const HARMLESS = [/XDG_RUNTIME_DIR is invalid or not set/];
// Node's own warnings ("(node:123) Warning: ...", "(node:123) [DEP0137] DeprecationWarning: ...").
const NODE_WARNING = /^\(node:\d+\) /;
const NODE_WARNING_HINT = /^\(Use `node --trace-warnings/;
// Dawn lines kept to explain a failure, and the most of them one line shows.
const KEPT_LINES = 40;
const WEBGPU_LINE_CHARS = 600;

/**
 * A request's answer from its responses: the last one, or the CliError its error response says (a
 * worker error's kind gives the exit status).
 */
export function resultOf(cmd: string, type: string, mine: readonly WorkerResponse[]): WorkerResponse {
  const failed = mine.find((m) => m.type === 'error' || m.type === 'compile-error');
  if (failed?.type === 'error') throw new CliError(`mmq ${cmd}: ${failed.message}`, ERROR_EXIT[failed.kind]);
  if (failed?.type === 'compile-error')
    throw new CliError(
      `mmq ${cmd}: WGSL compile error: ${failed.messages.map((m) => m.message).join('; ')}`,
      EXIT.machine,
    );
  const last = mine.at(-1);
  if (!last) throw new Error(`no answer to '${type}'`);
  return last;
}

/** The GPU child: requests in, responses out. */
export interface GpuProcess {
  /** Notes the child had on opening the GPU (the SwiftShader fallback), already printed. */
  readonly notes: readonly string[];
  /**
   * Serve one request; resolves to its last response, throws CliError for an error response. Responses
   * on the way (PROGRESS_TYPES) go to `onMessage` as they come.
   */
  request(req: ChildRequestBody, onMessage?: (m: WorkerResponse) => void): Promise<WorkerResponse>;
  /** End the child (its open files closed). */
  close(): Promise<void>;
}

function childCommand(): string[] {
  // The child is TypeScript, as the CLI is: run it through tsx's loader, found from here (not the cwd).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', tsx, fileURLToPath(new URL('./gpuChild.ts', import.meta.url))];
}

/**
 * Start the GPU child and open WebGPU in it (`cmd` names the subcommand in messages). Call only after
 * every input is checked: this is the first thing that touches a GPU.
 * @example const gpu = await startGpuProcess(io, 'run'); try { await gpu.request({ type: 'init' }); } finally { await gpu.close(); }
 */
export async function startGpuProcess(io: CliIo, cmd: string): Promise<GpuProcess> {
  const child: ChildProcess = spawn(process.execPath, childCommand(), {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'advanced',
  });
  const kept: string[] = [];
  const keep = (line: string) => {
    const text = line.trim();
    if (!text || HARMLESS.some((r) => r.test(text)) || NODE_WARNING_HINT.test(text)) return;
    if (NODE_WARNING.test(text)) return io.stderr(`${text}\n`);
    if (!kept.includes(text)) kept.push(text);
    if (kept.length > KEPT_LINES) kept.shift();
  };
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      lines.forEach(keep);
    });
    stream?.on('end', () => keep(rest));
  }
  /** Dawn's words, once, as one line: only when they explain a failure. */
  const sayWebgpu = () => {
    const lines = kept.filter((l) => !/^at /.test(l) && !/^\s*$/.test(l));
    if (lines.length) {
      const text = lines.join(' | ');
      io.stderr(
        `mmq: webgpu: ${text.length > WEBGPU_LINE_CHARS ? `${text.slice(0, WEBGPU_LINE_CHARS)}…` : text}\n`,
      );
    }
    kept.length = 0;
  };

  type Waiter = { resolve: (m: ChildMessage) => void; reject: (e: Error) => void };
  let waiter: Waiter | undefined;
  let ended: Error | undefined;
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const fail = (e: Error) => {
    ended ??= e;
    const w = waiter;
    waiter = undefined;
    w?.reject(e);
  };
  child.on('error', (e) => fail(new CliError(`mmq ${cmd}: cannot start the GPU process: ${e.message}`, 70)));
  child.on('exit', (code, signal) =>
    fail(
      new CliError(
        `mmq ${cmd}: the GPU process ended (${signal ?? `exit status ${code}`}) before it answered`,
        EXIT.internal,
      ),
    ),
  );
  let onResponse: (m: WorkerResponse) => void = () => {};
  child.on('message', (m: ChildMessage) => {
    if (m.type === 'response') return onResponse(m.msg);
    const w = waiter;
    waiter = undefined;
    w?.resolve(m);
  });
  /** The next message that is not a response. */
  const next = () =>
    new Promise<ChildMessage>((resolve, reject) => {
      if (ended) return reject(ended);
      waiter = { resolve, reject };
    });
  const send = (m: ParentMessage) => child.send(m);
  /** A failure from the child (or its end) as the CliError to throw, after Dawn's line where it helps. */
  const failure = (e: unknown): CliError => {
    const err =
      e instanceof CliError
        ? e
        : new CliError(`mmq ${cmd}: ${e instanceof Error ? e.message : String(e)}`, EXIT.internal);
    if (err.exitCode !== EXIT.input) sayWebgpu();
    return err;
  };

  let opened: ChildMessage;
  try {
    const hello = await next();
    if (hello.type !== 'alive') throw new Error(`the GPU process said '${hello.type}' first`);
    send({ type: 'open' });
    opened = await next();
  } catch (e) {
    child.kill();
    throw failure(e);
  }
  if (opened.type === 'failed') {
    child.kill();
    throw failure(new CliError(`mmq ${cmd}: ${opened.message}`, opened.exitCode as CliError['exitCode']));
  }
  const notes = opened.type === 'opened' ? opened.notes : [];
  for (const n of notes) io.stderr(`mmq ${cmd}: ${n}\n`);
  // The fallback worked: the first attempt's driver warnings explain nothing any more.
  kept.length = 0;

  let lastId = 0;
  return {
    notes,
    async request(body, onMessage) {
      const id = ++lastId;
      const mine: WorkerResponse[] = [];
      onResponse = (m) => {
        if (!('id' in m) || m.id !== id) return;
        if (PROGRESS_TYPES.has(m.type)) onMessage?.(m);
        else mine.push(m);
      };
      send({ type: 'request', req: { ...body, id } as ChildRequest });
      let end: ChildMessage;
      try {
        end = await next();
      } catch (e) {
        throw failure(e);
      }
      if (end.type === 'failed')
        throw failure(new CliError(`mmq ${cmd}: ${end.message}`, end.exitCode as CliError['exitCode']));
      try {
        return resultOf(cmd, body.type, mine);
      } catch (e) {
        throw failure(e);
      }
    },
    async close() {
      if (ended) return;
      ended = new Error('closed');
      send({ type: 'bye' });
      const timer = setTimeout(() => child.kill(), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
