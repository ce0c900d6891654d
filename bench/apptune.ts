// The app's tuning path on the local adapter (Node + Dawn): the worker's 'tune' and 'autokernel' handlers
// with the worker's evaluator (src/workers/tune), exactly as the Tuner tab and the autokernel call them,
// not the bench's own evaluator. It exists so the app path runs on hardware the CI lacks (subgroup
// matrices): on the H200, `bash bench/h200.sh apptune:--shapes+2048,4096,4096`.
//
//   npx tsx bench/apptune.ts [--json out.json] [--op mmq_q4k_coopmat|mmq_q4k_tile] [--shapes m,n,k;...]
//                            [--population P] [--generations G] [--iters N] [--repeats R] [--banks B]
//                            [--seed S] [--dawn-toggles T1,T2]
//
// Per shape it prints the hunt's winner, the incumbent's and the winner's ms, what failed and why, then
// the autokernel's replay of the winner (served config, gate verdict, ms) and of an empty cache.
import { writeFileSync } from 'node:fs';
import type { AdapterCaps } from '../src/kernels/gpu/caps';
import { finalsWallMs } from '../src/kernels/tune/evolution';
import { handleTuneRequest } from '../src/workers/tune';
import type { EvolutionParams, TuneOp, TuneReport, WorkerResponse } from '../src/workers/protocol';
import { eachFlag } from './args';
import { adapterInfoRecord, dawnFlags, openBenchGpu } from './dawn';
import { fmt as fmtFixed, parseShapes, type Shape } from './harness';

/** ms as the log prints it. */
const fmt = (ms: number | undefined) => fmtFixed(ms, 4);

interface Options extends AppTuneOptions {
  json?: string;
  extraToggles?: string;
}

function parseArgs(argv: string[]): Options {
  const opts: Options = {
    op: 'mmq_q4k_coopmat',
    shapes: [{ m: 2048, n: 4096, k: 4096 }],
    // The bench's hunt size (16 x 4), its timed iterations, and the app's cold banks.
    evo: { population: 16, generations: 4, seed: 0x5eed, measureIters: 10, repeats: 3, banks: 4 },
  };
  eachFlag(argv, (a, next) => {
    const int = () => {
      const v = Number(next());
      if (!Number.isInteger(v) || v < 1) throw new Error(`${a} needs an integer >= 1`);
      return v;
    };
    if (a === '--json') opts.json = next();
    else if (a === '--op') {
      const op = next();
      if (op !== 'mmq_q4k_coopmat' && op !== 'mmq_q4k_tile') throw new Error(`--op: unknown op ${op}`);
      opts.op = op;
    } else if (a === '--shapes') opts.shapes = parseShapes(next());
    else if (a === '--population') opts.evo.population = int();
    else if (a === '--generations') opts.evo.generations = int();
    else if (a === '--iters') opts.evo.measureIters = int();
    else if (a === '--repeats') opts.evo.repeats = int();
    else if (a === '--banks') opts.evo.banks = int();
    else if (a === '--seed') opts.evo.seed = int();
    else if (a === '--dawn-toggles') opts.extraToggles = next();
    else throw new Error(`unknown argument ${a}`);
  });
  return opts;
}

type Reply = Extract<WorkerResponse, { type: 'autokernel-result' }>;

export interface ShapeResult {
  shape: Shape;
  report?: TuneReport;
  error?: string;
  /** The autokernel with the hunt's winner cached, and with nothing cached (the incumbent). */
  autokernel?: { winner?: Reply; empty?: Reply; error?: string };
}

export interface AppTuneOptions {
  op: TuneOp;
  shapes: Shape[];
  evo: EvolutionParams;
}

export interface AppTuneResult {
  date: string;
  op: TuneOp;
  evo: EvolutionParams;
  adapterInfo?: Record<string, unknown>;
  results: ShapeResult[];
}

/**
 * Hunt each shape through the worker's handler, then replay the winner and a cold cache through its
 * autokernel; `onProgress` gets the result so far after each shape.
 * @example const r = await runAppTune(device, caps, { op: 'mmq_q4k_coopmat', shapes, evo }, console.log);
 */
export async function runAppTune(
  device: GPUDevice,
  caps: AdapterCaps,
  opts: AppTuneOptions,
  log: (line: string) => void = () => {},
  onProgress?: (r: AppTuneResult) => void,
): Promise<AppTuneResult> {
  let id = 0;
  // One request through the handler, its replies collected (progress logged as it comes).
  const call = async (req: Parameters<typeof handleTuneRequest>[1]) => {
    const msgs: WorkerResponse[] = [];
    await handleTuneRequest({ device, caps, isCancelled: () => false }, req, (m) => {
      msgs.push(m);
      if (m.type === 'tune-progress' && m.entry)
        log(
          `  [${m.evaluated}] g${m.generation} ${m.entry.config} ${m.entry.verdict} ${fmt(m.entry.ms)} ms${m.entry.reason ? ` (${m.entry.reason})` : ''}`,
        );
    });
    return msgs;
  };
  const out: AppTuneResult = { date: new Date().toISOString(), op: opts.op, evo: opts.evo, results: [] };
  for (const shape of opts.shapes) {
    const { m, n, k } = shape;
    log(`\n== ${opts.op} ${m} x ${n} x ${k} ==`);
    const r: ShapeResult = { shape };
    out.results.push(r);
    const t0 = performance.now();
    const msgs = await call({ type: 'tune', id: ++id, op: opts.op, m, n, k, evo: opts.evo });
    const done = msgs.at(-1);
    if (done?.type !== 'tune-done') {
      r.error = done?.type === 'error' ? `${done.kind}: ${done.message}` : `no report (${done?.type})`;
      log(`[apptune] hunt failed: ${r.error}`);
      onProgress?.(out);
      continue;
    }
    const rep = done.report;
    r.report = rep;
    const count = (v: string) => rep.entries.filter((e) => e.verdict === v).length;
    log(
      `[apptune] ${m}x${n}x${k}: winner ${rep.winner || 'none'} ${fmt(rep.bestMs)} ms, incumbent ${fmt(rep.incumbentMs)} ms` +
        ` (x${rep.incumbentMs ? (rep.incumbentMs / rep.bestMs).toFixed(2) : '-'}); ${rep.entries.length} configs:` +
        ` ${count('measured')} measured, ${count('failed-gate')} failed the gate, ${count('rejected')} rejected;` +
        ` arm ${rep.arm ?? '-'}, worst rel ${rep.worstRel?.toExponential(2) ?? '-'}, gated rows ${rep.gatedRows ?? 'all'},` +
        ` ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    if (rep.finals?.length) {
      const wall = finalsWallMs(rep.finals);
      log(
        `  ${rep.finals.length} finalists re-timed in ${wall === undefined ? '-' : (wall / 1000).toFixed(1)} s: ` +
          rep.finals
            .map(
              (f) =>
                `${f.config} ${fmt(f.ms)} (search ${fmt(f.searchMs)}, ${((f.wallMs ?? 0) / 1000).toFixed(2)} s)`,
            )
            .join(', '),
      );
    }
    for (const e of rep.entries.filter((x) => x.verdict !== 'measured'))
      log(`  not measured: ${e.config} ${e.verdict}: ${e.reason ?? ''}`);
    // The autokernel replays the winner (as the app does with the stored run), then serves a cold cache.
    r.autokernel = {};
    try {
      for (const [key, cachedWinner] of [
        ['winner', rep.winner || undefined],
        ['empty', undefined],
      ] as const) {
        const a = (
          await call({
            type: 'autokernel',
            id: ++id,
            op: opts.op,
            m,
            n,
            k,
            ...(cachedWinner ? { cachedWinner } : {}),
          })
        )[0];
        if (a?.type !== 'autokernel-result')
          throw new Error(a?.type === 'error' ? a.message : `autokernel replied ${a?.type}`);
        r.autokernel[key] = a;
        log(
          `[apptune] autokernel (${key} cache): served ${a.served} ${a.staging ?? ''} ${fmt(a.msPerDispatch)} ms, gate ${a.verdict.pass ? 'pass' : 'FAIL'} rel ${a.verdict.relToMax.toExponential(2)}${a.fallback ? `; ${a.fallback}` : ''}`,
        );
      }
    } catch (e) {
      r.autokernel.error = e instanceof Error ? e.message : String(e);
      log(`[apptune] autokernel failed: ${r.autokernel.error}`);
    }
    onProgress?.(out);
  }
  return out;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const flags = dawnFlags(opts.extraToggles ? { extra: opts.extraToggles } : {});
  const gpu = await openBenchGpu(flags);
  const { device, caps } = gpu;
  console.log(
    `[apptune] ${caps.vendor} ${caps.architecture} ${caps.description}; Dawn flags ${flags.join(' ')}`,
  );
  const adapterInfo = adapterInfoRecord(gpu.adapter);
  const save = (r: AppTuneResult) =>
    opts.json && writeFileSync(opts.json, JSON.stringify({ ...r, adapterInfo }, null, 1));
  save(await runAppTune(device, caps, opts, (l) => console.log(l), save));
  device.destroy();
}

// Run as a script (not when a test imports runAppTune).
if (process.argv[1] && /apptune\.(ts|mjs)$/.test(process.argv[1]))
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error('apptune failed:', e);
      process.exit(1);
    },
  );
