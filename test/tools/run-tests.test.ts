// The test runner's retry rule (tools/run-tests.mjs), run on small made-up test trees: a file that fails once and
// then passes alone makes the run pass and is named FLAKY; a file that fails twice fails the run; a filtered run
// never retries; more failed files than the retry bound fail at once.

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

function run(files: Record<string, string>, args: string[] = []): { status: number | null; stdout: string } {
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
    const result = spawnSync(process.execPath, [tool, ...args], { cwd: root, encoding: 'utf8', env });
    return { status: result.status, stdout: result.stdout };
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
});
