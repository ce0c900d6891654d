// The mounted editor, as the e2e test hook reads it (test builds only install the hook; this holder is
// a few bytes in every build). The editor registers itself while mounted.

export interface EditorHandle {
  getValue(): string;
  /** Replace the first match of `pattern` (a RegExp source) as a user edit would. Returns false when nothing matched. */
  replace(pattern: string, replacement: string): boolean;
  /** Monaco markers of the current model. */
  markers(): { line: number; column: number; message: string; severity: number }[];
  /** Text columns the editor shows without scrolling (its width in characters). */
  columns(): number;
  /** Whether the shown model is read-only (a pass other than the main one). */
  readOnly(): boolean;
}

let current: EditorHandle | undefined;

/** The editor registers itself here while mounted (undefined when it unmounts). */
export function registerEditor(handle: EditorHandle | undefined): void {
  current = handle;
}

/** The mounted editor, if any. */
export function mountedEditor(): EditorHandle | undefined {
  return current;
}
