// A leader whose log directory fails a write (here: full) must not keep its partitions. A log that failed a write
// refuses appends from then on; Kafka takes the directory offline and, when it was the broker's last one, halts
// the broker (ReplicaManager.handleLogDirFailure), so that in-sync replicas take over its partitions. Found by the
// chaos harness (transactional workload, seed 4): after a disk-full fault of 7 s, the transaction coordinator on
// that broker answered NOT_COORDINATOR for 45 s and a partition it led refused every write, until the broker's
// ZooKeeper session happened to expire. Needs root (a tmpfs for broker 0's log directory); skipped otherwise.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Consumer, Producer } from '../../src/client/index.js';
import { agreedLeader, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';

const TOPIC = 'log-dir-failure';
const FILLER = 'filler';

function canMount(): boolean {
  return process.getuid?.() === 0 && spawnSync('fallocate', ['--version']).status === 0;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a leader whose log directory fails a write', { skip: canMount() ? false : 'needs root' }, () => {
  let mount: string | undefined;
  let mounted = false;
  let cluster: TestCluster | undefined;

  before(async () => {
    mount = mkdtempSync(join(tmpdir(), 'brook-log-dir-failure-'));
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'brook-test-tmpfs', mount]);
    assert.equal(m.status, 0, `mount: ${m.stderr}`);
    mounted = true;
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 4000,
        'min.insync.replicas': 2,
        'default.replication.factor': 3,
        'offsets.topic.replication.factor': 3,
      },
      brokerOverrides: { 0: { 'log.dirs': mount } },
    });
  });
  after(async () => {
    await cluster?.stop();
    if (mounted) spawnSync('umount', [mount!]);
    if (mount !== undefined) rmSync(mount, { recursive: true, force: true });
  });

  it('halts, and an in-sync replica takes its partition with every acknowledged record', async () => {
    const brokers = cluster!.brokers;
    await createTopicOn(brokers[0]!, TOPIC, {
      assignments: { 0: [0, 1, 2] },
      configs: { 'min.insync.replicas': '2' },
    });
    await agreedLeader(brokers, TOPIC, (v) => v.leaderId === 0 && v.isrNodes.length === 3);
    const before = await produceValues(brokers[0]!, TOPIC, ['a', 'b', 'c']);
    assert.deepEqual(before, [0, 0, 0]);

    // Fill the log directory but a few KiB, then write more than that: an append fails with ENOSPC.
    // The brokers write meanwhile: a size that no longer fits is tried again a little smaller.
    let filled = false;
    for (let attempt = 0; attempt < 8 && !filled; attempt++) {
      const stats = statfsSync(mount!);
      const bytes = stats.bavail * stats.bsize - 4096 - attempt * 256 * 1024;
      filled = spawnSync('fallocate', ['-l', String(bytes), join(mount!, FILLER)]).status === 0;
      if (!filled) rmSync(join(mount!, FILLER), { force: true });
    }
    assert.ok(filled, 'fallocate could not fill the log directory');
    const codes = await produceValues(brokers[0]!, TOPIC, ['x'.repeat(64 * 1024)]).catch(() => [-1]);
    assert.notDeepEqual(codes, [0], 'a write to the full log directory was acknowledged');
    rmSync(join(mount!, FILLER));

    // The space is back, but the log refuses appends for good: the broker must give its partitions up.
    await waitFor('broker 0 to halt', async () => (alive(brokers[0]!.pid) ? undefined : true), 15_000);
    assert.match(brokers[0]!.log(), /log dir.*failed/i);
    const survivors = brokers.slice(1);
    await agreedLeader(survivors, TOPIC, (v) => v.leaderId !== 0, 20_000);
    const bootstrap = survivors.map((b) => b.bootstrap).join(',');
    const producer = new Producer({
      bootstrapServers: bootstrap,
      acks: 'all',
      requestTimeoutMs: 10_000,
      deliveryTimeoutMs: 20_000,
    });
    try {
      await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('d') });
    } finally {
      await producer.close();
    }
    const consumer = new Consumer({ bootstrapServers: bootstrap });
    try {
      const tp = { topic: TOPIC, partition: 0 };
      consumer.assign([tp]);
      consumer.seek(tp, 0);
      const values: string[] = [];
      const deadline = Date.now() + 15_000;
      while (values.length < 4 && Date.now() < deadline)
        for (const r of await consumer.poll(500)) values.push(r.value?.toString() ?? '');
      assert.deepEqual(values, ['a', 'b', 'c', 'd']);
    } finally {
      await consumer.close();
    }
  });
});
