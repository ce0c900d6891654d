// The stored hunts (IndexedDB), newest first: show one, delete one, export all, import a file.
import { useRef } from 'react';
import type { TuneRun } from '../persistence/tuneRuns';
import { formatMs } from './tunerData';

export interface RunHistoryProps {
  runs: readonly TuneRun[];
  deviceId: string;
  /** Key of the run on display, if it is a stored one. */
  selected: string | undefined;
  onShow(run: TuneRun): void;
  onDelete(run: TuneRun): void;
  onExport(): void;
  onImport(file: File): void;
  importError: string | undefined;
  importNote: string | undefined;
}

/** Stable key of a run, as the store keys it. */
export function runKey(r: Pick<TuneRun, 'deviceId' | 'op' | 'm' | 'n' | 'k'>): string {
  return `${r.deviceId}|${r.op}|${r.m}|${r.n}|${r.k}`;
}

/** The history list (data-testid tuner-history; rows tuner-history-row). */
export function RunHistory(props: RunHistoryProps) {
  const file = useRef<HTMLInputElement>(null);
  return (
    <div className="tuner-history" data-testid="tuner-history" data-count={props.runs.length}>
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
          <button type="button" data-testid="tuner-import" onClick={() => file.current?.click()}>
            import JSON
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
      {props.importError ? (
        <div className="tuner-error" data-testid="tuner-import-error" role="alert">
          import failed: {props.importError}
        </div>
      ) : null}
      {props.importNote ? <div className="tuner-note">{props.importNote}</div> : null}
      {props.runs.length === 0 ? (
        <div className="tuner-empty">no stored runs: a finished hunt is saved here and survives a reload</div>
      ) : (
        <ul>
          {props.runs.map((r) => {
            const key = runKey(r);
            const other = r.deviceId !== props.deviceId;
            return (
              <li
                key={key}
                data-testid="tuner-history-row"
                data-key={key}
                className={`tuner-history-row${key === props.selected ? ' tuner-selected' : ''}${other ? ' tuner-other-device' : ''}`}
              >
                <button
                  type="button"
                  className="tuner-link"
                  onClick={() => props.onShow(r)}
                  title={`device ${r.deviceId}`}
                >
                  <span className="mono">{r.op}</span>{' '}
                  <span className="num">
                    m={r.m},n={r.n},k={r.k}
                  </span>{' '}
                  <span className="mono">{r.winner || 'no winner'}</span>{' '}
                  <span className="num">{formatMs(r.bestMs)}</span>{' '}
                  <span className="tuner-dim">{new Date(r.date).toLocaleString()}</span>
                  {other ? <span className="tuner-dim"> &middot; other device: {r.deviceId}</span> : null}
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
          })}
        </ul>
      )}
    </div>
  );
}
