// The keyboard rules: tab lists, a dialog's Tab cycle, and a grid's highlighted element.
import { describe, expect, it } from 'vitest';
import { cellAfterKey, dialogTabTarget, tabAfterKey } from './keys';

describe('keyboard rules', () => {
  it('tabs: Left/Right wrap around, Home/End go to the ends, other keys do nothing', () => {
    const tabs = ['ownership', 'errors', 'ab'] as const;
    expect(tabAfterKey(tabs, 'ownership', 'ArrowRight')).toBe('errors');
    expect(tabAfterKey(tabs, 'ab', 'ArrowRight')).toBe('ownership');
    expect(tabAfterKey(tabs, 'ownership', 'ArrowLeft')).toBe('ab');
    expect(tabAfterKey(tabs, 'errors', 'Home')).toBe('ownership');
    expect(tabAfterKey(tabs, 'errors', 'End')).toBe('ab');
    expect(tabAfterKey(tabs, 'errors', 'ArrowDown')).toBeUndefined();
  });

  it('a dialog: Tab from the last goes to the first, Shift+Tab from the first to the last', () => {
    expect(dialogTabTarget(2, 3, false)).toBe(0);
    expect(dialogTabTarget(0, 3, true)).toBe(2);
    expect(dialogTabTarget(1, 3, false)).toBe(2);
    expect(dialogTabTarget(-1, 3, false)).toBe(0);
    expect(dialogTabTarget(-1, 3, true)).toBe(2);
    expect(dialogTabTarget(0, 0, false)).toBe(-1);
  });

  it('a grid: arrows move one element and stop at the edges of the shown window', () => {
    const bounds = { r0: 0, c0: 0, r1: 3, c1: 5 };
    expect(cellAfterKey({ row: 1, col: 1 }, 'ArrowRight', bounds)).toEqual({ row: 1, col: 2 });
    expect(cellAfterKey({ row: 1, col: 4 }, 'ArrowRight', bounds)).toEqual({ row: 1, col: 4 });
    expect(cellAfterKey({ row: 0, col: 1 }, 'ArrowUp', bounds)).toEqual({ row: 0, col: 1 });
    expect(cellAfterKey({ row: 2, col: 1 }, 'ArrowDown', bounds)).toEqual({ row: 2, col: 1 });
    expect(cellAfterKey({ row: 1, col: 3 }, 'Home', bounds)).toEqual({ row: 1, col: 0 });
    expect(cellAfterKey({ row: 1, col: 0 }, 'End', bounds)).toEqual({ row: 1, col: 4 });
    expect(cellAfterKey({ row: 0, col: 0 }, 'PageDown', bounds)).toEqual({ row: 2, col: 0 });
    // A zoomed window (one tile) keeps the highlight in it.
    const tile = { r0: 16, c0: 32, r1: 32, c1: 48 };
    expect(cellAfterKey({ row: 16, col: 32 }, 'ArrowLeft', tile)).toEqual({ row: 16, col: 32 });
    expect(cellAfterKey({ row: 1, col: 1 }, 'Enter', bounds)).toBeUndefined();
  });
});
