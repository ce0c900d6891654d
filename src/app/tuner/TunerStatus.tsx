// What the tuner is doing and what it found: the hunt's status line (running, interrupted and resumable,
// failed, or its summary with the winner against the incumbent), the finalists' re-timing, and the
// autokernel's dispatch. Read from the store; the buttons go to the tuner controller.
import type { TuneRecordEntry, TuneReport } from '../../workers/protocol';
import { useServices } from '../appContext';
import { useApp, type HuntState } from '../store';
import { formatMs, formatRel, huntSummary } from './tunerData';

/** A running hunt: its stage, generation, evaluated configs and best time so far. */
function RunningLine({ hunt }: { hunt: HuntState }) {
  return (
    <span data-testid="tuner-running">
      {hunt.stage ?? 'hunting'}&hellip; generation {hunt.generation} &middot; {hunt.entries.length} evaluated
      {hunt.resumed ? ` (${hunt.resumed} replayed from before)` : ''} &middot; best{' '}
      <span className="num">{formatMs(hunt.bestMs)}</span>
    </span>
  );
}

/** An interrupted hunt: what it measured, and resume (on the device it was measured on). */
function InterruptedLine({ hunt }: { hunt: HuntState }) {
  const { controller } = useServices();
  const deviceReady = useApp((s) => s.device.status === 'ready');
  const deviceId = useApp((s) => s.device.deviceId);
  return (
    <span data-testid="tuner-interrupted">
      <span className="tuner-badge tuner-badge-interrupted">interrupted</span> {hunt.entries.length} configs
      measured{hunt.stored ? ', saved' : ''}.{' '}
      <button
        type="button"
        className="tuner-link"
        data-testid="tuner-resume"
        disabled={!deviceReady || hunt.deviceId !== deviceId}
        title={hunt.deviceId !== deviceId ? `measured on another device (${hunt.deviceId})` : undefined}
        onClick={() => controller.tuner.resume()}
      >
        resume
      </button>{' '}
      <span className="tuner-dim">(what was measured is replayed, not measured again)</span>
    </span>
  );
}

/** A finished hunt: the winner (or the incumbent, or an unproven pick), its counts, gate and timing. */
function SummaryLine({ hunt, r }: { hunt: HuntState; r: TuneReport }) {
  const { controller } = useServices();
  const summary = huntSummary(r);
  const what = summary.kind === 'unproven' ? 'pick' : 'winner';
  const load = (e: TuneRecordEntry | undefined) =>
    e && controller.tuner.load({ ...hunt.base, arm: e.arm, params: { ...hunt.base.params, ...e.params } });
  return (
    <span
      data-testid="tuner-summary"
      data-winner={r.winner}
      data-kind={summary.kind}
      data-from-cache={String(!!hunt.fromCache)}
    >
      {hunt.fromCache ? (
        <span className="tuner-badge tuner-badge-cache" data-testid="tuner-from-cache">
          from cache
        </span>
      ) : null}{' '}
      {summary.label} <b className="mono">{r.winner || 'none passed the gate'}</b>{' '}
      {r.winner ? <span className="num">{formatMs(r.bestMs)}</span> : null}
      {summary.versus ? (
        <span data-testid="tuner-versus"> &middot; {summary.versus}</span>
      ) : null} &middot; {r.entries.length} evaluated,{' '}
      {r.entries.filter((e) => e.verdict === 'rejected').length} rejected,{' '}
      {r.entries.filter((e) => e.verdict === 'failed-gate').length} failed the gate &middot; worst rel{' '}
      {formatRel(r.worstRel)}
      {r.gatedRows !== undefined ? ` (gate on ${r.gatedRows} sampled rows)` : ''}
      {r.winnerVerdict
        ? ` \u00b7 ${what} ${r.winnerVerdict.pass ? 'passes' : 'FAILS'} ${r.winnerVerdict.gate} on its whole output`
        : ''}
      {r.timing ? ` \u00b7 ${r.timing} timing` : ''} &middot;{' '}
      <span className="num">{(r.durationMs / 1000).toFixed(1)} s</span>
      {hunt.stored ? <span className="tuner-dim"> &middot; saved</span> : null}
      {r.winnerConfig ? (
        <>
          {' '}
          <button
            type="button"
            className="tuner-link"
            data-testid="tuner-load-winner"
            onClick={() => r.winnerConfig && controller.tuner.load(r.winnerConfig)}
          >
            load {what}
          </button>
        </>
      ) : (
        <button
          type="button"
          className="tuner-link"
          hidden={!r.winner}
          onClick={() => load(r.entries.find((e) => e.config === r.winner))}
        >
          load {what}
        </button>
      )}
    </span>
  );
}

/** The hunt's status line. */
export function TunerStatus() {
  const hunt = useApp((s) => s.tuner.hunt);
  if (!hunt)
    return (
      <div className="tuner-status" data-testid="tuner-status" data-state="idle">
        <span className="tuner-dim">
          hunt: replays the stored winner for this device and problem, or runs the genetic search
        </span>
      </div>
    );
  const r = hunt.report;
  return (
    <div className="tuner-status" data-testid="tuner-status" data-state={hunt.status}>
      <span className="tuner-problem mono">
        {hunt.op} · {hunt.problem}
      </span>{' '}
      {hunt.status === 'running' ? (
        <RunningLine hunt={hunt} />
      ) : hunt.status === 'interrupted' ? (
        <InterruptedLine hunt={hunt} />
      ) : hunt.status === 'error' ? (
        <span className="tuner-error" role="alert" data-testid="tuner-error">
          {hunt.error}
        </span>
      ) : r ? (
        <SummaryLine hunt={hunt} r={r} />
      ) : null}
    </div>
  );
}
