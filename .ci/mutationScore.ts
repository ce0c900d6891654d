// The mutation score per area from a StrykerJS JSON report: `npm run mutate:score [-- report.json]
// [--survivors]` (default reports/mutation/mutation.json, what `npm run mutate` writes).
import { readFileSync } from 'node:fs';
import { isMutationReport, scoreByArea, scoreTable, survivors } from './mutation';

const args = process.argv.slice(2);
const path = args.find((a) => !a.startsWith('--')) ?? 'reports/mutation/mutation.json';
let report: unknown;
try {
  report = JSON.parse(readFileSync(path, 'utf8'));
} catch (e) {
  console.error(`mutate:score: cannot read ${path} (run npm run mutate first): ${String(e).split('\n')[0]}`);
  process.exit(1);
}
if (!isMutationReport(report)) {
  console.error(`mutate:score: ${path} is not a Stryker JSON report`);
  process.exit(1);
}
for (const line of scoreTable(scoreByArea(report))) console.log(line);
if (args.includes('--survivors')) for (const line of survivors(report)) console.log(line);
