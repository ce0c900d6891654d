// mmq run: one kernel config on this machine's WebGPU (Dawn; SwiftShader where there is no GPU), through
// the same worker core the app runs in its web worker: the verdict against the oracle, the max relative
// error, the whole plan's time and throughput. On generated data (--m --n --k) or a real GGUF tensor.
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { create, globals } from 'webgpu';
import { FULL_DAWN_FLAGS, orSwiftShader, SWIFTSHADER_ICD } from '../bench/dawn';
import { KERNELS } from '../src/kernels';
import { verdictText } from '../src/kernels/compare';
import {
  DATA_SOURCES,
  type ControlDecl,
  type DataSource,
  type FamilyCatalog,
  type FamilyParams,
  type KernelFamily,
  type RunConfig,
  type TensorChoice,
} from '../src/kernels/family';
import { defaultArm } from '../src/kernels/gpu/arms';
import { jsonText } from '../src/kernels/quant';
import type { AdapterCaps } from '../src/kernels/gpu/caps';
import { tensorConfig } from '../src/kernels/models';
import { UnknownFamilyError, type Registry } from '../src/kernels/registry';
import { createGpuCore, type GpuCore, type GpuCoreOptions } from '../src/workers/core';
import type {
  OpenedModel,
  RunOutcome,
  WorkerRequest,
  WorkerRequestBody,
  WorkerResponse,
} from '../src/workers/protocol';
import { CliError, EXIT, parseArgs, positiveInt, type ParsedArgs } from './args';
import { fileSource } from './fileSource';
import { startProgress, type Progress } from './progress';
import { openError, type Subcommand } from './subcommand';

const ACTIVATIONS: readonly TensorChoice['activation'][] = ['normal', 'outliers'];

// The Dawn entry points stay reachable while their device lives (bench/dawn.ts says why).
const liveGpus: GPU[] = [];
const keep = (gpu: GPU) => (liveGpus.push(gpu), gpu);

/** Dawn with every accelerated arm exposed, on this machine's GPU, else on SwiftShader (said aloud). */
export function openGpu(note: (text: string) => void): Promise<GPU> {
  Object.assign(globalThis, globals);
  const open = async () => {
    const gpu = create([...FULL_DAWN_FLAGS]);
    if (!(await gpu.requestAdapter({ powerPreference: 'high-performance' })))
      throw new CliError(`mmq run: no WebGPU adapter. ${noAdapterHint()}`, EXIT.machine);
    return keep(gpu);
  };
  return orSwiftShader(open, (icd) =>
    note(`mmq run: no GPU adapter; running on SwiftShader (${icd}), timings are not a GPU's\n`),
  );
}

/**
 * Why Dawn found no adapter, in words: the Vulkan loader's own "Found no drivers!" warnings above this
 * line say what failed, not what to do.
 */
function noAdapterHint(): string {
  const named = (process.env.VK_ICD_FILENAMES ?? process.env.VK_DRIVER_FILES ?? '')
    .split(':')
    .filter(Boolean);
  const missing = named.filter((p) => !existsSync(p));
  const fix = `set VK_ICD_FILENAMES to a Vulkan driver's ICD file (without a GPU, SwiftShader's: ${SWIFTSHADER_ICD})`;
  if (missing.length) return `VK_ICD_FILENAMES names ${missing.join(', ')}, which does not exist: ${fix}`;
  if (named.length) return `the Vulkan driver ${named.join(', ')} offers no WebGPU adapter: ${fix}`;
  return `The Vulkan loader found no driver (the "Found no drivers" warnings above): install one, or ${fix}`;
}

/** How a worker error exits: the input's fault (2), the machine's (3), or mmq's (70). */
const ERROR_EXIT = {
  shape: EXIT.input,
  validation: EXIT.input,
  file: EXIT.input,
  unsupported: EXIT.machine,
  internal: EXIT.internal,
} as const;

/**
 * The worker core in this process (`cmd` names the subcommand in its errors), answering each request with
 * its responses; progress goes to `progress`.
 */
export function inProcessCore(
  gpu: GPU,
  kernels: Registry<KernelFamily>,
  opts: Pick<GpuCoreOptions, 'tune'> & { progress?: () => Progress | undefined; cmd?: string } = {},
) {
  const { progress, cmd = 'run', ...extra } = opts;
  const messages: WorkerResponse[] = [];
  const post = (m: WorkerResponse) => {
    if (m.type === 'progress') progress?.()?.update(m.stage, m.fraction);
    else messages.push(m);
  };
  const core: GpuCore = createGpuCore({ gpu, kernels, post, ...extra });
  let id = 0;
  return async (req: Exclude<WorkerRequestBody, { type: 'cancel' }>): Promise<WorkerResponse> => {
    const rid = ++id;
    await core.handle({ ...req, id: rid } as WorkerRequest);
    const mine = messages.filter((m) => 'id' in m && m.id === rid);
    const failed = mine.find((m) => m.type === 'error' || m.type === 'compile-error');
    if (failed?.type === 'error')
      throw new CliError(`mmq ${cmd}: ${failed.message}`, ERROR_EXIT[failed.kind]);
    if (failed?.type === 'compile-error')
      throw new CliError(
        `mmq ${cmd}: WGSL compile error: ${failed.messages.map((m) => m.message).join('; ')}`,
        EXIT.machine,
      );
    const last = mine.at(-1);
    if (!last) throw new Error(`no answer to '${req.type}'`);
    return last;
  };
}

export function familyOf(kernels: Registry<KernelFamily>, id: string | undefined): FamilyCatalog {
  if (id === undefined) throw new CliError(`mmq run: --kernel is required (${kernels.ids.join(', ')})`, 2);
  try {
    return kernels.get(id);
  } catch (e) {
    if (e instanceof UnknownFamilyError) throw new CliError(`mmq run: ${e.message}`);
    throw e;
  }
}

function controlOf(family: FamilyCatalog, key: string): ControlDecl {
  const c = family.controls.find((x) => x.key === key);
  if (!c) {
    const keys = family.controls.map((x) => x.key);
    throw new CliError(
      keys.length
        ? `mmq run: ${family.id} has no param '${key}' (it has ${keys.join(', ')})`
        : `mmq run: ${family.id} takes no params (its shape is fixed), so not '${key}'`,
    );
  }
  return c;
}

/** --m/--n/--k, --tile and --set key=value,... over the family's defaults, each checked against its control. */
export function paramsOf(family: FamilyCatalog, a: ParsedArgs, fromTensor: boolean): FamilyParams {
  const params: Record<string, FamilyParams[string]> = { ...family.defaults };
  const set = (key: string, text: string, flag: string) => {
    const c = controlOf(family, key);
    params[key] =
      c.kind === 'choice'
        ? choiceValue(
            c.options.map((o) => o.value),
            text,
            flag,
          )
        : positiveInt('run', flag, text);
  };
  for (const key of ['n', 'k'] as const) {
    const v = a.values.get(`--${key}`);
    if (v === undefined) continue;
    if (fromTensor) throw new CliError(`mmq run: --${key} comes from the tensor's shape; drop it or --gguf`);
    set(key, v, `--${key}`);
  }
  const m = a.values.get('--m');
  if (m !== undefined) set(family.takes?.rows ?? 'm', m, '--m');
  const tile = a.values.get('--tile');
  if (tile !== undefined) {
    // The family's declared tile knobs, in their order (WM,WN,RM,RN for the register tile).
    const keys = family.tile?.keys;
    if (!keys) throw new CliError(`mmq run: ${family.id} has a fixed tile (no --tile)`);
    const parts = tile.split(',');
    if (parts.length !== keys.length)
      throw new CliError(`mmq run: --tile takes ${keys.join(',').toUpperCase()}, got '${tile}'`);
    keys.forEach((key, i) => set(key, parts[i]!, '--tile'));
  }
  for (const pair of (a.values.get('--set') ?? '').split(',').filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`mmq run: --set takes key=value pairs, got '${pair}'`);
    set(pair.slice(0, eq), pair.slice(eq + 1), `--set ${pair.slice(0, eq)}`);
  }
  return params;
}

export function choiceValue<T extends string | number>(options: readonly T[], text: string, flag: string): T {
  const hit = options.find((o) => String(o) === text);
  if (hit === undefined)
    throw new CliError(`mmq run: ${flag} must be one of ${options.join(', ')}, got '${text}'`);
  return hit;
}

/** Open a GGUF through a file handle (Node 20's openAsBlob gets the size of a file over 4 GiB wrong). */
async function openModel(request: ReturnType<typeof inProcessCore>, path: string): Promise<OpenedModel> {
  const src = await fileSource(path).catch((e: unknown) => {
    throw openError(path, e);
  });
  // The core keeps the source open to read the tensor later; the process ends when the run does.
  const r = await request({ type: 'open-gguf', file: src, name: basename(path) });
  if (r.type !== 'gguf-opened') throw new Error(`unexpected '${r.type}' to open-gguf`);
  return r.model;
}

/** The config a real tensor runs as on `family`, or one line saying why it cannot. */
function tensorRun(
  family: FamilyCatalog,
  base: RunConfig,
  model: OpenedModel,
  name: string,
  activation: TensorChoice['activation'],
): RunConfig {
  const t = model.tensors.find((x) => x.name === name);
  if (!t) {
    const some = model.tensors.slice(0, 6).map((x) => x.name);
    throw new CliError(
      `mmq run: no tensor '${name}' in ${model.file.name} (it has ${model.tensors.length}: ${some.join(', ')}${model.tensors.length > 6 ? ', ...' : ''})`,
    );
  }
  const what = `${name} (${t.typeName}, ne [${t.ne.join(', ')}])`;
  if (t.note) throw new CliError(`mmq run: ${what} is ${t.note}`);
  if (!t.kernels.some((k) => k.kernel === family.id)) {
    throw new CliError(
      `mmq run: ${family.id} does not take ${what}; these do: ${t.kernels.map((k) => k.kernel).join(', ')}`,
    );
  }
  return tensorConfig(family, base, { file: model.file, tensor: name, activation }, t);
}

function describeConfig(family: FamilyCatalog, c: RunConfig): string {
  const shape = family.controls
    .filter((x) => x.visible?.(c.params) ?? true)
    .map((x) => `${x.key}=${String(c.params[x.key])}`)
    .join(' ');
  const t = c.data.tensor;
  const data = t
    ? `${t.tensor} of ${t.file.name}, ${t.activation} activation seed ${c.data.seed}`
    : `${c.data.source} data seed ${c.data.seed}`;
  return `${family.id} (${c.arm} arm) ${shape} on ${data}`;
}

function human(family: FamilyCatalog, o: RunOutcome): string {
  const lines = [describeConfig(family, o.config), `verdict: ${verdictText(o.verdict)}`];
  if (o.tensorRead)
    lines.push(
      `read ${o.tensorRead.bytes} bytes of ${o.tensorRead.tensor} in ${o.tensorRead.ms.toFixed(1)} ms`,
    );
  const t = o.timing;
  if (t) {
    const per = t.passes?.map((p) => `${p.label} ${p.ms.toFixed(4)} ms`).join(', ');
    lines.push(
      `time: ${t.ms.toFixed(4)} ms per run (${t.method}, fastest of ${t.samples.length} batches of ${t.runs} runs${t.coarse ? '; coarse: the run is near the timer resolution' : ''})${per ? `; passes: ${per}` : ''}`,
    );
  }
  if (o.throughput) lines.push(`throughput: ${o.throughput.value.toPrecision(3)} ${o.throughput.unit}`);
  return lines.join('\n') + '\n';
}

function json(o: RunOutcome, adapter: string): string {
  const { output: _o, oracle: _r, fullPrecision: _f, ownership: _w, analyticOwnership: _a, ...rest } = o;
  return jsonText({ adapter, ...rest }, 2) + '\n';
}

/**
 * The `run` subcommand over a registry of families (the product's KERNELS; a test passes its own).
 * @example const code = await runCommand(KERNELS).run(['--kernel', 'mmq-q4k-rt', '--m', '16'], io);
 */
export const runCommand = (kernels: Registry<KernelFamily>): Subcommand => ({
  name: 'run',
  usage:
    'mmq run --kernel ID [--gguf FILE --tensor NAME | --m M --n N --k K] [--m M] [--arm A] [--tile WM,WN,RM,RN] [--set key=v,...] [--data SOURCE] [--seed S] [--activation normal|outliers] [--target-ms MS] [--batches B] [--no-time] [--json]',
  summary: 'one kernel on this WebGPU: verdict vs the oracle, max rel error, ms, throughput',
  async run(args, io) {
    const a = parseArgs('run', args, {
      value: [
        '--kernel',
        '--gguf',
        '--tensor',
        '--m',
        '--n',
        '--k',
        '--arm',
        '--tile',
        '--set',
        '--data',
        '--seed',
        '--activation',
        '--target-ms',
        '--batches',
      ],
      boolean: ['--json', '--no-time'],
    });
    if (a.positionals.length) throw new CliError(`mmq run: unexpected argument '${a.positionals[0]!}'`);
    const family = familyOf(kernels, a.values.get('--kernel'));
    const ggufPath = a.values.get('--gguf');
    const tensor = a.values.get('--tensor');
    if ((ggufPath === undefined) !== (tensor === undefined))
      throw new CliError('mmq run: --gguf and --tensor go together');
    if (ggufPath !== undefined && !family.takes)
      throw new CliError(`mmq run: ${family.id} runs on generated data only (no --gguf)`);
    const params = paramsOf(family, a, ggufPath !== undefined);
    const seedText = a.values.get('--seed');
    const seed = seedText === undefined ? 0 : seedText === '0' ? 0 : positiveInt('run', '--seed', seedText);
    const dataText = a.values.get('--data');
    if (dataText !== undefined && ggufPath !== undefined)
      throw new CliError('mmq run: --data is for generated data; a --gguf tensor is the data');
    const source: DataSource =
      dataText === undefined
        ? 'reference'
        : choiceValue(
            DATA_SOURCES.filter((s) => s !== 'tensor'),
            dataText,
            '--data',
          );
    const activation = choiceValue(ACTIVATIONS, a.values.get('--activation') ?? 'normal', '--activation');
    const timing = a.booleans.has('--no-time')
      ? undefined
      : {
          targetMs: a.values.has('--target-ms')
            ? positiveInt('run', '--target-ms', a.values.get('--target-ms')!)
            : 25,
          batches: a.values.has('--batches')
            ? positiveInt('run', '--batches', a.values.get('--batches')!)
            : 6,
        };
    const armText = a.values.get('--arm');
    const arm =
      armText === undefined
        ? undefined
        : choiceValue(
            family.arms.map((x) => x.arm),
            armText,
            '--arm',
          );

    // The run's progress, once it starts (opening the device and the file report none).
    const live: { progress?: Progress } = {};
    const request = inProcessCore(await openGpu(io.stderr), kernels, { progress: () => live.progress });
    const ready = await request({ type: 'init' });
    if (ready.type !== 'ready') throw new Error(`unexpected '${ready.type}' to init`);
    const caps: AdapterCaps = ready.caps;
    let config: RunConfig = {
      kernel: family.id,
      arm: arm ?? defaultArm(family, caps, params),
      data: { source, seed },
      params,
    };
    if (ggufPath !== undefined)
      config = tensorRun(family, config, await openModel(request, ggufPath), tensor!, activation);
    const problems = family.validate(config, caps);
    if (problems.length) throw new CliError(`mmq run: ${problems.join('; ')}`);
    // MMQ_PROGRESS_FIRST_MS moves the first progress line (default 1 s): a test cannot rely on a run's length.
    const firstMs = Number(process.env.MMQ_PROGRESS_FIRST_MS);
    const progress = startProgress(
      io.stderr,
      `mmq run: ${describeConfig(family, config)}`,
      Number.isFinite(firstMs) && firstMs >= 0 ? { firstMs } : {},
    );
    live.progress = progress;
    const r = await request({
      type: 'run',
      config,
      instrument: false,
      ...(timing ? { timing } : {}),
    }).finally(() => progress.stop());
    if (r.type !== 'run-result') throw new Error(`unexpected '${r.type}' to run`);
    const adapter = `${caps.vendor} ${caps.description || caps.architecture}`.trim();
    io.stdout(a.booleans.has('--json') ? json(r.outcome, adapter) : human(family, r.outcome));
    return r.outcome.verdict.pass ? EXIT.ok : EXIT.differs;
  },
});

export const run = runCommand(KERNELS);
