// CI's closing lines (.ci/run): each tier's exit code, the unit and e2e counts, a line per problem, and the
// verdict, which is this process's exit code. The logic is in ./verdict.ts (test/ciSummary.test.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isMutationReport, readStrykerSettings } from './mutation';
import {
  ciVerdict,
  isPlaywrightReport,
  isVitestReport,
  listTestFiles,
  parseExits,
  parseSmoke,
  parseStopped,
  readReport,
  type SmokeRecord,
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
/** The snapshot files git does not track: a run wrote them, or they were never committed. */
function untracked(paths: readonly string[]): string[] | { problem: string } {
  if (!paths.length) return [];
  try {
    const out = execFileSync('git', ['ls-files', '--others', '-z', '--', ...paths], { encoding: 'utf8' });
    return out.split('\0').filter(Boolean);
  } catch (e) {
    return { problem: `git could not say which snapshot files are committed: ${String(e).split('\n')[0]}` };
  }
}
let stopped: ReturnType<typeof parseStopped> = [];
try {
  stopped = parseStopped(readFileSync(`${results}/file-limit.jsonl`, 'utf8'));
} catch {
  // No record: .ci/fileLimit.ts stopped no file.
}
let smoke: SmokeRecord | undefined;
try {
  smoke = parseSmoke(readFileSync(`${results}/mutation-smoke.txt`, 'utf8'));
} catch {
  // The smoke never started: its tier's exit code and its missing report say so.
}
let breakAt: number | null = null;
try {
  breakAt = (await readStrykerSettings(root)).breakAt;
} catch {
  // No readable stryker.config.mjs: the smoke failed on it too.
}
const { pass, lines } = ciVerdict({
  exits,
  root,
  unitFiles: given.unit,
  e2eFiles: given.e2e,
  unit: readReport(`${results}/vitest.json`, isVitestReport),
  e2e: readReport(`${results}/e2e.json`, isPlaywrightReport),
  snapshotFiles: given.snapshots,
  untrackedSnapshots: untracked(given.snapshots),
  stopped,
  mutation: readReport(`${results}/mutation-smoke.json`, isMutationReport),
  smoke,
  breakAt,
});
for (const line of lines) console.log(line);
process.exit(pass ? 0 : 1);
