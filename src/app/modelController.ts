// Model files: a local .gguf (or .gguf.gz, inflated by the worker) is handed to the worker's
// 'open-gguf' as a Blob -- the worker reads its header through File.slice, never the whole file -- and
// the tensor list comes back. Choosing a tensor sets the playground's config through the family's own
// declarations (store/models.ts); the worker reads that tensor's bytes when it runs.
import type { FamilyCatalog, GgufFileRef } from '../kernels/family';
import type { TensorListing } from '../kernels/tensors';
import {
  act,
  chooseTensor,
  modelFailed,
  modelOpened,
  modelOpening,
  openTensor,
  setTab,
  wantTensor,
  type AppState,
} from './store';
import type { WorkerClient } from './worker/client';

export interface ModelController {
  /** Open a local file (picker or drop). */
  open(file: File): void;
  /** Run `tensor` of `file` on a family. */
  choose(catalog: FamilyCatalog, file: GgufFileRef, tensor: TensorListing): void;
  /** The state changed: a config (a permalink) that names a tensor of a file not open asks for that file. */
  follow(s: AppState, prev: AppState): void;
}

const sameFile = (a: GgufFileRef, b: GgufFileRef) => a.headerHash === b.headerHash && a.size === b.size;

/** Names the app accepts as model files. */
export const MODEL_FILE_ACCEPT = '.gguf,.gguf.gz,.gz';

export function createModelController(env: { client: WorkerClient }): ModelController {
  return {
    open(file) {
      act(modelOpening, file.name);
      act(setTab, 'model');
      void env.client.request({ type: 'open-gguf', file, name: file.name }).done.then((msg) => {
        if (msg.type === 'gguf-opened') act(modelOpened, msg.model);
        else if (msg.type === 'error')
          act(
            modelFailed,
            file.name,
            msg.kind === 'file' ? msg.message : `could not open it (${msg.kind}): ${msg.message}`,
          );
        else if (msg.type === 'cancelled') act(modelFailed, file.name, 'opening was cancelled');
      });
    },
    choose(catalog, file, tensor) {
      act(chooseTensor, catalog, file, tensor);
    },
    follow(s, prev) {
      const filesChanged = s.models.files !== prev.models.files && s.config.data.source === 'tensor';
      if (s.config.data.tensor === prev.config.data.tensor && !filesChanged) return;
      const t = s.config.data.source === 'tensor' ? s.config.data.tensor : undefined;
      const want =
        t && !openTensor(s.models, t) && !s.models.files.some((f) => sameFile(f.file, t.file))
          ? t
          : undefined;
      if (want !== s.models.wanted) act(wantTensor, want);
    },
  };
}
