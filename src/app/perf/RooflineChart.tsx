// The roofline chart (perfView.ts rooflineChart's view-model, drawn): the roofs as a line on log-log axes
// of intensity (ops/byte) and ops/s, with the tuner's configs, the passes and the run (or a sweep's
// points, each labelled) as scatter series. One component for the performance panel and the sweep.
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

/**
 * The chart; `runName` names the run series in the legend, `labelRun` writes each run point's label
 * beside it (a sweep's values). data-points counts the run points, data-configs the tuner's.
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
  const tick = (v: number) => si(v);
  return (
    <div
      className="perf-roofline"
      data-testid={testId}
      data-configs={chart.configs.length}
      data-points={chart.run.length}
    >
      <ResponsiveContainer width="100%" height={260}>
        <ComposedChart margin={{ top: 8, right: 16, bottom: 16, left: 8 }}>
          <CartesianGrid stroke="#2a3040" strokeDasharray="3 3" />
          <XAxis
            type="number"
            dataKey="x"
            scale="log"
            domain={['auto', 'auto']}
            allowDataOverflow
            tickFormatter={tick}
            {...CHART_AXIS}
            label={{
              value: 'ops / byte',
              position: 'insideBottom',
              offset: -8,
              fill: '#8a93a6',
              fontSize: 11,
            }}
          />
          <YAxis
            type="number"
            dataKey="y"
            scale="log"
            domain={['auto', 'auto']}
            tickFormatter={tick}
            width={56}
            {...CHART_AXIS}
          />
          <Tooltip
            contentStyle={{ background: '#161a22', border: '1px solid #2a3040', fontSize: 12 }}
            formatter={(v) => (typeof v === 'number' ? si(v) : String(v))}
          />
          {/* Pushed down clear of the x axis's label, which sits under the axis. */}
          <Legend wrapperStyle={{ fontSize: 11, paddingTop: 10 }} />
          <Line
            data={chart.roofs}
            dataKey="y"
            name="roof"
            stroke="#8a93a6"
            dot={false}
            isAnimationActive={false}
          />
          <Scatter data={chart.configs} name="tuner configs" fill="#5ec4ff" isAnimationActive={false} />
          <Scatter data={chart.passes} name="passes" fill="#ff9f43" isAnimationActive={false} />
          <Scatter data={chart.run} name={runName} fill="#ffd166" isAnimationActive={false}>
            {labelRun ? (
              <LabelList dataKey="label" position="top" fill="#e6e9ef" fontSize={10} offset={8} />
            ) : null}
          </Scatter>
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
}
