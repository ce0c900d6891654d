// What an import read, in words: how many runs and configs, how many carry a timing, which configs were
// read without one (and why), and what the parser left out (and why). Pure; built on what the parser
// returns (the runs, and the items it skipped once it reports them), so a new kind of skip is one more
// entry in a list, not a new code path.
import { excerpt } from '../../kernels/quant/untrustedText';
import { parseTuneRunsImport, type TuneRun } from '../persistence/tuneRuns';

/** A count of items for one reason. */
export interface ImportReason {
  /** What they are: "config", or what the parser names ("cache entry"). */
  what: string;
  why: string;
  count: number;
}

/** What one import read. */
export interface ImportSummary {
  file: string;
  source: 'Kernel Tuner cache' | 'tune-runs export';
  runs: number;
  configs: number;
  /** Configs with a timing. */
  measured: number;
  /** Configs read without a timing (rejected, failed the gate, a Kernel Tuner failure), by reason. */
  untimed: ImportReason[];
  /** What the parser left out, by reason. */
  skipped: ImportReason[];
}

/** Reasons listed one by one; the rest are counted. */
const SHOWN_REASONS = 3;

const isKtCache = (text: string): boolean => {
  try {
    const root: unknown = JSON.parse(text);
    return typeof root === 'object' && root !== null && 'schema_version' in root && 'cache' in root;
  } catch {
    return false;
  }
};

function byReason(items: readonly { what: string; why: string }[]): ImportReason[] {
  const groups = new Map<string, ImportReason>();
  for (const { what, why } of items) {
    const key = JSON.stringify([what, why]);
    const g = groups.get(key) ?? { what, why, count: 0 };
    g.count++;
    groups.set(key, g);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

/**
 * The summary of an import of `text` (file `file`) that gave `runs`; `skipped` is what the parser left
 * out, each with why.
 * @example importSummary('run.kt.json', text, parseTuneRunsJson(text)).measured // 2
 */
export function importSummary(
  file: string,
  text: string,
  runs: readonly TuneRun[],
  skipped: readonly { what: string; why: string }[] = [],
): ImportSummary {
  const entries = runs.flatMap((r) => r.report.entries);
  return {
    file,
    source: isKtCache(text) ? 'Kernel Tuner cache' : 'tune-runs export',
    runs: runs.length,
    configs: entries.length,
    measured: entries.filter((e) => e.verdict === 'measured').length,
    untimed: byReason(
      entries
        .filter((e) => e.verdict !== 'measured')
        .map((e) => ({
          what: 'config',
          why: e.reason ?? (e.verdict === 'rejected' ? 'rejected' : 'failed the correctness gate'),
        })),
    ),
    skipped: byReason(skipped),
  };
}

const plural = (n: number, word: string) =>
  n === 1 ? `${n} ${word}` : /[^aeiou]y$/.test(word) ? `${n} ${word.slice(0, -1)}ies` : `${n} ${word}s`;

/** "2 configs (too big); 1 config (InvalidConfig)", the rest counted. */
function reasonsText(groups: readonly ImportReason[]): string {
  const shown = groups.slice(0, SHOWN_REASONS).map((g) => `${plural(g.count, g.what)} (${excerpt(g.why)})`);
  const rest = groups.slice(SHOWN_REASONS).reduce((n, g) => n + g.count, 0);
  return [...shown, ...(rest ? [`${rest} more for other reasons`] : [])].join('; ');
}

/**
 * The summary as one line.
 * @example importSummaryText(s) // 'read run.kt.json (Kernel Tuner cache): 1 run, 3 configs, 2 measured; without a timing: 1 config (too big); nothing skipped'
 */
export function importSummaryText(s: ImportSummary): string {
  return [
    `read ${excerpt(s.file)} (${s.source}): ${plural(s.runs, 'run')}, ${plural(s.configs, 'config')}, ${s.measured} measured`,
    ...(s.untimed.length ? [`without a timing: ${reasonsText(s.untimed)}`] : []),
    s.skipped.length ? `skipped: ${reasonsText(s.skipped)}` : 'nothing skipped',
  ].join('; ');
}

/**
 * What importing `text` reads, or undefined when it cannot be read (the import says why).
 * @example readImport(file.name, await file.text())?.runs // 1
 */
export function readImport(file: string, text: string): ImportSummary | undefined {
  try {
    const { runs, skipped } = parseTuneRunsImport(text);
    return importSummary(file, text, runs, skipped);
  } catch {
    return undefined;
  }
}
