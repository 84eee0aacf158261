// Runs the compiled tests with node's own test runner. Fast tests are dist/test/**/*.test.js; slow suites
// (cluster faults, long fuzzing) are *.slow.js and run only with --slow.
//
// --coverage measures line coverage of src/ with node's own V8 coverage, broker and tool processes included
// (tools/coverage.mjs), writes coverage/lines.json, and on a whole run (no filter) fails when it is below the floor
// in tools/coverage-floor.json.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { byModule, CoverageFolder, readFloor } from './coverage.mjs';

const slow = process.argv.includes('--slow');
const coverage = process.argv.includes('--coverage');
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
const env = { ...process.env };
const rawDir = coverage ? mkdtempSync(join(tmpdir(), 'brook-v8-coverage-')) : null;
if (rawDir !== null) env.NODE_V8_COVERAGE = rawDir;
const folder = coverage ? new CoverageFolder() : null;
// Raw files are folded (and deleted) as processes end, so that they never pile up.
const folding = folder === null ? null : setInterval(() => folder.foldDir(rawDir), 10_000);
const child = spawn(process.execPath, [...flags, ...files], { stdio: 'inherit', env });
const status = await new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
let exitCode = status;
if (folder !== null) {
  clearInterval(folding);
  folder.foldDir(rawDir, true);
  rmSync(rawDir, { recursive: true, force: true });
  const summary = folder.summary();
  mkdirSync('coverage', { recursive: true });
  writeFileSync('coverage/lines.json', `${JSON.stringify(summary, null, 1)}\n`);
  const floor = readFloor();
  console.log(
    `\ncoverage: ${summary.percent}% of ${summary.lines} src/ lines covered, by ${summary.processes} processes ` +
      `(floor ${floor}%); lowest modules:`,
  );
  for (const m of byModule(summary).slice(0, 8)) {
    console.log(`  ${m.name.padEnd(24)} ${m.percent.toFixed(1).padStart(5)}% of ${m.lines}`);
  }
  if (filter.length === 0 && !slow && summary.percent < floor) {
    console.error(`coverage ${summary.percent}% is below the floor ${floor}% (tools/coverage-floor.json)`);
    if (exitCode === 0) exitCode = 1;
  }
}
process.exit(exitCode);
