// The WGSL editor: one Monaco model per kernel family (own undo history), the store's buffer as the
// source of truth, compile messages as markers on the lines they name. Ctrl/Alt+Enter runs; typing
// re-runs after a pause (the controller debounces).
import { useEffect, useRef } from 'react';
import type { KernelId } from '../../kernels/family';
import type { WgslMessage } from '../../kernels/gpu/run';
import { useServices } from '../appContext';
import { currentBuffer, useApp, type CompileState } from '../store';
import { registerEditorHook } from '../testHook';
import { monaco, MONACO_THEME } from './monaco';
import { WGSL_LANGUAGE_ID } from './wgslLanguage';

type Model = ReturnType<typeof monaco.editor.createModel>;

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

export function WgslEditor() {
  const { controller } = useServices();
  const kernel = useApp((s) => s.config.kernel);
  const text = useApp((s) => currentBuffer(s)?.text);
  const compile = useApp((s) => s.compile);
  const host = useRef<HTMLDivElement>(null);
  const editorRef = useRef<ReturnType<typeof monaco.editor.create> | null>(null);
  const models = useRef(new Map<KernelId, Model>());
  const applying = useRef(false);
  const ctl = useRef(controller);
  ctl.current = controller;

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const editor = monaco.editor.create(el, {
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
      model: null,
    });
    editorRef.current = editor;
    const sub = editor.onDidChangeModelContent(() => {
      if (!applying.current) ctl.current.edit(editor.getValue());
    });
    const run = () => ctl.current.runNow();
    editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.Enter, run);
    editor.addCommand(monaco.KeyMod.Alt | monaco.KeyCode.Enter, run);
    registerEditorHook({
      getValue: () => editor.getValue(),
      replace(pattern, replacement) {
        const model = editor.getModel();
        if (!model) return false;
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
    });
    const all = models.current;
    return () => {
      registerEditorHook(undefined);
      sub.dispose();
      editor.dispose();
      for (const m of all.values()) m.dispose();
      all.clear();
    };
  }, []);

  // The store's text is the truth: follow kernel switches, regenerated kernels and resets.
  useEffect(() => {
    const editor = editorRef.current;
    if (!editor) return;
    if (text === undefined) {
      // No text for this kernel yet (or its config cannot be generated): never show another kernel's.
      applying.current = true;
      editor.setModel(null);
      applying.current = false;
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
    applying.current = true;
    try {
      if (editor.getModel() !== model) editor.setModel(model);
      if (model.getValue() !== text)
        model.pushEditOperations([], [{ range: model.getFullModelRange(), text }], () => null);
    } finally {
      applying.current = false;
    }
  }, [kernel, text]);

  useEffect(() => {
    const model = models.current.get(kernel);
    if (model) monaco.editor.setModelMarkers(model, 'wgsl', markersOf(compile, model));
  }, [compile, kernel, text]);

  // A new compile failure: bring its first error into view (the message panel may have shrunk the editor).
  useEffect(() => {
    const editor = editorRef.current;
    const model = models.current.get(kernel);
    if (!editor || !model || !compile) return;
    const first = markersOf(compile, model).find((m) => m.severity === monaco.MarkerSeverity.Error);
    if (!first) return;
    editor.layout(); // the message list just took space from the editor: measure before revealing
    editor.revealLineInCenterIfOutsideViewport(first.startLineNumber);
    // Only when a compile result arrives, not on every keystroke.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [compile]);

  return <div className="monaco-host" ref={host} data-testid="editor" />;
}
