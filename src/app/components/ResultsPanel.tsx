// The verdict of the last run against the JS oracle under the seed's gate, its error and speed.
import { useServices } from '../appContext';
import { configKey, configProblems, runConfig, useApp } from '../store';
import { fmt } from '../views/analysis';

function gateText(gate: { kind: 'bit-exact' } | { kind: 'rel-to-max'; tol: number }): string {
  return gate.kind === 'bit-exact' ? 'bit-exact' : `rel_to_max < ${fmt(gate.tol, 2)}`;
}

export function ResultsPanel() {
  const { families } = useServices();
  const problems = useApp((s) => [
    ...new Set([...configProblems(s, families), ...(s.generated?.problems ?? [])]),
  ]);
  const outcome = useApp((s) => s.outcome);
  const run = useApp((s) => s.run);
  const current = useApp((s) => (s.outcome ? configKey(s.outcome.config) === configKey(runConfig(s)) : true));
  // After a failed run the last result stays for reference, marked as such.
  const stale = run.status === 'compile-error' || run.status === 'error';

  return (
    <section className="results" aria-label="Results" data-testid="results">
      {problems.length > 0 && (
        <div className="run-error" role="alert" data-testid="results-problems">
          <strong>Cannot run this config:</strong> {problems.join('; ')}
        </div>
      )}
      <RunStatusLine />
      {outcome ? (
        <>
          <div
            className={`verdict ${outcome.verdict.pass ? 'pass' : 'fail'} ${stale ? 'stale' : ''}`}
            data-testid="verdict"
          >
            {outcome.verdict.pass ? (
              <>
                <strong>✓ matches oracle</strong> <span>({gateText(outcome.verdict.gate)})</span>
              </>
            ) : (
              <>
                <strong>✗ differs from oracle</strong>{' '}
                <span>
                  {outcome.verdict.mismatches} of {outcome.rows * outcome.cols} elements fail{' '}
                  {gateText(outcome.verdict.gate)}
                </span>
              </>
            )}
            {outcome.edited && <span className="badge warn">edited kernel</span>}
            {!current && <span className="badge">previous config</span>}
            {stale && current && <span className="badge">last successful run</span>}
          </div>
          <dl className="metrics">
            <div>
              <dt>rel_to_max</dt>
              <dd data-testid="rel-to-max">{fmt(outcome.verdict.relToMax)}</dd>
            </div>
            <div>
              <dt>max |Δ|</dt>
              <dd data-testid="max-delta">{fmt(outcome.verdict.maxAbsDelta)}</dd>
            </div>
            <div>
              <dt>{outcome.planMs !== undefined ? 'ms / dispatch (main pass)' : 'ms / dispatch'}</dt>
              <dd data-testid="ms">
                {outcome.msPerDispatch !== undefined ? fmt(outcome.msPerDispatch) : '–'}
                {outcome.timing && (
                  <small> {outcome.timing === 'timestamp' ? 'timestamp-query' : 'wall clock'}</small>
                )}
              </dd>
            </div>
            {outcome.planMs !== undefined && (
              <div>
                <dt>whole plan ms</dt>
                <dd
                  data-testid="plan-ms"
                  title={(outcome.passMs ?? []).map((p) => `${p.label}: ${fmt(p.ms)} ms`).join('\n')}
                >
                  {fmt(outcome.planMs)}
                  {outcome.passMs && (
                    <small data-testid="pass-ms">
                      {' '}
                      = {outcome.passMs.map((p) => fmt(p.ms)).join(' + ')} alone
                    </small>
                  )}
                </dd>
              </div>
            )}
            <div>
              <dt>{outcome.planMs !== undefined ? 'TOPS (whole plan)' : 'int8 TOPS'}</dt>
              <dd data-testid="tops">{outcome.tops !== undefined ? fmt(outcome.tops) : '–'}</dd>
            </div>
            <div>
              <dt>output</dt>
              <dd>
                {outcome.rows} × {outcome.cols}
              </dd>
            </div>
          </dl>
          {outcome.warnings.length > 0 && (
            <ul className="warnings">
              {outcome.warnings.map((w, i) => (
                <li key={i}>{w.message}</li>
              ))}
            </ul>
          )}
        </>
      ) : (
        run.status !== 'error' && !problems.length && <p className="muted">No run yet.</p>
      )}
    </section>
  );
}

function RunStatusLine() {
  const run = useApp((s) => s.run);
  if (run.status === 'running') {
    return (
      <div className="progress" data-testid="progress">
        <div className="bar">
          <div style={{ width: `${Math.round((run.fraction ?? 0) * 100)}%` }} />
        </div>
        <span>{run.stage ?? 'running'}…</span>
      </div>
    );
  }
  if (run.status === 'generating') return <div className="progress muted">generating kernel…</div>;
  if (run.status === 'error' && run.error) {
    return (
      <div className="run-error" role="alert" data-testid="run-error">
        <strong>
          {run.error.kind === 'shape'
            ? 'Config rejected'
            : run.error.kind === 'device-lost'
              ? 'Device lost'
              : 'Run failed'}
          :
        </strong>{' '}
        {run.error.message}
      </div>
    );
  }
  if (run.status === 'compile-error')
    return (
      <div className="run-error" data-testid="run-compile-error">
        The edited WGSL does not compile (see the editor).
      </div>
    );
  if (run.status === 'cancelled')
    return (
      <div className="muted" data-testid="run-cancelled">
        Run cancelled.
      </div>
    );
  return null;
}
