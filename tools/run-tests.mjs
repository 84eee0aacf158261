// Runs the compiled tests with node's own test runner. Fast tests are dist/test/**/*.test.js; slow suites
// (cluster faults, long fuzzing) are *.slow.js and run only with --slow.
//
// A whole run (no filter) whose failures lie in at most MAX_RETRIED_FILES files runs each of those files once more,
// alone; when they all pass the second time the run passes, and the files are listed as FLAKY at the end, loudly.
// This is the rule Kafka's own CI follows (one retry, a bounded number of retried failures): a test that fails
// on a loaded machine and passes alone is still a bug to fix, but not a broken build. A filtered run never retries,
// so a developer sees every failure.
//
// Test files run N at a time, each in its own process (node --test's --test-concurrency), not one
// at a time: most files spend their time waiting on brokers, ZooKeeper sessions and timeouts rather than on CPU
// (measured: 0.1 to 0.6 of a core per file), and every test binds free ports on 127.0.0.1 and its own temporary
// directories, so files do not share anything. The fast suite runs 2 at a time by default: 4 would be about the
// 2 cores of the CI machine on average (0.4 core per file), and a run at 4 on a machine loaded by other work had
// three files fail from CPU starvation (since fixed); 2 leaves headroom until 4 is measured on an idle machine.
// The slow suite runs one at a time.
// BROOK_TEST_CONCURRENCY=N sets N for either suite (1: one file at a time, as before). Retried files run alone.
//
// --coverage measures line coverage of src/ with node's own V8 coverage, broker and tool processes included
// (tools/coverage.mjs), writes coverage/lines.json, and on a whole run (no filter) fails when it is below the floor
// in tools/coverage-floor.json.
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
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

// Absolute paths: the reporter names failed files that way.
/** The number of test files run at once: a positive integer from the environment, or the suite's default. */
function readConcurrency(value, fallback) {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`BROOK_TEST_CONCURRENCY must be a positive integer, not ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return n;
}

const files = find(resolve('dist/test'))
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
const reporter = fileURLToPath(new URL('./failed-files-reporter.mjs', import.meta.url));
const MAX_RETRIED_FILES = 3;
const concurrency = readConcurrency(process.env.BROOK_TEST_CONCURRENCY, slow ? 1 : 2);
const reportDir = mkdtempSync(join(tmpdir(), 'brook-test-failures-'));
const flags = (failedList) => [
  '--test',
  `--test-concurrency=${concurrency}`,
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  `--test-reporter=${reporter}`,
  `--test-reporter-destination=${failedList}`,
  `--test-timeout=${timeoutMs}`,
  '--import',
  watchdog,
];
const env = { ...process.env };
const rawDir = coverage ? mkdtempSync(join(tmpdir(), 'brook-v8-coverage-')) : null;
if (rawDir !== null) env.NODE_V8_COVERAGE = rawDir;
const folder = coverage ? new CoverageFolder() : null;
// Raw files are folded (and deleted) as processes end, so that they never pile up.
const folding = folder === null ? null : setInterval(() => folder.foldDir(rawDir), 10_000);
/** Runs the files in one node --test process; resolves with its exit code and the files that had a failure. */
async function runFiles(list, name) {
  const failedList = join(reportDir, name);
  const child = spawn(process.execPath, [...flags(failedList), ...list], { stdio: 'inherit', env });
  const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  const failed = existsSync(failedList)
    ? readFileSync(failedList, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
  return { code, failed: [...new Set(failed)] };
}

const first = await runFiles(files, 'first');
let exitCode = first.code;
const retriable =
  filter.length === 0 &&
  first.code !== 0 &&
  first.failed.length > 0 &&
  first.failed.length <= MAX_RETRIED_FILES &&
  first.failed.every((f) => files.includes(f));
if (retriable) {
  console.log(
    `\n${first.failed.length} file(s) failed; running each once more, alone:\n  ${first.failed.join('\n  ')}`,
  );
  const again = [];
  for (const [i, f] of first.failed.entries()) again.push(await runFiles([f], `retry-${i}`));
  if (again.every((r) => r.code === 0)) {
    exitCode = 0;
    const bar = '!'.repeat(100);
    console.log(
      `\n${bar}\nFLAKY: these files failed, then passed when run again alone; fix them:\n  ${first.failed.join('\n  ')}\n${bar}`,
    );
  }
}
rmSync(reportDir, { recursive: true, force: true });
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
