// `brook rebalance` between the log directories of one broker (the per-disk goal): four topics spread over two
// directories, only those in the first written to, so the first holds every byte. The dry run shows moves between
// the directories and moves nothing; --execute moves replicas (AlterReplicaLogDirs) until both directories are
// within the tolerance, copying exactly the bytes the plan named.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { produceValues, waitFor } from '../helpers/cluster.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
const TOPICS = ['disk-0', 'disk-1', 'disk-2', 'disk-3'];
const BIG = 'x'.repeat(8000);

describe('brook rebalance between log directories', () => {
  const dirs = [mkdtempSync(join(tmpdir(), 'brook-disk-a-')), mkdtempSync(join(tmpdir(), 'brook-disk-b-'))];
  let broker: BrokerProcess | undefined;
  let admin: Admin | undefined;
  after(async () => {
    await admin?.close();
    await broker?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Bytes per directory, and the directory of each topic's partition 0. */
  async function disks(): Promise<{ bytes: Map<string, number>; dirOf: Map<string, string> }> {
    const bytes = new Map<string, number>();
    const dirOf = new Map<string, string>();
    for (const d of await admin!.describeLogDirs([0])) {
      const mine = d.partitions.filter((p) => TOPICS.includes(p.topic) && !p.isFuture);
      bytes.set(
        d.logDir,
        mine.reduce((n, p) => n + p.size, 0),
      );
      for (const p of mine) dirOf.set(p.topic, d.logDir);
    }
    return { bytes, dirOf };
  }

  it('evens out the bytes of the directories, moving what the plan said', async () => {
    broker = await startBroker({ dataDir: dirs[0]!, overrides: { 'log.dirs': dirs.join(',') } });
    admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'rebalance-disks' });
    for (const topic of TOPICS) {
      const [created] = await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
      assert.equal(created!.error, null);
    }
    const placed = await waitFor('every topic in a directory', async () => {
      const d = await disks();
      return d.dirOf.size === TOPICS.length ? d : undefined;
    });
    const full = placed.dirOf.get(TOPICS[0]!)!;
    const inFull = TOPICS.filter((t) => placed.dirOf.get(t) === full);
    assert.ok(inFull.length >= 2, `placement by fewest partitions: ${[...placed.dirOf]}`);
    for (const topic of inFull) {
      const codes = await waitFor(`${topic} to take writes`, async () => {
        const c = await produceValues(
          broker!,
          topic,
          Array.from({ length: 20 }, (_, i) => `${i}:${BIG}`),
        );
        return c.every((x) => x === ErrorCode.NONE) ? c : undefined;
      });
      assert.equal(codes.length, 20);
    }
    const before = await disks();
    const empty = [...before.bytes.keys()].find((d) => d !== full)!;
    assert.equal(before.bytes.get(empty), 0);

    const bootstrap = broker.bootstrap;
    const dry = await run(process.execPath, [BROOK, 'rebalance', '--bootstrap-server', bootstrap], {
      timeoutMs: 60_000,
    });
    assert.equal(dry.code, 0, dry.stderr);
    const planned = /Proposed moves between log directories: (\d+) replicas, (\d+) bytes to copy/.exec(
      dry.stdout,
    );
    assert.ok(planned !== null && Number(planned[1]) > 0, dry.stdout);
    assert.deepEqual((await disks()).bytes, before.bytes, 'a dry run moves nothing');

    const executed = await run(
      process.execPath,
      [BROOK, 'rebalance', '--bootstrap-server', bootstrap, '--execute'],
      { timeoutMs: 120_000 },
    );
    assert.equal(executed.code, 0, `${executed.stdout}\n${executed.stderr}`);
    assert.match(executed.stdout, /All moves between log directories done/);
    const now = await disks();
    const [a, b] = [now.bytes.get(full)!, now.bytes.get(empty)!];
    assert.ok(Math.abs(a - b) <= 0.1 * ((a + b) / 2), `directories at ${a} and ${b} bytes`);
    assert.equal(b, Number(planned![2]), 'the bytes copied are the bytes the plan named');
  });
});
