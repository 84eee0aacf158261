// JBOD, the follower side: a follower whose replicated append fails (its log directory, a small tmpfs, is full)
// takes that directory offline as a leader's failed produce does (Kafka's LogDirFailureChannel): the broker writes
// /log_dir_event_notification, the controller marks the replica offline and drops it from the ISR, so the leader's
// acks=all writes go on without it; the broker keeps following the partition on its other directory. Before, the
// fetcher only backed off and retried, and the replica stayed "online" until it fell out of the ISR by lag. Needs
// root (the tmpfs mount); skipped otherwise.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { canMount, jbodCluster, topicOps } from '../helpers/jbod.js';
import { createTopicOn } from '../helpers/test-cluster.js';

const TOPIC = 'jbod-follower';
const FILLER = 'filler';

const { agreed, produce, valuesOf } = topicOps(TOPIC);

describe('a follower with two log directories, one failing its replicated appends', {
  skip: canMount() ? false : 'needs root',
}, () => {
  const jbod = jbodCluster(1, 'brook-jbod-follower');

  it('takes the directory offline and leaves the ISR of its partitions; the other directory keeps following', async () => {
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

    const admin = new Admin({ bootstrapServers: brokers[0]!.bootstrap });
    let failing = -1;
    try {
      const dirs = await admin.describeLogDirs([1]);
      const onMount = dirs.find((d) => d.logDir === jbod.mount)!.partitions.filter((p) => p.topic === TOPIC);
      assert.equal(onMount.length, 1, 'one partition on each directory of broker 1');
      failing = onMount[0]!.partition;
    } finally {
      await admin.close();
    }
    const good = 1 - failing;
    for (const p of [0, 1])
      for (const v of ['a', 'b', 'c']) assert.equal(await produce(brokers[0]!, p, v), 0);

    // Fill the follower's tmpfs but a few KiB; the leader (broker 0) writes more than that.
    let filled = false;
    for (let attempt = 0; attempt < 8 && !filled; attempt++) {
      const stats = statfsSync(jbod.mount!);
      const bytes = stats.bavail * stats.bsize - 4096 - attempt * 256 * 1024;
      filled = spawnSync('fallocate', ['-l', String(bytes), join(jbod.mount!, FILLER)]).status === 0;
      if (!filled) rmSync(join(jbod.mount!, FILLER), { force: true });
    }
    assert.ok(filled, 'fallocate could not fill the log directory');
    // acks=all: acknowledged once the controller took broker 1 out of the ISR (0 and 2 remain, min.insync 2).
    assert.equal(await produce(brokers[0]!, failing, 'x'.repeat(64 * 1024)), 0);
    rmSync(join(jbod.mount!, FILLER));

    const view = await agreed(brokers, failing, (v) => !v.isrNodes.includes(1));
    assert.equal(view.leaderId, 0);
    assert.ok(view.offlineReplicas.includes(1), `offline replicas ${view.offlineReplicas}`);
    assert.match(brokers[1]!.log(), /log directory .* is offline/);

    // Broker 1 keeps following the partition on its healthy directory.
    assert.equal(await produce(brokers[0]!, good, 'd'), 0);
    const goodView = await agreed(brokers, good, (v) => v.isrNodes.length === 3);
    assert.equal(goodView.leaderId, 0);
    assert.deepEqual(await valuesOf(brokers[0]!, failing), ['a', 'b', 'c', 'x'.repeat(64 * 1024)]);

    const admin2 = new Admin({ bootstrapServers: brokers[0]!.bootstrap });
    try {
      const dirs = await admin2.describeLogDirs([1]);
      assert.equal(dirs.find((d) => d.logDir === jbod.mount)?.error?.code, ErrorCode.KAFKA_STORAGE_ERROR);
      assert.equal(dirs.find((d) => d.logDir === jbod.healthy)?.error, null);
    } finally {
      await admin2.close();
    }
  }
});
