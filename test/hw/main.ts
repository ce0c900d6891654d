// `npm run test:gpu`: the hardware tier (./tier.ts) on whatever adapter Dawn finds, with the toggles that
// expose every accelerated arm (bench/dawn.ts: allow_unsafe_apis, vulkan_enable_f16_on_nvidia, and the
// toggles Chrome enables by default). Prints one line per family x arm x choice, writes the JSON summary
// (--json), exits 1 when any row fails. Bundled for node-less GPU machines by bench/build-carry.sh
// (.gpu/bench/tier.mjs, run by `bench/h200.sh tier`).
//   --json FILE        the summary (docs/hardware.md is rendered from it: test/hw/render.ts)
//   --filter REGEX     rows whose family/arm/choice id matches
//   --dawn-toggles T   more Dawn toggles (',' separated; '-T' disables), as the bench takes them
//   --dawn-standalone  without the toggles Chrome enables by default
//   --adapter-only     print the adapter and exit (the loader check of `bench/h200.sh vkdebug`)
//   --expect-fail      a mutant's run (scripts/mutate-hw.sh): exit 0 when some row FAILS (killed), 1 when every
//                      row passes (survived), 3 when no check ran (nothing here can show it)
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { eachFlag } from '../../bench/args';
import { adapterInfoRecord, dawnFlags, openBenchGpu, orSwiftShader } from '../../bench/dawn';
import { KERNELS } from '../../src/kernels';
import { rowLine, runTier, tierTotals, type TierSummary } from './tier';

/** Set by the bundle's build (bench/build-carry.sh, scripts/mutate-hw.sh): the commit it was built from. */
declare const MMQ_BUILD_COMMIT: string | undefined;

function commitOf(): string {
  if (typeof MMQ_BUILD_COMMIT === 'string') return MMQ_BUILD_COMMIT;
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'test'], { encoding: 'utf8' });
    return dirty.trim() ? `${sha}+dirty` : sha;
  } catch {
    return 'unknown';
  }
}

let json: string | undefined;
let filter: RegExp | undefined;
let extra = '';
let standalone = false;
let adapterOnly = false;
let expectFail = false;
eachFlag(process.argv.slice(2), (flag, next) => {
  if (flag === '--json') json = next();
  else if (flag === '--filter') filter = new RegExp(next());
  else if (flag === '--dawn-toggles') extra = next();
  else if (flag === '--dawn-standalone') standalone = true;
  else if (flag === '--adapter-only') adapterOnly = true;
  else if (flag === '--expect-fail') expectFail = true;
  else throw new Error(`unknown flag ${flag} (see test/hw/main.ts)`);
});

const flags = dawnFlags({ standalone, extra });
const t0 = performance.now();
const { device, adapter, caps } = await orSwiftShader(
  () => openBenchGpu(flags),
  (icd) => console.log(`[tier] no GPU adapter: running on SwiftShader (${icd})`),
);
const adapterRecord = adapterInfoRecord(adapter);
console.log(`[tier] adapter ${JSON.stringify(adapterRecord)}`);
console.log(`[tier] features ${caps.features.join(' ')}; dot4I8Packed ${caps.dot4I8Packed}; flags ${flags}`);
if (adapterOnly) process.exit(0);

const rows = await runTier(device, caps, KERNELS.families, {
  ...(filter ? { filter } : {}),
  onRow: (r) => console.log(rowLine(r)),
});
const summary: TierSummary = {
  tool: 'mmq-hw-tier',
  version: 1,
  date: new Date().toISOString(),
  commit: commitOf(),
  adapter: adapterRecord,
  features: caps.features,
  dawnFlags: flags,
  node: process.version,
  undeclared: KERNELS.families.filter((f) => !f.checks?.length).map((f) => f.id),
  rows,
  totals: tierTotals(rows),
  wallMs: performance.now() - t0,
};
const t = summary.totals;
console.log(
  `[tier] ${t.rows} rows: ${t.pass} pass, ${t.fail} fail, ${t.notOffered} not offered; ${t.checks} checks run in ${(summary.wallMs / 1000).toFixed(1)} s on ${caps.vendor}/${caps.architecture} (${summary.commit})`,
);
if (summary.undeclared.length)
  console.log(`[tier] families without conformance checks (defaults only): ${summary.undeclared.join(', ')}`);
if (json) writeFileSync(json, `${JSON.stringify(summary, null, 1)}\n`);
device.destroy();
const failed = t.fail > 0;
if (expectFail && !failed && t.checks === 0) {
  // Nothing that could show the mutant runs on this adapter (e.g. no subgroup matrices): not a verdict.
  console.log('[tier] mutant NOT TESTED (no row it can affect runs on this adapter)');
  process.exit(3);
}
if (expectFail)
  console.log(`[tier] mutant ${failed ? 'KILLED (some row fails)' : 'SURVIVED (every row passes)'}`);
process.exit(expectFail ? (failed ? 0 : 1) : failed ? 1 : 0);
