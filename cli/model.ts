// mmq model: a whole model's GEMMs on this machine's WebGPU. The forward pass of a GGUF (its header only:
// every blk.N GEMM tensor and the output head) or of a built-in preset, grouped by (type, n, k, bank), at
// prefill of M tokens (--m) and at decode (--decode): for each GEMM the pick across families (the worker's
// 'model-run': each family that takes the weight gated and timed, the fastest named with its margin over
// the next family), its time and batch spread, % of this adapter's measured roof, and the totals per
// forward pass. Stored winners come from --kt-cache DIR (Kernel Tuner caches and tune reports, as `mmq
// tune` writes them); --tune hunts each shape first and stores its hunt there. --json writes the same
// model run the app exports (kernels/models/modelRun.ts), with a Kernel Tuner cache per shape.
//
// Every input is checked before a GPU is opened; the run (and the hunts) are estimated, and past
// CONFIRM_MS need --yes. --guess measures nothing: each family at the roofs of the measured peaks, said
// to be a guess.
import { constants } from 'node:fs';
import { access, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { KERNELS } from '../src/kernels';
import type { RunConfig } from '../src/kernels/family';
import { isSoftwareAdapter, type AdapterCaps } from '../src/kernels/gpu/caps';
import {
  ggufPass,
  MODEL_PRESETS,
  modelPreset,
  modelRunJson,
  modelRunKtCaches,
  modelRunTable,
  newModelRun,
  PASS_FORMATS,
  phaseGemms,
  phaseNotes,
  presetFromGgufMetadata,
  presetPass,
  withPick,
  type ForwardPass,
  type ModelRun,
  type PassFormat,
  type PassPhase,
} from '../src/kernels/models';
import {
  CONFIRM_MS,
  estimateHunt,
  formatMs,
  huntShape,
  rateFor,
  workOf,
  type Estimate,
} from '../src/kernels/perf/estimate';
import {
  readKtCache,
  searchSpaceValues,
  toKtCache,
  tuningKeys,
  ktCacheText,
} from '../src/kernels/perf/ktCache';
import type { Peaks } from '../src/kernels/perf/roofline';
import { excerpt, inflatedSource, openGguf, type GgufFile } from '../src/kernels/quant';
import {
  estimatePicks,
  guessPick,
  pickBase,
  pickCatalogs,
  pickProblem,
  storedPickOf,
  type PickGemm,
  type StoredHunt,
} from '../src/kernels/tune/pick';
import { searchOf } from '../src/kernels/tune/session';
import { DEFAULT_EVO, type StoredPicks, type TuneReport, type WorkerResponse } from '../src/workers/protocol';
import { CliError, EXIT, FLAG_RANGES, intInRange, parseArgs, rangeText } from './args';
import { fileSource } from './fileSource';
import type { GpuProcess } from './gpuProcess';
import { startProgress } from './progress';
import { adapterName, choiceValue, gpuFor, guard, progressOptions } from './run';
import { openError, type CliIo, type Subcommand } from './subcommand';

/** The most prefill rows --m takes (a 128k-token prompt). */
const MAX_M = 131_072;

/** A model's forward pass from a GGUF's header (the file closed again before any GPU work). */
async function passOfFile(path: string): Promise<{ pass: ForwardPass; file: GgufFile }> {
  const raw = await fileSource(path).catch((e: unknown) => {
    throw openError(path, e);
  });
  let file: GgufFile;
  try {
    file = await openGguf(await inflatedSource(raw));
  } finally {
    await raw.close();
  }
  let preset;
  try {
    preset = presetFromGgufMetadata(file.metadata, file.tensors);
  } catch {
    preset = undefined; // top-k of a bank then stays unknown: the MoE family's own default
  }
  const name = file.metadata.get('general.name');
  return {
    pass: ggufPass(typeof name === 'string' && name ? name : basename(path), file.tensors, preset),
    file,
  };
}

/** A writable output file's directory, or a directory to write into (made when missing). */
async function checkWritable(flag: string, path: string, kind: 'file' | 'dir'): Promise<void> {
  const s = await stat(path).catch(() => undefined);
  if (kind === 'file' && s?.isDirectory()) throw new CliError(`mmq model: ${flag} ${path} is a directory`);
  if (kind === 'dir' && s && !s.isDirectory())
    throw new CliError(`mmq model: ${flag} ${path} is not a directory`);
  if (kind === 'dir' && !s)
    await mkdir(path, { recursive: true }).catch((e: unknown) => {
      throw new CliError(
        `mmq model: cannot make ${flag} ${path}: ${e instanceof Error ? e.message : String(e)}`,
      );
    });
  const where = kind === 'dir' || s ? path : dirname(path);
  await access(where, constants.W_OK).catch(() => {
    throw new CliError(`mmq model: cannot write ${flag} ${path}: permission denied`);
  });
}

/**
 * Stored winners in a directory: every .json that is a Kernel Tuner cache `mmq tune` wrote (its mmq_run)
 * or a tune report (`mmq tune --json`), by `${deviceId}|${op}|${problem}`; a winner the hunt did not show
 * faster than its incumbent is left out (storedPickOf). Files of other kinds are passed over and counted.
 */
export async function storedWinners(
  dir: string,
): Promise<{ winners: Map<string, string>; read: number; other: number }> {
  const winners = new Map<string, string>();
  let read = 0;
  let other = 0;
  for (const name of (await readdir(dir)).filter((n) => n.endsWith('.json')).sort()) {
    let run: Record<string, unknown>;
    try {
      const json = JSON.parse(await readFile(join(dir, name), 'utf8')) as unknown;
      run =
        typeof json === 'object' && json !== null && 'schema_version' in json
          ? readKtCache(json).run
          : (json as Record<string, unknown>);
    } catch {
      other++;
      continue;
    }
    const { deviceId, op, problem } = run;
    const winner = storedPickOf(run as StoredHunt);
    if (typeof deviceId !== 'string' || typeof op !== 'string' || typeof problem !== 'string') {
      other++;
      continue;
    }
    read++;
    if (winner) winners.set(`${deviceId}|${op}|${problem}`, winner);
  }
  return { winners, read, other };
}

/** The stored winners a GEMM's families may serve here, by family id. */
function storedFor(winners: ReadonlyMap<string, string>, deviceId: string, gemm: PickGemm): StoredPicks {
  const out: Record<string, string> = {};
  for (const f of pickCatalogs(KERNELS.families, gemm)) {
    const w = f.tuning && winners.get(`${deviceId}|${f.tuning.op}|${pickProblem(f, gemm)}`);
    if (w) out[f.id] = w;
  }
  return out;
}

/** Rows of cells as aligned text columns (the first row a header, underlined). */
export function alignedTable(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  return (
    [line(rows[0]!), line(widths.map((w) => '-'.repeat(w))), ...rows.slice(1).map(line)].join('\n') + '\n'
  );
}

function human(run: ModelRun): string {
  const out = [
    `${excerpt(run.model.name)} on ${excerpt(run.adapter.name)}${run.adapter.software ? " (a CPU adapter: its times are not a GPU's)" : ''}: ${run.gemms.length} GEMM shapes per forward pass${run.measured ? '' : '; A GUESS: nothing was run, each family timed at the roofs of the measured peaks'}`,
    run.peaks
      ? `peaks: ${run.peaks.bandwidthGBs.toPrecision(4)} GB/s, ${Object.entries(run.peaks.ops)
          .map(([roof, v]) => `${roof} ${(v / 1e12).toPrecision(3)} Tops/s`)
          .join(', ')}`
      : 'no measured peaks: no % of roof',
  ];
  run.phases.forEach((p, i) => {
    out.push(
      '',
      p.phase === 'decode' ? 'decode (m = 1):' : `prefill of ${p.m} tokens:`,
      alignedTable(modelRunTable(run, i)).trimEnd(),
      ...phaseNotes(run, i).map((n) => `  no pick: ${n}`),
    );
  });
  for (const n of run.notes) out.push(`note: ${n}`);
  const failed = run.phases.flatMap((p) =>
    p.picks.flatMap(
      (pick) =>
        pick?.candidates
          .filter((c) => c.verdict === 'failed-gate')
          .map((c) => `${c.kernel} at ${pick.gemm.n}x${pick.gemm.k} m=${pick.gemm.rows}`) ?? [],
    ),
  );
  if (failed.length) out.push(`DIFFERS FROM THE ORACLE: ${failed.join(', ')}`);
  return out.join('\n') + '\n';
}

/** How this command opens its GPU (the kit's bundle serves it in its own process). */
export type OpenGpu = (io: CliIo, cmd: string) => Promise<GpuProcess>;

/**
 * The `model` subcommand; `openGpu` is the GPU it asks (the child process by default).
 * @example const code = await modelCommand().run(['--preset', 'llama-3.1-8b', '--m', '512', '--yes'], io);
 */
export const modelCommand = (openGpu: OpenGpu = (io, cmd) => gpuFor(KERNELS, io, cmd)): Subcommand => ({
  name: 'model',
  usage: `mmq model (FILE | --preset ${MODEL_PRESETS.map((p) => p.id).join('|')} [--format ${PASS_FORMATS.join('|')}]) [--m M (1..${MAX_M})] [--decode] [--tune [--population N (${rangeText(FLAG_RANGES.population)})] [--generations N (${rangeText(FLAG_RANGES.generations)})]] [--guess] [--json FILE] [--kt-cache DIR] [--peaks FILE | --no-probe] [--target-ms MS (${rangeText(FLAG_RANGES.batchMs)})] [--batches B (${rangeText(FLAG_RANGES.batches)})] [--yes]`,
  summary: `a model's GEMMs on this WebGPU at prefill (--m) and decode: the family picked for each, ms, % of roof, totals per pass (--yes: past an estimated ${formatMs(CONFIRM_MS)})`,
  async run(args, io) {
    const a = parseArgs('model', args, {
      value: [
        '--preset',
        '--format',
        '--m',
        '--json',
        '--kt-cache',
        '--peaks',
        '--target-ms',
        '--batches',
        '--population',
        '--generations',
      ],
      boolean: ['--decode', '--tune', '--guess', '--no-probe', '--yes'],
    });
    const presetId = a.values.get('--preset');
    if (a.positionals.length > 1) throw new CliError(`mmq model: unexpected argument '${a.positionals[1]!}'`);
    const path = a.positionals[0];
    if ((path === undefined) === (presetId === undefined))
      throw new CliError('mmq model: give a GGUF file or --preset ID (one of them)');
    const formatText = a.values.get('--format');
    if (formatText !== undefined && presetId === undefined)
      throw new CliError("mmq model: --format is for a preset; a file's tensors have their own types");
    const format: PassFormat = choiceValue(PASS_FORMATS, formatText ?? 'Q4_K', '--format');
    const mText = a.values.get('--m');
    const m = mText === undefined ? undefined : intInRange('model', '--m', mText, { min: 1, max: MAX_M });
    const phases: { phase: PassPhase; m: number }[] = [
      ...(m !== undefined ? [{ phase: 'prefill' as const, m }] : []),
      ...(a.booleans.has('--decode') ? [{ phase: 'decode' as const, m: 1 }] : []),
    ];
    if (!phases.length) throw new CliError('mmq model: give --m M (prefill of M tokens) and/or --decode');
    const number = (flag: string, fallback: number, range: { min: number; max: number }) => {
      const v = a.values.get(flag);
      return v === undefined ? fallback : intInRange('model', flag, v, range);
    };
    const timing = {
      targetMs: number('--target-ms', 25, FLAG_RANGES.batchMs),
      batches: number('--batches', 6, FLAG_RANGES.batches),
    };
    // --tune's hunts: the app tuner's search, smaller where asked.
    const evo = {
      ...DEFAULT_EVO,
      population: number('--population', DEFAULT_EVO.population, FLAG_RANGES.population),
      generations: number('--generations', DEFAULT_EVO.generations, FLAG_RANGES.generations),
    };
    const guess = a.booleans.has('--guess');
    const tuneAll = a.booleans.has('--tune');
    const ktDir = a.values.get('--kt-cache');
    const jsonPath = a.values.get('--json');
    const peaksPath = a.values.get('--peaks');
    if (guess && tuneAll)
      throw new CliError('mmq model: --guess measures nothing; --tune measures: not both');
    if (!tuneAll && (a.values.has('--population') || a.values.has('--generations')))
      throw new CliError('mmq model: --population and --generations shape the hunts of --tune');
    if (tuneAll && ktDir === undefined)
      throw new CliError(
        'mmq model: --tune keeps its hunts in --kt-cache DIR (and the next run replays them)',
      );
    if (peaksPath !== undefined && a.booleans.has('--no-probe'))
      throw new CliError('mmq model: --peaks FILE or --no-probe, not both');

    let pass: ForwardPass;
    let model: ModelRun['model'];
    if (presetId !== undefined) {
      const preset = modelPreset(presetId);
      if (!preset)
        throw new CliError(
          `mmq model: no preset '${excerpt(presetId)}' (${MODEL_PRESETS.map((p) => p.id).join(', ')})`,
        );
      pass = presetPass(preset, format);
      model = { name: preset.name, source: 'preset', id: preset.id, format };
    } else {
      const opened = await passOfFile(path!);
      pass = opened.pass;
      model = {
        name: pass.name,
        source: 'gguf',
        file: { name: basename(path!), size: opened.file.fileSize, headerHash: opened.file.headerHash },
      };
    }
    if (!pass.gemms.length) throw new CliError(`mmq model: ${excerpt(pass.name)}: ${pass.notes.join('; ')}`);
    let peaks: Peaks | undefined;
    if (peaksPath !== undefined) {
      const text = await readFile(peaksPath, 'utf8').catch((e: unknown) => {
        throw openError(peaksPath, e);
      });
      let j: unknown;
      try {
        j = JSON.parse(text);
      } catch {
        throw new CliError(
          `mmq model: --peaks ${peaksPath} is not JSON (give \`mmq probe --json\`'s output)`,
        );
      }
      const p = (j as { peaks?: Peaks } | null)?.peaks;
      if (!p || !(p.bandwidthGBs > 0) || typeof p.ops !== 'object' || p.ops === null)
        throw new CliError(
          `mmq model: --peaks ${peaksPath} has no peaks (give \`mmq probe --json\`'s output)`,
        );
      peaks = p;
    }
    if (jsonPath !== undefined) await checkWritable('--json', jsonPath, 'file');
    if (ktDir !== undefined) await checkWritable('--kt-cache', ktDir, 'dir');
    const stored = ktDir !== undefined ? await storedWinners(ktDir) : undefined;
    if (stored)
      io.stderr(
        `mmq model: ${stored.read} stored hunts in ${ktDir} (${stored.winners.size} winners that may serve)\n`,
      );

    // Every input is checked: from here on a GPU is open.
    const gpu = await openGpu(io, 'model');
    let run: ModelRun;
    try {
      const ready = await gpu.request({ type: 'init' });
      if (ready.type !== 'ready') throw new Error(`unexpected '${ready.type}' to init`);
      const caps: AdapterCaps = ready.caps;
      const software = isSoftwareAdapter(caps);
      const started = performance.now();
      const label = `mmq model: ${excerpt(pass.name)}`;
      if (!peaks && !a.booleans.has('--no-probe')) {
        const progress = startProgress(io.stderr, `${label}: measuring the peaks`, progressOptions());
        const r = await gpu
          .request({ type: 'probe' }, (msg) => {
            if (msg.type === 'progress') progress.update(msg.stage, msg.fraction);
          })
          .finally(() => progress.stop());
        if (r.type !== 'probe-result') throw new Error(`unexpected '${r.type}' to probe`);
        peaks = r.result.peaks;
      }
      run = newModelRun(
        pass,
        model,
        {
          name: adapterName(caps),
          deviceId: ready.deviceId,
          vendor: caps.vendor,
          architecture: caps.architecture,
          description: caps.description,
          plane: ready.plane,
          software,
        },
        phases,
        { timing, measured: !guess, startedAt: new Date().toISOString(), ...(peaks ? { peaks } : {}) },
      );
      if (guess) {
        run.phases.forEach((_, i) =>
          phaseGemms(run, i).forEach(
            (g, j) => (run = withPick(run, i, j, guessPick(KERNELS.families, g, caps, peaks))),
          ),
        );
      } else {
        const winners = new Map(stored?.winners);
        // The hunts --tune runs: each tunable family of each GEMM that accepts it here, not stored yet.
        const hunts = new Map<string, RunConfig>();
        if (tuneAll)
          run.phases.forEach((_, i) =>
            phaseGemms(run, i).forEach((g) => {
              for (const f of pickCatalogs(KERNELS.families, g)) {
                if (!f.tuning) continue;
                const base = pickBase(f, g, caps);
                const key = `${ready.deviceId}|${f.tuning.op}|${pickProblem(f, g)}`;
                if (!winners.has(key) && !f.validate(base, caps).length) hunts.set(key, base);
              }
            }),
          );
        const rateOf = (kernel: string, arm: RunConfig['arm']) => rateFor([], kernel, arm, software);
        const picks = estimatePicks(
          KERNELS.families,
          run.phases.flatMap((_, i) => phaseGemms(run, i)),
          caps,
          rateOf,
          timing,
        );
        const huntEst = [...hunts.values()].map((b) =>
          estimateHunt(
            workOf(KERNELS.get(b.kernel), b),
            rateOf(b.kernel, b.arm),
            huntShape(evo, { software }),
          ),
        );
        const est: Estimate = [picks, ...huntEst].reduce((x, y) => ({
          ms: x.ms + y.ms,
          untimedMs: x.untimedMs + y.untimedMs,
          compileMs: x.compileMs + y.compileMs,
          kernelMs: Math.max(x.kernelMs, y.kernelMs),
          basis: x.basis,
        }));
        if (hunts.size)
          est.basis += `; and ${hunts.size} hunts of ${evo.population} x ${evo.generations} configs`;
        guard(
          'model',
          'this model run',
          est,
          a.booleans.has('--yes'),
          'ask for less (--decode alone, a smaller --m, fewer --batches, --guess)',
        );
        let huntNo = 0;
        for (const [key, base] of hunts) {
          huntNo++;
          const family = KERNELS.get(base.kernel);
          const what = `${label}: hunt ${huntNo} of ${hunts.size}, ${family.id} ${key.split('|')[2]!}`;
          const progress = startProgress(io.stderr, what, progressOptions());
          const r = await gpu
            .request({ type: 'tune', base, evo }, (msg) => {
              if (msg.type === 'tune-progress')
                progress.update(`${msg.stage ?? 'searching'}: ${msg.evaluated} configs`, undefined);
            })
            .finally(() => progress.stop());
          if (r.type !== 'tune-done') throw new Error(`unexpected '${r.type}' to tune`);
          const report: TuneReport = r.report;
          const search = searchOf(family, base, caps);
          const keys = tuningKeys(family.controls);
          const kt = toKtCache(report, {
            keys,
            deviceName: adapterName(caps),
            space: searchSpaceValues(
              search.space.enumerate().map((c) => search.apply(c)),
              keys,
            ),
          });
          const file = join(ktDir!, `hunt-${family.id}-${report.problem.replace(/[^\w.=-]+/g, '_')}.kt.json`);
          await writeFile(file, ktCacheText(kt));
          const w = storedPickOf(report);
          if (w) winners.set(key, w);
        }
        for (const [i, p] of run.phases.entries()) {
          const gemms = phaseGemms(run, i);
          const progress = startProgress(
            io.stderr,
            `${label}: ${p.phase === 'decode' ? 'decode' : `prefill of ${p.m}`}`,
            progressOptions(),
          );
          const onMessage = (msg: WorkerResponse) => {
            if (msg.type === 'progress') progress.update(msg.stage, msg.fraction);
            if (msg.type === 'model-progress') run = withPick(run, i, msg.index, msg.result);
          };
          const r = await gpu
            .request(
              {
                type: 'model-run',
                gemms: gemms.map((gemm) => ({ gemm, stored: storedFor(winners, ready.deviceId, gemm) })),
                timing,
              },
              onMessage,
            )
            .finally(() => progress.stop());
          if (r.type !== 'model-run-done') throw new Error(`unexpected '${r.type}' to model-run`);
          r.results.forEach((pick, j) => (run = withPick(run, i, j, pick)));
        }
      }
      run = { ...run, status: 'complete', durationMs: performance.now() - started };
    } finally {
      await gpu.close();
    }
    const caches = modelRunKtCaches(run, KERNELS.families);
    if (jsonPath !== undefined) await writeFile(jsonPath, modelRunJson(run, caches));
    if (ktDir !== undefined && run.measured)
      for (const [name, kt] of Object.entries(caches))
        await writeFile(join(ktDir, `model-${name}`), ktCacheText(kt));
    io.stdout(human(run));
    const differs = run.phases.some((p) =>
      p.picks.some((pick) => pick?.candidates.some((c) => c.verdict === 'failed-gate')),
    );
    return differs ? EXIT.differs : EXIT.ok;
  },
});

export const model = modelCommand();
