// A stored tuning run as a Kernel Tuner 1.1.0 cache file, for the dashboard's export buttons (loaded
// with the dashboard). Kernel Tuner reads `tune_params` as the search space, so the file lists the
// space this family searches on this adapter, not only the values the hunt happened to visit.
import { CATALOG } from '../../kernels/catalog';
import type { AdapterCaps } from '../../kernels/gpu/caps';
import { ktCacheCsv, searchSpaceValues, toKtCache, tuningKeys } from '../../kernels/perf/ktCache';
import { knobSearch } from '../../kernels/tune/knobs';
import type { TuneReport } from '../../workers/protocol';

/**
 * The values of each tuned key over the family's search space at the run's problem on `caps`'s adapter;
 * undefined where that space cannot be derived (no adapter yet, a family without tuning, a base the
 * space refuses): the file then lists the values visited, as Kernel Tuner itself would.
 */
function spaceOf(report: TuneReport, keys: readonly string[], caps: AdapterCaps | undefined) {
  const catalog = CATALOG.find(report.kernel);
  if (!caps || !catalog?.tuning) return undefined;
  try {
    const search = knobSearch(catalog, report.base, caps);
    return searchSpaceValues(
      search.space.enumerate().map((c) => search.apply(c)),
      keys,
    );
  } catch {
    return undefined;
  }
}

/**
 * A stored run as a Kernel Tuner 1.1.0 cache file (JSON text) or its CSV, its `tune_params` the space
 * the family searches on `caps`'s adapter.
 * @example download(ktExport(run.report, 'json', caps), 'run.kt.json')
 */
export function ktExport(report: TuneReport, format: 'json' | 'csv', caps?: AdapterCaps): string {
  const keys = tuningKeys(CATALOG.find(report.kernel)?.controls ?? []);
  const space = spaceOf(report, keys, caps);
  const file = toKtCache(report, { keys, ...(space ? { space } : {}) });
  return format === 'csv' ? ktCacheCsv(file) : JSON.stringify(file, null, 2) + '\n';
}
