/* global console, process */
// One closing line for CI logs: the unit (vitest) and e2e (Playwright) counts added up.
import { readFileSync } from 'node:fs';

const read = (f) => JSON.parse(readFileSync(f, 'utf8'));
const unit = read('.test-results/vitest.json');
const e2e = read('.test-results/e2e.json');
const passed = unit.numPassedTests + e2e.stats.expected + (e2e.stats.flaky ?? 0);
const failed = unit.numFailedTests + e2e.stats.unexpected;
const skipped = unit.numPendingTests + unit.numTodoTests + e2e.stats.skipped;
console.log(
  `unit: ${unit.numPassedTests} passed, ${unit.numFailedTests} failed, ${unit.numPendingTests} skipped`,
);
console.log(
  `e2e: ${e2e.stats.expected} passed, ${e2e.stats.unexpected} failed, ${e2e.stats.skipped} skipped`,
);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
