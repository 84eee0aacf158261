// A consumer group member whose coordinator moved while it was not looking rejoins at the new one. Three brokers,
// __consumer_offsets with one partition on all three; the member heartbeats rarely (heartbeat.interval.ms 60 s),
// so nothing tells it when its coordinator is stopped (the controller moves the partition's leadership away) and
// started again as a follower. Its next rebalance sends JoinGroup to the broker it knew, which answers
// NOT_COORDINATOR: the member must look the coordinator up again (FindCoordinator), join there and keep its
// partitions. Before, a retriable answer to JoinGroup or SyncGroup (NOT_COORDINATOR, a lost connection) was
// retried at the same broker forever, and the member never completed the rebalance (seen in the chaos Streams
// workload after a broker restart: every member of the group looping on NOT_COORDINATOR for minutes).

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { agreedController, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';

const GROUP = 'moved-coordinator';
const TOPIC = 'moved-coordinator-topic';

/** The group's coordinator as broker `asked` sees it, or undefined while it has none. */
async function coordinatorSeenBy(cluster: TestCluster, asked: number): Promise<number | undefined> {
  const b = cluster.brokers[asked]!;
  const c = await WireClient.connect(b.host, b.port);
  try {
    const r = await c.call(ApiKey.FIND_COORDINATOR, 4, { key: '', keyType: 0, coordinatorKeys: [GROUP] });
    return r.coordinators[0].errorCode === ErrorCode.NONE ? (r.coordinators[0].nodeId as number) : undefined;
  } finally {
    c.close();
  }
}

describe('a group member after its coordinator moved', () => {
  let cluster: TestCluster | undefined;
  after(() => cluster?.stop());

  it('looks the coordinator up again when the broker it knew answers NOT_COORDINATOR', async () => {
    cluster = await startCluster({
      overrides: {
        'offsets.topic.num.partitions': 1,
        'offsets.topic.replication.factor': 3,
        'group.initial.rebalance.delay.ms': 0,
        // The moved leadership must stay moved: no preferred-leader election hands it back.
        'auto.leader.rebalance.enable': false,
      },
    });
    const c = cluster;
    await agreedController(c.brokers);
    await createTopicOn(c.brokers[0]!, TOPIC, { numPartitions: 2, replicationFactor: 3 });
    const consumer = new Consumer({
      bootstrapServers: c.bootstrap,
      groupId: GROUP,
      sessionTimeoutMs: 120_000,
      heartbeatIntervalMs: 60_000,
    });
    try {
      consumer.subscribe([TOPIC]);
      for (const deadline = Date.now() + 30_000; consumer.assignment().length < 2 && Date.now() < deadline; )
        await consumer.poll(200);
      assert.equal(consumer.assignment().length, 2, 'the member has both partitions');
      const generation = consumer.groupMetadata().generationId;
      const first = await waitFor('the coordinator', () => coordinatorSeenBy(c, 0));
      const other = [0, 1, 2].find((id) => id !== first)!;

      await c.brokers[first]!.stop();
      const moved = await waitFor('a new coordinator', async () => {
        const seen = await coordinatorSeenBy(c, other);
        return seen !== undefined && seen !== first ? seen : undefined;
      });
      await c.start(first);
      await waitFor('the old coordinator back as a follower that knows the new one', async () => {
        const seen = await coordinatorSeenBy(c, first).catch(() => undefined);
        return seen === moved ? seen : undefined;
      });

      consumer.enforceRebalance();
      // Bounded from outside: before, the poll itself never returned.
      const rejoined = (async () => {
        while (consumer.groupMetadata().generationId <= generation) await consumer.poll(200);
        return true;
      })();
      const inTime = await Promise.race([rejoined, sleep(30_000).then(() => false)]);
      assert.ok(
        inTime,
        `the member completed a rebalance at broker ${moved} within 30 s (generation ${consumer.groupMetadata().generationId}, was ${generation})`,
      );
      assert.equal(consumer.assignment().length, 2, 'it kept both partitions');
    } finally {
      await consumer.close();
    }
  });
});
