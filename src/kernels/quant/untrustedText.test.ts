import { describe, expect, it } from 'vitest';
import { excerpt, jsonText, safeText } from './untrustedText';

describe('untrusted text for a terminal', () => {
  it('writes escapes, carriage returns, newlines, C1 and bidi controls as visible escapes', () => {
    expect(safeText('a\x1b[2K\rverdict: matches oracle\nb')).toBe('a\\x1b[2K\\rverdict: matches oracle\\nb');
    expect(safeText('\x9b31m\x7f\t\u202eevil\u2066')).toBe('\\x9b31m\\x7f\\t\\u202eevil\\u2066');
    expect(safeText('plain ünïcode, 漢字 and emoji 🙂')).toBe('plain ünïcode, 漢字 and emoji 🙂');
  });

  it('cuts long text to a bounded excerpt that says how long the whole was', () => {
    expect(excerpt('x'.repeat(4 << 20), 8)).toBe('xxxxxxxx… (4194304 chars)');
    expect(excerpt('short')).toBe('short');
    // Never half a surrogate pair.
    expect(excerpt('ab🙂cd', 3)).toBe('ab… (6 chars)');
    expect(excerpt('\x1b'.repeat(100), 2)).toBe('\\x1b\\x1b… (100 chars)');
  });
});

describe('jsonText', () => {
  it('is JSON.stringify with the controls it leaves raw escaped: still valid, still the same value', () => {
    const value = { name: '\x1b[2J\u009b31m\u202e', n: [1, 2] };
    const text = jsonText(value, 2);
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u001b\u009b\u202e]/);
    expect(text).toContain('\\u009b31m\\u202e');
    expect(JSON.parse(text)).toEqual(value);
  });
});
