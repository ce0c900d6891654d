// The playground layout: controls left, the WGSL editor center, results and the views right.
import { Banners } from './components/Banners';
import { ConfigJson } from './components/ConfigJson';
import { Controls } from './components/Controls';
import { EditorPanel } from './components/EditorPanel';
import { ErrorBoundary } from './components/ErrorBoundary';
import { Header } from './components/Header';
import { ResultsPanel } from './components/ResultsPanel';
import { TunerTab } from './components/TunerTab';
import { VIEW_TABS, type ViewTab } from './permalink/codec';
import { act, selectElement, setTab, useApp } from './store';
import { ErrorView } from './views/ErrorView';
import { OwnershipView } from './views/OwnershipView';

const TAB_LABEL: Record<ViewTab, string> = {
  ownership: 'Ownership',
  errors: 'Errors',
  tuner: 'Tuner',
  config: 'Config JSON',
};

function Tabs() {
  const tab = useApp((s) => s.tab);
  return (
    <section className="views">
      <nav className="tabs" role="tablist">
        {VIEW_TABS.map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            aria-selected={tab === t}
            className={tab === t ? 'on' : ''}
            onClick={() => act(setTab, t)}
            data-testid={`tab-${t}`}
          >
            {TAB_LABEL[t]}
          </button>
        ))}
      </nav>
      <div className="tab-body" role="tabpanel">
        <ErrorBoundary
          label={`${TAB_LABEL[tab]} view`}
          onReset={() => act(selectElement, undefined)}
          key={tab}
        >
          {tab === 'ownership' && <OwnershipView />}
          {tab === 'errors' && <ErrorView />}
          {tab === 'tuner' && <TunerTab />}
          {tab === 'config' && <ConfigJson />}
        </ErrorBoundary>
      </div>
    </section>
  );
}

export function App() {
  return (
    <div className="app">
      <Header />
      <Banners />
      <main className="layout">
        <ErrorBoundary label="controls">
          <Controls />
        </ErrorBoundary>
        <ErrorBoundary label="editor">
          <EditorPanel />
        </ErrorBoundary>
        <div className="right">
          <ErrorBoundary label="results">
            <ResultsPanel />
          </ErrorBoundary>
          <Tabs />
        </div>
      </main>
    </div>
  );
}
