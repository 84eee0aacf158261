// The test runner's retry rule (tools/run-tests.mjs), run on small made-up test trees: a file that fails once and
// then passes alone makes the run pass and is named FLAKY; a file that fails twice fails the run; a filtered run
// never retries; more failed files than the retry bound fail at once. And how many files run at once: two by
// default, as many as BROOK_TEST_CONCURRENCY says.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const tool = fileURLToPath(new URL('../../../tools/run-tests.mjs', import.meta.url));

const PASSING = "import { test } from 'node:test';\ntest('passes', () => {});\n";
const FAILING = "import { test } from 'node:test';\ntest('fails', () => { throw new Error('always'); });\n";
// Fails while its marker file is absent, and leaves the marker behind: fails the first run, passes the second.
const FAILS_ONCE = `import { existsSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
test('fails the first time', () => {
  const marker = new URL('./marker', import.meta.url);
  if (existsSync(marker)) return;
  writeFileSync(marker, '');
  throw new Error('first run');
});
`;

// The made-up files below leave a marker named by their process id in dist/running/ while they run.
const MARK_RUNNING = `import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
const dir = new URL('../../running/', import.meta.url);
mkdirSync(dir, { recursive: true });
const marker = new URL(String(process.pid), dir);
writeFileSync(marker, '');
const running = () => readdirSync(dir).length;
`;
// Passes once it has seen two files running at the same time (itself included); fails after a minute without.
// Its marker stays: one left by a file that has ended would count as running, so with one file at a time it fails.
const RUNS_WITH_ANOTHER = `${MARK_RUNNING}import { test } from 'node:test';
test('runs beside another file', async () => {
  const deadline = Date.now() + 60_000;
  while (running() < 2) {
    if (Date.now() > deadline) throw new Error('fewer than two files ran at once');
    await sleep(20);
  }
});
`;
// Fails when another file runs during its 300 ms.
const RUNS_ALONE = `${MARK_RUNNING}import assert from 'node:assert/strict';
import { test } from 'node:test';
test('runs alone', async () => {
  try {
    for (let i = 0; i < 15; i++) {
      assert.equal(running(), 1);
      await sleep(20);
    }
  } finally {
    rmSync(marker);
  }
});
`;

function run(
  files: Record<string, string>,
  args: string[] = [],
  concurrency: string | undefined = undefined,
): { status: number | null; stdout: string; stderr: string } {
  const root = mkdtempSync(join(tmpdir(), 'brook-run-tests-'));
  try {
    for (const [name, text] of Object.entries(files)) {
      const dir = join(root, 'dist', 'test', name.replace(/\.test\.js$/, ''));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    // The outer test runner's context would turn the inner runner into its child reporter.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    if (concurrency === undefined) delete env.BROOK_TEST_CONCURRENCY;
    else env.BROOK_TEST_CONCURRENCY = concurrency;
    const result = spawnSync(process.execPath, [tool, ...args], { cwd: root, encoding: 'utf8', env });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('tools/run-tests.mjs', () => {
  it('passes a run whose only failure passes when run again alone, and names the file FLAKY', () => {
    const { status, stdout } = run({ 'a.test.js': PASSING, 'b.test.js': FAILS_ONCE });
    assert.equal(status, 0, stdout);
    assert.match(stdout, /FLAKY: these files failed, then passed when run again alone/);
    assert.match(stdout, /b\.test\.js/);
  });

  it('fails a run whose failure repeats', () => {
    const { status, stdout } = run({ 'a.test.js': PASSING, 'b.test.js': FAILING });
    assert.notEqual(status, 0);
    assert.match(stdout, /running each once more/);
    assert.doesNotMatch(stdout, /FLAKY/);
  });

  it('never retries a filtered run', () => {
    const { status, stdout } = run({ 'a.test.js': PASSING, 'b.test.js': FAILS_ONCE }, ['b.test']);
    assert.notEqual(status, 0);
    assert.doesNotMatch(stdout, /once more/);
  });

  it('fails at once when more files fail than it retries', () => {
    const files: Record<string, string> = { 'a.test.js': PASSING };
    for (const n of ['b', 'c', 'd', 'e']) files[`${n}.test.js`] = FAILS_ONCE;
    const { status, stdout } = run(files);
    assert.notEqual(status, 0);
    assert.doesNotMatch(stdout, /once more/);
  });

  it('runs two files at once by default', () => {
    const files: Record<string, string> = {};
    for (const n of ['a', 'b']) files[`${n}.test.js`] = RUNS_WITH_ANOTHER;
    const { status, stdout } = run(files);
    assert.equal(status, 0, stdout);
    assert.doesNotMatch(stdout, /once more/);
  });

  it('runs one file at a time with BROOK_TEST_CONCURRENCY=1', () => {
    const files: Record<string, string> = {};
    for (const n of ['a', 'b', 'c', 'd']) files[`${n}.test.js`] = RUNS_ALONE;
    const { status, stdout } = run(files, [], '1');
    assert.equal(status, 0, stdout);
    assert.doesNotMatch(stdout, /once more/);
  });

  it('refuses a BROOK_TEST_CONCURRENCY that is not a positive integer', () => {
    for (const bad of ['0', '-2', '1.5', 'four']) {
      const { status, stderr } = run({ 'a.test.js': PASSING }, [], bad);
      assert.equal(status, 2, bad);
      assert.match(stderr, /BROOK_TEST_CONCURRENCY must be a positive integer/);
    }
  });
});
