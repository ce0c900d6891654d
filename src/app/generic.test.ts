// The app reads the families' declarations and names none of them: no family id, no tuning op or
// reference kernel name, no family-specific knob (a control key as a string or a params property, a
// choice option's value) appears in src/app outside its tests. A family added or renamed in
// src/kernels shows up in the app without an edit here.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../kernels/catalog';

const APP = join(import.meta.dirname, '.');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    const test = /\.test\.tsx?$/.test(name) || name.endsWith('.fixture.ts');
    return /\.tsx?$/.test(name) && !test ? [path] : [];
  });
}

/** Source without comments (JSDoc examples may show a family's config; code may not name one). */
const code = (path: string) =>
  readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|\s)\/\/.*$/gm, '$1');

// Words of the families' shared contract (family.ts): control groups, arithmetic kinds, arms, data
// sources and activations. A family's knob may happen to reuse one (the MoE route 'f16'); generic code
// uses them as the contract's words, so they are not looked for.
const CONTRACT = new Set([
  'shape',
  'tile',
  'route',
  'int8',
  'f16',
  'scalar',
  'dp4a',
  'subgroup-matrix',
  'reference',
  'random',
  'synthetic',
  'tensor',
  'normal',
  'outliers',
]);

// The glossary is prose that explains the words the UI uses ("staging", "plane", "arm"...): its terms
// are words, not knobs read from a config.
const PROSE = new Set(['components/Glossary.tsx']);

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What names a family: its id, tuning op and reference kernel; its knobs' keys and choice values. */
function familyNames() {
  const words = new Set<string>();
  const keys = new Set<string>();
  for (const c of CATALOG.families) {
    words.add(c.id);
    words.add(c.reference);
    if (c.tuning) words.add(c.tuning.op);
    for (const control of c.controls) {
      keys.add(control.key);
      if (control.kind === 'choice') for (const o of control.options) keys.add(o.value);
    }
  }
  return { words: [...words], keys: [...keys].filter((k) => !CONTRACT.has(k)) };
}

describe('src/app is generic over the kernel families', () => {
  const files = sources(APP);
  const { words, keys } = familyNames();

  it('finds the app and the names to look for', () => {
    expect(files.length).toBeGreaterThan(30);
    expect(words.length).toBeGreaterThan(9);
    expect(keys.length).toBeGreaterThan(6);
  });

  it('names no family id, tuning op or reference kernel', () => {
    const hits = files.flatMap((f) => {
      const text = code(f);
      return words
        .filter((w) => new RegExp(`(^|[^\\w-])${escape(w)}($|[^\\w-])`).test(text))
        .map((w) => `${relative(APP, f)}: ${w}`);
    });
    expect(hits).toEqual([]);
  });

  it('names no knob: no control key or choice value as a string, nor as a params property', () => {
    const hits = files.flatMap((f) => {
      if (PROSE.has(relative(APP, f))) return [];
      const text = code(f);
      return keys
        .filter((k) =>
          new RegExp(
            `(['"\`])${escape(k)}\\1|params\\??\\.${escape(k)}\\b|params\\[['"\`]${escape(k)}['"\`]\\]`,
          ).test(text),
        )
        .map((k) => `${relative(APP, f)}: ${k}`);
    });
    expect(hits).toEqual([]);
  });

  it('guesses no tile from knob keys: the tile summary reads the family declaration (catalog.tile)', () => {
    const guessing = files.filter((f) => /from '(\.\.\/)+kernels\/tile'/.test(code(f)));
    expect(guessing.map((f) => relative(APP, f))).toEqual([]);
  });

  it('the check would catch one (a quoted knob, a params property, a family id)', () => {
    const probe = ['const s = params.staging;', "act(setParam, 'topk', 2)", "if (id === 'coopmat-f16')"];
    const caught = probe.filter(
      (text) =>
        keys.some((k) => new RegExp(`(['"\`])${escape(k)}\\1|params\\??\\.${escape(k)}\\b`).test(text)) ||
        words.some((w) => new RegExp(`(^|[^\\w-])${escape(w)}($|[^\\w-])`).test(text)),
    );
    expect(caught).toEqual(probe);
  });
});
