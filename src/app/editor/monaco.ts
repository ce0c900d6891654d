// Monaco, loaded lean: the editor core with its contributions (find, hover, markers) but none of the
// bundled languages, plus our own WGSL language and dark theme. The editor worker is bundled by vite.
import * as monaco from 'monaco-editor/esm/vs/editor/edcore.main';
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
