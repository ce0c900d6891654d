// Model files: a local .gguf (or .gguf.gz, inflated by the worker) is handed to the worker's
// 'open-gguf' as a Blob -- the worker reads its header through File.slice, never the whole file -- and
// the tensor list comes back. Choosing a tensor sets the playground's config through the family's own
// declarations (store/models.ts); the worker reads that tensor's bytes when it runs.
import type { FamilyCatalog, GgufFileRef } from '../kernels/family';
import type { TensorListing } from '../kernels/models/tensors';
import { act, chooseTensor, modelFailed, modelOpened, modelOpening, setTab } from './store';
import type { WorkerClient } from './worker/client';

export interface ModelController {
  /** Open a local file (picker or drop). */
  open(file: File): void;
  /** Run `tensor` of `file` on a family. */
  choose(catalog: FamilyCatalog, file: GgufFileRef, tensor: TensorListing): void;
}

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
  };
}
