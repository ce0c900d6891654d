// mmq run: one kernel config on this machine's WebGPU (Dawn; SwiftShader where there is no GPU), through
// the same worker core the app runs in its web worker: the verdict against the oracle, the max relative
// error, the whole plan's time and throughput. On generated data (--m --n --k) or a real GGUF tensor.
//
// Every input -- flags and their ranges, the file, its tensor, the shape, the family's own validation --
// is checked before a GPU is opened (cli/gpuProcess.ts, a child process); then the run is estimated
// (src/kernels/perf/estimate.ts) and one past CONFIRM_MS needs --yes.
import { basename } from 'node:path';
import { KERNELS } from '../src/kernels';
import { verdictText } from '../src/kernels/compare';
import {
  DATA_SOURCES,
  type ControlDecl,
  type DataSource,
  type FamilyCatalog,
  type FamilyParams,
  type GgufFileRef,
  type KernelFamily,
  type RunConfig,
  type TensorChoice,
} from '../src/kernels/family';
import { defaultArm } from '../src/kernels/arms';
import { isSoftwareAdapter, type AdapterCaps } from '../src/kernels/gpu/caps';
import { listTensors, tensorConfig } from '../src/kernels/models';
import {
  CONFIRM_MS,
  estimate,
  formatMs,
  guardedMs,
  rateFor,
  workOf,
  type Estimate,
} from '../src/kernels/perf/estimate';
import {
  excerpt,
  inflatedSource,
  jsonText,
  openGguf,
  tensorDataProblem,
  type GgufFile,
} from '../src/kernels/quant';
import { UnknownFamilyError, type Registry } from '../src/kernels/registry';
import type { RunOutcome, WorkerResponse } from '../src/workers/protocol';
import {
  CliError,
  EXIT,
  FLAG_RANGES,
  intInRange,
  parseArgs,
  positiveInt,
  rangeText,
  type ParsedArgs,
} from './args';
import { fileSource } from './fileSource';
import { startGpuProcess, type GpuProcess } from './gpuProcess';
import { startProgress, type ProgressOptions } from './progress';
import { openError, type CliIo, type Subcommand } from './subcommand';

const ACTIVATIONS: readonly TensorChoice['activation'][] = ['normal', 'outliers'];

/**
 * The GPU for a subcommand: the product's families in a child process (Dawn's stderr kept apart), a
 * registry of other families (a test's) in this process, since the child loads the product's.
 */
export async function gpuFor(kernels: Registry<KernelFamily>, io: CliIo, cmd: string): Promise<GpuProcess> {
  if (kernels === KERNELS) return startGpuProcess(io, cmd);
  // Imported only here: the product's path never loads Dawn's native module in this process.
  const { inProcessGpu } = await import('./gpuInProcess');
  return inProcessGpu(kernels, io, cmd);
}

/**
 * The progress printer's options: MMQ_PROGRESS_FIRST_MS moves the first line, MMQ_PROGRESS_EVERY_MS the
 * period (defaults 1 s and 5 s): a test cannot rely on a run's length.
 */
export function progressOptions(): ProgressOptions {
  const ms = (name: string) => {
    const text = process.env[name];
    const v = Number(text);
    return text !== undefined && text !== '' && Number.isFinite(v) && v >= 0 ? v : undefined;
  };
  const [firstMs, everyMs] = [ms('MMQ_PROGRESS_FIRST_MS'), ms('MMQ_PROGRESS_EVERY_MS')];
  return { ...(firstMs === undefined ? {} : { firstMs }), ...(everyMs === undefined ? {} : { everyMs }) };
}

/**
 * Refuse an action whose work (guardedMs: all but compiling, as the app weighs it) is estimated past
 * CONFIRM_MS unless `--yes` was given: one line with the estimate, what it is made of, and how to go on.
 */
export function guard(cmd: string, what: string, est: Estimate, yes: boolean, smaller: string): void {
  if (guardedMs(est) <= CONFIRM_MS || yes) return;
  throw new CliError(
    `mmq ${cmd}: ${what} is estimated at ${formatMs(est.ms)} (${est.basis}), past the ${formatMs(CONFIRM_MS)} mmq starts unasked: add --yes to start it, or ${smaller}`,
  );
}

export function familyOf<F extends FamilyCatalog>(kernels: Registry<F>, id: string | undefined): F {
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

/**
 * A GGUF's header, read here before any GPU work (the file handle closed again): a missing file, a bad
 * header or a missing tensor is one line without a GPU ever opened.
 */
async function readModel(path: string): Promise<GgufFile> {
  const raw = await fileSource(path).catch((e: unknown) => {
    throw openError(path, e);
  });
  try {
    return await openGguf(await inflatedSource(raw));
  } finally {
    await raw.close();
  }
}

/** The config a real tensor runs as on `family`, or one line saying why it cannot. */
function tensorRun(
  family: FamilyCatalog,
  kernels: Registry<KernelFamily>,
  base: RunConfig,
  file: GgufFile,
  ref: GgufFileRef,
  name: string,
  activation: TensorChoice['activation'],
): RunConfig {
  const t = file.tensors.find((x) => x.name === name);
  if (!t) {
    const some = file.tensors.slice(0, 6).map((x) => excerpt(x.name));
    throw new CliError(
      `mmq run: no tensor '${excerpt(name)}' in ${excerpt(ref.name)} (it has ${file.tensors.length}: ${some.join(', ')}${file.tensors.length > 6 ? ', ...' : ''})`,
    );
  }
  const [row] = listTensors([t], kernels.families, ref);
  const what = `${excerpt(name)} (${t.typeName}, ne [${t.ne.join(', ')}])`;
  if (row!.note) throw new CliError(`mmq run: ${what} is ${row!.note}`);
  if (!row!.kernels.some((k) => k.kernel === family.id)) {
    throw new CliError(
      `mmq run: ${family.id} does not take ${what}; these do: ${row!.kernels.map((k) => k.kernel).join(', ')}`,
    );
  }
  const cut = tensorDataProblem(t, file.fileSize);
  if (cut) throw new CliError(`mmq run: ${cut}`);
  return tensorConfig(family, base, { file: ref, tensor: name, activation }, t);
}

/** A config in one line; the tensor's and file's names (from the file, and the user) escaped. */
function describeConfig(family: FamilyCatalog, c: RunConfig): string {
  const shape = family.controls
    .filter((x) => x.visible?.(c.params) ?? true)
    .map((x) => `${x.key}=${String(c.params[x.key])}`)
    .join(' ');
  const t = c.data.tensor;
  const data = t
    ? `${excerpt(t.tensor)} of ${excerpt(t.file.name)}, ${t.activation} activation seed ${c.data.seed}`
    : `${c.data.source} data seed ${c.data.seed}`;
  return `${family.id} (${c.arm} arm) ${shape} on ${data}`;
}

function human(family: FamilyCatalog, o: RunOutcome): string {
  const lines = [describeConfig(family, o.config), `verdict: ${verdictText(o.verdict)}`];
  if (o.tensorRead)
    lines.push(
      `read ${o.tensorRead.bytes} bytes of ${excerpt(o.tensorRead.tensor)} in ${o.tensorRead.ms.toFixed(1)} ms`,
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

/** The adapter in words, as the outputs name it. */
export const adapterName = (caps: AdapterCaps) =>
  `${caps.vendor} ${caps.description || caps.architecture}`.trim();

/**
 * The `run` subcommand over a registry of families (the product's KERNELS; a test passes its own).
 * @example const code = await runCommand(KERNELS).run(['--kernel', 'mmq-q4k-rt', '--m', '16'], io);
 */
export const runCommand = (kernels: Registry<KernelFamily>): Subcommand => ({
  name: 'run',
  usage: `mmq run --kernel ID [--gguf FILE --tensor NAME | --m M --n N --k K] [--m M] [--arm A] [--tile WM,WN,RM,RN] [--set key=v,...] [--data SOURCE] [--seed S (${rangeText(FLAG_RANGES.seed)})] [--activation normal|outliers] [--target-ms MS (${rangeText(FLAG_RANGES.batchMs)})] [--batches B (${rangeText(FLAG_RANGES.batches)})] [--no-time] [--json] [--yes]`,
  summary: `one kernel on this WebGPU: verdict vs the oracle, max rel error, ms, throughput (--yes: past an estimated ${formatMs(CONFIRM_MS)})`,
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
      boolean: ['--json', '--no-time', '--yes'],
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
    const seed = seedText === undefined ? 0 : intInRange('run', '--seed', seedText, FLAG_RANGES.seed);
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
    const number = (flag: string, fallback: number, range: { min: number; max: number }) => {
      const v = a.values.get(flag);
      return v === undefined ? fallback : intInRange('run', flag, v, range);
    };
    const targetMs = number('--target-ms', 25, FLAG_RANGES.batchMs);
    const batches = number('--batches', 6, FLAG_RANGES.batches);
    const timing = a.booleans.has('--no-time') ? undefined : { targetMs, batches };
    const armText = a.values.get('--arm');
    const arm =
      armText === undefined
        ? undefined
        : choiceValue(
            family.arms.map((x) => x.arm),
            armText,
            '--arm',
          );
    let config: RunConfig = {
      kernel: family.id,
      // Until the adapter is known, the first arm stands in: what validation checks without caps does
      // not depend on it.
      arm: arm ?? family.arms[0]?.arm ?? 'scalar',
      data: { source, seed },
      params,
    };
    let model: { path: string; ref: GgufFileRef } | undefined;
    if (ggufPath !== undefined) {
      const file = await readModel(ggufPath);
      const ref = { name: basename(ggufPath), size: file.fileSize, headerHash: file.headerHash };
      config = tensorRun(family, kernels, config, file, ref, tensor!, activation);
      model = { path: ggufPath, ref };
    }
    const anywhere = family.validate(config);
    if (anywhere.length) throw new CliError(`mmq run: ${anywhere.join('; ')}`);

    // Every input is checked: from here on a GPU is open.
    const gpu = await gpuFor(kernels, io, 'run');
    try {
      const ready = await gpu.request({ type: 'init' });
      if (ready.type !== 'ready') throw new Error(`unexpected '${ready.type}' to init`);
      const caps = ready.caps;
      if (arm === undefined) config = { ...config, arm: defaultArm(family, caps, config.params) };
      const here = family.validate(config, caps);
      if (here.length) throw new CliError(`mmq run: ${here.join('; ')}`);
      if (model) {
        const opened = await gpu.request({ type: 'open-gguf-path', path: model.path, name: model.ref.name });
        if (opened.type !== 'gguf-opened') throw new Error(`unexpected '${opened.type}' to open-gguf`);
      }
      // The plan (no dispatch yet): its passes count in the estimate.
      const generated = await gpu.request({ type: 'generate', config });
      if (generated.type !== 'generated') throw new Error(`unexpected '${generated.type}' to generate`);
      if (generated.kernel.problems.length)
        throw new CliError(`mmq run: ${generated.kernel.problems.join('; ')}`);
      const est = estimate(
        workOf(family, config),
        rateFor([], family.id, config.arm, isSoftwareAdapter(caps)),
        {
          timed: timing !== undefined,
          instrument: false,
          targetMs,
          batches,
          passes: generated.kernel.passes.length,
          software: isSoftwareAdapter(caps),
        },
      );
      guard(
        'run',
        'this run',
        est,
        a.booleans.has('--yes'),
        'ask for less (a smaller shape, --no-time, fewer --batches)',
      );
      const progress = startProgress(
        io.stderr,
        `mmq run: ${describeConfig(family, config)}`,
        progressOptions(),
      );
      const onProgress = (m: WorkerResponse) => {
        if (m.type === 'progress') progress.update(m.stage, m.fraction);
      };
      const r = await gpu
        .request({ type: 'run', config, instrument: false, ...(timing ? { timing } : {}) }, onProgress)
        .finally(() => progress.stop());
      if (r.type !== 'run-result') throw new Error(`unexpected '${r.type}' to run`);
      io.stdout(a.booleans.has('--json') ? json(r.outcome, adapterName(caps)) : human(family, r.outcome));
      return r.outcome.verdict.pass ? EXIT.ok : EXIT.differs;
    } finally {
      await gpu.close();
    }
  },
});

export const run = runCommand(KERNELS);
