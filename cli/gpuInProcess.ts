// The GpuProcess interface served in this process, for a kernel registry the child process cannot load
// (a test's own families): the same requests and answers, but Dawn writes to this process's stderr.
import { basename } from 'node:path';
import type { KernelFamily } from '../src/kernels/family';
import { inflatedSource } from '../src/kernels/quant';
import type { Registry } from '../src/kernels/registry';
import { createGpuCore } from '../src/workers/core';
import type { WorkerRequest, WorkerResponse } from '../src/workers/protocol';
import { handleTuneRequest } from '../src/workers/tune';
import { fileSource } from './fileSource';
import { openGpu } from './gpu';
import { PROGRESS_TYPES, resultOf, type GpuProcess } from './gpuProcess';
import type { CliIo } from './subcommand';

/**
 * The worker core on `kernels`, in this process.
 * @example const gpu = await inProcessGpu(TOY_KERNELS, io, 'run');
 */
export async function inProcessGpu(
  kernels: Registry<KernelFamily>,
  io: CliIo,
  cmd: string,
): Promise<GpuProcess> {
  const notes: string[] = [];
  const gpu = await openGpu((n) => notes.push(n));
  for (const n of notes) io.stderr(`mmq ${cmd}: ${n}\n`);
  let onMessage: ((m: WorkerResponse) => void) | undefined;
  const mine: WorkerResponse[] = [];
  const core = createGpuCore({
    gpu,
    kernels,
    post: (m) => {
      if (PROGRESS_TYPES.has(m.type)) onMessage?.(m);
      else mine.push(m);
    },
    tune: (req, ctx) => handleTuneRequest({ ...ctx, isCancelled: () => ctx.isCancelled() }, req, ctx.post),
  });
  const files: { close(): Promise<void> }[] = [];
  let lastId = 0;
  return {
    notes,
    async request(body, on) {
      const id = ++lastId;
      mine.length = 0;
      onMessage = on;
      let req: WorkerRequest;
      if (body.type === 'open-gguf-path') {
        const raw = await fileSource(body.path);
        const src = await inflatedSource(raw);
        if (src !== raw) await raw.close();
        else files.push(raw);
        req = { type: 'open-gguf', id, file: src, name: basename(body.name) };
      } else req = { ...body, id } as WorkerRequest;
      await core.handle(req);
      return resultOf(
        cmd,
        body.type,
        mine.filter((m) => 'id' in m && m.id === id),
      );
    },
    async close() {
      await Promise.allSettled(files.map((f) => f.close()));
    },
  };
}
