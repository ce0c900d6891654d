// docs/hardware.md from hardware-tier JSONs (test/hw/main.ts --json): which family x arm x choice ran
// where and passed, failed or was not offered (with the adapter's reason), and, when given, what the
// mutant runs of scripts/mutate-hw.sh showed. Formatted with the repository's prettier config.
//   npx tsx test/hw/render.ts tier.json [more-tier.json ...] [--mutant NAME=FILE ...] [--out docs/hardware.md]
// Several runs (one per adapter: the H200's, SwiftShader's) give one column each in the overview.
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { eachFlag } from '../../bench/args';
import { checkDetail, rowId, type TierRow, type TierSummary } from './tier';

/** A run's adapter in a few words: device, description (architecture). */
export function adapterName(s: TierSummary): string {
  const a = s.adapter;
  const str = (k: string) => (typeof a[k] === 'string' ? (a[k] as string) : '');
  // The device names the card (nvidia-h100-80gb-hbm3); the description, the driver.
  const name =
    [...new Set([str('device'), str('description')].filter(Boolean))].join(', ') ||
    str('vendor') ||
    'unknown adapter';
  const arch = str('architecture');
  return arch && !name.toLowerCase().includes(arch.toLowerCase()) ? `${name} (${arch})` : name;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const choiceText = (r: TierRow) => Object.values(r.choice).join(', ') || '-';
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The overview: one line per family x arm x choice, one column per run. */
function overview(runs: readonly TierSummary[]): string[] {
  const ids: string[] = [];
  const byRun = runs.map((s) => new Map(s.rows.map((r) => [rowId(r), r])));
  const rowOf = new Map<string, TierRow>();
  for (const s of runs)
    for (const r of s.rows)
      if (!rowOf.has(rowId(r))) {
        ids.push(rowId(r));
        rowOf.set(rowId(r), r);
      }
  const status = (r: TierRow | undefined) => {
    if (!r) return '-';
    if (r.status === 'not-offered') return 'not offered';
    const ran = r.checks.filter((c) => c.status !== 'not-offered');
    const ok = ran.filter((c) => c.status === 'pass').length;
    return r.status === 'pass' ? `pass (${ok}/${ran.length})` : `**FAIL** (${ok}/${ran.length} pass)`;
  };
  return [
    `| family | arm | choice | ${runs.map((s) => cell(adapterName(s))).join(' | ')} |`,
    `| --- | --- | --- | ${runs.map(() => '---').join(' | ')} |`,
    ...ids.map((id) => {
      const r = rowOf.get(id)!;
      return `| ${r.family} | ${r.arm} | ${cell(choiceText(r))} | ${byRun.map((m) => status(m.get(id))).join(' | ')} |`;
    }),
  ];
}

/** One run: its header, the reasons arms were not offered, and every check that did not pass. */
function runSection(s: TierSummary): string[] {
  const t = s.totals;
  const out = [
    `### ${adapterName(s)}`,
    '',
    `${s.date.slice(0, 10)}, commit ${s.commit}, node ${s.node}; ${t.rows} rows: ${t.pass} pass, ${t.fail} fail, ${t.notOffered} not offered; ${t.checks} checks in ${seconds(s.wallMs)}.`,
    '',
    `- Adapter: \`${JSON.stringify(s.adapter)}\``,
    `- Dawn flags: \`${s.dawnFlags.join(' ')}\``,
  ];
  if (s.undeclared.length)
    out.push(`- Families without conformance checks (ran their defaults): ${s.undeclared.join(', ')}`);
  const reasons = new Map<string, string[]>();
  for (const r of s.rows.filter((x) => x.status === 'not-offered')) {
    const key = r.reason ?? '';
    reasons.set(key, [...(reasons.get(key) ?? []), rowId(r)]);
  }
  for (const [reason, ids] of reasons) out.push(`- Not offered (${ids.length} rows): ${reason}`);
  const bad = s.rows.flatMap((r) =>
    r.checks.filter((c) => c.status !== 'pass' && c.status !== 'not-offered').map((c) => ({ r, c })),
  );
  if (bad.length) {
    out.push('', '| row | check | status | detail |', '| --- | --- | --- | --- |');
    for (const { r, c } of bad)
      out.push(
        `| ${rowId(r)} | ${cell(`${c.label} ${JSON.stringify(c.params)}`)} | ${c.status} | ${cell(checkDetail(c))} |`,
      );
  }
  return out;
}

/** The shapes each family ran (from the first run that ran it). */
function shapes(runs: readonly TierSummary[]): string[] {
  const seen = new Set<string>();
  const out = [
    '| family | check | params | output | workgroups | tail |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const s of runs)
    for (const r of s.rows)
      for (const c of r.checks) {
        const key = `${r.family}\n${c.label}`;
        if (seen.has(key) || c.rows === undefined) continue;
        seen.add(key);
        out.push(
          `| ${r.family} | ${cell(c.label)} | ${cell(JSON.stringify(c.params))} | ${c.rows} x ${c.cols} | ${c.workgroups} | ${c.tail ? 'yes' : '-'} |`,
        );
      }
  return out;
}

/** The mutants: killed when some row fails, with the rows that failed and how. */
function mutantSection(mutants: readonly [string, TierSummary][]): string[] {
  const out = [
    '| mutant | adapter | verdict | rows failing | first failures |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const [name, s] of mutants) {
    const failing = s.rows.filter((r) => r.status === 'fail');
    const first = failing
      .slice(0, 3)
      .map((r) => {
        const c = r.checks.find((x) => x.status !== 'pass' && x.status !== 'not-offered')!;
        return `${rowId(r)} ${c.label}: ${c.oracle ? `${c.oracle.mismatches}/${(c.rows ?? 0) * (c.cols ?? 0)} off, rel ${c.oracle.relToMax.toExponential(2)}` : c.status}`;
      })
      .join('; ');
    out.push(
      `| ${name} | ${cell(adapterName(s))} | ${failing.length ? 'killed' : s.totals.checks ? '**survived**' : 'not tested (no row it affects runs here)'} | ${failing.length} of ${s.totals.rows - s.totals.notOffered} run | ${cell(first || '-')} |`,
    );
  }
  return out;
}

/**
 * The whole page.
 * @example renderHardware([h200, swiftshader], [['a-fragment-offset', mutantRun]])
 */
export function renderHardware(
  runs: readonly TierSummary[],
  mutants: readonly [string, TierSummary][] = [],
): string {
  return [
    '# Hardware tier: every family x arm x choice, on real adapters',
    '',
    '<!-- Generated by `npm run docs` (test/hw/render.ts) from docs/bench-results/tier-*.json; do not edit. -->',
    '',
    'Every family of the registry on every arm it declares and every value of its choice controls, on the',
    "family's own conformance shapes (`checks` in its catalog: tails and multi-workgroup grids), the FULL output",
    "compared with the family's oracle under its own gate (bit-exact for the int8 families, the f16 emulation",
    "gate for the twin, plus the twin's full-precision gate). An arm the adapter lacks is _not offered_, with",
    "the family's reason.",
    '',
    '- Any adapter Dawn finds (SwiftShader where there is no GPU): `npm run test:gpu -- --json tier.json`.',
    '- The lent H200: `bash bench/build-carry.sh` here, then on the device `bash bench/h200.sh tier mutants`',
    '  (carry `.gl` and `.gpu/bench`; writes `tier.json` and `tier-mut-NAME.json`).',
    "- This page (one column per adapter): copy a run to `docs/bench-results/tier-ADAPTER.json` (a mutant's",
    '  to `tier-ADAPTER-mut-NAME.json`) and run `npm run docs`, which renders every such file found there.',
    '',
    '## Overview',
    '',
    ...overview(runs),
    '',
    '## Runs',
    '',
    ...runs.flatMap((s) => [...runSection(s), '']),
    ...(mutants.length
      ? [
          '## Mutants',
          '',
          'The same tier on bundles built with one mutation each (`scripts/mutate-hw.sh`, which says what each',
          'changes), run on the rows that can show it; a mutant is killed when some row fails. Without subgroup',
          'matrices the matrix-arm mutants are not tested, and a compiler that never contracts a multiply into an',
          'add (SwiftShader) cannot show `no-fuse-identity`: CI checks that one in the SPIR-V instead',
          '(`test/noFuse.spirv.test.ts`).',
          '',
          ...mutantSection(mutants),
          '',
        ]
      : []),
    '## Shapes',
    '',
    ...shapes(runs),
    '',
  ].join('\n');
}

/** Markdown as the repository's prettier config formats it. */
async function formatted(md: string, filepath: string): Promise<string> {
  const prettier = await import('prettier');
  const config = (await prettier.resolveConfig(filepath)) ?? {};
  return prettier.format(md, { ...config, filepath, parser: 'markdown' });
}

async function main(argv: readonly string[]) {
  const runs: TierSummary[] = [];
  const mutants: [string, TierSummary][] = [];
  let out: string | undefined;
  const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as TierSummary;
  eachFlag(argv, (flag, next) => {
    if (flag === '--out') out = next();
    else if (flag === '--mutant') {
      const [name, file] = next().split('=');
      if (!name || !file) throw new Error('--mutant takes NAME=FILE');
      mutants.push([name, read(file)]);
    } else if (flag.startsWith('--')) throw new Error(`unknown flag ${flag}`);
    else runs.push(read(flag));
  });
  if (!runs.length) throw new Error('usage: render.ts tier.json [...] [--mutant NAME=FILE] [--out FILE]');
  const md = await formatted(renderHardware(runs, mutants), out ?? 'docs/hardware.md');
  if (out) writeFileSync(out, md);
  else process.stdout.write(md);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main(process.argv.slice(2));
