// Center column: the kernel's WGSL in Monaco, whether it is edited, compile messages, and the host suffix
// the worker appends (shown read-only, so nothing about the run is hidden).
import { lazy, Suspense } from 'react';
import { useServices } from '../appContext';
import { act, bufferIsStale, editedWgsl, restoreStash, useApp } from '../store';

// Monaco is the heaviest dependency: load it after the first paint.
const WgslEditor = lazy(() => import('../editor/WgslEditor').then((m) => ({ default: m.WgslEditor })));

export function EditorPanel() {
  const { controller } = useServices();
  const edited = useApp((s) => editedWgsl(s) !== undefined);
  const stale = useApp(bufferIsStale);
  const generated = useApp((s) => s.generated);
  const compile = useApp((s) => s.compile);
  const stash = useApp((s) => (s.stash && s.stash.kernel === s.config.kernel ? s.stash : undefined));
  const kernel = useApp((s) => s.config.kernel);
  const hasText = useApp((s) => s.buffers[s.config.kernel] !== undefined);
  const messages = compile?.messages ?? [];

  return (
    <section className="editor-panel" aria-label="WGSL editor">
      <header className="panel-head">
        <h2>
          <span className="file">{kernel}.wgsl</span>
          {!hasText ? null : edited ? (
            <span className="badge warn" data-testid="edited-badge">
              edited
            </span>
          ) : (
            <span className="badge" data-testid="generated-badge">
              generated
            </span>
          )}
        </h2>
        <div className="head-actions">
          {generated?.entryPoint && (
            <span className="muted small">
              @workgroup_size({generated.workgroupSize}) × grid ({generated.workgroups.join(', ')})
            </span>
          )}
          <button type="button" onClick={() => controller.reset()} disabled={!edited} data-testid="reset">
            Reset to generated
          </button>
        </div>
      </header>
      {stale && (
        <p className="notice" data-testid="stale-notice">
          This edit started from the kernel generated for another config; the current config generates a
          different kernel. Reset to pick it up, or keep running your edit.
        </p>
      )}
      {stash && (
        <p className="notice">
          A permalink replaced your local edit of this kernel.{' '}
          <button type="button" className="link" onClick={() => act(restoreStash)}>
            Restore my edit
          </button>
        </p>
      )}
      <div className="editor-wrap">
        <Suspense fallback={<div className="monaco-host loading">loading editor…</div>}>
          <WgslEditor />
        </Suspense>
        {!hasText && (
          <div className="editor-empty" data-testid="editor-empty">
            {generated?.problems.length
              ? 'No kernel for this config: see "Cannot run this config" on the left.'
              : 'generating kernel…'}
          </div>
        )}
      </div>
      {messages.length > 0 && (
        <div className="compile-messages" role="alert" data-testid="compile-errors">
          <h3>WGSL compile errors</h3>
          <ul>
            {messages.map((m, i) => (
              <li key={i} className={m.type}>
                <code>
                  {m.lineNum > 0 ? `line ${m.lineNum}:${m.linePos}` : 'no position'}
                  {compile && m.lineNum > compile.editorLines ? ' (host suffix)' : ''}
                </code>{' '}
                {m.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {generated?.suffix && (
        <details className="suffix">
          <summary>Host suffix appended after your code (not editable)</summary>
          <pre>{generated.suffix.replace(/^\n/, '')}</pre>
        </details>
      )}
    </section>
  );
}
