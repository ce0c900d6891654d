// The playground layout: controls left (collapsible), the WGSL editor and the results side by side with a
// draggable splitter on wide screens, stacked on narrow ones (from 1024 px wide nothing scrolls
// sideways), the views under the results. Ctrl/Alt+Enter runs from anywhere on the page.
import { lazy, Suspense, useEffect, useState } from 'react';
import { useServices } from './appContext';
import { Banners } from './components/Banners';
import { ConfigJson } from './components/ConfigJson';
import { Controls } from './components/Controls';
import { DropZone } from './components/DropZone';
import { EditorPanel } from './components/EditorPanel';
import { ErrorBoundary } from './components/ErrorBoundary';
import { Header } from './components/Header';
import { ResultsPanel } from './components/ResultsPanel';
import { Splitter } from './components/Splitter';
import { TAB_LABEL, TAB_PANEL_ID, tabId, ViewTabList } from './components/ViewTabList';
import { act, selectElement, useApp } from './store';
import { OwnershipView } from './views/OwnershipView';

// The tuner pulls in the charting library: loaded when its tab is first opened.
const TunerDashboard = lazy(() => import('./tuner/TunerDashboard'));
// The model view (file table, a model's GEMMs) loads with its tab: the first paint does not need it.
const ModelPanel = lazy(() => import('./model/ModelPanel').then((m) => ({ default: m.ModelPanel })));

// The error heatmap waits for its tab too: the ownership view is the one a first paint shows.
const ErrorView = lazy(() => import('./views/ErrorView').then((m) => ({ default: m.ErrorView })));
// The glossary's text loads just after the first paint (before anyone can open it).
const Glossary = lazy(() => import('./components/Glossary').then((m) => ({ default: m.Glossary })));
const AbView = lazy(() => import('./views/AbView'));
const SweepView = lazy(() => import('./views/SweepView'));

/** Below this width the editor and the results stack instead of sitting side by side. */
export const STACK_BELOW_PX = 1200;

function useStacked(): boolean {
  const query = `(max-width: ${STACK_BELOW_PX - 1}px)`;
  const [stacked, setStacked] = useState(() => window.matchMedia(query).matches);
  useEffect(() => {
    const m = window.matchMedia(query);
    const on = () => setStacked(m.matches);
    m.addEventListener('change', on);
    return () => m.removeEventListener('change', on);
  }, [query]);
  return stacked;
}

function Tabs() {
  const tab = useApp((s) => s.tab);
  return (
    <section className="views">
      <ViewTabList />
      <div className="tab-body" role="tabpanel" id={TAB_PANEL_ID} aria-labelledby={tabId(tab)}>
        <ErrorBoundary
          label={`${TAB_LABEL[tab]} view`}
          onReset={() => act(selectElement, undefined)}
          key={tab}
        >
          {tab === 'ownership' && <OwnershipView />}
          {(tab === 'errors' || tab === 'ab' || tab === 'sweep') && (
            <Suspense fallback={<p className="muted pad">loading…</p>}>
              {tab === 'errors' ? <ErrorView /> : tab === 'ab' ? <AbView /> : <SweepView />}
            </Suspense>
          )}
          {tab === 'tuner' && (
            <Suspense fallback={<p className="muted pad">loading the tuner…</p>}>
              <TunerDashboard />
            </Suspense>
          )}
          {tab === 'model' && (
            <Suspense fallback={<p className="muted pad">loading the model view…</p>}>
              <ModelPanel />
            </Suspense>
          )}
          {tab === 'config' && <ConfigJson />}
        </ErrorBoundary>
      </div>
    </section>
  );
}

/** Ctrl+Enter / Alt+Enter anywhere runs (the editor handles its own first, and marks the event). */
function useRunShortcut() {
  const { controller } = useServices();
  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      if (e.key !== 'Enter' || !(e.ctrlKey || e.metaKey || e.altKey) || e.defaultPrevented) return;
      e.preventDefault();
      controller.runNow();
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, [controller]);
}

export function App() {
  useRunShortcut();
  const stacked = useStacked();
  const layout = useApp((s) => s.layout);
  const style = stacked
    ? { gridTemplateRows: `${layout.editorHeight}px 8px auto` }
    : { gridTemplateColumns: `minmax(0, 1fr) 8px ${layout.sideWidth}px` };
  return (
    <div className="app">
      <Header />
      <Banners />
      <main className={`layout${layout.controlsCollapsed ? ' collapsed' : ''}`}>
        <ErrorBoundary label="controls">
          <Controls />
        </ErrorBoundary>
        <div className={`work ${stacked ? 'stacked' : 'side-by-side'}`} style={style} data-testid="work">
          <ErrorBoundary label="editor">
            <EditorPanel />
          </ErrorBoundary>
          <Splitter stacked={stacked} />
          <div className="side">
            <ErrorBoundary label="results">
              <ResultsPanel />
            </ErrorBoundary>
            <Tabs />
          </div>
        </div>
      </main>
      <Suspense fallback={null}>
        <Glossary />
      </Suspense>
      <DropZone />
    </div>
  );
}
