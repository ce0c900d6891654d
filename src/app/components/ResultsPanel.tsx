// The verdict of the last run against the CPU oracle under the family's gate, its error (and, where the
// family has a full-precision reference, the split into quantization and kernel error), and its timing:
// the whole plan and each pass as separate measurements, with how they were taken (batch size, runs,
// timestamp resolution) and a mark on figures too close to the resolution to trust. Without WebGPU it
// shows the CPU oracle's output instead.
import { lazy, Suspense } from 'react';
import type { RunOutcome } from '../../workers/protocol';
import { spreadOf } from '../../kernels/perf/spread';
import { gateText } from '../../kernels/compare';
import { excerpt } from '../../kernels/quant/untrustedText';
import { useServices } from '../appContext';
import { catalogIn, configKey, isCurrentResult, useApp } from '../store';
import { errorSplit, fmt, passSlowerNote } from '../views/analysis';
import { Problems } from './Controls';
import { LINK_WAITING } from './runBlocked';

/** A duration with a unit that keeps it readable: 12.3 µs, 0.456 ms, 1.23 s. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 0.1) return `${fmt(ms * 1000)} µs`;
  if (ms < 1000) return `${fmt(ms)} ms`;
  return `${fmt(ms / 1000)} s`;
}

/** A timer step in ns as people read it: 100 µs, 65.5 µs, 1 ns. */
export function resolution(ns: number): string {
  if (ns >= 1e6) return `${fmt(ns / 1e6)} ms`;
  if (ns >= 1e3) return `${fmt(ns / 1e3)} µs`;
  return `${fmt(ns)} ns`;
}

const PerfPanel = lazy(() => import('../perf/PerfPanel'));

const plural = (n: number, word: string) =>
  `${n} ${word}${n === 1 ? '' : /(s|sh|ch|x)$/.test(word) ? 'es' : 's'}`;

function Timing({ o }: { o: RunOutcome }) {
  const t = o.timing;
  if (!t)
    return (
      <p className="muted small" data-testid="untimed">
        Not timed (correctness run only: {duration(o.runWallMs)} wall clock, compile excluded).
      </p>
    );
  const coarse = (
    <span
      className="coarse"
      title="within 10x of the timer's resolution: no finer than one step"
      data-testid="coarse-mark"
    >
      coarse
    </span>
  );
  const multi = (t.passes?.length ?? 0) > 1;
  return (
    <div className="timing" data-testid="timing">
      <dl className="metrics">
        <div>
          <dt>{multi ? 'whole plan, ms per run' : 'ms per run'}</dt>
          <dd data-testid="ms">
            <span className="num">{fmt(t.ms)}</span> {t.coarse && coarse}
          </dd>
        </div>
        <div>
          <dt>
            {o.throughput?.unit ?? 'throughput'}
            {multi ? ' (whole plan)' : ''}
          </dt>
          <dd data-testid="tops">
            <span className="num">{o.throughput ? fmt(o.throughput.value) : '–'}</span>
          </dd>
        </div>
      </dl>
      <p className="small muted" data-testid="timing-detail">
        fastest of {plural(t.samples.length, 'batch')} × {plural(t.runs, 'run')} back to back (median{' '}
        <span className="num">{fmt(spreadOf(t.samples).median)}</span>, p90{' '}
        <span className="num">{fmt(spreadOf(t.samples).p90)}</span>, max{' '}
        <span className="num">{fmt(spreadOf(t.samples).max)}</span> ms) ·{' '}
        {t.method === 'timestamp' ? 'GPU timestamps' : 'wall clock (no timestamp queries here)'}, resolution{' '}
        <span className="num">{resolution(t.resolutionNs)}</span>
      </p>
      {multi && (
        <div className="passes" data-testid="pass-ms">
          <h4>Each pass timed alone (separate measurements; they need not add up to the plan)</h4>
          <ul>
            {t.passes!.map((p, i) => (
              <li key={i} data-testid={`pass-ms-${i}`}>
                <span>
                  {i + 1}. {p.label}
                </span>{' '}
                <span className="num">{fmt(p.ms)} ms</span> {p.coarse && coarse}
                {p.samples.length ? (
                  <span className="muted small">
                    {' '}
                    (median {fmt(spreadOf(p.samples).median)}, max {fmt(spreadOf(p.samples).max)}, n{' '}
                    {p.samples.length})
                  </span>
                ) : null}
              </li>
            ))}
          </ul>
          {passSlowerNote(t.ms, t.passes!) && (
            <p className="muted small" data-testid="pass-slower-note">
              {passSlowerNote(t.ms, t.passes!)}
            </p>
          )}
        </div>
      )}
      <Suspense fallback={<p className="muted small">loading the roofline…</p>}>
        <PerfPanel o={o} />
      </Suspense>
    </div>
  );
}

function Split({ o }: { o: RunOutcome }) {
  if (!o.fullPrecision) return null;
  const s = errorSplit(o.output, o.oracle, o.fullPrecision);
  return (
    <div className="results-split small" data-testid="results-split">
      <h4>Against full precision (f32 GEMM on the unquantized activation and the dequantized weight)</h4>
      <dl className="metrics">
        <div>
          <dt>quantization</dt>
          <dd className="num" data-testid="results-split-quant">
            {fmt(s.quantization)}
          </dd>
        </div>
        <div>
          <dt>kernel</dt>
          <dd className="num">{fmt(s.kernel)}</dd>
        </div>
        <div>
          <dt>total</dt>
          <dd className="num">{fmt(s.total)}</dd>
        </div>
      </dl>
    </div>
  );
}

function OraclePreview() {
  const { controller } = useServices();
  const oracle = useApp((s) => (s.oracle?.key === configKey(s.config) ? s.oracle : undefined));
  const status = useApp((s) => s.device.status);
  if (status !== 'unavailable') return null;
  if (!oracle)
    return (
      <button type="button" onClick={() => controller.computeOracle()} data-testid="compute-oracle">
        Compute the CPU oracle&apos;s output
      </button>
    );
  if (oracle.status === 'running') return <p className="muted">computing the CPU oracle…</p>;
  if (oracle.status === 'error')
    return (
      <p className="run-error" data-testid="oracle-error">
        {oracle.error}
      </p>
    );
  const { rows = 0, cols = 0, values } = oracle;
  const shownRows = Math.min(rows, 6);
  const shownCols = Math.min(cols, 6);
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values ?? []) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return (
    <div className="oracle-preview" data-testid="oracle-preview">
      <h3>
        CPU oracle output, {rows} × {cols} (exact; no GPU run)
      </h3>
      <p className="small muted">
        range <span className="num">{fmt(lo)}</span> … <span className="num">{fmt(hi)}</span>; the first{' '}
        {shownRows} × {shownCols}:
      </p>
      <table className="values">
        <tbody>
          {Array.from({ length: shownRows }, (_, r) => (
            <tr key={r}>
              {Array.from({ length: shownCols }, (_, c) => (
                <td key={c} className="num">
                  {fmt(values?.[r * cols + c], 4)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The run's verdict against the oracle, and whether it is of an edit, an older config or the last good run. */
function Verdict({ o, stale, current }: { o: RunOutcome; stale: boolean; current: boolean }) {
  return (
    <div
      className={`verdict ${o.verdict.pass ? 'pass' : 'fail'} ${stale ? 'stale' : ''}`}
      data-testid="verdict"
    >
      {o.verdict.pass ? (
        <>
          <strong>✓ matches oracle</strong> <span className="nowrap">({gateText(o.verdict.gate)})</span>
        </>
      ) : (
        <>
          <strong>✗ differs from oracle</strong>{' '}
          <span>
            {o.verdict.mismatches} of {o.rows * o.cols} elements fail {gateText(o.verdict.gate)}
          </span>
        </>
      )}
      {o.edited && <span className="badge warn">edited kernel</span>}
      {!current && <span className="badge">previous config</span>}
      {stale && current && <span className="badge">last successful run</span>}
    </div>
  );
}

/** The error against the oracle and the output's shape. */
function Metrics({ o }: { o: RunOutcome }) {
  return (
    <dl className="metrics">
      <div>
        <dt>rel_to_max</dt>
        <dd className="num" data-testid="rel-to-max">
          {fmt(o.verdict.relToMax)}
        </dd>
      </div>
      <div>
        <dt>max |Δ|</dt>
        <dd className="num" data-testid="max-delta">
          {fmt(o.verdict.maxAbsDelta)}
        </dd>
      </div>
      <div>
        <dt>output</dt>
        <dd className="num">
          {o.rows} × {o.cols}
        </dd>
      </div>
    </dl>
  );
}

export function ResultsPanel() {
  const outcome = useApp((s) => s.outcome);
  const run = useApp((s) => s.run);
  const linkWaiting = useApp((s) => s.pendingLink !== undefined);
  const current = useApp((s) => (s.outcome ? isCurrentResult(s, s.outcome.config) : true));
  // A config's arithmetic: the worker's throughput unit says it (a family may have routes of both
  // kinds); an untimed run falls back to the family's.
  const arithmetic = useApp((s) =>
    s.outcome?.throughput
      ? s.outcome.throughput.unit === 'TFLOP/s'
        ? 'f16'
        : 'int8'
      : s.outcome
        ? catalogIn(s, s.outcome.config.kernel)?.arithmetic
        : undefined,
  );
  // After a failed run the last result stays for reference, marked as such.
  const stale = run.status === 'compile-error' || run.status === 'error';
  const o = outcome;
  return (
    <section className="results" aria-label="Results" data-testid="results">
      <Problems />
      <OraclePreview />
      {o ? (
        <>
          <Verdict o={o} stale={stale} current={current} />
          {arithmetic === 'f16' && (
            <p className="small muted" data-testid="oracle-kind">
              The oracle emulates the kernel&apos;s f16 rounding (operands rounded to f16, f32 accumulation):
              the verdict is against that emulation; the split below is against full precision.
            </p>
          )}
          <Metrics o={o} />
          <Timing o={o} />
          <Split o={o} />
          {o.tensorRead && (
            <p className="small muted" data-testid="tensor-read">
              weight <code>{excerpt(o.tensorRead.tensor)}</code>: {o.tensorRead.bytes.toLocaleString('en-US')}{' '}
              bytes read from its file once, in {duration(o.tensorRead.ms)} (kept for the next runs)
            </p>
          )}
          {o.warnings.length > 0 && (
            <ul className="warnings">
              {o.warnings.map((w, i) => (
                <li key={i}>{w.message}</li>
              ))}
            </ul>
          )}
        </>
      ) : linkWaiting ? (
        <p className="muted" data-testid="results-link-waiting">
          {LINK_WAITING}
        </p>
      ) : (
        run.status !== 'error' && <p className="muted">No run yet.</p>
      )}
    </section>
  );
}
