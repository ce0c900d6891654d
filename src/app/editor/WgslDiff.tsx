// A read-only Monaco diff of two kernels' main passes (the A/B tab): loaded on demand, as the editor is,
// with the same WGSL language and theme; `data-changes` holds the number of changed line ranges.
import { useEffect, useRef } from 'react';
import { monaco, MONACO_THEME } from './monaco';
import { WGSL_LANGUAGE_ID } from './wgslLanguage';

export default function WgslDiff({ original, modified }: { original: string; modified: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const a = monaco.editor.createModel(original, WGSL_LANGUAGE_ID);
    const b = monaco.editor.createModel(modified, WGSL_LANGUAGE_ID);
    const diff = monaco.editor.createDiffEditor(el, {
      theme: MONACO_THEME,
      readOnly: true,
      originalEditable: false,
      automaticLayout: true,
      renderSideBySide: true,
      minimap: { enabled: false },
      scrollBeyondLastLine: false,
      fontSize: 12,
    });
    // The view model is ours to dispose: given plain models, Monaco keeps one reference to the view model
    // it creates that nothing releases, so a diff still computing when the sides change (a new B) is not
    // cancelled and throws "no diff result available" once the models are gone. Disposing it cancels.
    const viewModel = diff.createViewModel({ original: a, modified: b });
    diff.setModel(viewModel);
    // Bring the first change into view (a kernel is longer than the pane), and say how many there are.
    const shown = diff.onDidUpdateDiff(() => {
      const changes = diff.getLineChanges() ?? [];
      el.dataset.changes = String(changes.length);
      const first = changes[0];
      if (first) diff.getModifiedEditor().revealLineInCenter(Math.max(1, first.modifiedStartLineNumber));
    });
    return () => {
      shown.dispose();
      diff.dispose();
      viewModel.dispose();
      a.dispose();
      b.dispose();
    };
  }, [original, modified]);
  return <div ref={host} className="wgsl-diff" data-testid="ab-wgsl-diff" />;
}
