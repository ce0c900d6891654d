// The shape sweep tab: pick a shape param of the current config and a range (powers of two, or a
// list), run it point by point through the worker, and plot time and throughput against it; points the
// family refuses say why. Sweeps are kept with the tuning hunts (IndexedDB) and listed for re-display.
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useEffect } from 'react';
import type { RunConfig } from '../../kernels/family';
import { useServices } from '../appContext';
import {
  act,
  currentCatalog,
  setSweepForm,
  sweepAxes,
  sweepValues,
  useApp,
  type SweepPoint,
  type SweepRecord,
} from '../store';
import { fmt } from './analysis';
import './perf.css';

/**
 * Where a point sits against the adapter's measured peaks (the roofline module): its arithmetic
 * intensity (ops per byte moved) and its % of the peak at that intensity. Given, the chart adds a
 * "% of peak" line; until the roofline module is on main nobody passes it.
 */
export type SweepRoofline = (
  config: RunConfig,
  point: SweepPoint,
) => { intensity: number; percentOfPeak: number } | undefined;

const AXIS = {
  stroke: '#6b7385',
  fontSize: 11,
  fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace',
};

/** Time (fastest and median batch) and throughput against the swept value, log-log. */
export function SweepChart({
  record,
  roofline,
}: {
  record: SweepRecord;
  roofline?: SweepRoofline | undefined;
}) {
  const data = record.points
    .filter((p) => p.status === 'done' && p.ms !== undefined)
    .map((p) => {
      const config = { ...record.base, params: { ...record.base.params, [record.axis]: p.value } };
      return {
        value: p.value,
        ms: p.ms,
        medianMs: p.medianMs,
        throughput: p.throughput,
        pctPeak: roofline?.(config, p)?.percentOfPeak,
      };
    });
  const unit = record.points.find((p) => p.unit)?.unit ?? 'throughput';
  return (
    <div className="sweep-chart" data-testid="sweep-chart" data-points={data.length}>
      <ResponsiveContainer width="100%" height={240}>
        <LineChart data={data} margin={{ top: 8, right: 12, bottom: 18, left: 4 }}>
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
          <Tooltip
            contentStyle={{ background: '#141922', border: '1px solid #2a3040', fontSize: 12 }}
            formatter={(v) => (typeof v === 'number' ? fmt(v, 4) : String(v))}
          />
          <Legend wrapperStyle={{ fontSize: 11 }} />
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
          {roofline && (
            <Line
              yAxisId="tp"
              dataKey="pctPeak"
              name="% of peak"
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

const STATUS_TEXT: Record<SweepPoint['status'], string> = {
  pending: 'waiting',
  running: 'running…',
  done: 'done',
  refused: 'refused',
  failed: 'failed',
  cancelled: 'cancelled',
};

function PointTable({ record }: { record: SweepRecord }) {
  return (
    <table className="sweep-points" data-testid="sweep-points">
      <thead>
        <tr>
          <th>{record.axis}</th>
          <th>status</th>
          <th>min ms</th>
          <th>median ms</th>
          <th>batches</th>
          <th>throughput</th>
          <th>gate</th>
        </tr>
      </thead>
      <tbody>
        {record.points.map((p) => (
          <tr key={p.value} className={`st-${p.status}`} data-testid={`sweep-point-${p.value}`}>
            <td>{p.value}</td>
            <td>{STATUS_TEXT[p.status]}</td>
            {p.message ? (
              <td colSpan={5} className="why" data-testid={`sweep-why-${p.value}`}>
                {p.message}
              </td>
            ) : (
              <>
                <td className="num timing">{fmt(p.ms, 4)}</td>
                <td className="num timing">{fmt(p.medianMs, 4)}</td>
                <td className="num timing">{p.batches ?? '–'}</td>
                <td className="num timing">
                  {p.throughput !== undefined ? `${fmt(p.throughput, 3)} ${p.unit ?? ''}` : '–'}
                </td>
                <td className={p.pass === false ? 'bad' : p.pass ? 'good' : ''}>
                  {p.pass === undefined ? '–' : p.pass ? 'pass' : 'FAIL'}
                </td>
              </>
            )}
          </tr>
        ))}
      </tbody>
    </table>
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
          <SweepChart record={sweep.current} />
          <PointTable record={sweep.current} />
        </section>
      )}
      {sweep.stored.length > 0 && (
        <section className="sweep-stored">
          <h4>Stored sweeps</h4>
          <ul data-testid="sweep-stored">
            {sweep.stored.map((r) => (
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
      )}
    </div>
  );
}
