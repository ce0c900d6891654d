// Text that comes from a file (GGUF names, keys, string values) printed where a reader trusts what it
// sees: a terminal obeys escape sequences and carriage returns, so a tensor name could forge a line
// ("verdict: matches oracle") or repaint the screen. Such text is shown escaped, and cut to a bounded
// excerpt so that a 4 MB name cannot blow up a table or an error line.

// C0 controls, DEL, C1 controls (0x9b is a one-byte CSI on some terminals), the line and paragraph
// separators, and the bidi embeddings/overrides/isolates that reorder what a line appears to say.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
const ANY_UNSAFE = new RegExp(UNSAFE.source, 'u');
// Those JSON.stringify leaves raw (it escapes C0 inside strings; its own line breaks are layout).
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/** The longest excerpt of untrusted text shown by default (characters, before escaping). */
export const EXCERPT_CHARS = 80;

/**
 * Every control character of `text` written as a visible escape (`\n`, `\x1b`, `\u202e`); the rest as is.
 * `keepNewlines` keeps line feeds: for whole output whose lines are the program's own.
 * @example safeText('a\x1b[2Jb') === 'a\\x1b[2Jb'
 */
export function safeText(text: string, { keepNewlines = false } = {}): string {
  // Most text has nothing to escape: a test is cheaper than a replace (a listing makes millions of calls).
  if (!ANY_UNSAFE.test(text)) return text;
  return text.replace(UNSAFE, (c) => {
    const code = c.codePointAt(0)!;
    if (c === '\n') return keepNewlines ? c : '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}

/**
 * At most `max` characters of untrusted text, escaped (safeText), with how long the whole was when cut.
 * @example excerpt('x'.repeat(5000), 8) === 'xxxxxxxx… (5000 chars)'
 */
export function excerpt(text: string, max: number = EXCERPT_CHARS): string {
  if (text.length <= max) return safeText(text);
  // Cut on a code point boundary: a lone surrogate would print as a replacement character.
  const head = text.slice(0, max);
  const cut = /[\ud800-\udbff]$/.test(head) ? head.slice(0, -1) : head;
  return `${safeText(cut)}… (${text.length} chars)`;
}

/**
 * JSON.stringify for a terminal: the control characters JSON leaves raw (DEL, C1, bidi, U+2028/9) are
 * written as \u escapes too, so the output stays valid JSON and inert on a screen.
 * @example jsonText({ name: '\u009b2J' }) === '{"name":"\\u009b2J"}'
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    UNSAFE_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
