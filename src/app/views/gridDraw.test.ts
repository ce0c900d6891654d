// The grid views' drawing in Node: a recording context shows what each layer draws where.
import { describe, expect, it } from 'vitest';
import type { OwnershipBuffers } from '../../workers/protocol';
import { OUTSIDE_COLOR, ownerColor } from './analysis';
import {
  BAD_BOX,
  badMarks,
  cellSize,
  drawGrid,
  errorColor,
  gridPixels,
  gridWindow,
  MARK_BAD,
  MARK_NEVER,
  MARK_TWICE,
  ownerRegion,
  ownershipColor,
  ownershipMarks,
  type GridContext,
  type GridScene,
} from './gridDraw';

type Call = [string, ...unknown[]];

/** A 2D context that records every call and every style set, in order. */
function recorder(): { ctx: GridContext; calls: Call[] } {
  const calls: Call[] = [];
  const record =
    (name: string) =>
    (...args: unknown[]) => {
      calls.push([name, ...args]);
    };
  const methods = [
    'save',
    'restore',
    'beginPath',
    'rect',
    'clip',
    'moveTo',
    'lineTo',
    'stroke',
    'fill',
    'arc',
  ];
  const more = ['clearRect', 'fillRect', 'strokeRect', 'setLineDash', 'drawImage'];
  const ctx = Object.fromEntries([...methods, ...more].map((m) => [m, record(m)]));
  for (const prop of ['strokeStyle', 'fillStyle', 'lineWidth', 'globalAlpha', 'imageSmoothingEnabled'])
    Object.defineProperty(ctx, prop, { set: (v: unknown) => calls.push([`${prop}=`, v]) });
  return { ctx: ctx as unknown as GridContext, calls };
}

const named = (calls: Call[], name: string) => calls.filter((c) => c[0] === name).map((c) => c.slice(1));

/** A 3 x 5 output padded to 4 x 8 (tiles of 2 x 4), cells of 10 px. */
const scene = (over: Partial<GridScene> = {}): GridScene => ({
  rows: 3,
  cols: 5,
  view: { r0: 0, c0: 0, rows: 4, cols: 8 },
  tileRows: 2,
  tileCols: 4,
  cell: 10,
  color: (i) => [i, 2 * i, 3 * i],
  ...over,
});

describe('the grid drawing', () => {
  it('colours each cell of the window, outside m x n in the outside colour', () => {
    const px = gridPixels(scene());
    const at = (x: number, y: number) => [...px.slice((y * 8 + x) * 4, (y * 8 + x) * 4 + 4)];
    expect(at(0, 0)).toEqual([0, 0, 0, 255]);
    expect(at(4, 2)).toEqual([14, 28, 42, 255]); // element (2, 4) = 14
    expect(at(5, 0)).toEqual([...OUTSIDE_COLOR, 255]);
    expect(at(0, 3)).toEqual([...OUTSIDE_COLOR, 255]);
  });

  it('scales the cells up unsmoothed, hatches the tail, draws the tiles and the m x n edge', () => {
    const { ctx, calls } = recorder();
    const cells = {} as CanvasImageSource;
    drawGrid(ctx, scene(), cells);
    expect(calls.slice(0, 3)).toEqual([
      ['imageSmoothingEnabled=', false],
      ['clearRect', 0, 0, 80, 40],
      ['drawImage', cells, 0, 0, 80, 40],
    ]);
    // The tail: columns 5.. and row 3, clipped.
    expect(named(calls, 'rect')).toEqual([
      [50, 0, 30, 40],
      [0, 30, 80, 10],
    ]);
    // Tile boundaries every 4 columns and 2 rows, then the dashed edge at column 5 and row 3.
    const lines = named(calls, 'moveTo').map(([x, y], i) => [x, y, ...named(calls, 'lineTo')[i]!]);
    expect(lines).toEqual(
      expect.arrayContaining([
        [0, 0, 0, 40],
        [40, 0, 40, 40],
        [80, 0, 80, 40],
        [0, 20, 80, 20],
        [50, 0, 50, 30],
        [0, 30, 50, 30],
      ]),
    );
    expect(named(calls, 'setLineDash')).toEqual([[[4, 3]]]);
  });

  it('draws region boundaries inside m x n only, and only where cells are big enough', () => {
    const region = (i: number) => (i % 5 < 2 ? 0 : 1); // columns 0-1 and 2-4
    const { ctx, calls } = recorder();
    drawGrid(ctx, scene({ region, tileCols: 8, tileRows: 4 }), {} as CanvasImageSource);
    const boundary = named(calls, 'moveTo').filter(([x]) => x === 20.5);
    expect(boundary).toEqual([
      [20.5, 0],
      [20.5, 10],
      [20.5, 20],
    ]);
    // None at the m x n edge, where the next cell is outside the output.
    expect(named(calls, 'moveTo').filter(([x]) => x === 50.5)).toEqual([]);
    const small = recorder();
    drawGrid(small.ctx, scene({ region, cell: 2 }), {} as CanvasImageSource);
    expect(named(small.calls, 'moveTo').filter(([x]) => x === 4.5)).toEqual([]);
  });

  it('marks never, twice and bad elements with their glyphs, or tints where cells are small', () => {
    const marks = new Uint8Array(15);
    marks[0] = MARK_NEVER;
    marks[1] = MARK_TWICE;
    marks[2] = MARK_BAD;
    const { ctx, calls } = recorder();
    drawGrid(ctx, scene({ marks }), {} as CanvasImageSource);
    expect(named(calls, 'arc')).toEqual([[15, 5, 10 / 3, 0, Math.PI * 2]]);
    expect(named(calls, 'strokeRect')).toEqual([[20.5, 0.5, 9, 9]]);
    expect(calls).toContainEqual(['moveTo', 2, 2]);
    expect(calls).toContainEqual(['lineTo', 8, 8]);
    const tiny = recorder();
    drawGrid(tiny.ctx, scene({ marks, cell: 4 }), {} as CanvasImageSource);
    expect(named(tiny.calls, 'fillRect')).toEqual([
      [0, 0, 4, 4],
      [4, 0, 4, 4],
      [8, 0, 4, 4],
    ]);
    expect(named(tiny.calls, 'fillStyle=')).toEqual([['#ff3b5c'], ['#ff9d2e'], [BAD_BOX]]);
    expect(named(tiny.calls, 'globalAlpha=')).toContainEqual([0.45]);
  });

  it('boxes the selection in white and the keyboard highlight dashed, each in the window only', () => {
    const { ctx, calls } = recorder();
    drawGrid(ctx, scene({ selected: 7, highlight: { row: 2, col: 3 } }), {} as CanvasImageSource);
    expect(named(calls, 'strokeRect')).toEqual([
      [19, 9, 12, 12],
      [28, 18, 14, 14],
    ]);
    expect(named(calls, 'setLineDash')).toContainEqual([[3, 2]]);
    const away = recorder();
    drawGrid(
      away.ctx,
      scene({ selected: 7, view: { r0: 2, c0: 4, rows: 2, cols: 4 } }),
      {} as CanvasImageSource,
    );
    expect(named(away.calls, 'strokeRect')).toEqual([]);
  });
});

describe("the views' scenes", () => {
  const map: OwnershipBuffers = {
    rows: 1,
    cols: 4,
    count: new Uint32Array([1, 0, 2, 1]),
    workgroup: new Uint32Array([0, 0, 1, 1]),
    plane: new Uint32Array([0, 1, 0, 1]),
    lane: new Uint32Array([3, 2, 1, 0]),
  };

  it('ownership: owner colours, plane regions, never and twice marks', () => {
    expect(ownershipMarks(map)).toEqual(new Uint8Array([0, MARK_NEVER, MARK_TWICE, 0]));
    const color = ownershipColor(map, false, 4);
    expect(color(0)).toEqual(ownerColor(0, 3, 4));
    expect(color(1)).toEqual([34, 40, 52]);
    expect(ownershipColor(map, true, 4)(0)).toEqual([34, 40, 52]);
    expect([0, 1, 2, 3].map(ownerRegion(map))).toEqual([0, 1, 65536, 65537]);
  });

  it('errors: the log ramp, and the elements failing the gate', () => {
    expect(badMarks(new Uint8Array([0, 1, 0]))).toEqual(new Uint8Array([0, MARK_BAD, 0]));
    expect(errorColor(undefined)(0)).toEqual([0, 0, 0]);
    expect(errorColor(new Float32Array([0, 1]))(0)).not.toEqual(errorColor(new Float32Array([0, 1]))(1));
  });

  it('windows: the whole padded output, or the tile of an element; cells as large as fit', () => {
    const g = { paddedRows: 32, paddedCols: 64, tileRows: 16, tileCols: 16 };
    expect(gridWindow(g, 50, undefined)).toEqual({ r0: 0, c0: 0, rows: 32, cols: 64 });
    expect(gridWindow(g, 50, 17 * 50 + 20)).toEqual({ r0: 16, c0: 16, rows: 16, cols: 16 });
    expect(cellSize({ r0: 0, c0: 0, rows: 32, cols: 64 }, 512)).toBe(8);
    expect(cellSize({ r0: 0, c0: 0, rows: 2, cols: 2 }, 512)).toBe(24);
  });
});
