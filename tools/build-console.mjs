// `npm run build` runs this after tsc: type-checks the web console's page (src/console/web, its own tsconfig with
// the DOM's types and Preact's JSX) and bundles it with esbuild into dist/src/console/static/ (app.js, app.css,
// index.html), where the console's server reads it. Everything the page needs is in those three files: no CDN and
// no network at run time. The output is built, never committed (dist/ is ignored).

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'src/console/web');
const out = join(root, 'dist/src/console/static');

const tsc = join(root, 'node_modules/typescript/bin/tsc');
const check = spawnSync(process.execPath, [tsc, '-p', join(web, 'tsconfig.json')], { stdio: 'inherit' });
if (check.status !== 0) process.exit(check.status ?? 1);

mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(web, 'main.tsx')],
  outfile: join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  target: ['es2022'],
  platform: 'browser',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  legalComments: 'eof',
  logLevel: 'warning',
});
copyFileSync(join(web, 'app.css'), join(out, 'app.css'));
copyFileSync(join(web, 'index.html'), join(out, 'index.html'));
