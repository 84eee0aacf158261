// JBOD: a broker with two log directories, one of which fails a write (a small tmpfs filled up), keeps serving the
// other, as Kafka's ZooKeeper-mode brokers do: the failed directory goes offline, its partitions answer
// KAFKA_STORAGE_ERROR, the broker writes /log_dir_event_notification, and the controller moves their leadership
// to an in-sync replica and removes the offline replica from their ISRs. Nothing acknowledged is lost. Needs root
// (the tmpfs mount); skipped otherwise.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { canMount, jbodCluster, topicOps } from '../helpers/jbod.js';
import { createTopicOn } from '../helpers/test-cluster.js';

const TOPIC = 'jbod';
const FILLER = 'filler';

const { partitionViewOf, agreed, produce, valuesOf } = topicOps(TOPIC);

describe('a broker with two log directories, one failing', {
  skip: canMount() ? false : 'needs root',
}, () => {
  const jbod = jbodCluster(0, 'brook-jbod');

  it('takes only that directory offline; its partitions move with every acknowledged record', async () => {
    try {
      await scenario();
    } catch (err) {
      for (const b of jbod.cluster!.brokers)
        console.error(`--- broker ${b.brokerId}\n${b.log().slice(-6000)}`);
      throw err;
    }
  });

  async function scenario(): Promise<void> {
    const brokers = jbod.cluster!.brokers;
    await createTopicOn(brokers[0]!, TOPIC, {
      assignments: { 0: [0, 1, 2], 1: [0, 1, 2] },
      configs: { 'min.insync.replicas': '2' },
    });
    for (const p of [0, 1]) await agreed(brokers, p, (v) => v.leaderId === 0 && v.isrNodes.length === 3);

    // Placement: one partition per directory (fewest partitions first).
    const admin = new Admin({ bootstrapServers: brokers[0]!.bootstrap });
    let failing = -1;
    try {
      const dirs = await admin.describeLogDirs([0]);
      assert.deepEqual(dirs.map((d) => d.logDir).sort(), [jbod.healthy!, jbod.mount!].sort());
      const onMount = dirs.find((d) => d.logDir === jbod.mount)!.partitions.filter((p) => p.topic === TOPIC);
      const onHealthy = dirs
        .find((d) => d.logDir === jbod.healthy)!
        .partitions.filter((p) => p.topic === TOPIC);
      assert.equal(onMount.length, 1, 'one partition on each directory');
      assert.equal(onHealthy.length, 1, 'one partition on each directory');
      failing = onMount[0]!.partition;
    } finally {
      await admin.close();
    }
    const good = 1 - failing;
    for (const p of [0, 1])
      for (const v of ['a', 'b', 'c']) assert.equal(await produce(brokers[0]!, p, v), 0);

    // Fill the tmpfs but a few KiB, then write more than that: an append fails with ENOSPC.
    let filled = false;
    for (let attempt = 0; attempt < 8 && !filled; attempt++) {
      const stats = statfsSync(jbod.mount!);
      const bytes = stats.bavail * stats.bsize - 4096 - attempt * 256 * 1024;
      filled = spawnSync('fallocate', ['-l', String(bytes), join(jbod.mount!, FILLER)]).status === 0;
      if (!filled) rmSync(join(jbod.mount!, FILLER), { force: true });
    }
    assert.ok(filled, 'fallocate could not fill the log directory');
    const code = await produce(brokers[0]!, failing, 'x'.repeat(64 * 1024)).catch(() => -1);
    assert.notEqual(code, 0, 'a write to the full log directory was acknowledged');
    rmSync(join(jbod.mount!, FILLER));

    // The controller moves the failed partition's leadership and drops broker 0 from its ISR.
    const moved = await agreed(brokers, failing, (v) => v.leaderId !== 0 && !v.isrNodes.includes(0));
    assert.ok(moved.offlineReplicas.includes(0), `offline replicas ${moved.offlineReplicas}`);
    assert.match(brokers[0]!.log(), /log directory .* is offline/);

    // Broker 0 is up and keeps serving the partition on its healthy directory.
    assert.equal(await produce(brokers[0]!, good, 'd'), 0);
    const goodView = await partitionViewOf(brokers[0]!, good);
    assert.equal(goodView?.leaderId, 0);
    assert.equal(goodView?.isrNodes.length, 3);
    assert.deepEqual(await valuesOf(brokers[0]!, good), ['a', 'b', 'c', 'd']);
    // The offline partition is answered KAFKA_STORAGE_ERROR there.
    assert.equal(await produce(brokers[0]!, failing, 'y'), ErrorCode.KAFKA_STORAGE_ERROR);

    // The new leader has every acknowledged record and takes writes.
    const leader = brokers[moved.leaderId]!;
    assert.equal(await produce(leader, failing, 'd'), 0);
    assert.deepEqual(await valuesOf(leader, failing), ['a', 'b', 'c', 'd']);

    // DescribeLogDirs reports the failed directory.
    const admin2 = new Admin({ bootstrapServers: brokers[1]!.bootstrap });
    try {
      const dirs = await admin2.describeLogDirs([0]);
      const failed = dirs.find((d) => d.logDir === jbod.mount);
      assert.equal(failed?.error?.code, ErrorCode.KAFKA_STORAGE_ERROR);
      assert.equal(dirs.find((d) => d.logDir === jbod.healthy)?.error, null);
    } finally {
      await admin2.close();
    }
  }
});
