// The tuner's two charts: convergence (best ms per generation) and every evaluated config as a
// scatter of block area BM*BN vs ms, coloured by verdict, with unmeasured configs on their own row.
import {
  CartesianGrid,
  Line,
  LineChart,
  ReferenceLine,
  ResponsiveContainer,
  Scatter,
  ScatterChart,
  Tooltip,
  XAxis,
  YAxis,
  type TooltipContentProps,
} from 'recharts';
import type { TuneRecordEntry } from '../../workers/protocol';
import {
  convergenceSeries,
  formatCount,
  formatMs,
  formatRel,
  scatterModel,
  type ScatterPoint,
} from './tunerData';

/** Verdict colours, shared with the table's badges (tuner.css uses the same values). */
export const VERDICT_COLOURS = {
  measured: '#5ec4ff',
  winner: '#ffd166',
  'failed-gate': '#ff9f43',
  rejected: '#ff5c7a',
} as const;

const AXIS = {
  stroke: '#6b7385',
  fontSize: 11,
  fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace',
};
const GRID = '#2a3040';

function isScatterPoint(v: unknown): v is ScatterPoint {
  return typeof v === 'object' && v !== null && 'config' in v && 'entry' in v;
}

function ScatterTip({ active, payload }: TooltipContentProps) {
  const p: unknown = payload?.[0]?.payload;
  if (!active || !isScatterPoint(p)) return null;
  const e = p.entry;
  return (
    <div className="tuner-tip">
      <div className="tuner-tip-title">{p.config}</div>
      <div>
        {e.bm !== undefined ? `BM x BN ${e.bm} x ${e.bn ?? '?'} \u00b7 ` : ''}
        {e.arm} &middot; gen {e.generation}
      </div>
      <div>
        {p.verdict === 'measured' ? formatMs(p.ms) : p.verdict} &middot; rel {formatRel(e.worstRel)}
      </div>
      {e.reason ? <div className="tuner-tip-reason">{e.reason}</div> : null}
    </div>
  );
}

export interface ConvergenceChartProps {
  bestPerGeneration: readonly number[];
  incumbentMs?: number | undefined;
  /** The winner's re-timing when the finalists were re-timed (it may sit above the search's best). */
  winnerRetimedMs?: number | undefined;
}

/** Best ms found up to each generation (a step line; gaps before anything passed the gate). */
export function ConvergenceChart({ bestPerGeneration, incumbentMs, winnerRetimedMs }: ConvergenceChartProps) {
  const data = convergenceSeries({ bestPerGeneration: [...bestPerGeneration] });
  const retimed =
    winnerRetimedMs !== undefined && Number.isFinite(winnerRetimedMs) ? winnerRetimedMs : undefined;
  return (
    <div
      className="tuner-chart"
      data-testid="tuner-convergence"
      data-points={data.length}
      data-winner-retimed={retimed}
    >
      <div className="tuner-chart-title">convergence: best ms per generation</div>
      {data.length === 0 ? (
        <div className="tuner-empty">no generations yet</div>
      ) : (
        <ResponsiveContainer width="100%" height={200}>
          <LineChart data={data} margin={{ top: 8, right: 16, bottom: 4, left: 4 }}>
            <CartesianGrid stroke={GRID} strokeDasharray="3 3" />
            <XAxis dataKey="generation" {...AXIS} allowDecimals={false} />
            <YAxis
              {...AXIS}
              width={64}
              tickFormatter={(v: number) => formatMs(v)}
              domain={['auto', 'auto']}
            />
            <Tooltip
              contentStyle={{ background: '#161a22', border: '1px solid #2a3040', fontSize: 12 }}
              formatter={(v) => (typeof v === 'number' ? formatMs(v) : String(v))}
              labelFormatter={(g) => `generation ${String(g)}`}
            />
            {incumbentMs !== undefined && Number.isFinite(incumbentMs) ? (
              <ReferenceLine
                y={incumbentMs}
                stroke="#8a93a6"
                strokeDasharray="4 4"
                label={{ value: 'incumbent', fill: '#8a93a6', fontSize: 10, position: 'insideTopRight' }}
              />
            ) : null}
            {retimed !== undefined ? (
              <ReferenceLine
                y={retimed}
                stroke={VERDICT_COLOURS.winner}
                strokeDasharray="2 3"
                label={{
                  value: 'winner, re-timed',
                  fill: VERDICT_COLOURS.winner,
                  fontSize: 10,
                  position: 'insideBottomRight',
                }}
              />
            ) : null}
            <Line
              type="stepAfter"
              dataKey="best"
              name="best"
              stroke={VERDICT_COLOURS.winner}
              strokeWidth={2}
              dot={{ r: 3 }}
              isAnimationActive={false}
              connectNulls={false}
            />
          </LineChart>
        </ResponsiveContainer>
      )}
    </div>
  );
}

export interface ConfigScatterProps {
  entries: readonly TuneRecordEntry[];
  winner: string;
  onPick?: (entry: TuneRecordEntry) => void;
}

/**
 * Every evaluated config: BM*BN (log) vs ms; rejected / gate-failed configs sit on the top row.
 * Over 80 lines on purpose: the JSX is one declarative recharts tree (axes, series) read top to bottom;
 * cut into components, each would take the same model and the picture would read in pieces.
 */
export function ConfigScatter({ entries, winner, onPick }: ConfigScatterProps) {
  const model = scatterModel(entries, winner);
  const pick = (p: unknown) => {
    if (isScatterPoint(p)) onPick?.(p.entry);
    else if (typeof p === 'object' && p !== null && 'payload' in p && isScatterPoint(p.payload))
      onPick?.(p.payload.entry);
  };
  const yTick = (v: number) => (v > model.dividerY ? '' : formatMs(v));
  return (
    <div
      className="tuner-chart"
      data-testid="tuner-scatter"
      data-measured={model.measured.length + (model.winner ? 1 : 0)}
      data-rejected={model.rejected.length}
      data-failed={model.failedGate.length}
    >
      <div className="tuner-chart-title">
        every config: BM*BN vs ms
        <span className="tuner-legend">
          <i style={{ background: VERDICT_COLOURS.measured }} /> measured{' '}
          <i style={{ background: VERDICT_COLOURS.winner }} /> winner{' '}
          <i style={{ background: VERDICT_COLOURS['failed-gate'] }} /> failed gate{' '}
          <i style={{ background: VERDICT_COLOURS.rejected }} /> rejected
        </span>
      </div>
      {entries.length === 0 ? (
        <div className="tuner-empty">no configs evaluated yet</div>
      ) : (
        <ResponsiveContainer width="100%" height={220}>
          <ScatterChart margin={{ top: 8, right: 16, bottom: 4, left: 4 }}>
            <CartesianGrid stroke={GRID} strokeDasharray="3 3" />
            <XAxis
              type="number"
              dataKey="area"
              name="BM*BN"
              scale="log"
              domain={model.xDomain}
              ticks={model.xTicks}
              {...AXIS}
              tickFormatter={(v: number) => formatCount(v)}
            />
            <YAxis
              type="number"
              dataKey="y"
              name="ms"
              domain={[0, model.yMax]}
              {...AXIS}
              width={64}
              tickFormatter={yTick}
            />
            <ReferenceLine
              y={model.dividerY}
              stroke="#4a5266"
              strokeDasharray="2 4"
              label={{
                value: 'not measured (rejected / failed gate)',
                fill: '#8a93a6',
                fontSize: 10,
                position: 'insideTopLeft',
              }}
            />
            <Tooltip content={ScatterTip} cursor={{ strokeDasharray: '3 3', stroke: '#4a5266' }} />
            <Scatter
              name="measured"
              data={model.measured}
              fill={VERDICT_COLOURS.measured}
              isAnimationActive={false}
              onClick={pick}
            />
            <Scatter
              name="failed gate"
              data={model.failedGate}
              fill={VERDICT_COLOURS['failed-gate']}
              shape="triangle"
              isAnimationActive={false}
              onClick={pick}
            />
            <Scatter
              name="rejected"
              data={model.rejected}
              fill={VERDICT_COLOURS.rejected}
              shape="cross"
              isAnimationActive={false}
              onClick={pick}
            />
            <Scatter
              name="winner"
              data={model.winner ? [model.winner] : []}
              fill={VERDICT_COLOURS.winner}
              shape="star"
              isAnimationActive={false}
              onClick={pick}
            />
          </ScatterChart>
        </ResponsiveContainer>
      )}
    </div>
  );
}
