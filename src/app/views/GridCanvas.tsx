// One canvas for both views: an output grid (rows x cols, padded up to whole workgroup tiles) with a
// colour per element, region boundaries (planes), tile boundaries (workgroups), hatching outside m/n,
// per-element marks and a selection. Drawing is a pure function of the props, so a screenshot is
// deterministic for a given run. A grid that can be picked from takes focus too: the arrow keys move a
// highlighted element (as hovering does), Enter or Space picks it (as a click does), and a live region
// announces it.
import { useEffect, useRef, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { cellAfterKey, type GridCell } from '../components/keys';
import { OUTSIDE_COLOR, type Rgb } from './analysis';
import './grid.css';

export const MARK_NONE = 0;
export const MARK_NEVER = 1;
export const MARK_TWICE = 2;
export const MARK_BAD = 3;
/** The outline of an element that fails the gate (the legend's "fails the gate" swatch uses it too). */
export const BAD_BOX = '#ff4fd8';

export interface GridWindow {
  r0: number;
  c0: number;
  rows: number;
  cols: number;
}

export interface GridCanvasProps {
  /** Logical output size; cells past it (up to the padded size) are outside m/n. */
  rows: number;
  cols: number;
  /** The drawn window in padded coordinates. */
  view: GridWindow;
  tileRows: number;
  tileCols: number;
  color: (i: number) => Rgb;
  /** Region id per element (e.g. workgroup*65536 + plane): a thin line is drawn where it changes. */
  region?: ((i: number) => number) | undefined;
  /** Per-element marks (MARK_*). */
  marks?: Uint8Array | undefined;
  selected?: number | undefined;
  onHover?: (cell: { row: number; col: number } | undefined) => void;
  onPick?: (cell: { row: number; col: number }) => void;
  /** What the live region says of the element the keyboard highlights (default "(row, col)"). */
  describe?: (cell: GridCell) => string;
  /** Longest side in CSS pixels. */
  maxPx?: number;
  testId: string;
  label: string;
}

/** Cell size in CSS px for a window: as large as fits, at most 24. */
export function cellSize(view: GridWindow, maxPx: number): number {
  return Math.max(1, Math.min(24, Math.floor(maxPx / Math.max(view.rows, view.cols))));
}

export function GridCanvas(props: GridCanvasProps) {
  const ref = useRef<HTMLCanvasElement>(null);
  const { rows, cols, view, tileRows, tileCols, color, region, marks, selected } = props;
  const cs = cellSize(view, props.maxPx ?? 512);
  const width = view.cols * cs;
  const height = view.rows * cs;
  // The keyboard's highlighted element, drawn only while the keyboard drives the canvas (not after a
  // click, which selects).
  const [cursor, setCursor] = useState<GridCell>();
  const [keyboard, setKeyboard] = useState(false);
  const bounds = {
    r0: view.r0,
    c0: view.c0,
    r1: Math.min(rows, view.r0 + view.rows),
    c1: Math.min(cols, view.c0 + view.cols),
  };
  const inWindow = (c: GridCell | undefined): c is GridCell =>
    !!c && c.row >= bounds.r0 && c.row < bounds.r1 && c.col >= bounds.c0 && c.col < bounds.c1;
  const selectedCell =
    selected !== undefined ? { row: Math.floor(selected / cols), col: selected % cols } : undefined;
  const shown = inWindow(cursor)
    ? cursor
    : inWindow(selectedCell)
      ? selectedCell
      : { row: bounds.r0, col: bounds.c0 };
  const highlight = keyboard && bounds.r1 > bounds.r0 && bounds.c1 > bounds.c0 ? shown : undefined;
  const highlightRow = highlight?.row;
  const highlightCol = highlight?.col;

  useEffect(() => {
    const canvas = ref.current;
    if (!canvas) return;
    const dpr = Math.max(1, Math.round(window.devicePixelRatio || 1));
    canvas.width = width * dpr;
    canvas.height = height * dpr;
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const inside = (r: number, c: number) => r < rows && c < cols;

    // Cells at one pixel each, scaled up without smoothing.
    const img = new ImageData(view.cols, view.rows);
    for (let y = 0; y < view.rows; y++) {
      for (let x = 0; x < view.cols; x++) {
        const r = view.r0 + y;
        const c = view.c0 + x;
        const rgb = inside(r, c) ? color(r * cols + c) : OUTSIDE_COLOR;
        const o = (y * view.cols + x) * 4;
        img.data[o] = rgb[0];
        img.data[o + 1] = rgb[1];
        img.data[o + 2] = rgb[2];
        img.data[o + 3] = 255;
      }
    }
    const off = document.createElement('canvas');
    off.width = view.cols;
    off.height = view.rows;
    off.getContext('2d')?.putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, width, height);
    ctx.drawImage(off, 0, 0, width, height);

    // Outside m/n: hatch the tail of the edge tiles.
    ctx.save();
    ctx.beginPath();
    const outCol = Math.max(0, cols - view.c0);
    const outRow = Math.max(0, rows - view.r0);
    if (outCol < view.cols) ctx.rect(outCol * cs, 0, width - outCol * cs, height);
    if (outRow < view.rows) ctx.rect(0, outRow * cs, width, height - outRow * cs);
    ctx.clip();
    ctx.strokeStyle = 'rgba(140, 150, 170, 0.35)';
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let d = -height; d < width; d += 6) {
      ctx.moveTo(d, height);
      ctx.lineTo(d + height, 0);
    }
    ctx.stroke();
    ctx.restore();

    // Region boundaries (planes), only where cells are big enough to read them.
    if (region && cs >= 3) {
      ctx.strokeStyle = 'rgba(10, 12, 16, 0.85)';
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (let y = 0; y < view.rows; y++) {
        for (let x = 0; x < view.cols; x++) {
          const r = view.r0 + y;
          const c = view.c0 + x;
          if (!inside(r, c)) continue;
          const id = region(r * cols + c);
          if (x + 1 < view.cols && inside(r, c + 1) && region(r * cols + c + 1) !== id) {
            ctx.moveTo((x + 1) * cs + 0.5, y * cs);
            ctx.lineTo((x + 1) * cs + 0.5, (y + 1) * cs);
          }
          if (y + 1 < view.rows && inside(r + 1, c) && region((r + 1) * cols + c) !== id) {
            ctx.moveTo(x * cs, (y + 1) * cs + 0.5);
            ctx.lineTo((x + 1) * cs, (y + 1) * cs + 0.5);
          }
        }
      }
      ctx.stroke();
    }

    // Workgroup tile boundaries.
    ctx.strokeStyle = 'rgba(235, 240, 250, 0.8)';
    ctx.lineWidth = cs >= 4 ? 2 : 1;
    ctx.beginPath();
    for (let c = Math.ceil(view.c0 / tileCols) * tileCols; c <= view.c0 + view.cols; c += tileCols) {
      const x = (c - view.c0) * cs;
      ctx.moveTo(x, 0);
      ctx.lineTo(x, height);
    }
    for (let r = Math.ceil(view.r0 / tileRows) * tileRows; r <= view.r0 + view.rows; r += tileRows) {
      const y = (r - view.r0) * cs;
      ctx.moveTo(0, y);
      ctx.lineTo(width, y);
    }
    ctx.stroke();

    // The m/n edge itself.
    ctx.save();
    ctx.setLineDash([4, 3]);
    ctx.strokeStyle = 'rgba(255, 210, 90, 0.95)';
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    if (outCol < view.cols) {
      ctx.moveTo(outCol * cs, 0);
      ctx.lineTo(outCol * cs, Math.min(height, outRow * cs));
    }
    if (outRow < view.rows) {
      ctx.moveTo(0, outRow * cs);
      ctx.lineTo(Math.min(width, outCol * cs), outRow * cs);
    }
    ctx.stroke();
    ctx.restore();

    // Marks: never stored (red cross), stored twice (orange dot), bad under the overlay (magenta box:
    // distinct from the ramp's cyan NaN / inf fill).
    if (marks) {
      for (let y = 0; y < view.rows; y++) {
        for (let x = 0; x < view.cols; x++) {
          const r = view.r0 + y;
          const c = view.c0 + x;
          if (!inside(r, c)) continue;
          const m = marks[r * cols + c];
          if (!m) continue;
          const px = x * cs;
          const py = y * cs;
          if (cs < 6) {
            // Too small for a glyph: tint the cell (bad elements stay readable through a light tint).
            ctx.globalAlpha = m === MARK_BAD ? 0.45 : 1;
            ctx.fillStyle = m === MARK_NEVER ? '#ff3b5c' : m === MARK_TWICE ? '#ff9d2e' : BAD_BOX;
            ctx.fillRect(px, py, cs, cs);
            ctx.globalAlpha = 1;
            continue;
          }
          if (m === MARK_NEVER) {
            ctx.strokeStyle = '#ff3b5c';
            ctx.lineWidth = Math.max(1, cs / 8);
            ctx.beginPath();
            ctx.moveTo(px + 2, py + 2);
            ctx.lineTo(px + cs - 2, py + cs - 2);
            ctx.moveTo(px + cs - 2, py + 2);
            ctx.lineTo(px + 2, py + cs - 2);
            ctx.stroke();
          } else if (m === MARK_TWICE) {
            ctx.fillStyle = '#ff9d2e';
            ctx.beginPath();
            ctx.arc(px + cs / 2, py + cs / 2, cs / 3, 0, Math.PI * 2);
            ctx.fill();
          } else {
            ctx.strokeStyle = BAD_BOX;
            ctx.lineWidth = 1;
            ctx.strokeRect(px + 0.5, py + 0.5, cs - 1, cs - 1);
          }
        }
      }
    }

    if (selected !== undefined) {
      const r = Math.floor(selected / cols) - view.r0;
      const c = (selected % cols) - view.c0;
      if (r >= 0 && c >= 0 && r < view.rows && c < view.cols) {
        ctx.strokeStyle = '#ffffff';
        ctx.lineWidth = 2;
        ctx.strokeRect(c * cs - 1, r * cs - 1, cs + 2, cs + 2);
      }
    }

    // The keyboard's highlight: a dashed yellow box, apart from the selection's white one.
    if (highlightRow !== undefined && highlightCol !== undefined) {
      const x = (highlightCol - view.c0) * cs;
      const y = (highlightRow - view.r0) * cs;
      ctx.save();
      ctx.setLineDash([3, 2]);
      ctx.strokeStyle = '#ffd166';
      ctx.lineWidth = 2;
      ctx.strokeRect(x - 2, y - 2, cs + 4, cs + 4);
      ctx.restore();
    }
  }, [
    rows,
    cols,
    view,
    tileRows,
    tileCols,
    color,
    region,
    marks,
    selected,
    cs,
    width,
    height,
    highlightRow,
    highlightCol,
  ]);

  const cellAt = (e: MouseEvent<HTMLCanvasElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const col = view.c0 + Math.floor((e.clientX - box.left) / cs);
    const row = view.r0 + Math.floor((e.clientY - box.top) / cs);
    return row >= 0 && col >= 0 && row < view.r0 + view.rows && col < view.c0 + view.cols
      ? { row, col }
      : undefined;
  };

  const interactive = !!props.onPick;
  const onKeyDown = (e: KeyboardEvent<HTMLCanvasElement>) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      props.onPick?.(shown);
      return;
    }
    const next = cellAfterKey(shown, e.key, bounds, tileRows);
    if (!next) return;
    e.preventDefault();
    setKeyboard(true);
    setCursor(next);
    props.onHover?.(next);
  };
  const describe = props.describe ?? ((c: GridCell) => `(${c.row}, ${c.col})`);

  return (
    <>
      <canvas
        ref={ref}
        className="grid-canvas"
        style={{ width, height }}
        data-testid={props.testId}
        data-cell={cs}
        aria-label={
          interactive
            ? `${props.label}: arrow keys move between elements, Enter inspects the highlighted one`
            : props.label
        }
        role={interactive ? 'application' : 'img'}
        aria-roledescription={interactive ? 'element grid' : undefined}
        tabIndex={interactive ? 0 : undefined}
        onKeyDown={interactive ? onKeyDown : undefined}
        onFocus={(e) => {
          // Focus from the keyboard (Tab) shows the highlight at once; a click's focus does not.
          if (!interactive || !e.currentTarget.matches(':focus-visible')) return;
          setKeyboard(true);
          props.onHover?.(shown);
        }}
        onBlur={() => {
          if (!interactive || !keyboard) return;
          setKeyboard(false);
          props.onHover?.(undefined);
        }}
        onMouseDown={() => setKeyboard(false)}
        onMouseMove={(e) => props.onHover?.(cellAt(e))}
        onMouseLeave={() => props.onHover?.(highlight)}
        onClick={(e) => {
          const cell = cellAt(e);
          if (cell && cell.row < rows && cell.col < cols) {
            setCursor(cell);
            props.onPick?.(cell);
          }
        }}
      />
      {interactive ? (
        <span className="sr-only" aria-live="polite" data-testid={`${props.testId}-live`}>
          {highlight ? describe(highlight) : ''}
        </span>
      ) : null}
    </>
  );
}
