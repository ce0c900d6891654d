// Monaco's contribution modules ship no .d.ts of their own; they are imported for their side effects
// (registering editor features), so an untyped module declaration is all they need.
declare module 'monaco-editor/esm/vs/editor/contrib/*';
declare module 'monaco-editor/esm/vs/editor/standalone/browser/quickAccess/*';
