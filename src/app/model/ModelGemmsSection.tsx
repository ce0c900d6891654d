// The model view as the Model file tab mounts it: loaded on first use (it brings the charting library),
// with its own error boundary so a fault in it leaves the tensor list working.
import { lazy, Suspense } from 'react';
import { ErrorBoundary } from '../components/ErrorBoundary';

const ModelGemmsView = lazy(() => import('./ModelGemmsView'));

export function ModelGemmsSection() {
  return (
    <ErrorBoundary label="model view">
      <Suspense fallback={<p className="muted">loading the model view…</p>}>
        <ModelGemmsView />
      </Suspense>
    </ErrorBoundary>
  );
}
