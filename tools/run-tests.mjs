// Runs the compiled tests with node's own test runner. Fast tests are dist/test/**/*.test.js; slow suites
// (cluster faults, long fuzzing) are *.slow.js and run only with --slow.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const slow = process.argv.includes('--slow');
const suffix = slow ? '.slow.js' : '.test.js';
const filter = process.argv.slice(2).filter((a) => !a.startsWith('--'));

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...find(path));
    else if (name.endsWith(suffix)) out.push(path);
  }
  return out;
}

const files = find('dist/test')
  .filter((f) => filter.length === 0 || filter.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// --test-timeout: a test that hangs fails instead of holding CI. (Not --test-force-exit: a test file's process
// that exits at once can lose the end of its report on the pipe, so that tests go missing from the count.)
// A file's process still alive well after its tests ended fails the file (see exit-watchdog.mjs).
const timeoutMs = slow ? 900_000 : 300_000;
const watchdog = fileURLToPath(new URL('./exit-watchdog.mjs', import.meta.url));
const flags = ['--test', '--test-reporter=spec', `--test-timeout=${timeoutMs}`, '--import', watchdog];
const result = spawnSync(process.execPath, [...flags, ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
