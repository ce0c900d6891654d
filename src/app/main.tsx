// Entry: build the store from the families' light catalogs (no generator, oracle or quant code on this
// thread: they load in the worker), start the GPU worker behind its client, wire the controller, render.
// Test builds (vite --mode e2e) also install window.__mmq; production builds drop it.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { CATALOG } from '../kernels/catalog';
import { App } from './App';
import { AppContext } from './appContext';
import { ErrorBoundary } from './components/ErrorBoundary';
import { createController } from './controller';
import { openTuneRuns } from './persistence/tuneRuns';
import {
  act,
  createAppStore,
  defaultEditorHeight,
  defaultSideWidth,
  getApp,
  initialState,
  setLayout,
} from './store';
import { installTestHook } from './testHook';
import { createWorkerClient } from './worker/client';
import './styles.css';

createAppStore(initialState(CATALOG.families));

// The editor and results share the window: their sizes follow it until the user drags the splitter.
const fit = () => {
  if (getApp().layout.dragged) return;
  act(setLayout, {
    sideWidth: defaultSideWidth(window.innerWidth),
    editorHeight: defaultEditorHeight(window.innerHeight),
  });
};
fit();
window.addEventListener('resize', fit);

// Test builds may ask the worker to hide adapter features (?hide=subgroups,timestamp-query), as
// browsers without them do; the worker reads its name (gpu.worker.ts).
const hide = import.meta.env.MODE === 'e2e' ? new URLSearchParams(window.location.search).get('hide') : null;
const workerName = hide ? `mmq-gpu hide=${hide}` : 'mmq-gpu';

const client = createWorkerClient(
  () =>
    new Worker(new URL('../workers/gpu.worker.ts', import.meta.url), { type: 'module', name: workerName }),
);
const controller = createController({
  client,
  storage: window.localStorage,
  session: window.sessionStorage,
  getHash: () => window.location.hash,
  replaceHash: (hash) => window.history.replaceState(null, '', hash),
  openTuneStore: () => openTuneRuns(),
});
window.addEventListener('hashchange', (e) => controller.openHash(new URL(e.newURL).hash));
if (import.meta.env.MODE === 'e2e') installTestHook(window, controller);
controller.start();

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <ErrorBoundary label="playground">
      <AppContext.Provider value={{ controller }}>
        <App />
      </AppContext.Provider>
    </ErrorBoundary>
  </StrictMode>,
);
