// The built app, read from disk (no browser): the production build (`npm run build`, dist/) keeps the main
// thread light -- its entry chunk holds no generator, oracle or quant code (each marker below is in the
// GPU worker's chunk and in no chunk the page loads first), no Monaco and no charting library (both load
// lazily) and no test hook; every chunk is under Vite's default 500 kB warning limit. The test build
// (dist-e2e/) is the one with window.__mmq.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';

/** Text only the worker's code has: WGSL the generators emit, the GGUF reader's and quantizers' words. */
const WORKER_ONLY = ['var<storage', 'store_out', 'dot4I8Packed(', 'enable f16', 'not a GGUF file'];
/** Monaco's and recharts' own words: they must load with the editor and the Tuner tab, not first. */
const LAZY = ['editor.action.', 'recharts-'];

function build(dir: string) {
  if (!existsSync(join(dir, 'index.html')))
    throw new Error(`${dir}/ is missing: run \`npm run build\` first`);
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  const entry = /<script type="module"[^>]*src="\.\/assets\/([^"]+\.js)"/.exec(html)?.[1];
  if (!entry) throw new Error(`${dir}/index.html names no entry chunk`);
  const assets = readdirSync(join(dir, 'assets')).filter((f) => f.endsWith('.js'));
  const read = (f: string) => readFileSync(join(dir, 'assets', f), 'utf8');
  return { html, entry, assets, read };
}

test('the production main chunk is light: no generator, oracle, quant, Monaco or chart code', () => {
  const b = build('dist');
  const main = b.read(b.entry);
  console.log(`[bundle] main chunk ${b.entry}: ${main.length} bytes`);
  expect(main.length).toBeLessThan(400_000);
  const worker = b.assets.find((f) => f.startsWith('gpu.worker'));
  expect(worker, 'the GPU worker chunk').toBeDefined();
  const workerCode = b.read(worker!);
  for (const marker of WORKER_ONLY) {
    expect(workerCode, `the worker holds "${marker}"`).toContain(marker);
    expect(main, `the main chunk holds no "${marker}"`).not.toContain(marker);
  }
  for (const marker of LAZY) {
    expect(main, `the main chunk holds no "${marker}"`).not.toContain(marker);
    expect(
      b.assets.some((f) => f !== b.entry && b.read(f).includes(marker)),
      `a lazy chunk holds "${marker}"`,
    ).toBe(true);
  }
  // The editor's chunks load after the first paint: the entry only knows them through dynamic imports.
  expect(b.html).not.toMatch(/modulepreload[^>]*monaco/);
});

test('every chunk is under the default 500 kB warning limit, and URLs are relative', () => {
  const b = build('dist');
  for (const f of b.assets) expect(b.read(f).length, f).toBeLessThan(500_000);
  expect(b.html).not.toMatch(/(src|href)="\/(?!\/)/);
});

test('only the test build has the test hook', () => {
  const prod = build('dist');
  for (const f of prod.assets) expect(prod.read(f), f).not.toContain('__mmq');
  const e2e = build('dist-e2e');
  expect(e2e.read(e2e.entry)).toContain('__mmq');
});
