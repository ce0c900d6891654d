// The GPU side of mmq, run in a child process (cli/gpuProcess.ts starts it): Dawn, the worker core and
// the tuner live here, and talk to the parent over Node's IPC channel. Dawn writes to fd 2 from native
// code (Vulkan loader warnings, "XDG_RUNTIME_DIR is invalid", adapter notes); here that fd is a pipe the
// parent reads, so the user's terminal sees only what the parent decides matters. Nothing of ours goes
// to stderr: notes, progress, results and failures are IPC messages.
import { KERNELS } from '../src/kernels';
import { inflatedSource, type ByteSource } from '../src/kernels/quant';
import { createGpuCore, type GpuCore } from '../src/workers/core';
import type { WorkerRequest, WorkerResponse } from '../src/workers/protocol';
import { handleTuneRequest } from '../src/workers/tune';
import { CliError, EXIT } from './args';
import { fileSource } from './fileSource';
import { openGpu } from './gpu';
import type { ChildMessage, ParentMessage } from './gpuProcess';

const send = (m: ChildMessage) => process.send?.(m);

/** What the CLI never prints, left out of the IPC copy (an output of 2048 x 4096 f32 is 32 MB). */
function slim(msg: WorkerResponse): WorkerResponse {
  if (msg.type !== 'run-result') return msg;
  const {
    output: _o,
    oracle: _r,
    fullPrecision: _f,
    ownership: _w,
    analyticOwnership: _a,
    ...rest
  } = msg.outcome;
  return { ...msg, outcome: rest as typeof msg.outcome };
}

let core: GpuCore | undefined;
const files: { close(): Promise<void> }[] = [];

async function openFile(path: string): Promise<ByteSource> {
  const raw = await fileSource(path);
  const src = await inflatedSource(raw);
  // An inflated .gguf.gz is held in memory: its file handle is done with. A plain file stays open for
  // the tensor read, and is closed when the parent says goodbye.
  if (src !== raw) await raw.close();
  else files.push(raw);
  return src;
}

async function serve(m: ParentMessage): Promise<void> {
  switch (m.type) {
    case 'open': {
      const notes: string[] = [];
      const gpu = await openGpu((text) => notes.push(text));
      core = createGpuCore({
        gpu,
        kernels: KERNELS,
        post: (msg) => send({ type: 'response', msg: slim(msg) }),
        tune: (req, ctx) =>
          handleTuneRequest({ ...ctx, isCancelled: () => ctx.isCancelled() }, req, ctx.post),
      });
      send({ type: 'opened', notes });
      return;
    }
    case 'request': {
      if (!core) throw new Error('request before open');
      const req: WorkerRequest =
        m.req.type === 'open-gguf-path'
          ? { type: 'open-gguf', id: m.req.id, file: await openFile(m.req.path), name: m.req.name }
          : m.req;
      await core.handle(req);
      send({ type: 'done', id: req.id });
      return;
    }
    case 'bye':
      await Promise.allSettled(files.map((f) => f.close()));
      process.exit(0);
  }
}

process.on('message', (m: ParentMessage) => {
  serve(m).catch((e: unknown) => {
    if (e instanceof CliError) send({ type: 'failed', message: e.message, exitCode: e.exitCode });
    else
      send({
        type: 'failed',
        message: `internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`,
        exitCode: EXIT.internal,
      });
  });
});
// The parent is gone (it ended, or was interrupted): so is the GPU work.
process.on('disconnect', () => process.exit(0));
send({ type: 'alive' });
