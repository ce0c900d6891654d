// The output grid as the ownership, error and A/B views draw it, pure: a scene (the output's size, the
// window drawn, the tile, a colour, a region and a mark per element, the selection and the keyboard's
// highlight) drawn onto a 2D context layer by layer -- cells, hatching outside m/n, region boundaries
// (planes), tile boundaries (workgroups), the m/n edge, marks, selection, highlight -- and the views'
// own colours, regions and marks from a run's buffers. No React and no DOM: the tests draw onto a
// recording context in Node, and a scene draws the same pixels wherever it is drawn.
import type { OwnershipBuffers } from '../../workers/protocol';
import type { GridCell } from '../components/keys';
import { OUTSIDE_COLOR, ownerColor, rampColor, logPosition, type Rgb } from './analysis';

export const MARK_NONE = 0;
export const MARK_NEVER = 1;
export const MARK_TWICE = 2;
export const MARK_BAD = 3;
/** The outline of an element that fails the gate (the legend's "fails the gate" swatch uses it too). */
export const BAD_BOX = '#ff4fd8';
/** An element no owner is shown for (never stored, or an opaque fragment layout). */
const NO_OWNER: Rgb = [34, 40, 52];

/** A window of the (padded) output: its first row and column and its size. */
export interface GridWindow {
  r0: number;
  c0: number;
  rows: number;
  cols: number;
}

/** The cells a grid colours: the output's size, the drawn window and each element's colour. */
export interface GridCells {
  /** Logical output size; cells past it (up to the padded size) are outside m/n. */
  rows: number;
  cols: number;
  /** The drawn window in padded coordinates. */
  view: GridWindow;
  color: (i: number) => Rgb;
}

/** What a grid draws. */
export interface GridScene extends GridCells {
  tileRows: number;
  tileCols: number;
  /** Cell size in CSS px (cellSize). */
  cell: number;
  /** Region id per element (e.g. workgroup*65536 + plane): a thin line is drawn where it changes. */
  region?: ((i: number) => number) | undefined;
  /** Per-element marks (MARK_*). */
  marks?: Uint8Array | undefined;
  selected?: number | undefined;
  /** The keyboard's highlighted element, if the keyboard drives the grid. */
  highlight?: GridCell | undefined;
}

/** The 2D context calls a grid is drawn with. */
export type GridContext = Pick<
  CanvasRenderingContext2D,
  | 'save'
  | 'restore'
  | 'beginPath'
  | 'rect'
  | 'clip'
  | 'moveTo'
  | 'lineTo'
  | 'stroke'
  | 'fill'
  | 'arc'
  | 'clearRect'
  | 'fillRect'
  | 'strokeRect'
  | 'setLineDash'
  | 'drawImage'
  | 'strokeStyle'
  | 'fillStyle'
  | 'lineWidth'
  | 'globalAlpha'
  | 'imageSmoothingEnabled'
>;

/**
 * Cell size in CSS px for a window: as large as fits, at most 24.
 * @example cellSize({ r0: 0, c0: 0, rows: 32, cols: 64 }, 512) // 8
 */
export function cellSize(view: GridWindow, maxPx: number): number {
  return Math.max(1, Math.min(24, Math.floor(maxPx / Math.max(view.rows, view.cols))));
}

/**
 * The window of the whole padded output, or of the workgroup tile holding `element` (of a rows x `cols`
 * output).
 * @example gridWindow({ paddedRows: 32, paddedCols: 64, tileRows: 16, tileCols: 16 }, 64, 70) // { r0: 0, c0: 0, rows: 16, cols: 16 }
 */
export function gridWindow(
  g: { paddedRows: number; paddedCols: number; tileRows: number; tileCols: number },
  cols: number,
  element: number | undefined,
): GridWindow {
  if (element === undefined) return { r0: 0, c0: 0, rows: g.paddedRows, cols: g.paddedCols };
  const r = Math.floor(element / cols);
  const c = element % cols;
  return {
    r0: Math.floor(r / g.tileRows) * g.tileRows,
    c0: Math.floor(c / g.tileCols) * g.tileCols,
    rows: g.tileRows,
    cols: g.tileCols,
  };
}

/** The window's cells, one RGBA pixel each (outside m/n in the outside colour): what drawGrid scales up. */
export function gridPixels(s: GridCells): Uint8ClampedArray<ArrayBuffer> {
  const { view } = s;
  const px = new Uint8ClampedArray(view.rows * view.cols * 4);
  for (let y = 0; y < view.rows; y++) {
    for (let x = 0; x < view.cols; x++) {
      const r = view.r0 + y;
      const c = view.c0 + x;
      const rgb = r < s.rows && c < s.cols ? s.color(r * s.cols + c) : OUTSIDE_COLOR;
      const o = (y * view.cols + x) * 4;
      px[o] = rgb[0];
      px[o + 1] = rgb[1];
      px[o + 2] = rgb[2];
      px[o + 3] = 255;
    }
  }
  return px;
}

/** The scene's size in CSS px and where the m/n edge falls in it, in cells from the window's corner. */
const extent = (s: GridScene) => ({
  width: s.view.cols * s.cell,
  height: s.view.rows * s.cell,
  outCol: Math.max(0, s.cols - s.view.c0),
  outRow: Math.max(0, s.rows - s.view.r0),
});

/** Outside m/n: the tail of the edge tiles, hatched. */
function drawHatch(ctx: GridContext, s: GridScene) {
  const { width, height, outCol, outRow } = extent(s);
  ctx.save();
  ctx.beginPath();
  if (outCol < s.view.cols) ctx.rect(outCol * s.cell, 0, width - outCol * s.cell, height);
  if (outRow < s.view.rows) ctx.rect(0, outRow * s.cell, width, height - outRow * s.cell);
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
}

/** Region boundaries (planes), only where cells are big enough to read them. */
function drawRegions(ctx: GridContext, s: GridScene) {
  const { region, view, cols, cell: cs } = s;
  if (!region || cs < 3) return;
  const inside = (r: number, c: number) => r < s.rows && c < cols;
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

/** Workgroup tile boundaries, then the m/n edge itself (dashed). */
function drawTilesAndEdge(ctx: GridContext, s: GridScene) {
  const { view, tileRows, tileCols, cell: cs } = s;
  const { width, height, outCol, outRow } = extent(s);
  ctx.strokeStyle = 'rgba(235, 240, 250, 0.8)';
  ctx.lineWidth = cs >= 4 ? 2 : 1;
  ctx.beginPath();
  for (let c = Math.ceil(view.c0 / tileCols) * tileCols; c <= view.c0 + view.cols; c += tileCols) {
    ctx.moveTo((c - view.c0) * cs, 0);
    ctx.lineTo((c - view.c0) * cs, height);
  }
  for (let r = Math.ceil(view.r0 / tileRows) * tileRows; r <= view.r0 + view.rows; r += tileRows) {
    ctx.moveTo(0, (r - view.r0) * cs);
    ctx.lineTo(width, (r - view.r0) * cs);
  }
  ctx.stroke();
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
}

/** One mark at cell (px, py): a glyph, or where cells are too small for one, a tint. */
function drawMark(ctx: GridContext, m: number, px: number, py: number, cs: number) {
  if (cs < 6) {
    // Too small for a glyph: tint the cell (bad elements stay readable through a light tint).
    ctx.globalAlpha = m === MARK_BAD ? 0.45 : 1;
    ctx.fillStyle = m === MARK_NEVER ? '#ff3b5c' : m === MARK_TWICE ? '#ff9d2e' : BAD_BOX;
    ctx.fillRect(px, py, cs, cs);
    ctx.globalAlpha = 1;
  } else if (m === MARK_NEVER) {
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

/**
 * Marks: never stored (red cross), stored twice (orange dot), bad under the overlay (magenta box:
 * distinct from the ramp's cyan NaN / inf fill).
 */
function drawMarks(ctx: GridContext, s: GridScene) {
  const { marks, view, cols } = s;
  if (!marks) return;
  for (let y = 0; y < view.rows; y++) {
    for (let x = 0; x < view.cols; x++) {
      const r = view.r0 + y;
      const c = view.c0 + x;
      const m = r < s.rows && c < cols ? marks[r * cols + c] : MARK_NONE;
      if (m) drawMark(ctx, m, x * s.cell, y * s.cell, s.cell);
    }
  }
}

/** The selection (a white box) and the keyboard's highlight (a dashed yellow one, apart from it). */
function drawSelection(ctx: GridContext, s: GridScene) {
  const { view, cols, cell: cs } = s;
  if (s.selected !== undefined) {
    const r = Math.floor(s.selected / cols) - view.r0;
    const c = (s.selected % cols) - view.c0;
    if (r >= 0 && c >= 0 && r < view.rows && c < view.cols) {
      ctx.strokeStyle = '#ffffff';
      ctx.lineWidth = 2;
      ctx.strokeRect(c * cs - 1, r * cs - 1, cs + 2, cs + 2);
    }
  }
  if (s.highlight) {
    ctx.save();
    ctx.setLineDash([3, 2]);
    ctx.strokeStyle = '#ffd166';
    ctx.lineWidth = 2;
    ctx.strokeRect(
      (s.highlight.col - view.c0) * cs - 2,
      (s.highlight.row - view.r0) * cs - 2,
      cs + 4,
      cs + 4,
    );
    ctx.restore();
  }
}

/**
 * Draw a scene: `cells` is gridPixels(scene) as an image, one pixel a cell, scaled up without smoothing
 * under the layers.
 * @example drawGrid(ctx, scene, offscreenCanvasOf(gridPixels(scene)))
 */
export function drawGrid(ctx: GridContext, s: GridScene, cells: CanvasImageSource): void {
  const { width, height } = extent(s);
  ctx.imageSmoothingEnabled = false;
  ctx.clearRect(0, 0, width, height);
  ctx.drawImage(cells, 0, 0, width, height);
  drawHatch(ctx, s);
  drawRegions(ctx, s);
  drawTilesAndEdge(ctx, s);
  drawMarks(ctx, s);
  drawSelection(ctx, s);
}

// ------------------------------------------------------------------- the views' colours, regions, marks

/** The ownership view's colour: plane (hue) and lane (shade) of the owner, none where it shows none. */
export const ownershipColor =
  (map: OwnershipBuffers | undefined, opaque: boolean, lanes: number) =>
  (i: number): Rgb =>
    !map || opaque || map.count[i] === 0 ? NO_OWNER : ownerColor(map.plane[i]!, map.lane[i]!, lanes);

/** A region per (workgroup, plane) of an owner map: the boundaries drawn between planes. */
export const ownerRegion = (map: OwnershipBuffers | undefined) => (i: number) =>
  map ? map.workgroup[i]! * 65536 + map.plane[i]! : 0;

/** The marks of a recorded ownership: elements stored never, or more than once. */
export function ownershipMarks(map: OwnershipBuffers): Uint8Array {
  const m = new Uint8Array(map.count.length);
  for (let i = 0; i < m.length; i++)
    m[i] = map.count[i] === 0 ? MARK_NEVER : map.count[i]! > 1 ? MARK_TWICE : MARK_NONE;
  return m;
}

/** The error heatmap's colour: the error's place on the log ramp. */
export const errorColor =
  (field: Float32Array | undefined) =>
  (i: number): Rgb =>
    field ? rampColor(logPosition(field[i]!)) : [0, 0, 0];

/** The marks of the elements that fail the gate. */
export function badMarks(bad: ArrayLike<number | boolean>): Uint8Array {
  const m = new Uint8Array(bad.length);
  for (let i = 0; i < m.length; i++) if (bad[i]) m[i] = MARK_BAD;
  return m;
}
