// The backlog benchmark end to end on a small backlog: a real broker filled by G1, L_read over its segment files,
// L_net, L_rtt, L_serve and a consumer alternated, and the result file holding each figure and both ratios. The benchmark itself
// asserts that the consumer read exactly the bytes the segment files hold.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../../bench/main.js', import.meta.url));

describe('fetch-backlog benchmark', { timeout: 180_000 }, () => {
  it('fills a topic, reads it back against L_read, L_net, L_rtt and L_serve, and records the ratios', () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-backlog-test-'));
    try {
      const result = spawnSync(
        process.execPath,
        [main, 'fetch-backlog', '--mib', '1', '--partitions', '2', '--dir', dir, '--results-dir', dir],
        { encoding: 'utf8', timeout: 170_000 },
      );
      assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
      const [file] = readdirSync(dir).filter((f) => f.endsWith('-fetch-backlog.jsonl'));
      assert.ok(file, `a result file in ${readdirSync(dir).join(', ')}`);
      const lines = readFileSync(join(dir, file), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { name: string; median?: number; values?: number[] });
      const byName = new Map(lines.map((l) => [l.name, l]));
      for (const suffix of [
        'L_read',
        'consumer',
        'L_net',
        'R_read',
        'R_net',
        'L_rtt',
        'R_rtt',
        'L_serve',
        'R_serve',
      ]) {
        const line = byName.get(`backlog 1024 B x 2 ${suffix}`);
        assert.ok(line, `a ${suffix} line among ${[...byName.keys()].join(', ')}`);
        assert.ok((line.median ?? 0) > 0, `${suffix} is positive`);
      }
      assert.equal(byName.get('backlog 1024 B x 2 consumer')?.values?.length, 3, 'three repetitions');
      // L_rtt is measured at the consumer's fetch size: 1 MiB for each of the two partitions.
      const rtt = byName.get('backlog 1024 B x 2 L_rtt') as { responseBytes?: number } | undefined;
      assert.equal(rtt?.responseBytes, 2 * 1024 * 1024);
      assert.deepEqual(
        readdirSync(dir).filter((f) => f.startsWith('.brook-bench-')),
        [],
        'the broker data directory was removed',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
