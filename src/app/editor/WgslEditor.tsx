// The WGSL editor: one Monaco model per kernel family for the plan's main pass (the editable one, its
// own undo history), a read-only model for any other pass shown, the store's buffer as the source of
// truth, compile messages as markers on the lines they name. Ctrl/Alt+Enter runs (also outside the
// editor: App.tsx); typing re-runs after a pause (the controller debounces).
import { useEffect, useRef } from 'react';
import type { KernelId } from '../../kernels/family';
import type { WgslMessage } from '../../kernels/gpu/runner';
import { useServices } from '../appContext';
import { currentBuffer, useApp, type CompileState } from '../store';
import { registerEditor, type EditorHandle } from './editorHandle';
import { monaco, MONACO_THEME, TabFocus } from './monaco';
import { WGSL_LANGUAGE_ID } from './wgslLanguage';

type Model = ReturnType<typeof monaco.editor.createModel>;
type Editor = ReturnType<typeof monaco.editor.create>;

const severity = (t: WgslMessage['type']) =>
  t === 'error'
    ? monaco.MarkerSeverity.Error
    : t === 'warning'
      ? monaco.MarkerSeverity.Warning
      : monaco.MarkerSeverity.Info;

/**
 * Compile messages -> Monaco markers. Positions are 1:1 with the editor because the host suffix is
 * appended after the user's text; a message inside the suffix is pinned to the last line with its note.
 */
export function markersOf(
  compile: CompileState | undefined,
  model: Model,
): Parameters<typeof monaco.editor.setModelMarkers>[2] {
  if (!compile) return [];
  const last = model.getLineCount();
  return compile.messages.map((m) => {
    const inText = m.lineNum >= 1 && m.lineNum <= Math.min(compile.editorLines, last);
    const line = inText ? m.lineNum : m.lineNum === 0 ? 1 : last;
    const lineLen = model.getLineLength(line);
    const startColumn = inText ? Math.max(1, Math.min(m.linePos, lineLen + 1)) : 1;
    const endColumn = inText ? Math.min(lineLen + 1, startColumn + Math.max(1, m.length)) : lineLen + 1;
    return {
      severity: severity(m.type),
      message: m.message,
      startLineNumber: line,
      startColumn,
      endLineNumber: line,
      endColumn: Math.max(endColumn, startColumn + 1),
      source: 'WGSL',
    };
  });
}

/** The editor's look and behaviour (its model is set per kernel and pass). */
const EDITOR_OPTIONS: Parameters<typeof monaco.editor.create>[1] = {
  language: WGSL_LANGUAGE_ID,
  theme: MONACO_THEME,
  automaticLayout: true,
  minimap: { enabled: false },
  fontSize: 13,
  lineHeight: 19,
  fontFamily: "'JetBrains Mono', 'Fira Code', ui-monospace, 'DejaVu Sans Mono', monospace",
  scrollBeyondLastLine: false,
  renderLineHighlight: 'line',
  tabSize: 2,
  fixedOverflowWidgets: true,
  stickyScroll: { enabled: false },
  lineNumbersMinChars: 3,
  model: null,
};

/**
 * Keep Tab from trapping the keyboard in `editor`; returns what undoes it. Focus that arrives by Tab, and
 * Escape, make Tab and Shift+Tab move on (Monaco's tab-focus mode; Ctrl+M toggles it too); typing anything
 * else or a click gives Tab back to indentation. Tabbing through the page once indented the kernel and
 * marked it edited.
 */
function keepTabFromTrapping(editor: Editor): () => void {
  let tabbedAt = -Infinity;
  const noteTab = (e: KeyboardEvent) => {
    if (e.key === 'Tab') tabbedAt = performance.now();
  };
  window.addEventListener('keydown', noteTab, true);
  const tabMovesFocus = (on: boolean) => {
    if (TabFocus.getTabFocusMode() !== on) TabFocus.setTabFocusMode(on);
  };
  const focusSub = editor.onDidFocusEditorText(() => tabMovesFocus(performance.now() - tabbedAt < 300));
  const keySub = editor.onKeyDown((e) => {
    const k = monaco.KeyCode;
    if (e.keyCode === k.Escape) tabMovesFocus(true);
    else if (![k.Tab, k.Shift, k.Ctrl, k.Alt, k.Meta].includes(e.keyCode) && !e.ctrlKey && !e.metaKey)
      tabMovesFocus(false);
  });
  const mouseSub = editor.onMouseDown(() => tabMovesFocus(false));
  return () => {
    window.removeEventListener('keydown', noteTab, true);
    focusSub.dispose();
    keySub.dispose();
    mouseSub.dispose();
  };
}

/** What the rest of the app may ask of the editor (the analysis' fixes, the e2e): its text and markers. */
function editorHandle(editor: Editor): EditorHandle {
  return {
    getValue: () => editor.getValue(),
    replace(pattern, replacement) {
      const model = editor.getModel();
      if (!model || editor.getOption(monaco.editor.EditorOption.readOnly)) return false;
      const value = model.getValue();
      const next = value.replace(new RegExp(pattern), replacement);
      if (next === value) return false;
      model.pushEditOperations([], [{ range: model.getFullModelRange(), text: next }], () => null);
      return true;
    },
    markers: () => {
      const model = editor.getModel();
      if (!model) return [];
      return monaco.editor.getModelMarkers({ resource: model.uri }).map((m) => ({
        line: m.startLineNumber,
        column: m.startColumn,
        message: m.message,
        severity: m.severity,
      }));
    },
    columns: () => editor.getLayoutInfo().viewportColumn,
    readOnly: () => editor.getOption(monaco.editor.EditorOption.readOnly),
  };
}

// Over 80 lines on purpose: Monaco's lifecycle (create, follow the store, markers, dispose) is a few
// effects over the same refs, and split across components they would not share the one editor.
export function WgslEditor() {
  const { controller } = useServices();
  const kernel = useApp((s) => s.config.kernel);
  const text = useApp((s) => currentBuffer(s)?.text);
  const compile = useApp((s) => s.compile);
  const shownPass = useApp((s) => {
    const g = s.generated;
    if (!g || s.editorPass === undefined || s.editorPass === g.mainPass) return undefined;
    return g.passes[s.editorPass];
  });
  const host = useRef<HTMLDivElement>(null);
  const editorRef = useRef<Editor | null>(null);
  const models = useRef(new Map<KernelId, Model>());
  const passModel = useRef<Model | null>(null);
  const applying = useRef(false);
  const ctl = useRef(controller);
  ctl.current = controller;

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const editor = monaco.editor.create(el, EDITOR_OPTIONS);
    editorRef.current = editor;
    const sub = editor.onDidChangeModelContent(() => {
      if (!applying.current && !editor.getOption(monaco.editor.EditorOption.readOnly))
        ctl.current.edit(editor.getValue());
    });
    const untrapTab = keepTabFromTrapping(editor);
    const run = () => ctl.current.runNow();
    editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.Enter, run);
    editor.addCommand(monaco.KeyMod.Alt | monaco.KeyCode.Enter, run);
    registerEditor(editorHandle(editor));
    const all = models.current;
    return () => {
      registerEditor(undefined);
      untrapTab();
      sub.dispose();
      editor.dispose();
      for (const m of all.values()) m.dispose();
      all.clear();
      passModel.current?.dispose();
      passModel.current = null;
    };
  }, []);

  // The store's text is the truth: follow kernel switches, regenerated kernels, resets and pass tabs.
  useEffect(() => {
    const editor = editorRef.current;
    if (!editor) return;
    applying.current = true;
    try {
      if (shownPass) {
        // Another pass of the plan: shown read-only (only the main pass is edited and run).
        let model = passModel.current;
        if (!model) {
          model = monaco.editor.createModel(
            '',
            WGSL_LANGUAGE_ID,
            monaco.Uri.parse('inmemory://kernels/pass.wgsl'),
          );
          passModel.current = model;
        }
        if (model.getValue() !== shownPass.wgsl) model.setValue(shownPass.wgsl);
        editor.updateOptions({ readOnly: true });
        if (editor.getModel() !== model) editor.setModel(model);
        return;
      }
      editor.updateOptions({ readOnly: false });
      if (text === undefined) {
        // No text for this kernel yet (or its config cannot be generated): never show another kernel's.
        editor.setModel(null);
        return;
      }
      let model = models.current.get(kernel);
      if (!model) {
        model = monaco.editor.createModel(
          text,
          WGSL_LANGUAGE_ID,
          monaco.Uri.parse(`inmemory://kernels/${kernel}.wgsl`),
        );
        models.current.set(kernel, model);
      }
      if (editor.getModel() !== model) editor.setModel(model);
      if (model.getValue() !== text)
        model.pushEditOperations([], [{ range: model.getFullModelRange(), text }], () => null);
    } finally {
      applying.current = false;
    }
  }, [kernel, text, shownPass]);

  useEffect(() => {
    const model = models.current.get(kernel);
    if (model) monaco.editor.setModelMarkers(model, 'wgsl', markersOf(compile, model));
  }, [compile, kernel, text]);

  // A new compile failure: bring its first error into view (the message panel may have shrunk the editor).
  useEffect(() => {
    const editor = editorRef.current;
    const model = models.current.get(kernel);
    if (!editor || !model || !compile || editor.getModel() !== model) return;
    const first = markersOf(compile, model).find((m) => m.severity === monaco.MarkerSeverity.Error);
    if (!first) return;
    editor.layout(); // the message list just took space from the editor: measure before revealing
    editor.revealLineInCenterIfOutsideViewport(first.startLineNumber);
    // Only when a compile result arrives, not on every keystroke (kernel and text are read, not watched).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [compile]);

  return <div className="monaco-host" ref={host} data-testid="editor" />;
}
