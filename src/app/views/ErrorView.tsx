// Error heatmap: per-element |gpu - oracle| / max|oracle| on a log colour scale over the whole output,
// tails outside m/n hatched, ownership boundaries overlaid and bad elements boxed, with "who owns the
// bad elements" and the error split (quantization vs kernel) against the full-precision f32 GEMM.
import { useMemo, useState } from 'react';
import { act, selectElement, toggleOverlay, useApp } from '../store';
import { fmt, LOG_MAX, LOG_MIN, rampColor, type Rgb } from './analysis';
import { ElementInspector } from './ElementInspector';
import { GridCanvas } from './GridCanvas';
import { badMarks, errorColor, gridWindow, ownerRegion } from './gridDraw';
import { canvasPx, useContentWidth } from './useContentWidth';
import { useRunAnalysis, type RunAnalysis } from './useRunAnalysis';

type Mode = 'kernel' | 'quantization' | 'total';

const MODE_LABEL: Record<Mode, string> = {
  kernel: 'kernel error: |GPU − quantized oracle|',
  quantization: 'quantization error: |quantized oracle − f32 GEMM|',
  total: 'total: |GPU − f32 GEMM|',
};

const css = (c: Rgb) => `rgb(${c[0]}, ${c[1]}, ${c[2]})`;

function Legend() {
  const stops = Array.from({ length: 11 }, (_, i) => css(rampColor(i / 10))).join(', ');
  const ticks = Array.from({ length: LOG_MAX - LOG_MIN + 1 }, (_, i) => LOG_MIN + i);
  return (
    <div className="heat-legend" data-testid="heatmap-legend">
      <div className="scale">
        <div className="bar" style={{ background: `linear-gradient(90deg, ${stops})` }} />
        <div className="ticks">
          {ticks.map((t) => (
            <span key={t} style={{ left: `${((t - LOG_MIN) / (LOG_MAX - LOG_MIN)) * 100}%` }}>
              1e{t}
            </span>
          ))}
        </div>
      </div>
      <div className="keys">
        <span className="swatch" style={{ background: css(rampColor(-1)) }} /> exact 0
        <span className="swatch" style={{ background: css(rampColor(2)) }} /> NaN / ∞
        <span className="swatch hatch" /> outside m×n
        <span className="swatch box" /> fails the gate (outline)
      </div>
    </div>
  );
}

function Bars({ title, rows, total }: { title: string; rows: [number, number][]; total: number }) {
  if (!rows.length) return null;
  return (
    <div className="bars">
      <h4>{title}</h4>
      {rows.slice(0, 8).map(([k, n]) => (
        <div key={k} className="bar-row">
          <span className="bar-key">{k}</span>
          <span className="bar-track">
            <span style={{ width: `${(n / Math.max(1, total)) * 100}%` }} />
          </span>
          <span className="bar-count">{n}</span>
        </div>
      ))}
      {rows.length > 8 && <span className="muted small">+{rows.length - 8} more</span>}
    </div>
  );
}

/** The view's controls: which error, the ownership overlay and the tile zoom. */
function ErrorToolbar(p: {
  mode: Mode;
  onMode: (mode: Mode) => void;
  /** Whether the family has a full-precision reference (the quantization and total modes need one). */
  hasReference: boolean;
  ownerLabel: string;
  zoom: boolean;
  onZoom: (zoom: boolean) => void;
}) {
  const overlay = useApp((s) => s.overlay);
  return (
    <div className="toolbar">
      <div className="seg" role="radiogroup" aria-label="Error kind">
        {(['kernel', 'quantization', 'total'] as const).map((m) => (
          <button
            key={m}
            type="button"
            role="radio"
            aria-checked={p.mode === m}
            className={p.mode === m ? 'on' : ''}
            disabled={m !== 'kernel' && !p.hasReference}
            title={
              m !== 'kernel' && !p.hasReference
                ? 'this kernel has no full-precision reference (its operands are int8 by definition)'
                : MODE_LABEL[m]
            }
            onClick={() => p.onMode(m)}
            data-testid={`error-mode-${m}`}
          >
            {m}
          </button>
        ))}
      </div>
      <label className="check">
        <input type="checkbox" checked={overlay} onChange={() => act(toggleOverlay)} data-testid="overlay" />
        <span>ownership overlay ({p.ownerLabel})</span>
      </label>
      <label className="check">
        <input type="checkbox" checked={p.zoom} onChange={(e) => p.onZoom(e.target.checked)} />
        <span>zoom to tile</span>
      </label>
    </div>
  );
}

/** Who owns the bad elements (by lane, plane, workgroup) and the error split against the f32 GEMM. */
function ErrorSummary({ a }: { a: RunAnalysis }) {
  const s = a.badSummary;
  return (
    <div className="summary-grid">
      <section className="bad-summary" data-testid="bad-summary">
        <h3>
          Bad elements: <span className={s.bad ? 'bad' : 'good'}>{s.bad}</span> of {s.total}
        </h3>
        <p data-testid="bad-sentence" className={s.bad ? 'bad' : 'good'}>
          {s.sentence}
        </p>
        <div className="bars-row">
          <Bars title="by lane" rows={s.byLane} total={s.bad} />
          <Bars title="by plane" rows={s.byPlane} total={s.bad} />
          <Bars title="by workgroup" rows={s.byWorkgroup} total={s.bad} />
        </div>
      </section>
      <section className="split" data-testid="error-split">
        <h3>Error split</h3>
        {a.split ? (
          <dl>
            <dt>
              quantization (quantized oracle vs f32 GEMM on the unquantized activation and dequantized weight)
            </dt>
            <dd data-testid="split-quant">{fmt(a.split.quantization)}</dd>
            <dt>kernel (GPU vs quantized oracle)</dt>
            <dd data-testid="split-kernel">{fmt(a.split.kernel)}</dd>
            <dt>total (GPU vs f32 GEMM)</dt>
            <dd>{fmt(a.split.total)}</dd>
            <dd className="muted small">
              {a.split.kernel <= a.split.quantization * 1e-3
                ? 'The kernel adds essentially nothing: the error is the quantization itself.'
                : a.split.kernel > a.split.quantization
                  ? 'The kernel adds more error than quantizing does: look at the heatmap.'
                  : 'Both contribute; the quantization dominates.'}
            </dd>
          </dl>
        ) : (
          <p className="muted">
            This kernel has no full-precision reference: its operands are int8 by definition, so there is no
            quantization to split off.
          </p>
        )}
      </section>
    </div>
  );
}

export function ErrorView() {
  const outcome = useApp((s) => s.outcome);
  const overlay = useApp((s) => s.overlay);
  const selected = useApp((s) => s.selected);
  const a = useRunAnalysis(outcome);
  const [viewRef, viewWidth] = useContentWidth();
  const [mode, setMode] = useState<Mode>('kernel');
  const [hover, setHover] = useState<{ row: number; col: number }>();
  const [zoom, setZoom] = useState(false);

  const field = a
    ? ((mode === 'quantization' ? a.quantError : mode === 'total' ? a.totalError : a.kernelError) ??
      a.kernelError)
    : undefined;
  const color = useMemo(() => errorColor(field), [field]);
  const owner = a?.owner;
  const region = useMemo(() => ownerRegion(owner), [owner]);
  const marks = useMemo(() => (a && overlay ? badMarks(a.bad) : undefined), [a, overlay]);

  if (!a || !field) return <p className="muted pad">Run a kernel to see where it differs from the oracle.</p>;
  const o = a.outcome;
  const cols = o.cols;
  // What hovering an element shows, and what the keyboard's highlight announces.
  const describe = (c: { row: number; col: number }) => {
    if (c.row >= o.rows || c.col >= cols)
      return `(${c.row}, ${c.col}) is outside the ${o.rows}×${cols} output (tail of the edge tile)`;
    const i = c.row * cols + c.col;
    return `(${c.row}, ${c.col}) GPU ${fmt(o.output[i], 6)} vs oracle ${fmt(o.oracle[i], 6)} · error ${fmt(field[i])}${owner ? ` · workgroup ${owner.workgroup[i]}, plane ${owner.plane[i]}, lane ${owner.lane[i]}` : ''}`;
  };

  return (
    <div className="view error-view" data-testid="error-view" ref={viewRef}>
      <ErrorToolbar
        mode={mode}
        onMode={setMode}
        hasReference={!!a.quantError}
        ownerLabel={a.ownerLabel}
        zoom={zoom}
        onZoom={setZoom}
      />
      <p className="stats">{MODE_LABEL[mode]} / max|reference|, log scale</p>
      <div className="canvas-box">
        <GridCanvas
          rows={o.rows}
          cols={cols}
          view={gridWindow(a.geometry, cols, zoom ? (selected ?? 0) : undefined)}
          tileRows={a.geometry.tileRows}
          tileCols={a.geometry.tileCols}
          color={color}
          region={overlay ? region : undefined}
          marks={marks}
          selected={selected}
          onHover={setHover}
          onPick={(c) => act(selectElement, c.row * cols + c.col)}
          describe={describe}
          maxPx={canvasPx(viewWidth)}
          testId="heatmap-canvas"
          label="error heatmap"
        />
      </div>
      <p className="hover-info" data-testid="heatmap-hover">
        {hover ? describe(hover) : 'hover an element for its values; click it to inspect'}
      </p>
      <Legend />
      <ErrorSummary a={a} />
      <ElementInspector analysis={a} />
    </div>
  );
}
