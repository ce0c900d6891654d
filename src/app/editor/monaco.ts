// Monaco, loaded lean: the editor core API plus only the contributions a shader editor uses (marker
// hover, find, go to line / next error, folding, comments, brackets, multi-cursor, line operations) and
// none of the bundled languages -- our own WGSL language and dark theme instead. Vite bundles the worker.
import * as monaco from 'monaco-editor/esm/vs/editor/editor.api';
import 'monaco-editor/esm/vs/editor/contrib/hover/browser/hoverContribution';
import 'monaco-editor/esm/vs/editor/contrib/find/browser/findController';
import 'monaco-editor/esm/vs/editor/contrib/gotoError/browser/gotoError';
import 'monaco-editor/esm/vs/editor/standalone/browser/quickAccess/standaloneGotoLineQuickAccess';
import 'monaco-editor/esm/vs/editor/contrib/folding/browser/folding';
import 'monaco-editor/esm/vs/editor/contrib/comment/browser/comment';
import 'monaco-editor/esm/vs/editor/contrib/bracketMatching/browser/bracketMatching';
import 'monaco-editor/esm/vs/editor/contrib/wordHighlighter/browser/wordHighlighter';
import 'monaco-editor/esm/vs/editor/contrib/multicursor/browser/multicursor';
import 'monaco-editor/esm/vs/editor/contrib/linesOperations/browser/linesOperations';
import 'monaco-editor/esm/vs/editor/contrib/wordOperations/browser/wordOperations';
import 'monaco-editor/esm/vs/editor/contrib/clipboard/browser/clipboard';
import 'monaco-editor/esm/vs/editor/contrib/contextmenu/browser/contextmenu';
import 'monaco-editor/esm/vs/editor/contrib/cursorUndo/browser/cursorUndo';
import 'monaco-editor/esm/vs/editor/contrib/indentation/browser/indentation';
// Ctrl+M (Ctrl+Shift+M on macOS): Tab moves focus instead of indenting (WgslEditor also turns it on).
import 'monaco-editor/esm/vs/editor/contrib/toggleTabFocusMode/browser/toggleTabFocusMode';
export { TabFocus } from 'monaco-editor/esm/vs/editor/browser/config/tabFocus';
import EditorWorker from 'monaco-editor/esm/vs/editor/editor.worker?worker';
import { WGSL_LANGUAGE_ID, wgslConfiguration, wgslMonarch } from './wgslLanguage';

self.MonacoEnvironment = { getWorker: () => new EditorWorker() };

monaco.languages.register({ id: WGSL_LANGUAGE_ID, extensions: ['.wgsl'], aliases: ['WGSL'] });
monaco.languages.setMonarchTokensProvider(WGSL_LANGUAGE_ID, wgslMonarch);
monaco.languages.setLanguageConfiguration(WGSL_LANGUAGE_ID, wgslConfiguration);

export const MONACO_THEME = 'mmq-dark';

monaco.editor.defineTheme(MONACO_THEME, {
  base: 'vs-dark',
  inherit: true,
  rules: [
    { token: 'annotation', foreground: 'c792ea' },
    { token: 'keyword', foreground: '82aaff' },
    { token: 'keyword.modifier', foreground: '89ddff' },
    { token: 'type', foreground: 'ffcb6b' },
    { token: 'predefined', foreground: '7fdbca' },
    { token: 'constant', foreground: 'f78c6c' },
    { token: 'number', foreground: 'f78c6c' },
    { token: 'number.float', foreground: 'f78c6c' },
    { token: 'number.hex', foreground: 'f78c6c' },
    { token: 'comment', foreground: '637777', fontStyle: 'italic' },
    { token: 'operator', foreground: 'c3cee3' },
  ],
  colors: {
    'editor.background': '#0f131a',
    'editor.lineHighlightBackground': '#161c26',
    'editorLineNumber.foreground': '#3b4656',
    'editorGutter.background': '#0f131a',
  },
});

export { monaco };
