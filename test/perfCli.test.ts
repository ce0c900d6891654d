// mmq tune / mmq probe: flags are checked before any GPU work; a tune run writes this project's report,
// a Kernel Tuner 1.1.0 cache (valid against the published schema) and CSV, on the app tuner's engine.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/mmq';
import { fromKtCache } from '../src/kernels/perf/ktCache';
import { schemaErrors, type JsonSchema } from './jsonSchema';

async function mmq(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

describe('mmq tune and mmq probe', () => {
  it('refuse a family without tuning and unknown flags, before any GPU work', async () => {
    const r = await mmq(['tune', '--kernel', 'mmq-q4k-rt']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^mmq: tune: mmq-q4k-rt has no tuning \(these do: .*mmq-q4k-tile/);
    expect((await mmq(['probe', '--fast'])).err).toBe('mmq: probe: unknown flag --fast\n');
    expect((await mmq(['tune', '--kernel', 'mmq-q4k-tile', '--population', '0'])).code).toBe(2);
  });

  it('tune writes the report, a schema-valid Kernel Tuner cache that reads back, and CSV', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mmq-tune-'));
    const [json, kt, csv] = ['r.json', 'r.kt.json', 'r.csv'].map((f) => join(dir, f)) as [
      string,
      string,
      string,
    ];
    // A progress line on every update (first after 0 ms, then every 0 ms), to see the hunt's counts.
    process.env.MMQ_PROGRESS_FIRST_MS = '0';
    process.env.MMQ_PROGRESS_EVERY_MS = '0';
    const r = await mmq(
      ['tune', '--kernel', 'mmq-q4k-tile', '--m', '16', '--n', '16', '--k', '256'].concat(
        ['--population', '2', '--generations', '1', '--measure-ms', '1', '--batches', '1', '--banks', '1'],
        ['--json', json, '--kt-cache', kt, '--csv', csv],
      ),
    ).finally(() => {
      delete process.env.MMQ_PROGRESS_FIRST_MS;
      delete process.env.MMQ_PROGRESS_EVERY_MS;
    });
    // Nothing but the SwiftShader note (where no GPU is set) and progress: configs done of planned, best.
    const lines = r.err.split('\n').filter(Boolean);
    expect(
      lines.filter((l) => !/^mmq tune: (no GPU adapter|mmq-q4k-tile m=16 n=16 k=256: )/.test(l)),
    ).toEqual([]);
    expect(r.err).toMatch(
      /^mmq tune: mmq-q4k-tile m=16 n=16 k=256: searching: [12] of 2 configs, (best [\d.]+ ms|none passed yet) \(\d+%\), \d+ s so far$/m,
    );
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as {
      entries: { config: string }[];
      kernel: string;
    };
    const cache = JSON.parse(readFileSync(kt, 'utf8')) as unknown;
    const schema = JSON.parse(
      readFileSync(new URL('./fixtures/kernel_tuner/cache-1.1.0.schema.json', import.meta.url), 'utf8'),
    ) as JsonSchema;
    expect(schemaErrors(schema, cache)).toEqual([]);
    const back = fromKtCache(cache);
    expect(back.kernel).toBe('mmq-q4k-tile');
    expect(back.entries.map((e) => e.config)).toEqual(report.entries.map((e) => e.config));
    expect(readFileSync(csv, 'utf8').split('\n')[0]).toMatch(/^wm,wn,rm,rn,schedule,arm,time,times,/);
    // cache is the file's last key (Kernel Tuner appends to it when it resumes), the whole space listed.
    const text = readFileSync(kt, 'utf8');
    expect(Object.keys(JSON.parse(text) as object).at(-1)).toBe('cache');
    expect((cache as { tune_params: { rn: number[] } }).tune_params.rn).toEqual([1, 2, 4, 8]);
  }, 120_000);
});
