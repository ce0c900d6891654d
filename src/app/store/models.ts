// Real models in the playground: opened GGUF files (their tensor lists, read by the worker), choosing a
// tensor as the weight operand, and model presets (the GEMM shapes of real models) for the controls.
// Pure actions; every shape is set through the families' own declarations (tensorConfig, shapeParams).
import type { FamilyCatalog, GgufFileRef, KernelId, RunConfig, TensorChoice } from '../../kernels/family';
import { defaultArm } from '../../kernels/arms';
import { MODEL_PRESETS, type ModelGemm, type ModelPreset } from '../../kernels/models/presets';
import { shapeParams, tensorConfig, weightShape, type TensorListing } from '../../kernels/tensors';
import type { OpenedModel } from '../../workers/protocol';
import { excerpt } from '../../kernels/quant/untrustedText';
import { catalogIn, currentCatalog, loadConfig, type AppState, type ModelsState } from './state';

const models = (s: AppState, p: Partial<ModelsState>): Partial<AppState> => ({
  models: { ...s.models, ...p },
});

/**
 * An opened file's identity, as the worker keys its files: the header hash and the size. The hash covers
 * the header only, so a file and a copy cut short (or grown) share it.
 * @example modelFileKey({ name: 'm.gguf', size: 1234, headerHash: '0123456789abcdef' }) // '0123456789abcdef:1234'
 */
export const modelFileKey = (f: GgufFileRef): string => `${f.headerHash}:${f.size}`;

const sameFile = (a: GgufFileRef, b: GgufFileRef) => modelFileKey(a) === modelFileKey(b);

/** "name (1,234 bytes, header a1b2c3d4e5f60718)": a file as the mismatch message names it. */
export function fileText(f: GgufFileRef): string {
  return `${excerpt(f.name)} (${f.size.toLocaleString('en-US')} bytes, header ${f.headerHash})`;
}

/**
 * How the app names each opened file (the same order): its name, escaped, and for files that share a
 * name, also the size and header hash that tell them apart.
 * @example modelFileLabels([a, b]) // ['m.gguf (1,234 bytes, header …)', 'm.gguf (999 bytes, header …)'] for two m.gguf
 */
export function modelFileLabels(files: readonly GgufFileRef[]): string[] {
  const named = new Map<string, number>();
  for (const f of files) named.set(f.name, (named.get(f.name) ?? 0) + 1);
  return files.map((f) => (named.get(f.name)! > 1 ? fileText(f) : excerpt(f.name)));
}

export function modelOpening(s: AppState, name: string): Partial<AppState> {
  return models(s, { opening: name, error: undefined });
}

/**
 * A file was opened. When a permalink asked for a file, the one picked must be the same (size and header
 * hash); when it is not, the link's tensor stays wanted, the mismatch is said, and the file is let go.
 */
export function modelOpened(s: AppState, model: OpenedModel): Partial<AppState> {
  const files = [model, ...s.models.files.filter((f) => !sameFile(f.file, model.file))];
  const wanted = s.models.wanted;
  if (wanted && !sameFile(wanted.file, model.file))
    // The wrong file is not kept: it would list its tensors and its model preset as if it were the link's.
    return models(s, {
      opening: undefined,
      mismatch: `The file picked, ${fileText(model.file)}, is not the file this link names: ${fileText(wanted.file)}. Pick that file to run ${excerpt(wanted.tensor)}.`,
    });
  return {
    ...models(s, { files, opening: undefined, wanted: undefined, mismatch: undefined }),
    tab: 'model',
  };
}

export function modelFailed(s: AppState, name: string, message: string): Partial<AppState> {
  return models(s, { opening: undefined, error: `${name}: ${message}` });
}

export function closeModel(s: AppState, file: GgufFileRef): Partial<AppState> {
  return models(s, { files: s.models.files.filter((f) => !sameFile(f.file, file)) });
}

/** A config names a tensor of a file that is not open: ask for the file. */
export function wantTensor(s: AppState, choice: TensorChoice | undefined): Partial<AppState> {
  return models(s, { wanted: choice, mismatch: undefined });
}

/**
 * The presets to pick from: each opened file's own (named after the file), then the built-in ones. Two
 * files of one architecture derive the same preset id, so the file's key (header hash and size) keeps
 * them apart.
 * @example modelPresets(state.models.files).map((p) => p.id) // ['gguf:llama:0123456789abcdef:1234', 'llama-3.1-8b', ...]
 */
export function modelPresets(files: readonly OpenedModel[]): ModelPreset[] {
  const labels = modelFileLabels(files.map((f) => f.file));
  return [
    ...files.flatMap((f, i) =>
      f.preset
        ? [
            {
              ...f.preset,
              id: `${f.preset.id}:${modelFileKey(f.file)}`,
              name: `${f.preset.name} (${labels[i]!})`,
            },
          ]
        : [],
    ),
    ...MODEL_PRESETS,
  ];
}

export function setModelFilter(s: AppState, filter: string): Partial<AppState> {
  return models(s, { filter });
}

export function setModelRows(s: AppState, rows: number): Partial<AppState> {
  return models(s, { rows });
}

export function setActivation(s: AppState, activation: TensorChoice['activation']): Partial<AppState> {
  const next = models(s, { activation });
  const t = s.config.data.tensor;
  if (s.config.data.source !== 'tensor' || !t) return next;
  return {
    ...next,
    config: { ...s.config, data: { ...s.config.data, tensor: { ...t, activation } } },
  };
}

/** What a tensor's run config depends on: the current config, the adapter, the panel's rows and activation. */
type OfferState = Pick<AppState, 'config' | 'device'> & { models: Pick<ModelsState, 'rows' | 'activation'> };

/**
 * The config "run on <family>" loads for a tensor: n, k (and experts for a bank) from the tensor, `rows`
 * activation rows (the model panel's by default) and its activation kind, the data seed kept; the current
 * tile and arm when the family is the current one, else the family's defaults and the adapter's arm.
 * @example tensorRunConfig(state, CATALOG.get('mmq-q8-tiled'), file, tensor).params.m // state.models.rows
 */
export function tensorRunConfig(
  s: OfferState,
  catalog: FamilyCatalog,
  file: GgufFileRef,
  tensor: TensorListing,
  rows: number = s.models.rows,
): RunConfig {
  const choice: TensorChoice = { file, tensor: tensor.name, activation: s.models.activation };
  const config = tensorConfig(catalog, s.config, choice, tensor);
  const w = weightShape(tensor);
  config.params = shapeParams(catalog, config.params, {
    n: w.n,
    k: w.k,
    rows,
    ...(w.experts > 1 ? { experts: w.experts } : {}),
  });
  if (catalog.id !== s.config.kernel) config.arm = defaultArm(catalog, s.device.caps, config.params);
  return config;
}

/**
 * Run a tensor of an opened file on a family: the config tensorRunConfig builds (at `rows`, else the
 * model panel's rows), loaded into the playground.
 */
export function chooseTensor(
  s: AppState,
  catalog: FamilyCatalog,
  file: GgufFileRef,
  tensor: TensorListing,
  rows?: number,
): Partial<AppState> {
  const config = tensorRunConfig(s, catalog, file, tensor, rows);
  return { ...loadConfig(s, config), armExplicit: catalog.id === s.config.kernel && s.armExplicit };
}

/** What the tensor table offers for one family that takes a tensor. */
export interface TensorOffer {
  kernel: KernelId;
  title: string;
  /** Why the family cannot run the tensor at the panel's rows, in its own words (empty: it runs). */
  problems: string[];
  /** When the panel's rows are the problem: the next row count up at which it runs. */
  runsAt?: number;
}

// Row counts tried above the panel's when a family refuses them: the next multiple of each step.
const ROW_STEPS = [8, 16, 32, 64, 128, 256, 512];

/**
 * The families that take a tensor, each validated as "run on" would load it: at the panel's rows (and
 * the current tile, where the family is the current one), on this adapter. A family that refuses these
 * rows but runs at a multiple of a few powers of two above them says at which (runsAt), so the table
 * never offers a run that fails.
 * @example tensorOffers(state, file, tensor) // [{ kernel: 'mmq-q8-tiled', problems: ['m = 16 is not a multiple of 32'], runsAt: 32, ... }]
 */
export function tensorOffers(
  s: OfferState & Pick<AppState, 'catalogs'>,
  file: GgufFileRef,
  tensor: TensorListing,
): TensorOffer[] {
  const caps = s.device.caps;
  return tensor.kernels.flatMap(({ kernel, title }): TensorOffer[] => {
    const catalog = catalogIn(s, kernel);
    if (!catalog) return [];
    const at = (rows: number) => catalog.validate(tensorRunConfig(s, catalog, file, tensor, rows), caps);
    const problems = at(s.models.rows);
    if (!problems.length) return [{ kernel, title, problems }];
    const rows = s.models.rows;
    const runsAt = [...new Set(ROW_STEPS.map((step) => Math.ceil((rows + 1) / step) * step))]
      .sort((a, b) => a - b)
      .find((r) => at(r).length === 0);
    return [{ kernel, title, problems, ...(runsAt !== undefined ? { runsAt } : {}) }];
  });
}

/**
 * Set a model GEMM's shape (a preset's or an opened file's) on the current family with `rows`
 * activation rows: generated data, since the preset's shape is not a tensor's.
 */
export function applyGemm(s: AppState, gemm: ModelGemm, rows: number): Partial<AppState> {
  const catalog = currentCatalog(s);
  if (!catalog.takes) return {};
  const params = shapeParams(catalog, s.config.params, {
    n: gemm.n,
    k: gemm.k,
    rows,
    ...(gemm.experts !== undefined ? { experts: gemm.experts } : {}),
    ...(gemm.topk !== undefined ? { topk: gemm.topk } : {}),
  });
  const data =
    s.config.data.source === 'tensor'
      ? { source: 'reference' as const, seed: s.config.data.seed }
      : s.config.data;
  return loadConfig(s, { ...s.config, params, data });
}

/** Whether a preset's GEMM suits a family: its format's block divides k, and a bank goes to a bank kernel. */
export function gemmFits(catalog: FamilyCatalog, gemm: ModelGemm): string | undefined {
  const takes = catalog.takes;
  if (!takes) return `${catalog.title} has a fixed shape`;
  if (!gemm.fits[takes.format]) return `k = ${gemm.k} is not a whole number of ${takes.format} blocks`;
  if (takes.bank !== (gemm.experts !== undefined))
    return takes.bank ? 'not an expert bank' : `an expert bank: ${catalog.title} takes one matrix`;
  return undefined;
}
