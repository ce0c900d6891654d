// Line a bench run's rows up with the clock log bench/h200.sh records (nvidia-smi every SMI_MS, smi.csv):
// for each row, the SM clock samples inside its timed window (BenchRow.timedFrom .. at), so a slow row can
// be told from a slow clock. Rows written before timedFrom existed are skipped.
//
//   npx tsx bench/clocks.ts bench.json smi.csv [--below MHz]   (default 1000)
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { eachFlag } from './args';
import { rowShape, type BenchRow } from './harness';

export interface ClockSample {
  /** ms since the epoch (UTC). */
  t: number;
  smMhz: number;
  /** GPU utilization (%) and memory in use on the whole GPU (MiB), when the log has those columns
   * (bench/h200.sh logs them since commit 92c286a): another process would show in either. */
  utilPct?: number;
  memMiB?: number;
}

/**
 * nvidia-smi's CSV (`--query-gpu=timestamp,clocks.sm,...`): "2026/12/03 22:10:24.028, 345 MHz, ...".
 * The lent machine's clock is UTC. Lines that do not parse (the header, a driver message) are skipped.
 */
export function parseSmiCsv(text: string): ClockSample[] {
  const out: ClockSample[] = [];
  // Optional columns are found by the header's names; a log without them parses as before.
  let utilCol = -1;
  let memCol = -1;
  const numberAt = (cells: string[], i: number) => {
    const v = i >= 0 ? parseFloat(cells[i] ?? '') : NaN;
    return Number.isFinite(v) ? v : undefined;
  };
  for (const line of text.split('\n')) {
    const cells = line.split(',').map((c) => c.trim());
    if (cells[0] === 'timestamp') {
      utilCol = cells.findIndex((c) => c.startsWith('utilization.gpu'));
      memCol = cells.findIndex((c) => c.startsWith('memory.used'));
      continue;
    }
    const m = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?),\s*(\d+) MHz/.exec(line.trim());
    if (!m) continue;
    const utilPct = numberAt(cells, utilCol);
    const memMiB = numberAt(cells, memCol);
    out.push({
      t: Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}Z`),
      smMhz: Number(m[5]),
      ...(utilPct !== undefined ? { utilPct } : {}),
      ...(memMiB !== undefined ? { memMiB } : {}),
    });
  }
  return out;
}

export interface RowClocks {
  id: string;
  shape: string;
  ms: number;
  /** Samples inside the row's timed window; min and median SM MHz over them (undefined when none). */
  samples: number;
  minMhz?: number;
  medianMhz?: number;
  /** Samples under the threshold. */
  below: number;
  /** The most memory in use on the GPU inside the window (MiB), when the log records it. */
  maxMemMiB?: number;
}

/** Each timed row's clock samples (rows without a window are left out). */
export function rowClocks(
  rows: readonly BenchRow[],
  samples: readonly ClockSample[],
  belowMhz: number,
): RowClocks[] {
  const out: RowClocks[] = [];
  for (const r of rows) {
    if (!r.timedFrom || !r.at || r.ms === undefined) continue;
    const from = Date.parse(r.timedFrom);
    const to = Date.parse(r.at);
    const inside = samples.filter((s) => s.t >= from && s.t <= to);
    const mhz = inside.map((s) => s.smMhz).sort((a, b) => a - b);
    const mem = inside.flatMap((s) => (s.memMiB !== undefined ? [s.memMiB] : []));
    out.push({
      id: r.id,
      shape: rowShape(r),
      ms: r.ms,
      samples: mhz.length,
      ...(mhz.length ? { minMhz: mhz[0]!, medianMhz: mhz[mhz.length >> 1]! } : {}),
      below: mhz.filter((v) => v < belowMhz).length,
      ...(mem.length ? { maxMemMiB: Math.max(...mem) } : {}),
    });
  }
  return out;
}

function main(argv: string[]) {
  const files: string[] = [];
  let below = 1000;
  eachFlag(argv, (a, next) => {
    if (a === '--below') below = Number(next());
    else if (a.startsWith('--')) throw new Error(`unknown argument ${a}`);
    else files.push(a);
  });
  if (files.length !== 2 || !(below > 0))
    throw new Error('usage: tsx bench/clocks.ts bench.json smi.csv [--below MHz]');
  const rows = (JSON.parse(readFileSync(files[0]!, 'utf8')) as { rows: BenchRow[] }).rows;
  const samples = parseSmiCsv(readFileSync(files[1]!, 'utf8'));
  const rc = rowClocks(rows, samples, below);
  for (const r of rc)
    console.log(
      `${r.id.padEnd(72)} ${r.shape.padEnd(16)} ${r.ms.toFixed(4).padStart(9)} ms  ${String(r.samples).padStart(3)} samples` +
        (r.minMhz !== undefined ? `  SM ${r.minMhz}-${r.medianMhz} MHz (min-median)` : '') +
        (r.below ? `  ${r.below} under ${below} MHz` : '') +
        (r.maxMemMiB !== undefined ? `  GPU memory in use <= ${r.maxMemMiB} MiB` : ''),
    );
  const hit = rc.filter((r) => r.below > 0);
  const all = samples.filter((s) => s.smMhz < below).length;
  console.log(
    `${rc.length} timed rows, ${rc.reduce((s, r) => s + r.samples, 0)} of ${samples.length} samples inside their windows; ` +
      `${hit.length} rows with a sample under ${below} MHz (${hit.reduce((s, r) => s + r.below, 0)} of the log's ${all})`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
