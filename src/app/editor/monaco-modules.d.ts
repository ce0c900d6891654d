// Monaco's ESM entry points used here ship no .d.ts of their own: the editor core without languages has
// the full monaco-editor API.
declare module 'monaco-editor/esm/vs/editor/edcore.main' {
  export * from 'monaco-editor';
}
