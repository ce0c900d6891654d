// The shape sweep tab: pick a shape param of the current config and a range (powers of two, or a
// list), run it point by point through the worker, and plot time, throughput and % of the adapter's
// measured peaks against it, with the sweep's points on the roofline; points the family refuses, and
// points that fail, say why in the table and stay out of the charts. Sweeps are kept with the tuning
// hunts (IndexedDB) and listed for re-display.
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useEffect } from 'react';
import { useServices } from '../appContext';
import { MeasurePeaksButton, useAdapterPeaks, type AdapterPeaks } from '../perf/adapterPeaks';
import { honestPeak, missingRoofText, percent, rooflineChart, si } from '../perf/perfView';
import { CHART_AXIS as AXIS, RooflineChart } from '../perf/RooflineChart';
import {
  sweepPeaksUse,
  sweepRoofline,
  sweepView,
  type SweepChartRow,
  type SweepPeaksUse,
  type SweepPointPerf,
} from '../perf/sweepPerf';
import {
  act,
  currentCatalog,
  setSweepForm,
  sweepAxes,
  sweepValues,
  useApp,
  type SweepForm,
  type SweepPoint,
  type SweepRecord,
} from '../store';
import { fmt } from './analysis';
import './perf.css';

/** The sweep's throughput unit (the family's: int8 TOPS or TFLOP/s), once for the chart and the table. */
const throughputUnit = (record: SweepRecord) => record.points.find((p) => p.unit)?.unit ?? 'throughput';

/** % of peak never plots below 100 at the top, so a low curve reads as low. */
const pctDomainTop = (dataMax: number) => Math.max(100, Math.ceil(dataMax));

/**
 * Time (fastest and median batch) and throughput against the swept value, log-log; with `withPeak`, the
 * % of peak (at the median) on its own axis. data-points counts the plotted values, data-peak-points
 * those with a % of peak. Over 80 lines on purpose: the JSX is one declarative recharts tree (axes, lines)
 * read top to bottom; cut into components, each would take the same rows and the picture would read in
 * pieces.
 */
export function SweepChart({
  record,
  rows,
  withPeak,
}: {
  record: SweepRecord;
  rows: readonly SweepChartRow[];
  withPeak: boolean;
}) {
  const unit = throughputUnit(record);
  return (
    <div
      className="sweep-chart"
      data-testid="sweep-chart"
      data-points={rows.length}
      data-peak-points={rows.filter((r) => r.pctPeak !== undefined).length}
    >
      <ResponsiveContainer width="100%" height={240}>
        <LineChart data={rows} margin={{ top: 8, right: 12, bottom: 18, left: 4 }}>
          <CartesianGrid stroke="#2a3040" />
          <XAxis
            dataKey="value"
            type="number"
            scale="log"
            domain={['dataMin', 'dataMax']}
            {...AXIS}
            label={{
              value: record.axis,
              position: 'insideBottom',
              offset: -8,
              fill: '#8a93a6',
              fontSize: 11,
            }}
          />
          <YAxis
            yAxisId="ms"
            scale="log"
            domain={['auto', 'auto']}
            {...AXIS}
            tickFormatter={(v: number) => fmt(v, 2)}
          />
          <YAxis yAxisId="tp" orientation="right" {...AXIS} tickFormatter={(v: number) => fmt(v, 2)} />
          {withPeak && (
            <YAxis
              yAxisId="pct"
              orientation="right"
              domain={[0, pctDomainTop]}
              {...AXIS}
              tickFormatter={(v: number) => `${fmt(v, 2)}%`}
            />
          )}
          <Tooltip
            contentStyle={{ background: '#141922', border: '1px solid #2a3040', fontSize: 12 }}
            formatter={(v) => (typeof v === 'number' ? fmt(v, 4) : String(v))}
          />
          {/* Pushed down clear of the x axis's label, which sits under the axis. */}
          <Legend wrapperStyle={{ fontSize: 11, paddingTop: 10 }} />
          <Line
            yAxisId="ms"
            dataKey="ms"
            name="ms (fastest batch)"
            stroke="#5ec4ff"
            dot
            isAnimationActive={false}
          />
          <Line
            yAxisId="ms"
            dataKey="medianMs"
            name="ms (median)"
            stroke="#5ec4ff"
            strokeDasharray="4 3"
            dot={false}
            isAnimationActive={false}
          />
          <Line
            yAxisId="tp"
            dataKey="throughput"
            name={unit}
            stroke="#ffd166"
            dot
            isAnimationActive={false}
          />
          {withPeak && (
            <Line
              yAxisId="pct"
              dataKey="pctPeak"
              name="% of peak (median)"
              stroke="#c792ea"
              dot
              isAnimationActive={false}
            />
          )}
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}

/** What the sweep's % of peak is measured against, or why there is none (with the probe to run). */
function PeaksLine({
  use,
  peaks,
  record,
  roofOps,
}: {
  use: SweepPeaksUse;
  peaks: AdapterPeaks;
  record: SweepRecord;
  /** The compute roof of the sweep's arithmetic and arm, ops/s (none: the probe has no figure for it). */
  roofOps: number | undefined;
}) {
  const probe = peaks.probe;
  return (
    <>
      <p className="small" data-testid="sweep-peaks" data-use={use}>
        {use === 'measured' && probe ? (
          <>
            % of peak at each point&apos;s median, against this adapter&apos;s peaks (
            <span className="num timing" title={`probe of ${new Date(probe.at).toLocaleString()}`}>
              {fmt(probe.peaks.bandwidthGBs)} GB/s
            </span>{' '}
            copy
            {roofOps !== undefined ? (
              <>
                , <span className="num timing">{si(roofOps)}ops/s</span> for this arm
              </>
            ) : (
              ', no compute peak for this arm'
            )}
            ){' '}
          </>
        ) : null}
        {use === 'no-probe' ? (
          <span className="muted">
            No peaks measured on this adapter yet: % of peak and the roofline need them.{' '}
          </span>
        ) : null}
        {use === 'other-adapter' ? (
          <span className="muted">
            Swept on another adapter ({record.deviceId}): this one&apos;s peaks do not apply, so there is no %
            of peak.
          </span>
        ) : null}
        {use === 'not-recorded' ? (
          <span className="muted">
            Stored before sweeps kept each point&apos;s bytes and ops: times only, no % of peak.
          </span>
        ) : null}
        {use === 'measured' || use === 'no-probe' ? (
          <MeasurePeaksButton peaks={peaks} testId="sweep-probe" />
        ) : null}
      </p>
      {peaks.error ? (
        <p className="run-error" role="alert" data-testid="sweep-peaks-error">
          {peaks.error}
        </p>
      ) : null}
    </>
  );
}

const STATUS_TEXT: Record<SweepPoint['status'], string> = {
  pending: 'waiting',
  running: 'running…',
  done: 'done',
  refused: 'refused',
  failed: 'failed',
  cancelled: 'cancelled',
};

function PointTable({
  record,
  perf,
}: {
  record: SweepRecord;
  perf: readonly (SweepPointPerf | undefined)[];
}) {
  return (
    <div className="sweep-points-scroll">
      <table className="sweep-points" data-testid="sweep-points">
        <thead>
          <tr>
            <th>{record.axis}</th>
            <th>status</th>
            <th>fastest ms</th>
            <th>median ms</th>
            <th>batches</th>
            <th title="throughput: ops / fastest batch">{throughputUnit(record)}</th>
            <th title="bytes moved / median">GB/s</th>
            <th title="arithmetic intensity: ops per byte moved">ops/B</th>
            <th title="at the median, of the roof above the point">% of peak</th>
            <th>gate</th>
          </tr>
        </thead>
        <tbody>
          {record.points.map((p, i) => {
            const at = perf[i];
            return (
              <tr key={p.value} className={`st-${p.status}`} data-testid={`sweep-point-${p.value}`}>
                <td>{p.value}</td>
                <td>{STATUS_TEXT[p.status]}</td>
                {p.message ? (
                  <td colSpan={8} className="why" data-testid={`sweep-why-${p.value}`}>
                    {p.message}
                  </td>
                ) : (
                  <>
                    <td className="num timing">{fmt(p.ms, 4)}</td>
                    <td className="num timing">{fmt(p.medianMs, 4)}</td>
                    <td className="num timing">{p.batches ?? '–'}</td>
                    <td className="num timing">{fmt(p.throughput, 3)}</td>
                    <td className="num timing">{at ? fmt(at.gbs, 3) : '–'}</td>
                    <td className="num" title={at ? `${si(at.bytes)}B, ${si(at.ops)}ops` : undefined}>
                      {at ? fmt(at.intensity, 3) : '–'}
                    </td>
                    <td
                      className="num timing"
                      data-testid={`sweep-pct-${p.value}`}
                      title={
                        honestPeak(at?.point)
                          ? `${honestPeak(at?.point)!.bound}-bound`
                          : at?.point
                            ? 'no compute peak measured for this arm: the bandwidth alone is no % of peak'
                            : undefined
                      }
                    >
                      {percent(honestPeak(at?.point)?.fraction)}
                    </td>
                    <td className={p.pass === false ? 'bad' : p.pass ? 'good' : ''}>
                      {p.pass === undefined ? '–' : p.pass ? 'pass' : 'FAIL'}
                    </td>
                  </>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A sweep on display: its peaks line, the time chart, the roofline of its points, the table. */
function SweepResult({ record }: { record: SweepRecord }) {
  const peaks = useAdapterPeaks();
  const deviceId = useApp((s) => s.device.deviceId);
  const use = sweepPeaksUse(record, deviceId, peaks.probe?.peaks);
  const held = use === 'measured' ? peaks.probe?.peaks : undefined;
  const view = sweepView(record, held);
  const roofline = held ? sweepRoofline(record, view.perf, held) : undefined;
  return (
    <>
      <PeaksLine use={use} peaks={peaks} record={record} roofOps={roofline?.roof.ops} />
      <SweepChart record={record} rows={view.chart} withPeak={held !== undefined} />
      {roofline ? (
        <RooflineChart
          chart={rooflineChart(
            roofline.rows,
            roofline.roof,
            [],
            0,
            missingRoofText(roofline.arithmetic, roofline.arm, peaks.probe?.skipped ?? []),
          )}
          runName={`${record.axis} values`}
          testId="sweep-roofline"
          labelRun
        />
      ) : null}
      <PointTable record={record} perf={view.perf} />
    </>
  );
}

/** The sweep's range: powers of two from one value to another, or a list of values. */
function SweepRangeFields({ form, running }: { form: SweepForm; running: boolean }) {
  return (
    <>
      <label>
        <input
          type="radio"
          checked={form.mode === 'pow2'}
          onChange={() => act(setSweepForm, { mode: 'pow2' })}
          disabled={running}
          data-testid="sweep-mode-pow2"
        />
        powers of two from
        <input
          type="number"
          className="short"
          value={form.from}
          min={1}
          onChange={(e) => act(setSweepForm, { from: Number(e.target.value) })}
          disabled={running || form.mode !== 'pow2'}
          data-testid="sweep-from"
        />
        to
        <input
          type="number"
          className="short"
          value={form.to}
          min={1}
          onChange={(e) => act(setSweepForm, { to: Number(e.target.value) })}
          disabled={running || form.mode !== 'pow2'}
          data-testid="sweep-to"
        />
      </label>
      <label>
        <input
          type="radio"
          checked={form.mode === 'list'}
          onChange={() => act(setSweepForm, { mode: 'list' })}
          disabled={running}
          data-testid="sweep-mode-list"
        />
        values
        <input
          type="text"
          value={form.list}
          onChange={(e) => act(setSweepForm, { list: e.target.value })}
          disabled={running || form.mode !== 'list'}
          data-testid="sweep-list"
        />
      </label>
    </>
  );
}

/** The sweep's form: the axis, its range (powers of two or a list), and start or cancel. */
function SweepFormBar({
  axes,
  axis,
  form,
  running,
  ready,
}: {
  axes: string[];
  axis: string;
  form: SweepForm;
  running: boolean;
  ready: boolean;
}) {
  const { controller } = useServices();
  const range = sweepValues(form);
  return (
    <div className="sweep-form">
      <label>
        sweep
        <select
          value={axis}
          onChange={(e) => act(setSweepForm, { axis: e.target.value })}
          disabled={running}
          data-testid="sweep-axis"
        >
          {axes.map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
      </label>
      <SweepRangeFields form={form} running={running} />
      {running ? (
        <button type="button" onClick={() => controller.sweep.cancel()} data-testid="sweep-cancel">
          Cancel sweep
        </button>
      ) : (
        <button
          type="button"
          className="primary"
          disabled={!ready || 'error' in range}
          onClick={() => controller.sweep.start()}
          data-testid="sweep-start"
        >
          Sweep {'values' in range ? `${range.values.length} points` : ''}
        </button>
      )}
    </div>
  );
}

/** The stored sweeps, each to show again or delete. */
function StoredSweeps({ stored }: { stored: readonly SweepRecord[] }) {
  const { controller } = useServices();
  return (
    <section className="sweep-stored">
      <h4>Stored sweeps</h4>
      <ul data-testid="sweep-stored">
        {stored.map((r) => (
          <li key={r.key}>
            <button type="button" className="link" onClick={() => controller.sweep.show(r.key)}>
              {r.kernel} over {r.axis} ({r.points.length} points, {r.status})
            </button>{' '}
            <span className="muted small timing">{r.startedAt}</span>{' '}
            <button type="button" className="link" onClick={() => controller.sweep.remove(r.key)}>
              delete
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

export default function SweepView() {
  const { controller } = useServices();
  const sweep = useApp((s) => s.sweep);
  const catalog = useApp((s) => currentCatalog(s));
  const ready = useApp((s) => s.device.status === 'ready');
  const axes = sweepAxes(catalog);
  const running = sweep.current?.status === 'running';
  const form = sweep.form;
  const axis = axes.includes(form.axis) ? form.axis : (axes[0] ?? '');
  const range = sweepValues(form);
  useEffect(() => {
    void controller.sweep.refresh();
  }, [controller]);
  useEffect(() => {
    if (axis !== form.axis && axis) act(setSweepForm, { axis });
  }, [axis, form.axis]);
  if (!axes.length)
    return <p className="muted pad">{catalog.title} has a fixed shape: there is nothing to sweep.</p>;
  return (
    <div className="view sweep-view" data-testid="sweep-view">
      <SweepFormBar axes={axes} axis={axis} form={form} running={running} ready={ready} />
      <p className="muted small">
        Runs {catalog.title} as configured ({catalog.controls.length ? 'its other params fixed' : ''}), with
        the generated kernel, timed as the Run options say; the results are kept with the tuning runs.
      </p>
      {(sweep.error ?? ('error' in range ? range.error : undefined)) && (
        <p className="bad" data-testid="sweep-error">
          {sweep.error ?? ('error' in range ? range.error : '')}
        </p>
      )}
      {sweep.current && (
        <section data-testid="sweep-current" data-status={sweep.current.status}>
          <h4>
            {sweep.current.kernel} over {sweep.current.axis}{' '}
            <span className="muted">({sweep.current.status})</span>
          </h4>
          <SweepResult record={sweep.current} />
        </section>
      )}
      {sweep.stored.length > 0 && <StoredSweeps stored={sweep.stored} />}
    </div>
  );
}
