// The content width of an element, followed as it resizes (the views fit their canvases to it).
import { useEffect, useState } from 'react';

/**
 * A callback ref and the width of the element it is attached to (0 until measured).
 * @example const [ref, width] = useContentWidth(); <div ref={ref}>...</div>
 */
export function useContentWidth(): [(el: HTMLElement | null) => void, number] {
  const [el, setEl] = useState<HTMLElement | null>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    if (!el) return;
    setWidth(el.clientWidth);
    const ro = new ResizeObserver((entries) => {
      const e = entries[0];
      if (e) setWidth(e.contentRect.width);
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [el]);
  return [setEl, width];
}

/** The longest side a view's canvas may take: 560 px, or what the view's width leaves. */
export const canvasPx = (width: number): number =>
  width > 0 ? Math.max(160, Math.min(560, Math.floor(width) - 14)) : 560;
