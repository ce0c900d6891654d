// A plain static server that serves a built app under a sub-path only (/mmq/ by default) and 404s every
// other path, as a static host would when the app is copied into a folder: any absolute URL in the
// build (/assets/..., /favicon.svg) fails here. Used by e2e/deploy.spec.ts through playwright.config.ts.
//   npx tsx e2e/serve-subpath.ts <dir> <port> [/prefix/]
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';

const [dir = 'dist-e2e', port = '4174', prefix = '/mmq/'] = process.argv.slice(2);
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ttf': 'font/ttf',
  '.json': 'application/json',
  '.md': 'text/markdown; charset=utf-8',
};

createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === prefix.replace(/\/$/, '')) {
    res.writeHead(301, { location: prefix });
    return res.end();
  }
  if (!url.pathname.startsWith(prefix)) {
    res.writeHead(404, { 'content-type': 'text/plain' });
    return res.end(`not found: ${url.pathname} (this server serves ${prefix} only)`);
  }
  const rel = normalize(decodeURIComponent(url.pathname.slice(prefix.length)) || 'index.html');
  if (rel.startsWith('..')) {
    res.writeHead(403);
    return res.end();
  }
  const file = join(dir, rel);
  try {
    if (!statSync(file).isFile()) throw new Error('not a file');
  } catch {
    res.writeHead(404, { 'content-type': 'text/plain' });
    return res.end(`not found: ${url.pathname}`);
  }
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
  createReadStream(file).pipe(res);
}).listen(Number(port), '127.0.0.1', () =>
  console.log(`serving ${dir} at http://127.0.0.1:${port}${prefix}`),
);
