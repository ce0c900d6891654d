// The roofline chart (perfView.ts rooflineChart's view-model, drawn): the memory and the compute roof,
// each named with its figure, on log-log axes of intensity (ops/byte) and ops/s over whole decades, with
// the tuner's configs, the passes and the run (or a sweep's points, each labelled) as scatter series
// (a series only when it has points), and points below the plotted range marked on its lower edge.
// Without both roofs measured for the arm it draws nothing and says what is missing. One component for
// the performance panel and the sweep.
import {
  CartesianGrid,
  ComposedChart,
  LabelList,
  Legend,
  Line,
  ResponsiveContainer,
  Scatter,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { si, type RooflineChartData } from './perfView';

export const CHART_AXIS = {
  stroke: '#6b7385',
  fontSize: 11,
  fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace',
};

/** An axis title: muted, small, outside the ticks. */
export const axisTitle = (value: string, position: 'insideBottom' | 'insideLeft', offset: number) => ({
  value,
  position,
  offset,
  fill: '#8a93a6',
  fontSize: 11,
  ...(position === 'insideLeft' ? { angle: -90, style: { textAnchor: 'middle' as const } } : {}),
});

/**
 * The chart; `runName` names the run series in the legend, `labelRun` writes each run point's label
 * beside it (a sweep's values). data-points counts the run points (those outside the range too),
 * data-configs the tuner's, data-outside the points below the plotted range.
 * Over 80 lines on purpose: the JSX is one declarative recharts tree (grid, axes, roofs, series) read top
 * to bottom; cut into components, each would take the same chart data and the picture would read in pieces.
 */
export function RooflineChart({
  chart,
  runName,
  testId,
  labelRun = false,
}: {
  chart: RooflineChartData;
  runName: string;
  testId: string;
  labelRun?: boolean;
}) {
  if (chart.missing)
    return (
      <p className="perf-roofline muted small" data-testid={testId} data-missing="compute-roof">
        {chart.missing}
      </p>
    );
  const count = (series: 'run' | 'configs') =>
    chart[series].length + chart.outside.filter((p) => p.series === series).length;
  const tick = (v: number) => si(v);
  return (
    <div
      className="perf-roofline"
      data-testid={testId}
      data-configs={count('configs')}
      data-points={count('run')}
      data-outside={chart.outside.length}
    >
      <ResponsiveContainer width="100%" height={260}>
        <ComposedChart margin={{ top: 8, right: 16, bottom: 16, left: 16 }}>
          <CartesianGrid stroke="#2a3040" strokeDasharray="3 3" />
          <XAxis
            type="number"
            dataKey="x"
            scale="log"
            domain={chart.domain.x}
            ticks={chart.ticks.x}
            allowDataOverflow
            tickFormatter={tick}
            {...CHART_AXIS}
            label={axisTitle('intensity, ops / byte', 'insideBottom', -8)}
          />
          <YAxis
            type="number"
            dataKey="y"
            scale="log"
            domain={chart.domain.y}
            ticks={chart.ticks.y}
            allowDataOverflow
            tickFormatter={tick}
            width={64}
            {...CHART_AXIS}
            label={axisTitle('ops / s', 'insideLeft', -6)}
          />
          <Tooltip
            contentStyle={{ background: '#161a22', border: '1px solid #2a3040', fontSize: 12 }}
            formatter={(v) => (typeof v === 'number' ? si(v) : String(v))}
          />
          {/* Pushed down clear of the x axis's label, which sits under the axis. */}
          <Legend wrapperStyle={{ fontSize: 11, paddingTop: 10 }} />
          {chart.memoryRoof.length ? (
            <Line
              data={chart.memoryRoof}
              dataKey="y"
              name={chart.names.memory}
              stroke="#8a93a6"
              dot={false}
              isAnimationActive={false}
            />
          ) : null}
          <Line
            data={chart.computeRoof}
            dataKey="y"
            name={chart.names.compute}
            stroke="#c3cee3"
            strokeDasharray="6 3"
            dot={false}
            isAnimationActive={false}
          />
          {chart.configs.length ? (
            <Scatter data={chart.configs} name="tuner configs" fill="#5ec4ff" isAnimationActive={false} />
          ) : null}
          {chart.passes.length ? (
            <Scatter data={chart.passes} name="passes" fill="#ff9f43" isAnimationActive={false} />
          ) : null}
          {chart.run.length ? (
            <Scatter data={chart.run} name={runName} fill="#ffd166" isAnimationActive={false}>
              {labelRun ? (
                <LabelList dataKey="label" position="top" fill="#e6e9ef" fontSize={10} offset={8} />
              ) : null}
            </Scatter>
          ) : null}
          {chart.outside.length ? (
            <Scatter
              data={chart.outside}
              name={`below ${si(chart.domain.y[0])} ops/s (drawn on the axis)`}
              fill="#ff5d73"
              shape="triangle"
              isAnimationActive={false}
            >
              <LabelList dataKey="label" position="top" fill="#ff9aa8" fontSize={10} offset={8} />
            </Scatter>
          ) : null}
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
}
