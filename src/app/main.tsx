// Entry: build the store, start the GPU worker behind its client, wire the controller, render.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { KERNEL_FAMILIES } from '../kernels';
import { App } from './App';
import { AppContext } from './appContext';
import { ErrorBoundary } from './components/ErrorBoundary';
import { createController } from './controller';
import { createAppStore, initialState } from './store';
import { installTestHook } from './testHook';
import { createWorkerClient } from './worker/client';
import './styles.css';

createAppStore(initialState(KERNEL_FAMILIES));

const worker = new Worker(new URL('../workers/gpu.worker.ts', import.meta.url), {
  type: 'module',
  name: 'mmq-gpu',
});
const controller = createController({
  client: createWorkerClient(worker),
  families: KERNEL_FAMILIES,
  storage: window.localStorage,
  getHash: () => window.location.hash,
  replaceHash: (hash) => window.history.replaceState(null, '', hash),
});
window.addEventListener('hashchange', (e) => controller.openHash(new URL(e.newURL).hash));
installTestHook(window, KERNEL_FAMILIES);
controller.start();

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <ErrorBoundary label="playground">
      <AppContext.Provider value={{ controller, families: KERNEL_FAMILIES }}>
        <App />
      </AppContext.Provider>
    </ErrorBoundary>
  </StrictMode>,
);
