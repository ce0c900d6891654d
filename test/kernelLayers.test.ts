// src/kernels in floors: a folder (gpu/, quant/, tune/, a family's) or a file at its root is one node,
// and no import -- `import type` included -- runs from a node to one that imports it back, directly or
// through others. dpdm (npm run cycles) finds cycles between files; this finds them between the floors.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = 'src/kernels';

/** Every module of src/kernels that ships (no tests, no test fixtures). */
function modules(dir = ROOT): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === '__snapshots__' ? [] : modules(p);
    return /\.ts$/.test(f) && !/\.test\.ts$|testCaps\.ts$/.test(f) ? [p] : [];
  });
}

/** The floor a module is on: its first folder under src/kernels, or the root file itself. */
const nodeOf = (file: string) => {
  const [first, ...rest] = relative(ROOT, file).split('/');
  return rest.length ? `${first}/` : first!.replace(/\.ts$/, '');
};

/** node -> the nodes it imports from, relative imports inside src/kernels only. */
function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of modules()) {
    const from = nodeOf(file);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*'(\.[^']*)'/g)) {
      const target = normalize(join(dirname(file), spec!));
      if (relative(ROOT, target).startsWith('..')) continue;
      const toFile = statSync(target, { throwIfNoEntry: false })?.isDirectory()
        ? join(target, 'index.ts')
        : `${target}.ts`;
      const to = nodeOf(toFile);
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

/** A cycle of the graph as a path a -> b -> ... -> a, or undefined when it has none. */
function findCycle(graph: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === 'done') return undefined;
    if (state.get(n) === 'open') return [...path.slice(path.indexOf(n)), n];
    state.set(n, 'open');
    path.push(n);
    for (const m of graph.get(n) ?? []) {
      const cycle = visit(m);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(n, 'done');
    return undefined;
  };
  for (const n of graph.keys()) {
    const cycle = visit(n);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('the floors of src/kernels', () => {
  it('no import runs back up: the folders and root files form no cycle', () => {
    expect(findCycle(importGraph())?.join(' -> ')).toBeUndefined();
  });

  it('the contract (family.ts) stands on the leaves only, and gpu/ below it', () => {
    const graph = importGraph();
    expect([...graph.get('family')!].sort()).toEqual(['compare', 'gpu/', 'partials', 'space', 'work']);
    expect([...graph.get('gpu/')!]).toEqual(['cancel']);
  });

  it('finds a cycle where there is one', () => {
    const g = new Map([
      ['family', new Set(['gpu/'])],
      ['gpu/', new Set(['cancel', 'family'])],
    ]);
    expect(findCycle(g)).toEqual(['family', 'gpu/', 'family']);
  });
});
