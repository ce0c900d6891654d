// Markdown tables for docs/benchmarks.md and README.md from bench JSONs,
// formatted with the same digits the bench's own table prints, so the docs hold no number the bench did
// not print.
//   npx tsx bench/report.ts bench.json [more-bench.json ...]     the full report on stdout
//   npx tsx bench/report.ts --write docs/benchmarks.md --readme README.md bench.json ...
//     rewrites, in place, the block between `<!-- bench-report:begin tables -->` and
//     `<!-- bench-report:end tables -->` of the --write file (renderDocTables) and the `summary` block of
//     the --readme file (renderSummary); nothing outside the markers changes, and a second run changes
//     nothing.
// Several bench files (one H200 command holds ~6 shapes in its 10 minutes): the first gives the headline
// and the tuning; each later file adds the configs (at a shape, or an MoE case) no earlier file has.
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { eachFlag } from './args';
import { familyWins, headline } from './derive';
import { fmt, headlineLines, moeRatioLines } from './format';
import type { BenchResult, BenchRow } from './result';
import { LLAMA_FAMILY, llamaRatioLines, llamaRatios, llamaTable } from './llamaPeer';
import { CPU_BOUND_MARGIN, ORT_FAMILY, ortRatioLines, ortRatios, peerTable, usableOrt } from './peers';

const ok = (r: BenchRow) => r.ms !== undefined && r.correctness?.pass === true;
const shapeOf = (r: BenchRow) => `${r.m}x${r.n}x${r.k}`;
/** The fastest passing dense row at shape `s` that `pick` accepts. */
const fastestAt = (rows: BenchRow[], s: string, pick: (r: BenchRow) => boolean) =>
  rows
    .filter((r) => ok(r) && !r.experts && shapeOf(r) === s && pick(r))
    .reduce<BenchRow | undefined>((b, r) => (!b || r.ms! < b.ms! ? r : b), undefined);
/** The fastest passing quantized GEMM at shape `s` (any family but the f32 baseline): the row a shape's
 * torch ratio is about, so the merge takes torch from its command and the ratio table divides by it. */
const bestQuantizedAt = (rows: BenchRow[], s: string) => fastestAt(rows, s, (r) => r.role !== 'baseline');

/** The fastest passing row of each family at each dense shape. */
export function bestPerFamily(rows: BenchRow[]): string[] {
  // The families in the files, in the order they first appear (the baseline last).
  const dense = rows.filter((r) => !r.experts);
  const fams = [
    ...new Set(
      [...dense.filter((r) => r.role !== 'baseline'), ...dense.filter((r) => r.role === 'baseline')].map(
        (r) => r.family,
      ),
    ),
  ];
  const shapes = [...new Set(rows.filter((r) => !r.experts).map(shapeOf))];
  const out = [`| m x n x k | ${fams.join(' | ')} |`, `| --- | ${fams.map(() => '---').join(' | ')} |`];
  for (const s of shapes) {
    const cells = fams.map((f) => {
      const best = fastestAt(rows, s, (r) => r.family === f);
      return best ? `${fmt(best.ms, 4)} ms, ${fmt(best.tops, 1)} TOPS (${best.arm} ${best.tile})` : '-';
    });
    out.push(`| ${s} | ${cells.join(' | ')} |`);
  }
  return out;
}

/**
 * The pick across families at each shape and weight format: the family whose fastest passing row won, by
 * how much over the next family, and the others' times (what `mmq model` and the app's model view pick per
 * GEMM, from the bench's own rows).
 */
export function familyWinTable(rows: BenchRow[]): string[] {
  const out = [
    '| m x n x k (experts) | weights | winner (its fastest config) | ms | next family | its ms | margin | the others (ms) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const w of familyWins(rows)) {
    const [win, next, ...rest] = w.ranked;
    out.push(
      `| ${w.shape} | ${w.weights} | ${win!.family} (${win!.id}) | ${fmt(win!.ms, 4)} | ${next?.family ?? '-'} | ${next ? fmt(next.ms, 4) : '-'} | ${w.margin !== undefined ? `${fmt(w.margin, 2)}x` : '-'} | ${rest.map((r) => `${r.family} ${fmt(r.ms, 4)}`).join(', ') || '-'} |`,
    );
  }
  return out;
}

/** Every passing row at one shape: the arms (b), the tuned-vs-incumbent (c) and the f32 ratio (a). */
export function rowsAt(rows: BenchRow[], shape: string): string[] {
  const out = [
    '| kernel / arm / tile (WM,WN,RM,RN) | role | ms | TOPS | weight GB/s | % datasheet peak (int8, f16 or f32 by kernel) | x f32 | x scalar | x incumbent | rel_to_max |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows.filter((x) => ok(x) && !x.experts && shapeOf(x) === shape)) {
    out.push(
      `| ${r.id} | ${r.role} | ${fmt(r.ms, 4)} | ${fmt(r.tops, 1)} | ${fmt(r.weightGBs, 0)} | ${r.peakFraction === undefined ? '-' : fmt(100 * r.peakFraction, 1)} | ${fmt(r.vsF32, 2)} | ${fmt(r.vsScalar, 2)} | ${fmt(r.vsIncumbent, 2)} | ${r.correctness!.relToMax.toExponential(1)} |`,
    );
  }
  return out;
}

export function moeRows(rows: BenchRow[]): string[] {
  const out = [
    '| experts | tokens (slots) | n x k | arm | ms | TOPS | used-expert weight GB/s | rel_to_max |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows.filter((x) => ok(x) && x.experts && x.role !== 'baseline')) {
    out.push(
      `| ${r.experts} | ${r.m / (r.topk ?? 1)} (${r.m}) | ${r.n}x${r.k} | ${r.arm} | ${fmt(r.ms, 4)} | ${fmt(r.tops, 1)} | ${fmt(r.weightGBs, 0)} | ${r.correctness!.relToMax.toExponential(1)} |`,
    );
  }
  return out;
}

interface TorchIntMm {
  m: number;
  n: number;
  k: number;
  layout: string;
  ms: number;
  tops?: number;
}

/** torch._int_mm's fastest layout at each shape of a torch_baseline.py JSON. */
function torchBest(torch: unknown): Map<string, TorchIntMm> {
  const out = new Map<string, TorchIntMm>();
  const list = (torch as { int_mm?: TorchIntMm[] } | undefined)?.int_mm ?? [];
  for (const t of list) {
    const key = `${t.m}x${t.n}x${t.k}`;
    const cur = out.get(key);
    if (!cur || t.ms < cur.ms) out.set(key, t);
  }
  return out;
}

/** torch._int_mm at a shape, and the file (command) it came from. */
/** torch at a shape, from the command (file) of `row`: the fastest quantized GEMM of a command that has torch there. */
type TorchAt = TorchIntMm & { from: string; row: BenchRow };

/** Best passing quantized GEMM (any family but the f32 baseline) per dense shape, against torch._int_mm. */
export function versusTorch(rows: BenchRow[], torch: Map<string, TorchAt>) {
  const out = [
    '| m x n x k | best WebGPU quantized GEMM | ms | passes (ms) | torch._int_mm ms (layout) | ratio | torch from |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const s of [...new Set(rows.filter((r) => !r.experts).map(shapeOf))]) {
    const t = torch.get(s);
    const best = t?.row ?? bestQuantizedAt(rows, s);
    if (!best) continue;
    const passes = best.passMs?.map((v) => fmt(v, 4)).join(' + ') ?? '-';
    out.push(
      `| ${s} | ${best.id} | ${fmt(best.ms, 4)} | ${passes} | ${t ? `${fmt(t.ms, 4)} (${t.layout})` : '-'} | ${t ? fmt(t.ms / best.ms!, 3) : '-'} | ${t?.from ?? '-'} |`,
    );
  }
  return out;
}

/** torch_baseline.py's numbers as it printed them: both _int_mm layouts and the f16 matmul, per shape. */
export function torchTable(torch: unknown): string[] {
  const t = torch as {
    int_mm?: (TorchIntMm & { tops: number; ms_call?: number })[];
    f16_mm?: { m: number; n: number; k: number; ms: number; tflops: number; ms_call?: number }[];
    copy?: { bytes: number; ms: number; gbs_read_plus_write: number };
  };
  // Files from 2026-12-04 on time torch as the bench times a row and keep the one-call-at-a-time figure
  // (ms_call) next to it; older files have only the latter, as `ms`.
  const calls = t.int_mm?.some((x) => x.ms_call !== undefined) ?? false;
  const out = calls
    ? [
        '| m x n x k | `_int_mm` B [k,n] ms | `_int_mm` B = W^T ms | TOPS (W^T) | W^T one call at a time ms | f16 matmul ms | TFLOP/s | f16 one call at a time ms |',
        '| --- | --- | --- | --- | --- | --- | --- | --- |',
      ]
    : [
        '| m x n x k | `_int_mm` B [k,n] ms | `_int_mm` B = W^T ms | TOPS (W^T) | f16 matmul ms | TFLOP/s |',
        '| --- | --- | --- | --- | --- | --- |',
      ];
  for (const f of t.f16_mm ?? []) {
    const at = (layout: string) =>
      t.int_mm?.find((x) => x.m === f.m && x.n === f.n && x.k === f.k && x.layout === layout);
    const kn = at('kn');
    const nk = at('nk_t');
    const cells = calls
      ? [kn?.ms, nk?.ms, nk?.tops, nk?.ms_call, f.ms, f.tflops, f.ms_call]
      : [kn?.ms, nk?.ms, nk?.tops, f.ms, f.tflops];
    const digits = calls ? [4, 4, 1, 4, 4, 1, 4] : [4, 4, 1, 4, 1];
    out.push(`| ${f.m}x${f.n}x${f.k} | ${cells.map((v, i) => fmt(v, digits[i])).join(' | ')} |`);
  }
  if (t.copy)
    out.push(
      '',
      `Device copy: ${fmt(t.copy.bytes / 1e9, 2)} GB in ${fmt(t.copy.ms, 3)} ms, ${fmt(t.copy.gbs_read_plus_write, 0)} GB/s (read + write).`,
    );
  return out;
}

/** A parsed JSON file and where it came from. */
export interface ReportFile {
  p: string;
  j: Record<string, unknown>;
}

/**
 * Merge bench runs: the first gives the headline and the tuning; each later one adds the (shape, family)
 * pairs (and MoE expert counts) no earlier one has. torch._int_mm for a shape comes from the command of
 * the shape's fastest passing quantized GEMM when that command ran torch (the same-command rule), else
 * from the first command that ran torch at the shape. `fileOf` names the file each merged row came from,
 * `torchJson` holds each file's torch_baseline.py JSON (by file name).
 */
export function mergeBenches(benches: ReportFile[]) {
  if (!benches.length) throw new Error('no bench JSON (with rows) among the arguments');
  // A config at a shape (an MoE case) is taken from the first file that has it.
  const keyOf = (r: BenchRow) => `${shapeOf(r)} e${r.experts ?? 0} ${r.id}`;
  const name = (p: string) => p.split('/').pop()!;
  const b = { ...(benches[0]!.j as unknown as BenchResult) };
  const have = new Set<string>();
  const fileOf = new Map<BenchRow, string>();
  const torchOf = new Map<string, Map<string, TorchIntMm>>();
  const torchJson = new Map<string, unknown>();
  b.rows = [];
  const measured = new Set<string>();
  for (const { p, j } of benches) {
    // A later file adds what no earlier file measured (one that failed, erred or was skipped is replaced).
    const more = (j as unknown as BenchResult).rows.filter((r) => !measured.has(keyOf(r)));
    const replaced = new Set(more.map(keyOf));
    b.rows = b.rows.filter((r) => !replaced.has(keyOf(r)) || !have.has(keyOf(r)) || ok(r));
    // Marked after the whole file is filtered: a file may hold a config at a shape several times.
    for (const r of more) {
      fileOf.set(r, name(p));
      have.add(keyOf(r));
      if (ok(r)) measured.add(keyOf(r));
    }
    b.rows = [...b.rows.filter((r) => !(replaced.has(keyOf(r)) && !ok(r))), ...more];
    torchOf.set(name(p), torchBest((j as unknown as BenchResult).torch));
    torchJson.set(name(p), (j as unknown as BenchResult).torch);
  }
  const torch = new Map<string, TorchAt>();
  for (const s of new Set(b.rows.filter((r) => !r.experts).map(shapeOf))) {
    // A ratio pairs two rows of one command: the fastest row of a file that timed torch at this shape.
    const best = bestQuantizedAt(
      b.rows.filter((r) => torchOf.get(fileOf.get(r) ?? '')?.has(s)),
      s,
    );
    const from = best && fileOf.get(best);
    if (best && from) torch.set(s, { ...torchOf.get(from)!.get(s)!, from, row: best });
  }
  return { b, torch, fileOf, torchJson };
}

/** The bench adapter's device (adapterInfo.device, files from 2026-12-03 on) of a bench JSON. */
const deviceOf = (j: Record<string, unknown>) => (j.adapterInfo as { device?: string } | undefined)?.device;

/** How the llama.cpp table's figures were taken, as the report says it under the table's heading. */
const LLAMA_METHOD = `Each op repeated in one graph as test-backend-ops perf repeats it (cold weight banks, every op quantizing its own activations), wall time per op of the fastest compute (its mean beside it) and ggml-vulkan's perf logger's GPU time per op; a row whose wall time exceeds that GPU time by over ${100 * CPU_BOUND_MARGIN}% is CPU-bound and makes no wall ratio. Ratios are peer ms / our ms (> 1: ours is faster).`;

/** What renderReport prints beyond the headline and the per-family, per-shape and MoE tables. */
export interface ReportOptions {
  /** Shapes (MxNxK) whose every passing config gets a table; default the three 4096x4096 shapes. */
  everyConfigAt?: readonly string[];
  /** torch_baseline.py tables: every command's (default) or only the first command's. */
  torchTables?: 'every' | 'first';
}

/** The markdown report of several bench runs, as `tsx bench/report.ts FILES` prints it. */
export function renderReport(files: ReportFile[], opts: ReportOptions = {}): string {
  const benches = files.filter((f) => Array.isArray(f.j.rows));
  const { b, torch } = mergeBenches(benches);
  // Recomputed from the merged rows and the headline command's torch, so older files get every line.
  const h = b.headline && headline(b, b.headline.shape);
  const lines: string[] = [
    `<!-- generated by bench/report.ts from ${benches.map((f) => `${f.p} (${String(f.j.date)})`).join(', ')} -->`,
  ];
  if (h)
    lines.push(
      '',
      `Headline shape ${h.shape.m}x${h.shape.n}x${h.shape.k}:`,
      '',
      ...headlineLines(h).map((l) => `- ${l}`),
    );
  lines.push('', '### Fastest passing config per family', '', ...bestPerFamily(b.rows));
  lines.push(
    '',
    '### Best quantized GEMM per shape: which family won, and by how much over the next family',
    '',
    ...familyWinTable(b.rows),
  );
  if (torch.size)
    lines.push(
      '',
      '### Best quantized GEMM per shape against torch._int_mm (its fastest layout)',
      '',
      ...versusTorch(b.rows, torch),
    );
  for (const s of opts.everyConfigAt ?? ['2048x4096x4096', '512x4096x4096', '32x4096x4096']) {
    if (b.rows.some((r) => shapeOf(r) === s))
      lines.push('', `### Every config at ${s}`, '', ...rowsAt(b.rows, s));
  }
  const ortTorch = benches.find(
    ({ j }) => j.torch && (j.rows as BenchRow[]).some((r) => r.family === ORT_FAMILY),
  )?.j.torch;
  const peers = peerTable(b.rows, ortTorch);
  if (peers.length)
    lines.push(
      '',
      '### Peers: ONNX Runtime WebGPU MatMulNBits (4-bit, block 32) and torch f16, same command',
      '',
      `ORT's runs queued back to back (outputs on the GPU, one sync), its profiler's GPU time beside them; a row whose wall time exceeds that GPU time by over ${100 * CPU_BOUND_MARGIN}% measured ORT's host side and makes no ratio, nor does a row from before pipelining. Ratios are peer ms / our ms (> 1: ours is faster).`,
      '',
      ...peers,
      '',
      ...ortRatioLines(ortRatios(b.rows), ortTorch).map((l) => `- ${l}`),
    );
  // llama.cpp's rows against ours of the same command (file): never merged across commands.
  for (const { p, j } of benches) {
    const rows = j.rows as BenchRow[];
    if (!rows.some((r) => r.family === LLAMA_FAMILY)) continue;
    lines.push(
      '',
      `### Peers: llama.cpp Vulkan (ggml_mul_mat / ggml_mul_mat_id on Q4_K), the command of ${p.split('/').pop()!}`,
      '',
      LLAMA_METHOD,
      '',
      ...llamaTable(rows, deviceOf(j)),
      '',
      ...llamaRatioLines(llamaRatios(rows, deviceOf(j))).map((l) => `- ${l}`),
    );
  }
  if (b.rows.some((r) => r.experts)) {
    const moeTorch = benches.find(({ j }) => (j.rows as BenchRow[]).some((r) => r.experts))?.j.torch;
    lines.push(
      '',
      '### MoE (top-2; the int8 and f16 routes)',
      '',
      ...moeRows(b.rows),
      '',
      ...moeRatioLines(b.rows, moeTorch).map((l) => `- ${l}`),
    );
  }
  lines.push('', '### Tuning at the headline shape (Evolution hunt, sampled-oracle gate)', '');
  for (const t of b.tuning) {
    lines.push(
      `- ${t.family}/${t.arm}: winner ${t.winner ?? 'none'} (${t.evaluated} evaluated, ${t.failedGate} failed the gate, ${t.rejected} rejected)`,
    );
  }
  const withTorch = benches.filter(({ j }) => j.torch);
  for (const { p, j } of opts.torchTables === 'first' ? withTorch.slice(0, 1) : withTorch)
    lines.push(
      '',
      `### torch baselines (bench/torch_baseline.py, the command of ${p.split('/').pop()!})`,
      '',
      ...torchTable(j.torch),
    );
  const failed = b.rows.filter((r) => r.error || (r.correctness && !r.correctness.pass));
  lines.push(
    '',
    `${b.rows.length} rows; ${b.rows.filter(ok).length} measured and passing; ${failed.length} failed; ${b.rows.filter((r) => r.skipped).length} skipped.`,
  );
  return lines.join('\n');
}

/**
 * docs/benchmarks.md's peers block: per command (file), the peer table and its ratio lines against torch and
 * ORT of that same command, and each MoE case against torch's loop and _grouped_mm of its command. Files
 * are never merged here: a ratio pairs two rows of one command.
 */
export function renderPeers(files: ReportFile[]): string {
  const lines = [
    `<!-- generated by bench/report.ts from ${files.map((f) => `${f.p} (${String(f.j.date)})`).join(', ')} -->`,
  ];
  for (const { p, j } of files) {
    const rows = j.rows as BenchRow[];
    const info = (j.adapterInfo ?? {}) as { device?: string };
    const head = `#### ${p.split('/').pop()!} (${info.device || 'the adapter'}, ${String(j.date).slice(0, 10)})`;
    const peers = peerTable(rows, j.torch);
    const dense = peers.length
      ? ['', ...peers, '', ...ortRatioLines(ortRatios(rows), j.torch).map((l) => `- ${l}`)]
      : [];
    const moe = rows.some((r) => r.experts) ? ['', ...moeRatioLines(rows, j.torch).map((l) => `- ${l}`)] : [];
    const llama = llamaTable(rows, deviceOf(j));
    const llamaLines = llama.length
      ? ['', ...llama, '', ...llamaRatioLines(llamaRatios(rows, deviceOf(j))).map((l) => `- ${l}`)]
      : [];
    lines.push('', head, ...dense, ...moe, ...llamaLines);
  }
  return lines.join('\n');
}

/**
 * docs/benchmarks.md's generated tables: the report with one every-config table (the headline shape's)
 * and the headline command's torch table; the full report (every command's torch, more shapes) stays a
 * `tsx bench/report.ts FILES` away.
 * @example renderDocTables(files).split('\n')[0]; // '<!-- generated by bench/report.ts from ... -->'
 */
export function renderDocTables(files: ReportFile[]): string {
  const benches = files.filter((f) => Array.isArray(f.j.rows));
  const { b } = mergeBenches(benches);
  const s = b.headline?.shape;
  return renderReport(files, {
    everyConfigAt: s ? [`${s.m}x${s.n}x${s.k}`] : [],
    torchTables: 'first',
  });
}

/** The README's benchmark summary: the headline shape's rows and every shape's torch ratio, each set
 * against torch._int_mm from its own command (the file it came from). At most 16 lines.
 * @example renderSummary(files).split('\n')[0]; // '| 2048x4096x4096 on nvidia-h200, 2026-12-04 | ms | ...'
 */
export function renderSummary(files: ReportFile[]): string {
  const benches = files.filter((f) => Array.isArray(f.j.rows));
  const { b, torch, fileOf, torchJson } = mergeBenches(benches);
  const at = b.headline?.shape;
  if (!at) throw new Error(`${benches[0]!.p}: no headline shape to summarize`);
  const s = `${at.m}x${at.n}x${at.k}`;
  // adapterInfo since 2026-12-03; older files (and test fixtures) may lack both.
  const info = (b.adapterInfo ?? {}) as { device?: string };
  const device =
    info.device || (b.adapter as BenchResult['adapter'] | undefined)?.description || 'the adapter';
  const torchIn = (file: string | undefined) => (file ? torchBest(torchJson.get(file)).get(s) : undefined);
  const f16In = (file: string | undefined) =>
    (
      torchJson.get(file ?? '') as {
        f16_mm?: { m: number; n: number; k: number; ms: number; tflops: number }[];
      }
    )?.f16_mm?.find((t) => t.m === at.m && t.n === at.n && t.k === at.k);
  const row = (label: string, r: BenchRow | undefined) => {
    if (!r) return [];
    const file = fileOf.get(r);
    const t = torchIn(file);
    const ms =
      r.passMs && r.passMs.length > 1
        ? `${fmt(r.ms, 4)} (${r.passMs.map((v) => fmt(v, 4)).join(' + ')})`
        : fmt(r.ms, 4);
    return [
      `| ${label}: ${r.id} | ${ms} | ${fmt(r.tops, 1)} | ${t ? fmt(t.ms / r.ms!, 3) : '-'} | ${file} |`,
    ];
  };
  const best = bestQuantizedAt(b.rows, s);
  const bestFile = best && fileOf.get(best);
  const t = torchIn(bestFile);
  const f16 = f16In(bestFile);
  // No "generated by" line: the README's markers say that, and its summary has 25 lines in all.
  const lines = [
    `| ${s} on ${device}, ${String(b.date).slice(0, 10)} | ms | TOPS | torch._int_mm ms / this | command |`,
    '| --- | --- | --- | --- | --- |',
    ...row('best quantized GEMM', best),
    ...row(
      'best int8 MMQ',
      fastestAt(b.rows, s, (r) => r.role !== 'baseline' && r.arithmetic === 'int8'),
    ),
    ...row(
      'f32 GEMM baseline',
      fastestAt(b.rows, s, (r) => r.role === 'baseline' && r.weights === 'f32'),
    ),
    ...row('ONNX Runtime MatMulNBits (pipelined, GPU-checked)', usableOrt(b.rows, s)),
  ];
  if (t)
    lines.push(
      `| torch._int_mm (B layout ${t.layout}) | ${fmt(t.ms, 4)} | ${fmt(t.tops, 1)} | 1.000 | ${bestFile} |`,
    );
  if (f16)
    lines.push(
      `| torch f16 matmul (TFLOP/s) | ${fmt(f16.ms, 4)} | ${fmt(f16.tflops, 1)} | - | ${bestFile} |`,
    );
  // Every dense shape's best quantized GEMM against torch._int_mm from its command, m down, n x k across.
  const shapes = [...torch.keys()].map((k) => k.split('x').map(Number) as [number, number, number]);
  const ms = [...new Set(shapes.map(([m]) => m))].sort((x, y) => y - x);
  const nks = [...new Set(shapes.map(([, n, k]) => `${n}x${k}`))];
  lines.push(
    '',
    `| best quantized GEMM: torch._int_mm ms / its ms (ORT's / its), same command | ${nks.map((nk) => `n x k = ${nk}`).join(' | ')} |`,
    `| --- | ${nks.map(() => '---').join(' | ')} |`,
  );
  for (const m of ms) {
    const cells = nks.map((nk) => {
      const key = `${m}x${nk}`;
      const tt = torch.get(key);
      const r = tt?.row;
      // ORT against our fastest row of ORT's own command; a CPU-bound or unchecked ORT row makes no ratio.
      const ort = usableOrt(b.rows, key);
      const mine =
        ort &&
        bestQuantizedAt(
          b.rows.filter((x) => fileOf.get(x) === fileOf.get(ort)),
          key,
        );
      return r && tt
        ? `${fmt(tt.ms / r.ms!, 3)}${ort && mine ? ` (${fmt(ort.ms! / mine.ms!, 2)})` : ''}`
        : '-';
    });
    lines.push(`| m = ${m} | ${cells.join(' | ')} |`);
  }
  // MoE: each case's fastest row per arithmetic (the int8 and f16 routes) and the dense plan on its rows.
  const moe = b.rows.filter((r) => r.experts && ok(r));
  const cases = [...new Set(moe.map((r) => `${r.experts}x${r.m / (r.topk ?? 1)}`))];
  if (cases.length) {
    const best = (rows: BenchRow[]) =>
      rows.reduce<BenchRow | undefined>((a, r) => (!a || r.ms! < a.ms! ? r : a), undefined);
    lines.push(
      '',
      '| MoE top-2 (experts x tokens), ms | int8 route | f16 route | dense plan at m = slots |',
      '| --- | --- | --- | --- |',
    );
    for (const c of cases) {
      const rows = moe.filter((r) => `${r.experts}x${r.m / (r.topk ?? 1)}` === c);
      const r0 = rows[0]!;
      const dense = fastestAt(b.rows, `${r0.m}x${r0.n}x${r0.k}`, (r) => r.role !== 'baseline');
      const cell = (r: BenchRow | undefined) => (r ? fmt(r.ms, 4) : '-');
      lines.push(
        `| ${c}, ${r0.n}x${r0.k} | ${cell(best(rows.filter((r) => r.arithmetic === 'int8')))} | ${cell(best(rows.filter((r) => r.arithmetic === 'f16')))} | ${cell(dense)} |`,
      );
    }
  }
  return lines.join('\n');
}

/** The marker comments around a generated block named `name` (e.g. 'tables', 'summary'). */
export function blockMarkers(name: string): readonly [string, string] {
  return [`<!-- bench-report:begin ${name} -->`, `<!-- bench-report:end ${name} -->`];
}

/**
 * `text` with everything between the `name` block's begin and end markers replaced by `body` between
 * blank lines (the markers and everything outside them kept byte for byte). Throws, naming `where`, when
 * the begin marker is missing or repeated, or no end marker follows it.
 * @example replaceBlock('a\n<!-- bench-report:begin t -->\nold\n<!-- bench-report:end t -->\n', 't', 'new')
 *   // 'a\n<!-- bench-report:begin t -->\n\nnew\n\n<!-- bench-report:end t -->\n'
 */
export function replaceBlock(text: string, name: string, body: string, where = 'the file'): string {
  const [begin, end] = blockMarkers(name);
  const i = text.indexOf(begin);
  if (i < 0)
    throw new Error(`${where}: no '${begin}' marker; put it and '${end}' where the generated block goes`);
  if (text.indexOf(begin, i + begin.length) >= 0) throw new Error(`${where}: '${begin}' appears twice`);
  const j = text.indexOf(end, i + begin.length);
  if (j < 0) throw new Error(`${where}: '${begin}' has no '${end}' after it`);
  // A blank line on each side: prettier keeps one between a markdown block (a table) and the marker.
  return `${text.slice(0, i + begin.length)}\n\n${body.trim()}\n\n${text.slice(j)}`;
}

/** Markdown as the repository's prettier config formats it (so `prettier --check` passes the written file). */
export async function formatMarkdown(md: string, filepath: string): Promise<string> {
  const prettier = await import('prettier');
  const config = (await prettier.resolveConfig(filepath)) ?? {};
  return prettier.format(md, { ...config, filepath, parser: 'markdown' });
}

/**
 * Rewrite the named generated blocks of one markdown file in place (each body formatted with prettier);
 * returns whether the file changed.
 * @example await writeBlocks('docs/benchmarks.md', { tables: renderDocTables(files) });
 */
export async function writeBlocks(path: string, blocks: Record<string, string>): Promise<boolean> {
  const before = readFileSync(path, 'utf8');
  let text = before;
  for (const [name, body] of Object.entries(blocks))
    text = replaceBlock(text, name, await formatMarkdown(body, path), path);
  if (text !== before) writeFileSync(path, text);
  return text !== before;
}

async function main() {
  let doc: string | undefined;
  let readme: string | undefined;
  const paths: string[] = [];
  eachFlag(process.argv.slice(2), (a, next) => {
    if (a === '--write') doc = next();
    else if (a === '--readme') readme = next();
    else if (a.startsWith('--')) throw new Error(`unknown argument ${a}`);
    else paths.push(a);
  });
  if (!paths.length)
    throw new Error(
      'usage: tsx bench/report.ts [--write docs/benchmarks.md] [--readme README.md] bench.json [more-bench.json ...]',
    );
  const files = paths.map((p) => ({ p, j: JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown> }));
  if (!doc && !readme) {
    console.log(renderReport(files));
    return;
  }
  if (doc)
    console.log(
      `${doc}: ${(await writeBlocks(doc, { tables: renderDocTables(files) })) ? 'rewritten' : 'unchanged'}`,
    );
  if (readme)
    console.log(
      `${readme}: ${(await writeBlocks(readme, { summary: renderSummary(files) })) ? 'rewritten' : 'unchanged'}`,
    );
}

// Run as a script, not when a test imports the functions.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
