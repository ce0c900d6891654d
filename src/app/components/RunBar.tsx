// The run bar, always in view at the top: Run (Ctrl/Alt+Enter anywhere) and Cancel, why a run cannot
// start, the progress of the run in flight (or that it waits behind the tuner's hunt), and how it ended.
import { safeText } from '../../kernels/quant/untrustedText';
import { useServices } from '../appContext';
import { draftProblems, runBlockers, useApp } from '../store';
import { blockerText } from './runBlocked';

export function RunBar() {
  const { controller } = useServices();
  const run = useApp((s) => s.run);
  const blockers = useApp(runBlockers);
  const drafts = useApp((s) => draftProblems(s.drafts).length);
  const hunt = useApp((s) => (s.tuner.hunt?.status === 'running' ? s.tuner.hunt : undefined));
  const running = run.status === 'running';
  const why = blockerText(blockers, drafts);
  return (
    <div className="runbar" data-testid="runbar">
      <button
        type="button"
        className="primary"
        onClick={() => controller.runNow()}
        disabled={blockers.length > 0}
        title={why || 'run the kernel, check it against the oracle and time it'}
        data-testid="run"
      >
        Run <kbd>Ctrl/Alt+Enter</kbd>
      </button>
      <button type="button" onClick={() => controller.cancelRun()} disabled={!running} data-testid="cancel">
        Cancel
      </button>
      <div className="run-line">
        {why ? (
          <span className="blocked" data-testid="run-blocked">
            Cannot run: {why}
          </span>
        ) : running && run.queued ? (
          <span className="queued" data-testid="run-queued">
            Queued behind the tuner&apos;s hunt
            {hunt ? ` (generation ${hunt.generation}, ${hunt.entries.length} configs measured)` : ''}: it
            starts when the hunt ends.{' '}
            <button
              type="button"
              className="link"
              onClick={() => controller.tuner.cancel()}
              data-testid="cancel-hunt"
            >
              Cancel the hunt
            </button>
          </span>
        ) : running ? (
          <span className="progress" data-testid="progress">
            <span className="bar">
              <span style={{ width: `${Math.round((run.fraction ?? 0) * 100)}%` }} />
            </span>
            <span className="stage">{run.stage ?? 'running'}…</span>
          </span>
        ) : run.status === 'generating' ? (
          <span className="muted">generating the kernel…</span>
        ) : run.status === 'cancelled' ? (
          <span className="muted" data-testid="run-cancelled">
            Run cancelled
            {run.cancelMs !== undefined ? ` (answered in ${(run.cancelMs / 1000).toFixed(2)} s)` : ''}.
          </span>
        ) : run.status === 'compile-error' ? (
          <span className="bad" data-testid="run-compile-error">
            The edited WGSL does not compile (see the editor).
          </span>
        ) : run.status === 'error' && run.error ? (
          // The worker's message may quote a tensor or file name: escaped, its own line breaks kept.
          <span className="bad" role="alert" data-testid="run-error">
            {run.error.kind === 'shape'
              ? 'Config rejected'
              : run.error.kind === 'device-lost'
                ? 'Device lost'
                : run.error.kind === 'file'
                  ? 'Model file problem'
                  : 'Run failed'}
            : {safeText(run.error.message, { keepNewlines: true })}
          </span>
        ) : null}
      </div>
    </div>
  );
}
