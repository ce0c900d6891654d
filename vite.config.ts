import { existsSync, readFileSync, realpathSync } from 'node:fs';
import react from '@vitejs/plugin-react';
import type { ManualChunkMeta } from 'rollup';
import { defineConfig, searchForWorkspaceRoot, type Plugin } from 'vite';

/**
 * Monaco's editor core is about 2.8 MB of minified JavaScript whatever features are picked (the
 * standalone editor API pulls its services in). It loads lazily with the editor, after the first paint,
 * in several chunks under Vite's default 500 kB warning limit, fetched in parallel. Monaco's modules
 * import each other in cycles, so a split by folder would make chunks that import each other (Rollup's
 * "circular chunk" warning, and a risk of running a module before its import is initialised). Instead
 * the modules are ordered so that every module's strongly connected component comes after everything it
 * imports, and that order is cut into consecutive runs: a chunk only ever imports earlier chunks.
 */
function monacoChunks(): (id: string, meta: ManualChunkMeta) => string | undefined {
  const isMonaco = (id: string) => id.replace(/\\/g, '/').includes('/node_modules/monaco-editor/');
  // Characters of transformed (unminified) source per chunk: Monaco minifies to about 45% of it.
  const budget = 850_000;
  let assigned: Map<string, string> | undefined;

  const plan = (seed: string, info: ManualChunkMeta['getModuleInfo']): Map<string, string> => {
    const nodes: string[] = [];
    const seen = new Set<string>();
    const todo = [seed];
    while (todo.length) {
      const id = todo.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      nodes.push(id);
      const m = info(id);
      for (const d of [
        ...(m?.importedIds ?? []),
        ...(m?.importers ?? []),
        ...(m?.dynamicallyImportedIds ?? []),
      ])
        if (isMonaco(d) && !seen.has(d)) todo.push(d);
    }
    nodes.sort();
    // Tarjan's strongly connected components over static imports, iteratively: each component is
    // emitted after every component it imports.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const onStack = new Set<string>();
    const stack: string[] = [];
    const order: string[][] = [];
    let next = 0;
    const deps = (id: string) => (info(id)?.importedIds ?? []).filter((d) => seen.has(d));
    for (const root of nodes) {
      if (index.has(root)) continue;
      const frames: { id: string; edges: string[]; i: number }[] = [];
      const open = (id: string) => {
        index.set(id, next);
        low.set(id, next++);
        stack.push(id);
        onStack.add(id);
        frames.push({ id, edges: deps(id), i: 0 });
      };
      open(root);
      while (frames.length) {
        const f = frames[frames.length - 1]!;
        if (f.i < f.edges.length) {
          const d = f.edges[f.i++]!;
          if (!index.has(d)) open(d);
          else if (onStack.has(d)) low.set(f.id, Math.min(low.get(f.id)!, index.get(d)!));
          continue;
        }
        frames.pop();
        const parent = frames[frames.length - 1];
        if (parent) low.set(parent.id, Math.min(low.get(parent.id)!, low.get(f.id)!));
        if (low.get(f.id) === index.get(f.id)) {
          const scc: string[] = [];
          let x: string;
          do {
            x = stack.pop()!;
            onStack.delete(x);
            scc.push(x);
          } while (x !== f.id);
          order.push(scc);
        }
      }
    }
    const out = new Map<string, string>();
    let chunk = 0;
    let size = 0;
    for (const scc of order) {
      const bytes = scc.reduce((a, id) => a + (info(id)?.code?.length ?? 0), 0);
      if (size > 0 && size + bytes > budget) {
        chunk++;
        size = 0;
      }
      size += bytes;
      for (const id of scc) out.set(id, `monaco-${chunk}`);
    }
    return out;
  };

  return (id, meta) => {
    // Vite's preload helper serves the entry's dynamic imports and Monaco's own: a chunk of its own, or
    // Rollup puts it in a Monaco chunk and the entry would load that chunk (and its CSS) at startup.
    if (id.includes('vite/preload-helper')) return 'preload-helper';
    if (!isMonaco(id)) return undefined;
    assigned ??= plan(id, meta.getModuleInfo);
    return assigned.get(id);
  };
}

/** The README next to the app, so the in-app glossary's link works wherever dist/ is deployed. */
function readmeAsset(): Plugin {
  return {
    name: 'mmq-readme-asset',
    apply: 'build',
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: 'README.md', source: readFileSync('README.md', 'utf8') });
    },
  };
}

// base './': every URL in the build is relative, so dist/ works at any path of any static server
// (README "Deploy as a static site"; e2e/deploy.spec.ts serves it under /mmq/).
// Mode 'e2e' (npm run build:e2e) is the only build with the test hook (window.__mmq).
export default defineConfig({
  base: './',
  plugins: [react(), readmeAsset()],
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    rollupOptions: { output: { manualChunks: monacoChunks() } },
  },
  server: {
    host: '127.0.0.1',
    strictPort: true,
    // node_modules may be a link to a shared install (a git worktree, pnpm): the dev server may serve
    // from where it really is (Monaco's icon font is fetched from there).
    fs: {
      allow: [
        searchForWorkspaceRoot(process.cwd()),
        ...(existsSync('node_modules') ? [realpathSync('node_modules')] : []),
      ],
    },
  },
});
