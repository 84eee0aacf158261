// Builds Brook's optional native addons (src/native/*.c) into dist/src/native/ with the system's C compiler and
// the headers of the Node that runs this script: no node-gyp, nothing downloaded. Each addon has a portable
// fallback in TypeScript, so a machine without a C compiler, or not x86-64, builds without them and says so.
// Usage: node tools/build-native.mjs (part of `npm run build`).

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const addons = [{ name: 'crc32c', arch: 'x64' }];

/** Node's headers: beside the running binary (official builds), else where distributions put them. */
function nodeIncludeDir() {
  const candidates = [join(dirname(process.execPath), '..', 'include', 'node'), '/usr/include/node'];
  return candidates.find((dir) => existsSync(join(dir, 'node_api.h'))) ?? null;
}

const outDir = join(root, 'dist', 'src', 'native');
mkdirSync(outDir, { recursive: true });
const include = nodeIncludeDir();
const compiler = process.env.CC ?? 'cc';
for (const addon of addons) {
  const out = join(outDir, `${addon.name}.node`);
  // A stale addon from an earlier build must not outlive a failed one: the fallback is then used, as the line says.
  rmSync(out, { force: true });
  if (process.arch !== addon.arch) {
    console.log(`native ${addon.name}: skipped on ${process.arch} (the portable fallback is used)`);
    continue;
  }
  if (include === null) {
    console.log(`native ${addon.name}: skipped, no node_api.h found (the portable fallback is used)`);
    continue;
  }
  const args = ['-O2', '-shared', '-fPIC', '-Wall', '-Werror', `-I${include}`, '-o', out];
  const built = spawnSync(compiler, [...args, join(root, 'src', 'native', `${addon.name}.c`)], {
    encoding: 'utf8',
  });
  if (built.error !== undefined || built.status !== 0) {
    const why = built.error?.message ?? built.stderr.trim().split('\n').slice(0, 5).join('\n');
    console.log(`native ${addon.name}: not built (the portable fallback is used): ${why}`);
    rmSync(out, { force: true });
  }
}
