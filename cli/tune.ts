// mmq tune: a tunable family's search on this machine's WebGPU, on the same engine as the app's tuner
// (the worker's tune handler: the GA, the finalists, the interleaved claim), written as this project's
// report (--json), a Kernel Tuner 1.1.0 cache file (--kt-cache) and CSV (--csv).
import { writeFile } from 'node:fs/promises';
import { KERNELS } from '../src/kernels';
import type { RunConfig } from '../src/kernels/family';
import { defaultArm } from '../src/kernels/gpu/arms';
import { comparisonText } from '../src/kernels/perf/spread';
import { ktCacheCsv, toKtCache, tuningKeys } from '../src/kernels/perf/ktCache';
import type { EvolutionParams, TuneReport } from '../src/workers/protocol';
import { handleTuneRequest } from '../src/workers/tune';
import { DEFAULT_EVO } from '../src/workers/protocol';
import { CliError, parseArgs, positiveInt } from './args';
import { choiceValue, familyOf, inProcessCore, openGpu, paramsOf } from './run';
import type { Subcommand } from './subcommand';

const EVO_FLAGS = [
  '--population',
  '--generations',
  '--search-seed',
  '--measure-ms',
  '--batches',
  '--banks',
] as const;
/** The app tuner's search defaults, so `mmq tune` and the Tuner tab search alike. */
const DEFAULTS = DEFAULT_EVO;

/** The report as JSON text; an unmeasured config's Infinity is written as "Infinity" (JSON has none). */
export const reportJson = (r: TuneReport): string =>
  JSON.stringify(r, (_k, v: unknown) => (v === Infinity ? 'Infinity' : v), 2) + '\n';

function summary(r: TuneReport): string {
  const measured = r.entries.filter((e) => e.verdict === 'measured').length;
  const winner = r.entries.find((e) => e.config === r.winner);
  return (
    [
      `${r.kernel} ${r.problem} on ${r.deviceId}: ${r.entries.length} configs, ${measured} measured`,
      `winner: ${winner?.label ?? (r.winner || 'none passed the gate')} ${Number.isFinite(r.bestMs) ? `${r.bestMs.toPrecision(4)} ms` : ''}`,
      r.claim
        ? `against the incumbent: ${comparisonText(r.claim)}`
        : 'the incumbent won (no other config to compare)',
    ].join('\n') + '\n'
  );
}

export const tune: Subcommand = {
  name: 'tune',
  usage: `mmq tune --kernel ID [--m M --n N --k K] [--set key=v,...] [--data SOURCE] [--seed S] [${EVO_FLAGS.map((f) => `${f} N`).join('] [')}] [--json FILE] [--kt-cache FILE] [--csv FILE]`,
  summary: "tune a family's tile/arm on this WebGPU (the app's tuner); Kernel Tuner cache out",
  async run(args, io) {
    const a = parseArgs('tune', args, {
      value: [
        '--kernel',
        '--m',
        '--n',
        '--k',
        '--set',
        '--data',
        '--seed',
        ...EVO_FLAGS,
        '--json',
        '--kt-cache',
        '--csv',
      ],
    });
    if (a.positionals.length) throw new CliError(`mmq tune: unexpected argument '${a.positionals[0]!}'`, 2);
    const family = familyOf(KERNELS, a.values.get('--kernel'));
    if (!family.tuning)
      throw new CliError(
        `mmq tune: ${family.id} has no tuning (these do: ${KERNELS.families
          .filter((f) => f.tuning)
          .map((f) => f.id)
          .join(', ')})`,
        2,
      );
    const params = paramsOf(family, a, false);
    const seedText = a.values.get('--seed');
    const seed = seedText === undefined || seedText === '0' ? 0 : positiveInt('tune', '--seed', seedText);
    const source = choiceValue(
      ['reference', 'random', 'synthetic'] as const,
      a.values.get('--data') ?? 'synthetic',
      '--data',
    );
    const num = (flag: (typeof EVO_FLAGS)[number], fallback: number) => {
      const v = a.values.get(flag);
      return v === undefined ? fallback : positiveInt('tune', flag, v);
    };
    const evo: EvolutionParams = {
      population: num('--population', DEFAULTS.population),
      generations: num('--generations', DEFAULTS.generations),
      seed: num('--search-seed', DEFAULTS.seed),
      measureMs: num('--measure-ms', DEFAULTS.measureMs),
      batches: num('--batches', DEFAULTS.batches),
      banks: num('--banks', DEFAULTS.banks),
    };
    const request = inProcessCore(await openGpu(io.stderr), KERNELS, {
      tune: (req, ctx) => handleTuneRequest({ ...ctx, isCancelled: () => ctx.isCancelled() }, req, ctx.post),
      cmd: 'tune',
    });
    const ready = await request({ type: 'init' });
    if (ready.type !== 'ready') throw new Error(`unexpected '${ready.type}' to init`);
    const base: RunConfig = {
      kernel: family.id,
      arm: defaultArm(family, ready.caps, params),
      data: { source, seed },
      params,
    };
    const problems = family.validate(base, ready.caps);
    if (problems.length) throw new CliError(`mmq tune: ${problems.join('; ')}`);
    const r = await request({ type: 'tune', base, evo });
    if (r.type !== 'tune-done') throw new Error(`unexpected '${r.type}' to tune`);
    const report = r.report;
    const adapter = `${ready.caps.vendor} ${ready.caps.description || ready.caps.architecture}`.trim();
    const kt = toKtCache(report, { keys: tuningKeys(family.controls), deviceName: adapter });
    const outputs: [string | undefined, string][] = [
      [a.values.get('--json'), reportJson(report)],
      [a.values.get('--kt-cache'), JSON.stringify(kt, null, 2) + '\n'],
      [a.values.get('--csv'), ktCacheCsv(kt)],
    ];
    for (const [path, text] of outputs)
      if (path !== undefined)
        await writeFile(path, text).catch((e: unknown) => {
          throw new CliError(`mmq tune: cannot write ${path}: ${e instanceof Error ? e.message : String(e)}`);
        });
    io.stdout(summary(report));
    return 0;
  },
};
