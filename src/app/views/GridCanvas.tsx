// One canvas for the grid views: it draws its props' scene (./gridDraw.ts, pure) and wires the pointer and
// the keyboard. A grid that can be picked from takes focus: the arrow keys move a highlighted element (as
// hovering does), Enter or Space picks it (as a click does), and a live region announces it.
import { useEffect, useRef, useState, type KeyboardEvent, type MouseEvent, type RefObject } from 'react';
import { cellAfterKey, type GridCell } from '../components/keys';
import type { Rgb } from './analysis';
import { cellSize, drawGrid, gridPixels, type GridWindow } from './gridDraw';
import './grid.css';

export { BAD_BOX, cellSize, MARK_BAD, MARK_NEVER, MARK_NONE, MARK_TWICE, type GridWindow } from './gridDraw';

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

/**
 * The element the keyboard drives: the element shown (the cursor, else the selection, else the window's
 * first), highlighted only while the keyboard drives the grid (not after a click, which selects).
 */
function useGridCursor(props: GridCanvasProps) {
  const { rows, cols, view, selected } = props;
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
  const onKeyDown = (e: KeyboardEvent<HTMLCanvasElement>) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      props.onPick?.(shown);
      return;
    }
    const next = cellAfterKey(shown, e.key, bounds, props.tileRows);
    if (!next) return;
    e.preventDefault();
    setKeyboard(true);
    setCursor(next);
    props.onHover?.(next);
  };
  return { shown, highlight, keyboard, setKeyboard, setCursor, onKeyDown };
}

/** Draw `props`' scene onto the canvas whenever it changes (the highlight drawn where given). */
function useGridDrawing(
  ref: RefObject<HTMLCanvasElement | null>,
  props: GridCanvasProps,
  cell: number,
  highlight: GridCell | undefined,
) {
  const { rows, cols, view, tileRows, tileCols, color, region, marks, selected } = props;
  const highlightRow = highlight?.row;
  const highlightCol = highlight?.col;
  useEffect(() => {
    const canvas = ref.current;
    if (!canvas) return;
    const dpr = Math.max(1, Math.round(window.devicePixelRatio || 1));
    canvas.width = view.cols * cell * dpr;
    canvas.height = view.rows * cell * dpr;
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const scene = { rows, cols, view, tileRows, tileCols, cell, color, region, marks, selected };
    // Cells at one pixel each, which drawGrid scales up without smoothing.
    const cells = document.createElement('canvas');
    cells.width = view.cols;
    cells.height = view.rows;
    cells.getContext('2d')?.putImageData(new ImageData(gridPixels(scene), view.cols, view.rows), 0, 0);
    const lit = highlightRow !== undefined && highlightCol !== undefined;
    drawGrid(ctx, { ...scene, highlight: lit ? { row: highlightRow, col: highlightCol } : undefined }, cells);
  }, [
    ref,
    rows,
    cols,
    view,
    tileRows,
    tileCols,
    color,
    region,
    marks,
    selected,
    cell,
    highlightRow,
    highlightCol,
  ]);
}

export function GridCanvas(props: GridCanvasProps) {
  const ref = useRef<HTMLCanvasElement>(null);
  const { rows, cols, view } = props;
  const cs = cellSize(view, props.maxPx ?? 512);
  const { shown, highlight, keyboard, setKeyboard, setCursor, onKeyDown } = useGridCursor(props);
  useGridDrawing(ref, props, cs, highlight);

  const cellAt = (e: MouseEvent<HTMLCanvasElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const col = view.c0 + Math.floor((e.clientX - box.left) / cs);
    const row = view.r0 + Math.floor((e.clientY - box.top) / cs);
    return row >= 0 && col >= 0 && row < view.r0 + view.rows && col < view.c0 + view.cols
      ? { row, col }
      : undefined;
  };
  const interactive = !!props.onPick;
  const describe = props.describe ?? ((c: GridCell) => `(${c.row}, ${c.col})`);

  return (
    <>
      <canvas
        ref={ref}
        className="grid-canvas"
        style={{ width: view.cols * cs, height: view.rows * cs }}
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
