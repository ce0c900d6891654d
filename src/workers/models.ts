// The worker's model-file cache: GGUF files the user opened (a File is a handle, not its bytes: only the
// header is read on open), and the last tensor read from one as a kernel's weight operand, so a run after
// its generate, or a tuning hunt over one tensor, reads it once.
import {
  ShapeError,
  tensorProblems,
  type FamilyCatalog,
  type GgufFileRef,
  type RunConfig,
  type WeightOperand,
} from '../kernels/family';
import { listTensors, presetFromGgufMetadata, weightShape } from '../kernels/models';
import {
  blobSource,
  ggufTensor,
  inflatedSource,
  metadataRows,
  openGguf,
  readTensorOperand,
  tensorDataProblem,
  type ByteSource,
  type GgufFile,
} from '../kernels/quant';
import type { OpenedModel, RunOutcome } from './protocol';

// Opened GGUFs kept (a File is a handle, not its bytes); the last tensor read is kept as an operand.
const MODELS_KEPT = 4;

/** A model file that is not open in this worker (the app asks for it again), or not a usable GGUF. */
export class ModelFileError extends Error {}

/** A real tensor read as a weight operand, and what reading it cost. */
export interface TensorWeight {
  weight: WeightOperand;
  read: NonNullable<RunOutcome['tensorRead']>;
}

export interface ModelCache {
  /**
   * Open a GGUF (a picked File, a Blob; `.gguf.gz` is inflated): its header, its tensors with the
   * families that take each, its model preset. `checkCancel` throws when the request was cancelled.
   */
  open(blob: Blob | ByteSource, name: string | undefined, checkCancel: () => void): Promise<OpenedModel>;
  /**
   * The real tensor a config names, read from its open file (the last one read is kept), after
   * `family` has checked the tensor's shape against the config. Undefined for generated data.
   */
  weightFor(config: RunConfig, family: FamilyCatalog): Promise<TensorWeight | undefined>;
}

interface OpenModel {
  ref: GgufFileRef;
  gguf: GgufFile;
  src: ByteSource;
  /** Bytes read from the file so far. */
  bytesRead: () => number;
}

const modelKey = (f: GgufFileRef) => `${f.headerHash}:${f.size}`;

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** A source that counts the bytes read through it (for the reports of what a tensor cost to read). */
function countingSource(src: ByteSource): { src: ByteSource; bytesRead: () => number } {
  let bytes = 0;
  return {
    src: {
      size: src.size,
      ...(src.name === undefined ? {} : { name: src.name }),
      read: async (offset, length) => {
        const b = await src.read(offset, length);
        bytes += b.length;
        return b;
      },
    },
    bytesRead: () => bytes,
  };
}

/**
 * The model files of one worker; `families` are listed against each opened file's tensors.
 * @example const models = createModelCache(registry.catalogs); const w = await models.weightFor(config, family);
 */
export function createModelCache(families: readonly FamilyCatalog[]): ModelCache {
  const models = new Map<string, OpenModel>();
  let lastWeight: (TensorWeight & { key: string }) | undefined;
  return {
    async open(blob, given, checkCancel) {
      const name = given ?? ('name' in blob && typeof blob.name === 'string' ? blob.name : 'model.gguf');
      const file = countingSource(blob instanceof Blob ? blobSource(blob) : blob);
      // Tensor reads are counted on the (inflated) GGUF itself, the open on the file as picked.
      const counted = countingSource(await inflatedSource({ ...file.src, name }));
      const src = counted.src;
      checkCancel();
      const gguf = await openGguf(src);
      const ref: GgufFileRef = { name, size: blob.size, headerHash: gguf.headerHash };
      const key = modelKey(ref);
      models.delete(key);
      models.set(key, { ref, gguf, src, bytesRead: counted.bytesRead });
      while (models.size > MODELS_KEPT) models.delete(models.keys().next().value as string);
      const model: OpenedModel = {
        file: ref,
        version: gguf.version,
        bytesRead: file.bytesRead(),
        metadata: metadataRows(gguf),
        tensors: listTensors(gguf.tensors, families, ref).map((row, i) => {
          // A file cut short: the tensors it cuts say why and run nowhere; the others stay usable.
          const cut = tensorDataProblem(gguf.tensors[i]!, src.size);
          return cut ? { ...row, kernels: [], note: `cut short: ${cut}` } : row;
        }),
      };
      try {
        model.preset = presetFromGgufMetadata(gguf.metadata, gguf.tensors);
      } catch (e) {
        model.presetProblem = message(e);
      }
      return model;
    },

    async weightFor(config, family) {
      const t = config.data.source === 'tensor' ? config.data.tensor : undefined;
      if (!t) return undefined;
      const m = models.get(modelKey(t.file));
      if (!m)
        throw new ModelFileError(
          `${t.tensor} is in ${t.file.name} (${t.file.size} bytes), which is not open here: open that file again`,
        );
      const info = ggufTensor(m.gguf, t.tensor);
      const problems = tensorProblems(family, config, weightShape(info));
      if (problems.length) throw new ShapeError(problems.join('; '));
      const key = `${modelKey(t.file)}/${t.tensor}`;
      // The read that loaded the tensor is reported with every run on it (a generate may have read it).
      if (lastWeight?.key === key) return { weight: lastWeight.weight, read: lastWeight.read };
      const before = m.bytesRead();
      const t0 = performance.now();
      const weight = await readTensorOperand(m.src, m.gguf, t.tensor);
      const read = { tensor: t.tensor, bytes: m.bytesRead() - before, ms: performance.now() - t0 };
      lastWeight = { key, weight, read };
      return { weight, read };
    },
  };
}
