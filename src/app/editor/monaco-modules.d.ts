// Monaco's contribution modules ship no .d.ts of their own; they are imported for their side effects
// (registering editor features), so an untyped module declaration is all they need.
declare module 'monaco-editor/esm/vs/editor/contrib/*';
declare module 'monaco-editor/esm/vs/editor/standalone/browser/quickAccess/*';

declare module 'monaco-editor/esm/vs/editor/browser/config/tabFocus' {
  /** Monaco's one switch for what Tab does: true = Tab and Shift+Tab move focus (Ctrl+M toggles it). */
  export const TabFocus: { getTabFocusMode(): boolean; setTabFocusMode(on: boolean): void };
}
