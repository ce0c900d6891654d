// The stored hunts (IndexedDB), newest first: show one, delete one, export all, import a file. An
// interrupted hunt (cancelled, or cut short by a reload) is marked, and can be resumed once shown.
import { useRef } from 'react';
import type { TuneRun } from '../persistence/tuneRuns';
import { formatMs } from './tunerData';

export interface RunHistoryProps {
  runs: readonly TuneRun[];
  deviceId: string | undefined;
  /** Key of the run on display, if it is a stored one. */
  selected: string | undefined;
  onShow(run: TuneRun): void;
  onDelete(run: TuneRun): void;
  onExport(): void;
  /** Export one run as a Kernel Tuner cache file or CSV. */
  onExportRun(run: TuneRun, format: 'json' | 'csv'): void;
  onImport(file: File): void;
  importError: string | undefined;
  importNote: string | undefined;
  /** What the last import read, in words (importSummaryText). */
  importRead?: string | undefined;
}

/** The list's head: its count, export all, import a file. */
function HistoryHead({ props }: { props: RunHistoryProps }) {
  const file = useRef<HTMLInputElement>(null);
  return (
    <div className="tuner-history-head">
      <span className="tuner-chart-title">stored runs ({props.runs.length})</span>
      <span className="tuner-history-actions">
        <button
          type="button"
          data-testid="tuner-export"
          onClick={props.onExport}
          disabled={props.runs.length === 0}
        >
          export JSON
        </button>
        <button
          type="button"
          data-testid="tuner-import"
          title="a tune-runs export, or a Kernel Tuner 1.1.0 cache file of one run"
          onClick={() => file.current?.click()}
        >
          import JSON / KT cache
        </button>
        <input
          ref={file}
          type="file"
          accept="application/json,.json"
          data-testid="tuner-import-file"
          className="tuner-hidden"
          onChange={(ev) => {
            const f = ev.target.files?.[0];
            ev.target.value = '';
            if (f) props.onImport(f);
          }}
        />
      </span>
    </div>
  );
}

/** One stored run: show it, export it (KT cache, CSV), delete it; a run of another device is marked. */
function HistoryRow({ r, props }: { r: TuneRun; props: RunHistoryProps }) {
  const other = props.deviceId !== undefined && r.deviceId !== props.deviceId;
  return (
    <li
      data-testid="tuner-history-row"
      data-key={r.key}
      data-status={r.status}
      className={`tuner-history-row${r.key === props.selected ? ' tuner-selected' : ''}${other ? ' tuner-other-device' : ''}`}
    >
      <button
        type="button"
        className="tuner-link"
        onClick={() => props.onShow(r)}
        title={`device ${r.deviceId}`}
      >
        <span className="mono">{r.op}</span> <span className="num">{r.problem}</span>{' '}
        {r.status === 'interrupted' ? (
          <span className="tuner-badge tuner-badge-interrupted">
            interrupted: {r.report.entries.length} measured
          </span>
        ) : (
          <>
            <span className="mono">{r.winner || 'no winner'}</span>{' '}
            <span className="num">{formatMs(r.bestMs)}</span>
          </>
        )}{' '}
        <span className="tuner-dim">{new Date(r.date).toLocaleString()}</span>
        {other ? <span className="tuner-dim"> &middot; other device: {r.deviceId}</span> : null}
      </button>
      <button
        type="button"
        className="tuner-link"
        data-testid="tuner-export-kt"
        title="this run as a Kernel Tuner 1.1.0 cache file"
        onClick={() => props.onExportRun(r, 'json')}
      >
        KT cache
      </button>
      <button
        type="button"
        className="tuner-link"
        data-testid="tuner-export-csv"
        title="this run's configs as CSV"
        onClick={() => props.onExportRun(r, 'csv')}
      >
        CSV
      </button>
      <button
        type="button"
        className="tuner-del"
        aria-label="delete run"
        title="delete this run"
        onClick={() => props.onDelete(r)}
      >
        &times;
      </button>
    </li>
  );
}

/** The history list (data-testid tuner-history; rows tuner-history-row with data-status). */
export function RunHistory(props: RunHistoryProps) {
  return (
    <div className="tuner-history" data-testid="tuner-history" data-count={props.runs.length}>
      <HistoryHead props={props} />
      {props.importError ? (
        <div className="tuner-error" data-testid="tuner-import-error" role="alert">
          import failed: {props.importError}
        </div>
      ) : null}
      {props.importNote ? <div className="tuner-note">{props.importNote}</div> : null}
      {props.importRead && !props.importError ? (
        <div className="tuner-note" data-testid="tuner-import-read" role="status">
          {props.importRead}
        </div>
      ) : null}
      {props.runs.length === 0 ? (
        <div className="tuner-empty">
          no stored runs: every measured config of a hunt is saved here as it completes and survives a reload
        </div>
      ) : (
        <ul>
          {props.runs.map((r) => (
            <HistoryRow key={r.key} r={r} props={props} />
          ))}
        </ul>
      )}
    </div>
  );
}
