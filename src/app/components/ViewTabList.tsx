// The view tabs (WAI-ARIA tabs pattern): one tab stop for the list (the selected tab), Left/Right move
// to the previous/next tab and wrap, Home/End go to the first/last, and the tab moved to is shown.
import { useRef, type KeyboardEvent } from 'react';
import { VIEW_TABS, type ViewTab } from '../permalink/codec';
import { act, setTab, useApp } from '../store';
import { tabAfterKey } from './keys';

export const TAB_LABEL: Record<ViewTab, string> = {
  ownership: 'Ownership',
  errors: 'Errors',
  ab: 'A/B',
  sweep: 'Shape sweep',
  tuner: 'Tuner',
  model: 'Model file',
  config: 'Config JSON',
};

/** The id of a view's tab, and of the panel it controls. */
export const tabId = (t: ViewTab) => `view-tab-${t}`;
export const TAB_PANEL_ID = 'view-tabpanel';

export function ViewTabList() {
  const tab = useApp((s) => s.tab);
  const hunting = useApp((s) => s.tuner.hunt?.status === 'running');
  const list = useRef<HTMLElement>(null);
  const onKeyDown = (e: KeyboardEvent) => {
    const next = tabAfterKey(VIEW_TABS, tab, e.key);
    if (!next) return;
    e.preventDefault();
    act(setTab, next);
    list.current?.querySelector<HTMLButtonElement>(`#${tabId(next)}`)?.focus();
  };
  return (
    <nav className="tabs" role="tablist" aria-label="Views" ref={list} onKeyDown={onKeyDown}>
      {VIEW_TABS.map((t) => (
        <button
          key={t}
          id={tabId(t)}
          type="button"
          role="tab"
          aria-selected={tab === t}
          aria-controls={TAB_PANEL_ID}
          tabIndex={tab === t ? 0 : -1}
          className={tab === t ? 'on' : ''}
          onClick={() => act(setTab, t)}
          data-testid={`tab-${t}`}
        >
          {TAB_LABEL[t]}
          {t === 'tuner' && hunting ? ' (hunting…)' : ''}
        </button>
      ))}
    </nav>
  );
}
