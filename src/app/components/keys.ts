// Keyboard rules shared by the components, pure so they are unit-tested: the WAI-ARIA tabs pattern's
// arrow keys, a dialog's Tab cycle, and moving a highlighted element on an output grid.

/**
 * The tab a key moves to in a tab list (WAI-ARIA tabs: Left/Right wrap around, Home/End go to the ends);
 * undefined for any other key.
 * @example tabAfterKey(['a', 'b', 'c'], 'c', 'ArrowRight') // 'a'
 */
export function tabAfterKey<T>(tabs: readonly T[], current: T, key: string): T | undefined {
  const n = tabs.length;
  if (!n) return undefined;
  const i = Math.max(0, tabs.indexOf(current));
  switch (key) {
    case 'ArrowRight':
      return tabs[(i + 1) % n];
    case 'ArrowLeft':
      return tabs[(i - 1 + n) % n];
    case 'Home':
      return tabs[0];
    case 'End':
      return tabs[n - 1];
    default:
      return undefined;
  }
}

/**
 * Where Tab (or Shift+Tab) goes inside a dialog of `count` focusable elements with focus on `index` (-1:
 * on none of them): it wraps from the last to the first and back, so focus stays in the dialog.
 * @example dialogTabTarget(2, 3, false) // 0
 */
export function dialogTabTarget(index: number, count: number, shift: boolean): number {
  if (count <= 0) return -1;
  if (index < 0) return shift ? count - 1 : 0;
  return shift ? (index - 1 + count) % count : (index + 1) % count;
}

/** An element of an output grid. */
export interface GridCell {
  row: number;
  col: number;
}

/**
 * The element a key moves a grid's highlight to, kept inside `bounds` (rows [r0, r1), cols [c0, c1)):
 * arrows one element, Home/End to the row's ends, PageUp/PageDown by `page` rows; undefined for any
 * other key.
 * @example cellAfterKey({ row: 0, col: 0 }, 'ArrowRight', { r0: 0, c0: 0, r1: 4, c1: 4 }) // { row: 0, col: 1 }
 */
export function cellAfterKey(
  cell: GridCell,
  key: string,
  bounds: { r0: number; c0: number; r1: number; c1: number },
  page = 8,
): GridCell | undefined {
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi - 1, Math.max(lo, v));
  const at = (row: number, col: number) => ({
    row: clamp(row, bounds.r0, bounds.r1),
    col: clamp(col, bounds.c0, bounds.c1),
  });
  switch (key) {
    case 'ArrowRight':
      return at(cell.row, cell.col + 1);
    case 'ArrowLeft':
      return at(cell.row, cell.col - 1);
    case 'ArrowDown':
      return at(cell.row + 1, cell.col);
    case 'ArrowUp':
      return at(cell.row - 1, cell.col);
    case 'Home':
      return at(cell.row, bounds.c0);
    case 'End':
      return at(cell.row, bounds.c1 - 1);
    case 'PageDown':
      return at(cell.row + page, cell.col);
    case 'PageUp':
      return at(cell.row - page, cell.col);
    default:
      return undefined;
  }
}
