// The cluster benchmark end to end in a tiny mode: Debian's ZooKeeper and three brokers, the produce cells on
// one partition with short windows, and SIGKILL failover with the shortest session ZooKeeper allows. Checks
// the result file: every cell measured, R_single and the paired limits' ratios written, a new leader found and
// no acknowledged write lost.
// Then latency mode: fixed rates with a tail consumer, end-to-end latency and a latency floor written for every
// cell.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { run } from '../../bench/cluster/main.js';

describe('cluster bench, tiny', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-cluster-bench-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('measures replicated and single-node produce and a leader kill without losing a write', async () => {
    await run([
      '--quick',
      '--no-limits',
      '--seconds',
      '0.5',
      '--partitions',
      '1',
      '--session-timeouts',
      '4000',
      '--dir',
      dir,
      '--results-dir',
      join(dir, 'results'),
    ]);
    const files = readdirSync(join(dir, 'results'));
    assert.equal(files.length, 1);
    const lines = readFileSync(join(dir, 'results', files[0]!), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const named = (name: string) => lines.find((l) => l.name === name);
    for (const cell of ['rf1-1024B-1p-acks1', 'rf1-1024B-1p-acksall', 'rf3-1024B-1p-acksall']) {
      const line = named(`produce-${cell}`);
      assert.ok(line !== undefined, `no line for ${cell}`);
      assert.equal(line.n, 3);
      assert.ok((line.median as number) > 0);
    }
    const ratio = named('R_single-rf3-1024B-1p-acksall-over-rf1-1024B-1p-acksall');
    assert.ok(ratio !== undefined && (ratio.median as number) > 0);
    // The limits measured between repetitions, and each cell's ratio to its own.
    for (const name of [
      'R_replicate-paired-rf3-1024B-1p-acksall',
      'R_replicate_acked-paired-rf3-1024B-1p-acksall',
      'L_replicate_acked-5x128KiB-paired',
      'R_sink-paired-rf1-1024B-1p-acksall',
      'L_replicate-over-L_sink-paired',
    ]) {
      const line = named(name);
      assert.ok(line !== undefined, `no paired figure ${name}`);
      assert.equal((line.values as number[]).length, 3, name);
      assert.ok((line.min as number) > 0, name);
    }
    const failover = named('failover-sigkill-session4000-first-write');
    assert.ok(failover !== undefined, 'no failover line');
    assert.equal(failover.lostWrites, 0);
    assert.ok((failover.acknowledgedWrites as number) > 0);
    // Fast failure detection (the controller's liveness probe sees the killed broker's port refuse connections and
    // fences it through ZooKeeper) moves leadership long before the 4 s session expires; without it the first
    // write came no sooner than two thirds of the session timeout after the kill.
    assert.ok((failover.max as number) < 4000, `first write after ${failover.max} ms`);
    const repetitions = failover.repetitions as { oldLeader: number; newLeader: number }[];
    assert.equal(repetitions.length, 3);
    for (const r of repetitions) assert.notEqual(r.newLeader, r.oldLeader);
    // Every process was stopped and every file removed: only the results remain.
    assert.deepEqual(readdirSync(dir), ['results']);
  });
});

describe('cluster bench, latency mode, tiny', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-cluster-bench-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('measures end-to-end latency at fixed rates with a tail consumer', async () => {
    const results = join(dir, 'results-rate');
    await run([
      '--quick',
      '--no-limits',
      '--no-failover',
      '--seconds',
      '0.5',
      '--partitions',
      '1',
      '--single-acks',
      '1',
      '--rate',
      '40',
      '--single-rate',
      '80',
      '--dir',
      dir,
      '--results-dir',
      results,
    ]);
    const files = readdirSync(results);
    assert.equal(files.length, 1);
    const lines = readFileSync(join(results, files[0]!), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const named = (name: string) => lines.find((l) => l.name === name);
    for (const [cell, rate] of [
      ['rf1-1024B-1p-acks1-80rps', 80],
      ['rf3-1024B-1p-acksall-40rps', 40],
    ] as const) {
      const produce = named(`produce-${cell}`);
      assert.ok(produce !== undefined, `no produce line for ${cell}`);
      // Requests of about 128 KiB at the fixed rate: throughput follows the rate, not the broker.
      assert.ok((produce.median as number) < (rate * 140_000) / 1e6, `${cell}: ${produce.median} MB/s`);
      const e2e = named(`e2e-latency-${cell}`);
      assert.ok(e2e !== undefined, `no e2e line for ${cell}`);
      assert.ok((e2e.count as number) > 0, `${cell}: no end-to-end sample`);
      assert.ok((e2e.p99 as number) >= (e2e.p50 as number));
    }
    // Each cell's latency floor after each of its repetitions (the bare round trip at its rate: L_replicate_acked
    // for the rf=3 cell, L_sink_acked for the single node), and its end-to-end p99 read against it pair by pair.
    for (const [cell, limit] of [
      ['rf1-1024B-1p-acks1-80rps', 'L_sink_acked'],
      ['rf3-1024B-1p-acksall-40rps', 'L_replicate_acked'],
    ] as const) {
      const floor = named(`latency-floor-${cell}`);
      assert.ok(floor !== undefined, `no latency floor line for ${cell}`);
      assert.equal(floor.limit, limit);
      const floors = floor.repetitions as { p50Ms: number; p99Ms: number }[];
      assert.equal(floors.length, 3);
      for (const f of floors) assert.ok(f.p50Ms > 0 && f.p99Ms >= f.p50Ms, JSON.stringify(f));
      const overFloor = named(`e2e-p99-over-floor-paired-${cell}`);
      assert.ok(overFloor !== undefined && (overFloor.values as number[]).length === 3, cell);
    }
    // Throughput ratios and limits mean nothing at fixed rates.
    assert.equal(
      lines.some((l) => /^(R_single-|R_sink-paired|R_replicate|L_)/.test(String(l.name))),
      false,
    );
    assert.deepEqual(readdirSync(dir), ['results-rate']);
  });
});
