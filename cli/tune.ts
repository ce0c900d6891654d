// mmq tune: a tunable family's search on this machine's WebGPU, on the same engine as the app's tuner
// (the worker's tune handler: the GA, the finalists, the interleaved claim), written as this project's
// report (--json), a Kernel Tuner 1.1.0 cache file (--kt-cache) and CSV (--csv). Every input -- flags,
// ranges, the shape, the output paths -- is checked before a GPU is opened; the hunt is estimated
// (estimateHunt) and one past CONFIRM_MS needs --yes; its progress (configs done of planned, the best so
// far) goes to stderr like run's.
import { constants } from 'node:fs';
import { access, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { KERNELS } from '../src/kernels';
import type { RunConfig } from '../src/kernels/family';
import { defaultArm } from '../src/kernels/arms';
import { isSoftwareAdapter } from '../src/kernels/gpu/caps';
import { CONFIRM_MS, estimateHunt, formatMs, huntShape, rateFor, workOf } from '../src/kernels/perf/estimate';
import { comparisonText } from '../src/kernels/perf/spread';
import {
  ktCacheCsv,
  ktCacheText,
  searchSpaceValues,
  toKtCache,
  tuningKeys,
} from '../src/kernels/perf/ktCache';
import { searchOf } from '../src/kernels/tune/session';
import type { EvolutionParams, TuneReport, WorkerResponse } from '../src/workers/protocol';
import { DEFAULT_EVO } from '../src/workers/protocol';
import { CliError, FLAG_RANGES, intInRange, parseArgs, rangeText, type IntRange } from './args';
import { startProgress } from './progress';
import { adapterName, choiceValue, familyOf, gpuFor, guard, paramsOf, progressOptions } from './run';
import type { Subcommand } from './subcommand';

/** The search flags, the EvolutionParams field each sets, and its range. */
const EVO_FLAGS = {
  '--population': { key: 'population', range: FLAG_RANGES.population },
  '--generations': { key: 'generations', range: FLAG_RANGES.generations },
  '--search-seed': { key: 'seed', range: FLAG_RANGES.seed },
  '--measure-ms': { key: 'measureMs', range: FLAG_RANGES.batchMs },
  '--batches': { key: 'batches', range: FLAG_RANGES.huntBatches },
  '--banks': { key: 'banks', range: FLAG_RANGES.banks },
} as const satisfies Record<string, { key: keyof EvolutionParams; range: IntRange }>;
type EvoFlag = keyof typeof EVO_FLAGS;
const OUTPUT_FLAGS = ['--json', '--kt-cache', '--csv'] as const;
/** The app tuner's search defaults, so `mmq tune` and the Tuner tab search alike. */
const DEFAULTS = DEFAULT_EVO;

/** The report as JSON text; an unmeasured config's Infinity is written as "Infinity" (JSON has none). */
export const reportJson = (r: TuneReport): string =>
  JSON.stringify(r, (_k, v: unknown) => (v === Infinity ? 'Infinity' : v), 2) + '\n';

function summary(r: TuneReport): string {
  const measured = r.entries.filter((e) => e.verdict === 'measured').length;
  const winner = r.entries.find((e) => e.config === r.winner);
  // The hunt's first entry is its incumbent (the worker seeds generation 0 with it).
  const incumbent = r.entries[0]?.generation === 0 ? r.entries[0].config : undefined;
  const who = r.winner && r.winner === incumbent ? 'winner: the incumbent' : 'winner:';
  return (
    [
      `${r.kernel} ${r.problem} on ${r.deviceId}: ${r.entries.length} configs, ${measured} measured`,
      `${who} ${winner?.label ?? (r.winner || 'none passed the gate')} ${Number.isFinite(r.bestMs) ? `${r.bestMs.toPrecision(4)} ms` : ''}`,
      r.claim
        ? `against the incumbent: ${comparisonText(r.claim)}`
        : 'the incumbent won (no other config to compare)',
    ].join('\n') + '\n'
  );
}

/** An output path that cannot be written is refused now, not after the hunt. */
async function checkOutput(flag: string, path: string): Promise<void> {
  const s = await stat(path).catch(() => undefined);
  if (s?.isDirectory()) throw new CliError(`mmq tune: ${flag} ${path} is a directory`);
  await access(s ? path : dirname(path), constants.W_OK).catch(() => {
    throw new CliError(
      `mmq tune: cannot write ${flag} ${path}: ${s ? 'permission denied' : `no writable directory ${dirname(path)}`}`,
    );
  });
}

export const tune: Subcommand = {
  name: 'tune',
  usage: `mmq tune --kernel ID [--m M --n N --k K] [--set key=v,...] [--data SOURCE] [--seed S] [${Object.entries(
    EVO_FLAGS,
  )
    .map(([f, { range }]) => `${f} N (${rangeText(range)})`)
    .join('] [')}] [--json FILE] [--kt-cache FILE] [--csv FILE] [--yes]`,
  summary: `tune a family's tile/arm on this WebGPU (the app's tuner); Kernel Tuner cache out (--yes: past an estimated ${formatMs(CONFIRM_MS)})`,
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
        ...(Object.keys(EVO_FLAGS) as EvoFlag[]),
        ...OUTPUT_FLAGS,
      ],
      boolean: ['--yes'],
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
    const seed = seedText === undefined ? 0 : intInRange('tune', '--seed', seedText, FLAG_RANGES.seed);
    const source = choiceValue(
      ['reference', 'random', 'synthetic'] as const,
      a.values.get('--data') ?? 'synthetic',
      '--data',
    );
    const evo: EvolutionParams = { ...DEFAULTS };
    for (const [flag, { key, range }] of Object.entries(EVO_FLAGS)) {
      const v = a.values.get(flag);
      if (v !== undefined) evo[key] = intInRange('tune', flag, v, range);
    }
    for (const flag of OUTPUT_FLAGS) {
      const path = a.values.get(flag);
      if (path !== undefined) await checkOutput(flag, path);
    }
    let base: RunConfig = {
      kernel: family.id,
      arm: family.arms[0]?.arm ?? 'scalar',
      data: { source, seed },
      params,
    };
    const anywhere = family.validate(base);
    if (anywhere.length) throw new CliError(`mmq tune: ${anywhere.join('; ')}`);

    // Every input is checked: from here on a GPU is open.
    const gpu = await gpuFor(KERNELS, io, 'tune');
    let report: TuneReport;
    let keys: string[];
    let space: Record<string, (number | string)[]>;
    let adapter: string;
    try {
      const ready = await gpu.request({ type: 'init' });
      if (ready.type !== 'ready') throw new Error(`unexpected '${ready.type}' to init`);
      const caps = ready.caps;
      base = { ...base, arm: defaultArm(family, caps, params) };
      const here = family.validate(base, caps);
      if (here.length) throw new CliError(`mmq tune: ${here.join('; ')}`);
      const search = searchOf(family, base, caps);
      const feasible = search.space.enumerate();
      const hunt = huntShape(evo, {
        feasible: feasible.length,
        seeds: search.seeds.length,
        software: isSoftwareAdapter(caps),
      });
      const planned = hunt.configs;
      keys = tuningKeys(family.controls);
      space = searchSpaceValues(
        feasible.map((c) => search.apply(c)),
        keys,
      );
      const est = estimateHunt(
        workOf(family, base),
        rateFor([], family.id, base.arm, isSoftwareAdapter(caps)),
        hunt,
      );
      guard(
        'tune',
        'this hunt',
        est,
        a.booleans.has('--yes'),
        'ask for less (a smaller shape, fewer --population, --generations or --batches)',
      );
      const shape = family.controls
        .filter((c) => c.group === 'shape')
        .map((c) => `${c.key}=${String(base.params[c.key])}`)
        .join(' ');
      const progress = startProgress(io.stderr, `mmq tune: ${family.id} ${shape}`, progressOptions());
      const onProgress = (m: WorkerResponse) => {
        if (m.type !== 'tune-progress') return;
        const best = Number.isFinite(m.bestMs) ? `best ${m.bestMs.toPrecision(4)} ms` : 'none passed yet';
        progress.update(
          `${m.stage ?? 'searching'}: ${Math.min(m.evaluated, planned)} of ${planned} configs, ${best}`,
          Math.min(1, m.evaluated / planned),
        );
      };
      const r = await gpu.request({ type: 'tune', base, evo }, onProgress).finally(() => progress.stop());
      if (r.type !== 'tune-done') throw new Error(`unexpected '${r.type}' to tune`);
      report = r.report;
      adapter = adapterName(caps);
    } finally {
      await gpu.close();
    }
    const kt = toKtCache(report, { keys, deviceName: adapter, space });
    const outputs: [string | undefined, string][] = [
      [a.values.get('--json'), reportJson(report)],
      [a.values.get('--kt-cache'), ktCacheText(kt)],
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
