// The autotuner dashboard: the hunt form (./TunerForm.tsx), the hunt's status (./TunerStatus.tsx), the
// finalists, the autokernel dispatch, the convergence and scatter charts, the sortable config table, and
// the stored runs (IndexedDB) with JSON export/import. Its state is the store's (a hunt keeps going while other tabs are
// shown); the controller talks to the worker and persists every measured config.
import type { TuneRecordEntry, TuneReport } from '../../workers/protocol';
import type { TuneRun } from '../persistence/tuneRuns';
import { useServices } from '../appContext';
import { act, importRead, useApp } from '../store';
import { ConfigTable } from './ConfigTable';
import { importSummaryText, readImport } from './importSummary';
import { RunHistory } from './RunHistory';
import { ConfigScatter, ConvergenceChart } from './TunerCharts';
import { TunerForm } from './TunerForm';
import { TunerStatus } from './TunerStatus';
import { ktExport } from './ktExport';
import { bestPerGenerationOf, finalsWallMs, formatMs, formatRel } from './tunerData';
import './tuner.css';

/** The finalists re-timed in turns, the winner marked, with their search times. */
function FinalistsLine({ r }: { r: TuneReport }) {
  if (!r.finals?.length) return null;
  const wall = finalsWallMs(r.finals);
  return (
    <div className="tuner-finals" data-testid="tuner-finals">
      finalists re-timed in turns (the fastest median of their re-timings is held against the incumbent
      {wall === undefined ? '' : `; ${(wall / 1000).toFixed(1)} s in all`}
      ):{' '}
      {r.finals.map((f, i) => (
        <span key={f.config} data-config={f.config}>
          {i ? ' \u00b7 ' : ''}
          <span className={f.config === r.winner ? 'mono tuner-pass' : 'mono'}>{f.config}</span>{' '}
          <span className="num">{formatMs(f.ms)}</span>
          <span className="tuner-dim"> (search {formatMs(f.searchMs)})</span>
        </span>
      ))}
    </div>
  );
}

/** The autokernel's dispatch: running, failed, or what it served and how it did. */
function AutokernelLine() {
  const { controller } = useServices();
  const auto = useApp((s) => s.tuner.auto);
  if (!auto) return null;
  return (
    <div className="tuner-auto" data-testid="tuner-autokernel-result" data-served={auto.result?.served ?? ''}>
      {auto.status === 'running' ? (
        'autokernel: dispatching…'
      ) : auto.status === 'error' ? (
        <span className="tuner-error">{auto.error}</span>
      ) : auto.result ? (
        <>
          autokernel served <b className="mono">{auto.result.served}</b> &middot;{' '}
          <span className={auto.result.verdict.pass ? 'tuner-pass' : 'tuner-fail'}>
            {auto.result.verdict.pass ? 'pass' : 'FAIL'}
          </span>{' '}
          rel {formatRel(auto.result.verdict.relToMax)}
          {auto.result.ms !== undefined ? (
            <span className="num"> &middot; {formatMs(auto.result.ms)}</span>
          ) : null}
          {auto.result.fallback ? <span className="tuner-dim"> &middot; {auto.result.fallback}</span> : null}{' '}
          <button
            type="button"
            className="tuner-link"
            onClick={() => auto.result && controller.tuner.load(auto.result.config)}
          >
            load
          </button>
        </>
      ) : null}
    </div>
  );
}

/** A file the browser downloads. */
function download(text: string, type: string, name: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The stored runs, with their export, per-run Kernel Tuner export and import. */
function History() {
  const { controller } = useServices();
  const deviceId = useApp((s) => s.device.deviceId);
  const caps = useApp((s) => s.device.caps);
  const tuner = useApp((s) => s.tuner);
  const doExport = async () =>
    download(
      await controller.tuner.exportJson(),
      'application/json',
      `mmq-tune-runs-${new Date().toISOString().slice(0, 10)}.json`,
    );
  const exportRun = (run: TuneRun, format: 'json' | 'csv') =>
    download(
      ktExport(run.report, format, caps),
      format === 'csv' ? 'text/csv' : 'application/json',
      `${run.kernel}-${run.problem.replace(/[^\w=.-]+/g, '_')}.${format === 'csv' ? 'csv' : 'kt.json'}`,
    );
  return (
    <RunHistory
      runs={tuner.runs ?? []}
      deviceId={deviceId}
      selected={tuner.hunt?.stored ? tuner.hunt.key : undefined}
      onShow={(run) => controller.tuner.show(run)}
      onDelete={(run) => controller.tuner.remove(run)}
      onExport={() => void doExport()}
      onExportRun={exportRun}
      onImport={(f) => {
        act(importRead, undefined);
        controller.tuner.importJson(f);
        // What the file holds, said beside the import's own note (the controller stores it).
        void f.text().then((text) => act(importRead, readImport(f.name, text)));
      }}
      importError={tuner.importError}
      importNote={tuner.importNote}
      importRead={tuner.importRead ? importSummaryText(tuner.importRead) : undefined}
    />
  );
}

export function TunerDashboard() {
  const { controller } = useServices();
  const deviceId = useApp((s) => s.device.deviceId);
  const tuner = useApp((s) => s.tuner);
  const hunt = tuner.hunt;
  const r = hunt?.report;
  const entries = hunt?.entries ?? [];
  const winner =
    r?.winner ??
    entries
      .filter((e) => e.verdict === 'measured')
      .reduce<TuneRecordEntry | undefined>((b, e) => (!b || e.ms < b.ms ? e : b), undefined)?.config ??
    '';
  const bestPerGeneration = r?.bestPerGeneration ?? bestPerGenerationOf(entries);
  const pick = (e: TuneRecordEntry) =>
    hunt && controller.tuner.load({ ...hunt.base, arm: e.arm, params: { ...hunt.base.params, ...e.params } });

  return (
    <section className="tuner" data-testid="tuner-dashboard">
      <header className="tuner-head">
        <h2>Autotuner</h2>
        <span className="tuner-dim mono" data-testid="tuner-device">
          {deviceId ?? 'no device'}
        </span>
      </header>
      <TunerForm />
      {tuner.storeError ? <div className="tuner-error">{tuner.storeError}</div> : null}
      <TunerStatus />
      {r ? <FinalistsLine r={r} /> : null}
      <AutokernelLine />
      <div className="tuner-charts">
        <ConvergenceChart
          bestPerGeneration={bestPerGeneration}
          incumbentMs={r?.incumbentMs}
          winnerRetimedMs={r?.finals?.length ? r.bestMs : undefined}
        />
        <ConfigScatter entries={entries} winner={winner} onPick={pick} />
      </div>
      <ConfigTable entries={entries} winner={winner} onPick={pick} />
      <History />
    </section>
  );
}

export default TunerDashboard;
