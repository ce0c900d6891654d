// The autotuner dashboard: a hunt form, live progress, convergence and scatter charts, the sortable
// config table, the autokernel dispatch, and the stored run history (IndexedDB) with JSON export/import.
// It talks to the worker only through the functions in its props, so the app decides the wiring.
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { CoopmatStaging, TileParams } from '../../kernels/family';
import { finalsWallMs } from '../../kernels/tune/evolution';
import type { EvolutionParams, TuneOp, TuneRecordEntry, TuneReport } from '../../workers/protocol';
import { openTuneRuns, type TuneRun, type TuneRunStore } from '../persistence/tuneRuns';
import { ConfigTable } from './ConfigTable';
import { RunHistory, runKey } from './RunHistory';
import { ConfigScatter, ConvergenceChart } from './TunerCharts';
import { bestPerGenerationOf, formatMs, formatRel, speedup } from './tunerData';
import type { AutokernelRunResult, ProblemShape, TuneProgress, TunerDashboardProps } from './types';
import './tuner.css';

export type { TunerDashboardProps } from './types';

/** Small enough for SwiftShader in seconds, big enough to show a search. */
export const DEFAULT_TUNE_EVO: EvolutionParams = {
  population: 8,
  generations: 4,
  seed: 0xc0ffee,
  measureIters: 10,
  repeats: 3,
  banks: 4,
};
export const DEFAULT_TUNE_SHAPE: ProblemShape = { m: 64, n: 64, k: 256 };

const OPS: { op: TuneOp; label: string }[] = [
  { op: 'mmq_q4k_tile', label: 'int8 MMQ Q4_K tile (mmq_q4k_tile)' },
  { op: 'mmq_q4k_coopmat', label: 'f16 coopmat twin (mmq_q4k_coopmat)' },
];

type Shown = { report: TuneReport; fromCache: boolean; stored: boolean };

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Form problems, in words (empty = fine). The worker checks again, with the adapter's limits. */
export function formProblems(shape: ProblemShape, evo: EvolutionParams): string[] {
  const out: string[] = [];
  for (const [name, v] of Object.entries(shape))
    if (!Number.isSafeInteger(v) || v < 1) out.push(`${name} must be a positive integer`);
  if (Number.isSafeInteger(shape.k) && shape.k % 256 !== 0)
    out.push(`k = ${shape.k} must be a multiple of 256 (the Q4_K super-block)`);
  for (const key of ['population', 'generations', 'measureIters', 'repeats', 'banks'] as const) {
    if (!Number.isSafeInteger(evo[key]) || evo[key] < 1) out.push(`${key} must be a positive integer`);
  }
  if (!Number.isSafeInteger(evo.seed) || evo.seed < 0) out.push('seed must be an integer >= 0');
  return out;
}

function NumberField(props: {
  id: string;
  label: string;
  value: number;
  onChange(v: number): void;
  min?: number;
  step?: number;
}) {
  return (
    <label className="tuner-field">
      <span>{props.label}</span>
      <input
        type="number"
        data-testid={`tuner-${props.id}`}
        value={Number.isFinite(props.value) ? props.value : ''}
        min={props.min ?? 1}
        step={props.step ?? 1}
        onChange={(e) => props.onChange(e.target.value === '' ? NaN : Number(e.target.value))}
      />
    </label>
  );
}

/** "; 4.2 s in all" when every re-timing was clocked (runs stored before that have no wallMs). */
function finalsWallS(finals: NonNullable<TuneReport['finals']>): string {
  const ms = finalsWallMs(finals);
  return ms === undefined ? '' : `; ${(ms / 1000).toFixed(1)} s in all`;
}

/**
 * The tuner dashboard.
 * @example
 * <TunerDashboard deviceId={deviceId} runTune={client.tune} cancelTune={client.cancelTune}
 *   runAutokernel={client.autokernel} onLoadTile={(tile, op, shape) => store.loadTile(tile, op, shape)} />
 */
export function TunerDashboard(props: TunerDashboardProps) {
  const { deviceId, runTune, runAutokernel, cancelTune, onLoadTile, openStore, disabledReason } = props;
  const [op, setOp] = useState<TuneOp>(props.initial?.op ?? 'mmq_q4k_tile');
  const [shape, setShape] = useState<ProblemShape>(props.initial?.shape ?? DEFAULT_TUNE_SHAPE);
  const [evo, setEvo] = useState<EvolutionParams>(props.initial?.evo ?? DEFAULT_TUNE_EVO);
  const [store, setStore] = useState<TuneRunStore>();
  const [storeError, setStoreError] = useState<string>();
  const [runs, setRuns] = useState<TuneRun[]>([]);
  const [running, setRunning] = useState<'hunt' | 'autokernel'>();
  const [progress, setProgress] = useState<TuneProgress>();
  const [live, setLive] = useState<TuneRecordEntry[]>([]);
  const [shown, setShown] = useState<Shown>();
  const [error, setError] = useState<string>();
  const [auto, setAuto] = useState<AutokernelRunResult>();
  const [importError, setImportError] = useState<string>();
  const [importNote, setImportNote] = useState<string>();

  useEffect(() => {
    let alive = true;
    let opened: TuneRunStore | undefined;
    (openStore ?? openTuneRuns)()
      .then(async (s) => {
        opened = s;
        if (!alive) return s.close();
        setStore(s);
        setRuns(await s.list());
      })
      .catch((e: unknown) => alive && setStoreError(`run history unavailable (IndexedDB): ${message(e)}`));
    return () => {
      alive = false;
      opened?.close();
    };
  }, [openStore]);

  const refresh = useCallback(async () => {
    if (store) setRuns(await store.list());
  }, [store]);

  const problems = formProblems(shape, evo);

  const hunt = async (force: boolean) => {
    if (problems.length) return setError(problems.join('; '));
    setRunning('hunt');
    setError(undefined);
    setProgress(undefined);
    setLive([]);
    setShown(undefined);
    try {
      const cached =
        force || !store ? undefined : (await store.get(deviceId, op, shape.m, shape.n, shape.k))?.report;
      const res = await runTune({ op, ...shape, evo, ...(cached ? { cached } : {}) }, (p) => {
        setProgress(p);
        const entry = p.entry;
        if (entry) setLive((l) => [...l, entry]);
      });
      let stored = false;
      if (!res.fromCache && store) {
        await store.put(res.report);
        stored = true;
        await refresh();
      }
      setShown({ report: res.report, fromCache: res.fromCache, stored: stored || res.fromCache });
    } catch (e) {
      setError(message(e));
    } finally {
      setRunning(undefined);
    }
  };

  const autokernel = async () => {
    if (!runAutokernel) return;
    if (problems.length) return setError(problems.join('; '));
    setRunning('autokernel');
    setError(undefined);
    setAuto(undefined);
    try {
      const cachedWinner = store
        ? await store.cachedWinner(deviceId, op, shape.m, shape.n, shape.k)
        : undefined;
      setAuto(await runAutokernel({ op, ...shape, ...(cachedWinner ? { cachedWinner } : {}) }));
    } catch (e) {
      setError(message(e));
    } finally {
      setRunning(undefined);
    }
  };

  const doExport = async () => {
    if (!store) return;
    const text = await store.exportJson();
    const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `mmq-tune-runs-${new Date().toISOString().slice(0, 10)}.json`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };

  const doImport = async (file: File) => {
    setImportError(undefined);
    setImportNote(undefined);
    if (!store) return setImportError(storeError ?? 'no run store');
    try {
      const { imported } = await store.importJson(await file.text());
      setImportNote(`imported ${imported} run${imported === 1 ? '' : 's'} from ${file.name}`);
      await refresh();
    } catch (e) {
      setImportError(message(e));
    }
  };

  const view = useMemo(() => {
    if (shown)
      return {
        entries: shown.report.entries,
        bestPerGeneration: shown.report.bestPerGeneration,
        winner: shown.report.winner,
      };
    const best = live
      .filter((e) => e.verdict === 'measured')
      .reduce<TuneRecordEntry | undefined>((b, e) => (!b || e.ms < b.ms ? e : b), undefined);
    return { entries: live, bestPerGeneration: bestPerGenerationOf(live), winner: best?.config ?? '' };
  }, [shown, live]);

  const reportShape = shown ? { m: shown.report.m, n: shown.report.n, k: shown.report.k } : shape;
  const reportOp = shown?.report.op ?? op;
  const pick = (e: TuneRecordEntry) => onLoadTile(e.tile, reportOp, reportShape, e.staging);
  const loadTile = (tile: TileParams, staging?: CoopmatStaging) => onLoadTile(tile, op, shape, staging);
  const busy = running !== undefined;
  const blocked = disabledReason ?? (problems.length ? problems.join('; ') : undefined);
  const r = shown?.report;

  return (
    <section className="tuner" data-testid="tuner-dashboard">
      <header className="tuner-head">
        <h2>Autotuner</h2>
        <span className="tuner-dim mono" data-testid="tuner-device">
          {deviceId}
        </span>
      </header>

      <div className="tuner-form">
        <label className="tuner-field tuner-field-wide">
          <span>op</span>
          <select data-testid="tuner-op" value={op} onChange={(e) => setOp(e.target.value as TuneOp)}>
            {OPS.map((o) => (
              <option key={o.op} value={o.op}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <NumberField id="m" label="m" value={shape.m} onChange={(m) => setShape((s) => ({ ...s, m }))} />
        <NumberField id="n" label="n" value={shape.n} onChange={(n) => setShape((s) => ({ ...s, n }))} />
        <NumberField
          id="k"
          label="k"
          value={shape.k}
          step={256}
          min={256}
          onChange={(k) => setShape((s) => ({ ...s, k }))}
        />
        <NumberField
          id="population"
          label="population"
          value={evo.population}
          onChange={(population) => setEvo((e) => ({ ...e, population }))}
        />
        <NumberField
          id="generations"
          label="generations"
          value={evo.generations}
          onChange={(generations) => setEvo((e) => ({ ...e, generations }))}
        />
        <NumberField
          id="seed"
          label="seed"
          value={evo.seed}
          min={0}
          onChange={(seed) => setEvo((e) => ({ ...e, seed }))}
        />
        <NumberField
          id="iters"
          label="iters"
          value={evo.measureIters}
          onChange={(measureIters) => setEvo((e) => ({ ...e, measureIters }))}
        />
        <NumberField
          id="repeats"
          label="repeats"
          value={evo.repeats}
          onChange={(repeats) => setEvo((e) => ({ ...e, repeats }))}
        />
        <NumberField
          id="banks"
          label="banks"
          value={evo.banks}
          onChange={(banks) => setEvo((e) => ({ ...e, banks }))}
        />
        <div className="tuner-buttons">
          <button
            type="button"
            data-testid="tuner-hunt"
            disabled={busy || blocked !== undefined}
            title={blocked ?? 'replay the stored winner, or hunt'}
            onClick={() => void hunt(false)}
          >
            hunt
          </button>
          <button
            type="button"
            data-testid="tuner-rehunt"
            disabled={busy || blocked !== undefined}
            title="hunt again, ignoring the stored winner"
            onClick={() => void hunt(true)}
          >
            re-hunt
          </button>
          {cancelTune ? (
            <button
              type="button"
              data-testid="tuner-cancel"
              disabled={running !== 'hunt'}
              onClick={cancelTune}
            >
              cancel
            </button>
          ) : null}
          {runAutokernel ? (
            <button
              type="button"
              data-testid="tuner-autokernel"
              disabled={busy || blocked !== undefined}
              title="dispatch the stored winner (or the incumbent)"
              onClick={() => void autokernel()}
            >
              autokernel
            </button>
          ) : null}
        </div>
      </div>

      {disabledReason ? <div className="tuner-note">{disabledReason}</div> : null}
      {error ? (
        <div className="tuner-error" data-testid="tuner-error" role="alert">
          {error}
        </div>
      ) : null}
      {storeError ? <div className="tuner-error">{storeError}</div> : null}

      <div
        className="tuner-status"
        data-testid="tuner-status"
        data-state={running ?? (shown ? 'done' : 'idle')}
      >
        {running === 'hunt' ? (
          <span>
            hunting&hellip; generation {progress?.generation ?? 0} &middot; {progress?.evaluated ?? 0}{' '}
            evaluated &middot; best <span className="num">{formatMs(progress?.bestMs ?? Infinity)}</span>
          </span>
        ) : r ? (
          <span data-testid="tuner-summary" data-winner={r.winner} data-from-cache={String(shown.fromCache)}>
            {shown.fromCache ? (
              <span className="tuner-badge tuner-badge-cache" data-testid="tuner-from-cache">
                from cache
              </span>
            ) : null}{' '}
            winner <b className="mono">{r.winner || 'none passed the gate'}</b>{' '}
            <span className="num">{formatMs(r.bestMs)}</span>
            {r.incumbentMs !== undefined ? (
              <>
                {' '}
                &middot; incumbent <span className="num">{formatMs(r.incumbentMs)}</span>
                {speedup(r) ? <span className="num"> ({speedup(r)})</span> : null}
              </>
            ) : null}{' '}
            &middot; {r.entries.length} evaluated, {r.entries.filter((e) => e.verdict === 'rejected').length}{' '}
            rejected, {r.entries.filter((e) => e.verdict === 'failed-gate').length} failed gate &middot; worst
            rel {formatRel(r.worstRel)}
            {r.gatedRows !== undefined ? ` (gate on ${r.gatedRows} sampled rows)` : ''}
            {r.arm ? ` \u00b7 ${r.arm}` : ''}
            {r.plane ? ` \u00b7 plane ${r.plane}` : ''}
            {r.timing ? ` \u00b7 ${r.timing} timing` : ''} &middot;{' '}
            <span className="num">{(r.durationMs / 1000).toFixed(1)} s</span>
            {shown.stored ? <span className="tuner-dim"> &middot; saved</span> : null}
            {r.winner ? (
              <>
                {' '}
                <button
                  type="button"
                  className="tuner-link"
                  data-testid="tuner-load-winner"
                  onClick={() => {
                    const w = r.entries.find((e) => e.config === r.winner);
                    if (w) pick(w);
                  }}
                >
                  load winner
                </button>
              </>
            ) : null}
          </span>
        ) : (
          <span className="tuner-dim">
            hunt: replays the stored winner for this device and shape, or runs the genetic search
          </span>
        )}
      </div>

      {r?.finals?.length ? (
        <div className="tuner-finals" data-testid="tuner-finals">
          finalists re-timed ({r.evo.measureIters * 4} dispatches each; the fastest wins
          {finalsWallS(r.finals)}):{' '}
          {r.finals.map((f, i) => (
            <span key={f.config} data-config={f.config}>
              {i ? ' \u00b7 ' : ''}
              <span className={f.config === r.winner ? 'mono tuner-pass' : 'mono'}>{f.config}</span>{' '}
              <span className="num">{formatMs(f.ms)}</span>
              <span className="tuner-dim"> (search {formatMs(f.searchMs)})</span>
            </span>
          ))}
        </div>
      ) : null}

      {auto ? (
        <div className="tuner-auto" data-testid="tuner-autokernel-result" data-served={auto.served}>
          autokernel served <b className="mono">{auto.served}</b> ({auto.tile.wm}x{auto.tile.wn}x
          {auto.tile.rm}x{auto.tile.rn}
          {auto.staging ? `, ${auto.staging}` : ''}) &middot;{' '}
          <span className={auto.verdict.pass ? 'tuner-pass' : 'tuner-fail'}>
            {auto.verdict.pass ? 'pass' : 'FAIL'}
          </span>{' '}
          rel {formatRel(auto.verdict.relToMax)}
          {auto.msPerDispatch !== undefined ? (
            <span className="num"> &middot; {formatMs(auto.msPerDispatch)}</span>
          ) : null}
          {auto.fallback ? <span className="tuner-dim"> &middot; {auto.fallback}</span> : null}{' '}
          <button type="button" className="tuner-link" onClick={() => loadTile(auto.tile, auto.staging)}>
            load
          </button>
        </div>
      ) : null}

      <div className="tuner-charts">
        <ConvergenceChart
          bestPerGeneration={view.bestPerGeneration}
          incumbentMs={r?.incumbentMs}
          winnerRetimedMs={r?.finals?.length ? r.bestMs : undefined}
        />
        <ConfigScatter entries={view.entries} winner={view.winner} onPick={pick} />
      </div>
      <ConfigTable entries={view.entries} winner={view.winner} onPick={pick} />
      <RunHistory
        runs={runs}
        deviceId={deviceId}
        selected={r ? runKey(r) : undefined}
        onShow={(run) => {
          setShown({ report: run.report, fromCache: false, stored: true });
          setOp(run.op);
          setShape({ m: run.m, n: run.n, k: run.k });
        }}
        onDelete={(run) => {
          if (!store) return;
          void store.delete(run.deviceId, run.op, run.m, run.n, run.k).then(refresh);
        }}
        onExport={() => void doExport()}
        onImport={(f) => void doImport(f)}
        importError={importError}
        importNote={importNote}
      />
    </section>
  );
}
