// The coverage fold of `npm test -- --coverage` (tools/coverage.mjs): a child process run with NODE_V8_COVERAGE
// calls one function of src/protocol/generator/versions.ts; folded through the source map, the lines of that
// function that ran are covered, a branch it did not take and a function it never called are not, and the raw
// file is deleted once folded.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCE = 'src/protocol/generator/versions.ts';

interface Folder {
  foldDir(dir: string, all?: boolean): void;
  summary(): { percent: number; files: Record<string, { lines: number; covered: number }> };
  covered: Map<string, Set<number>>;
}

it('folds V8 coverage of a child process into covered TypeScript lines', async () => {
  const { CoverageFolder } = (await import(join(REPO_ROOT, 'tools/coverage.mjs'))) as {
    CoverageFolder: new () => Folder;
  };
  const raw = mkdtempSync(join(tmpdir(), 'brook-coverage-test-'));
  try {
    const script = `import('${join(REPO_ROOT, 'dist', SOURCE.replace(/\.ts$/, '.js'))}').then((m) => m.formatVersions({ min: 3, max: 0x7fff }))`;
    const run = spawnSync(process.execPath, ['-e', script], {
      env: { ...process.env, NODE_V8_COVERAGE: raw },
    });
    assert.equal(run.status, 0, run.stderr.toString());
    const folder = new CoverageFolder();
    folder.foldDir(raw, true);
    assert.deepEqual(readdirSync(raw), [], 'the raw file is deleted once folded');
    const lines = readFileSync(join(REPO_ROOT, SOURCE), 'utf8').split('\n');
    const lineOf = (text: string) => lines.findIndex((l) => l.includes(text));
    const covered = [...folder.covered.entries()].find(([url]) => url.endsWith('versions.js'))?.[1];
    assert.ok(covered !== undefined, 'versions.js was reported');
    assert.ok(covered.has(lineOf('if (range.max === VERSION_MAX) return')), 'the line that ran');
    assert.ok(!covered.has(lineOf('return range.min === range.max ?')), 'a line after the return taken');
    assert.ok(!covered.has(lineOf('const min = Math.max(a.min, b.min)')), 'a function never called');
    const summary = folder.summary();
    const file = summary.files[SOURCE];
    assert.ok(file !== undefined && file.covered > 0 && file.covered < file.lines, JSON.stringify(file));
    assert.ok(summary.percent < 100);
  } finally {
    rmSync(raw, { recursive: true, force: true });
  }
});
