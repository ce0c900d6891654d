// CI's closing lines (.ci/run): each tier's exit code, the unit and e2e counts, a line per problem, and the
// verdict, which is this process's exit code. The logic is in ./verdict.ts (test/ciSummary.test.ts).
import { readFileSync } from 'node:fs';
import {
  ciVerdict,
  isPlaywrightReport,
  isVitestReport,
  listTestFiles,
  parseExits,
  readReport,
} from './verdict';

const root = process.cwd();
const results = '.test-results';
let exits = new Map<string, number>();
try {
  exits = parseExits(readFileSync(`${results}/tiers`, 'utf8'));
} catch {
  // No record at all: every tier reads as not finished.
}
const given = listTestFiles(root);
const { pass, lines } = ciVerdict({
  exits,
  root,
  unitFiles: given.unit,
  e2eFiles: given.e2e,
  unit: readReport(`${results}/vitest.json`, isVitestReport),
  e2e: readReport(`${results}/e2e.json`, isPlaywrightReport),
});
for (const line of lines) console.log(line);
process.exit(pass ? 0 : 1);
