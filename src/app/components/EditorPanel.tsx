// Center column: the kernel's WGSL in Monaco -- one tab per pass of the plan (a split staging has
// pre-passes; the main pass is the one edited and run as edited), whether it is edited, compile
// messages, and the host suffix the worker appends (shown read-only, so nothing about the run is hidden).
import { lazy, Suspense } from 'react';
import { useServices } from '../appContext';
import type { GeneratedPass } from '../../workers/protocol';
import {
  act,
  bufferIsStale,
  draftProblems,
  editedWgsl,
  restoreStash,
  showPass,
  useApp,
  type CompileState,
} from '../store';

// Monaco is the heaviest dependency: load it after the first paint.
const WgslEditor = lazy(() => import('../editor/WgslEditor').then((m) => ({ default: m.WgslEditor })));

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The file's name, whether its text is edited or generated, and the way back to generated. */
function EditorHead({ kernel, hasText, edited }: { kernel: string; hasText: boolean; edited: boolean }) {
  const { controller } = useServices();
  return (
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
      <button type="button" onClick={() => controller.reset()} disabled={!edited} data-testid="reset">
        Reset to generated
      </button>
    </header>
  );
}

/** One tab per pass of the plan: the main pass is edited, the others are read-only. */
function PassTabs({
  passes,
  shown,
  main,
}: {
  passes: readonly GeneratedPass[];
  shown: number;
  main: number;
}) {
  return (
    <nav className="pass-tabs" role="tablist" aria-label="Passes of the plan" data-testid="pass-tabs">
      {passes.map((p, i) => (
        <button
          key={i}
          type="button"
          role="tab"
          aria-selected={shown === i}
          className={shown === i ? 'on' : ''}
          onClick={() => act(showPass, i)}
          data-testid={`pass-tab-${i}`}
          title={
            i === main
              ? 'the main pass: edit it here; an edit runs as edited'
              : 'read-only: generated for this config'
          }
        >
          {i + 1}. {p.label}
          {i === main ? ' (editable)' : ''}
        </button>
      ))}
    </nav>
  );
}

/** Why the text shown may differ from what the config generates now: a note, a draft, an edit, a link. */
function EditorNotices({ note }: { note: string | undefined }) {
  const stale = useApp(bufferIsStale);
  // A field holding text that is no value (1e9 in m) leaves the kernel at the last value it had.
  const draftProblem = useApp((s) => draftProblems(s.drafts, ['param'])[0]);
  const stash = useApp((s) => (s.stash && s.stash.kernel === s.config.kernel ? s.stash : undefined));
  return (
    <>
      {note && (
        <p className="notice" data-testid="generated-note">
          {note}
        </p>
      )}
      {draftProblem && (
        <p className="notice" data-testid="draft-notice">
          This kernel is the one generated for the last valid value: {draftProblem}.
        </p>
      )}
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
    </>
  );
}

/** The compiler's messages, each at its line (or in the host suffix the worker appends). */
function CompileMessages({ compile }: { compile: CompileState }) {
  return (
    <div className="compile-messages" role="alert" data-testid="compile-errors">
      <h3>WGSL compile errors</h3>
      <ul>
        {compile.messages.map((m, i) => (
          <li key={i} className={m.type}>
            <code>
              {m.lineNum > 0 ? `line ${m.lineNum}:${m.linePos}` : 'no position'}
              {m.lineNum > compile.editorLines ? ' (host suffix)' : ''}
            </code>{' '}
            {m.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

export function EditorPanel() {
  const edited = useApp((s) => editedWgsl(s) !== undefined);
  const generated = useApp((s) => s.generated);
  const editorPass = useApp((s) => s.editorPass);
  const compile = useApp((s) => s.compile);
  const kernel = useApp((s) => s.config.kernel);
  const hasText = useApp((s) => s.buffers[s.config.kernel] !== undefined);
  const main = generated?.mainPass ?? 0;
  const shown = editorPass ?? main;
  const pass = generated?.passes[shown];
  const passes = generated?.passes ?? [];

  return (
    <section className="editor-panel" aria-label="WGSL editor">
      <EditorHead kernel={kernel} hasText={hasText} edited={edited} />
      {passes.length > 1 && <PassTabs passes={passes} shown={shown} main={main} />}
      {pass && (
        <p className="launch small muted" data-testid="launch">
          <code>@workgroup_size({pass.workgroupSize})</code> × grid ({pass.workgroups.join(', ')}) ={' '}
          {plural(pass.workgroups[0] * pass.workgroups[1] * pass.workgroups[2], 'workgroup')} · entry{' '}
          <code>{pass.entryPoint}</code>
          {shown !== main ? ' · read-only' : ''}
        </p>
      )}
      <EditorNotices note={generated?.note} />
      <div className="editor-wrap">
        <Suspense fallback={<div className="monaco-host loading">loading the editor…</div>}>
          <WgslEditor />
        </Suspense>
        {!hasText && (
          <div className="editor-empty" data-testid="editor-empty">
            {generated?.problems.length
              ? 'No kernel for this config: see "Cannot run this config".'
              : 'generating the kernel…'}
          </div>
        )}
      </div>
      {compile && compile.messages.length > 0 && <CompileMessages compile={compile} />}
      {pass?.suffix && (
        <details className="suffix">
          <summary>Host suffix appended after this pass&apos;s code (not editable)</summary>
          <pre>{pass.suffix.replace(/^\n/, '')}</pre>
        </details>
      )}
    </section>
  );
}
