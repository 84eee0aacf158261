// The dispatcher of `npm run bench`: lists benchmarks with no name and refuses unknown ones.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../../bench/main.js', import.meta.url));

describe('bench dispatcher', () => {
  it('lists the benchmarks when given no name', () => {
    const result = spawnSync(process.execPath, [main], { encoding: 'utf8' });
    assert.equal(result.status, 0);
    assert.match(result.stdout, /^ {2}limits {2}/m);
  });

  it('exits 2 and lists the benchmarks for an unknown name', () => {
    const result = spawnSync(process.execPath, [main, 'no-such-bench'], { encoding: 'utf8' });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /no benchmark named 'no-such-bench'/);
    assert.match(result.stderr, /limits/);
  });

  it('passes arguments to the chosen benchmark', () => {
    const result = spawnSync(process.execPath, [main, 'limits', '--help'], { encoding: 'utf8' });
    assert.equal(result.status, 0);
    assert.match(result.stdout, /--quick/);
  });
});
