// The draggable divider between the editor and the results: beside each other on wide screens (it sets
// the results' width), stacked on narrow ones (it sets the editor's height). Keyboard: arrows move it.
import { useRef, type KeyboardEvent, type PointerEvent } from 'react';
import { act, getApp, setLayout } from '../store';

const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));

export function Splitter({ stacked }: { stacked: boolean }) {
  const start = useRef<{ x: number; y: number; width: number; height: number } | undefined>(undefined);
  const down = (e: PointerEvent<HTMLDivElement>) => {
    const l = getApp().layout;
    start.current = { x: e.clientX, y: e.clientY, width: l.sideWidth, height: l.editorHeight };
    e.currentTarget.setPointerCapture(e.pointerId);
  };
  const move = (e: PointerEvent<HTMLDivElement>) => {
    const s = start.current;
    if (!s) return;
    if (stacked)
      act(setLayout, {
        dragged: true,
        editorHeight: clamp(s.height + e.clientY - s.y, 160, window.innerHeight - 120),
      });
    else
      act(setLayout, {
        dragged: true,
        sideWidth: clamp(s.width - (e.clientX - s.x), 320, window.innerWidth * 0.6),
      });
  };
  const key = (e: KeyboardEvent<HTMLDivElement>) => {
    const l = getApp().layout;
    const d =
      e.key === 'ArrowLeft' || e.key === 'ArrowUp'
        ? -32
        : e.key === 'ArrowRight' || e.key === 'ArrowDown'
          ? 32
          : 0;
    if (!d) return;
    e.preventDefault();
    if (stacked)
      act(setLayout, {
        dragged: true,
        editorHeight: clamp(l.editorHeight + d, 160, window.innerHeight - 120),
      });
    else act(setLayout, { dragged: true, sideWidth: clamp(l.sideWidth - d, 320, window.innerWidth * 0.6) });
  };
  return (
    <div
      className={`splitter ${stacked ? 'horizontal' : 'vertical'}`}
      role="separator"
      aria-orientation={stacked ? 'horizontal' : 'vertical'}
      aria-label="resize the editor and the results"
      tabIndex={0}
      data-testid="splitter"
      onPointerDown={down}
      onPointerMove={move}
      onPointerUp={() => (start.current = undefined)}
      onKeyDown={key}
    />
  );
}
