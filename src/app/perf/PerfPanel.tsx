// A run's performance against the adapter's measured peaks: the peaks probe (run on demand, kept per
// adapter in IndexedDB, its method shown), per pass and for the plan the batches' median and spread,
// GB/s, ops/s, arithmetic intensity and % of peak, a histogram of the batches on demand, and the
// roofline with the run, its passes and the tuner's configs. Loaded lazily with recharts.
import { useState, type ReactNode } from 'react';
import { Bar, BarChart, ResponsiveContainer, XAxis, YAxis } from 'recharts';
import type { ProbeResult } from '../../kernels/perf/probe.run';
import { histogram } from '../../kernels/perf/spread';
import type { RunOutcome } from '../../workers/protocol';
import { useApp } from '../store';
import { fmt } from '../views/analysis';
import { MeasurePeaksButton, useAdapterPeaks } from './adapterPeaks';
import './perf.css';
import {
  honestPeak,
  missingRoofText,
  peaksFor,
  percent,
  perfRows,
  rooflineChart,
  si,
  type PerfRow,
} from './perfView';
import { CHART_AXIS as AXIS, axisTitle, RooflineChart } from './RooflineChart';

/** A cell's second line: the detail under its figure. */
const Sub = ({ children }: { children: ReactNode }) => <span className="sub">{children}</span>;

/** How each roof was measured: three columns, each detail under its figure, so it fits the pane. */
function Method({ probe }: { probe: ProbeResult }) {
  return (
    <div className="perf-scroll">
      <table className="perf-method small" data-testid="perf-method">
        <thead>
          <tr>
            <th>roof</th>
            <th>
              kernel <Sub>size</Sub>
            </th>
            <th>
              figure <Sub>median [min–max] ms/run, batches × runs</Sub>
            </th>
          </tr>
        </thead>
        <tbody>
          {probe.measurements.map((m) => (
            <tr key={m.kind}>
              <td className="mono">{m.kind}</td>
              <td>
                {m.what}
                <Sub>{m.size}</Sub>
              </td>
              <td className="num">
                {m.kind === 'bandwidth' ? `${fmt(m.value)} GB/s` : `${si(m.value)}ops/s`}
                <Sub>
                  {fmt(m.spread.median)} [{fmt(m.spread.min)}–{fmt(m.spread.max)}], {m.spread.n} ×{' '}
                  {m.runsPerBatch} ({m.method})
                </Sub>
              </td>
            </tr>
          ))}
          {probe.skipped.map((s) => (
            <tr key={s.kind} className="muted">
              <td className="mono">{s.kind}</td>
              <td colSpan={2}>not measured: {s.why}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The batches' times as a histogram: how many batches (y) took each ms per run (x, the bin's middle). */
function Histogram({ samples }: { samples: readonly number[] }) {
  const data = histogram(samples, 8).map((b) => ({ ms: fmt((b.from + b.to) / 2), count: b.count }));
  return (
    <div className="perf-histogram" data-testid="perf-histogram">
      <ResponsiveContainer width="100%" height={150}>
        <BarChart data={data} margin={{ top: 4, right: 8, bottom: 16, left: 12 }}>
          <XAxis dataKey="ms" {...AXIS} label={axisTitle('ms per run (a batch)', 'insideBottom', -10)} />
          <YAxis {...AXIS} allowDecimals={false} width={36} label={axisTitle('batches', 'insideLeft', -2)} />
          <Bar dataKey="count" name="batches" fill="#5ec4ff" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

/** % of peak and the roof that bounds it; none without the peaks, or without a compute roof for the arm. */
function PeakCell({ point }: { point: PerfRow['point'] }) {
  const peak = honestPeak(point);
  const title = peak
    ? `${peak.bound}-bound`
    : point
      ? 'no compute peak measured for this arm: its bandwidth share alone is no % of peak'
      : 'measure the peaks first';
  return (
    <td className="num" title={title} data-testid="perf-peak">
      {percent(peak?.fraction)}
      <Sub>{peak ? peak.bound : point ? 'no roof' : ''}</Sub>
    </td>
  );
}

/** The run's roofline, with the tuner's measured configs of the same family. */
function Roofline({
  rows,
  roof,
  kernel,
  why,
}: {
  rows: PerfRow[];
  roof: { bandwidthGBs: number; ops?: number };
  kernel: string;
  /** Why the arm has no compute roof, when it has none. */
  why: string;
}) {
  const report = useApp((s) => (s.tuner.hunt?.report?.kernel === kernel ? s.tuner.hunt.report : undefined));
  const chart = rooflineChart(rows, roof, report?.entries ?? [], report?.ops ?? 0, why);
  return <RooflineChart chart={chart} runName="this run" testId="perf-roofline" />;
}

/**
 * Each timed part's spread, rates and % of peak. Five columns, each figure over its detail, so the table
 * fits the results pane (from 1024 px wide the pane never scrolls sideways); the wrapper scrolls it alone
 * should a pane be narrower.
 */
function PerfTable({ rows }: { rows: PerfRow[] }) {
  return (
    <div className="perf-scroll">
      <table className="perf-table small" data-testid="perf-table">
        <thead>
          <tr>
            <th></th>
            <th>
              ms per run <Sub>median [min–p90, max] (n)</Sub>
            </th>
            <th>
              GB/s <Sub>bytes</Sub>
            </th>
            <th>
              ops/s <Sub>ops/byte</Sub>
            </th>
            <th>
              % of peak <Sub>bound</Sub>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.label} data-testid="perf-row">
              <td className="perf-label">{r.label}</td>
              <td className="num">
                {fmt(r.spread.median)}
                <Sub>
                  [{fmt(r.spread.min)}–{fmt(r.spread.p90)}, {fmt(r.spread.max)}] ({r.spread.n})
                </Sub>
              </td>
              <td className="num">
                {fmt(r.bytes / (r.spread.median * 1e6))}
                <Sub>{si(r.bytes)}B</Sub>
              </td>
              <td className="num">
                {r.ops ? si(r.ops / (r.spread.median / 1e3)) : '–'}
                <Sub>{r.bytes ? fmt(r.ops / r.bytes) : '–'}</Sub>
              </td>
              <PeakCell point={r.point} />
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The performance section of a timed run (data-testid perf). */
export function PerfPanel({ o }: { o: RunOutcome }) {
  const peaks = useAdapterPeaks();
  const probe = peaks.probe;
  const [show, setShow] = useState({ method: false, histogram: false });
  const rows = perfRows(o, probe?.peaks);
  if (!rows) return null;
  const roof = probe ? peaksFor(probe.peaks, o.arithmetic ?? 'int8', o.config.arm) : undefined;
  return (
    <div className="perf" data-testid="perf" data-peaks={probe ? 'measured' : 'none'}>
      <h4>Against this adapter&apos;s measured peaks</h4>
      <p className="small" data-testid="perf-peaks">
        {probe ? (
          <>
            peaks: <span className="num">{fmt(probe.peaks.bandwidthGBs)} GB/s</span> copy
            {roof?.ops !== undefined ? (
              <>
                , <span className="num">{si(roof.ops)}ops/s</span> for this arm
              </>
            ) : (
              ', no compute peak for this arm'
            )}{' '}
            <span className="muted">
              (probe of {new Date(probe.at).toLocaleString()}, {fmt(probe.durationMs / 1000)} s)
            </span>{' '}
          </>
        ) : (
          <span className="muted">peaks not measured on this adapter yet </span>
        )}
        <MeasurePeaksButton peaks={peaks} testId="perf-probe" />{' '}
        {probe ? (
          <button
            type="button"
            data-testid="perf-method-toggle"
            onClick={() => setShow({ ...show, method: !show.method })}
          >
            {show.method ? 'hide method' : 'method'}
          </button>
        ) : null}
      </p>
      {peaks.error ? (
        <p className="run-error" role="alert" data-testid="perf-error">
          {peaks.error}
        </p>
      ) : null}
      {probe && show.method ? <Method probe={probe} /> : null}
      <PerfTable rows={rows} />
      <button
        type="button"
        data-testid="perf-histogram-toggle"
        onClick={() => setShow({ ...show, histogram: !show.histogram })}
      >
        {show.histogram ? 'hide histogram' : 'histogram of the batches'}
      </button>
      {show.histogram && o.timing ? <Histogram samples={o.timing.samples} /> : null}
      {roof && probe ? (
        <Roofline
          rows={rows}
          roof={roof}
          kernel={o.config.kernel}
          why={missingRoofText(o.arithmetic ?? 'int8', o.config.arm, probe.skipped)}
        />
      ) : null}
    </div>
  );
}

export default PerfPanel;
