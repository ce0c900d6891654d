// An import says what it read: runs, configs, how many measured, which configs had no timing and why,
// and what the parser skipped and why (none yet: the list is where the parser's report goes).
import { describe, expect, it } from 'vitest';
import { tileEntry, tileReport } from '../../../test/tileReport';
import { serializeTuneRuns, runOf } from '../persistence/tuneRuns';
import { importSummary, importSummaryText, readImport } from './importSummary';
import { ktExport } from './ktExport';

const REPORT = tileReport(
  [
    tileEntry(2, 'measured', 1.5),
    tileEntry(1, 'measured', 1.2),
    tileEntry(4, 'rejected', Infinity, 'workgroup storage 40 KiB > 32 KiB'),
    tileEntry(8, 'rejected', Infinity, 'workgroup storage 40 KiB > 32 KiB'),
    tileEntry(16, 'failed-gate', Infinity, 'rel_to_max 3.0e-1 > 1e-3 gate'),
  ],
  'google/swiftshader/SwiftShader#plane4',
);

describe('importSummary', () => {
  it('a Kernel Tuner cache: runs, configs, measured, and each config without a timing by reason', () => {
    const text = ktExport(REPORT, 'json');
    const s = readImport('run.kt.json', text)!;
    expect(s).toMatchObject({ source: 'Kernel Tuner cache', runs: 1, configs: 5, measured: 2, skipped: [] });
    expect(importSummaryText(s)).toBe(
      'read run.kt.json (Kernel Tuner cache): 1 run, 5 configs, 2 measured; without a timing: 2 configs (workgroup storage 40 KiB > 32 KiB); 1 config (rel_to_max 3.0e-1 > 1e-3 gate); nothing skipped',
    );
  });

  it('a tune-runs export, what the parser skipped (the list it will return), and a file it cannot read', () => {
    const text = serializeTuneRuns([runOf({ ...REPORT, entries: REPORT.entries.slice(0, 2) })]);
    const s = importSummary(
      'all.json',
      text,
      [runOf(REPORT)],
      [
        { what: 'cache entry', why: 'time is not a number' },
        { what: 'cache entry', why: 'time is not a number' },
      ],
    );
    expect(s.source).toBe('tune-runs export');
    expect(importSummaryText(s)).toMatch(/; skipped: 2 cache entries \(time is not a number\)$/);
    expect(importSummaryText(readImport('all.json', text)!)).toBe(
      'read all.json (tune-runs export): 1 run, 2 configs, 2 measured; nothing skipped',
    );
    expect(readImport('notes.txt', 'hello')).toBeUndefined();
    // Reasons from the file are shown escaped, and only the first few one by one.
    const many = importSummary(
      'x\u202e.json',
      text,
      [],
      ['a', 'b', 'c', 'd\u001b'].map((why) => ({ what: 'entry', why })),
    );
    expect(importSummaryText(many)).toBe(
      'read x\\u202e.json (tune-runs export): 0 runs, 0 configs, 0 measured; skipped: 1 entry (a); 1 entry (b); 1 entry (c); 1 more for other reasons',
    );
  });
});
