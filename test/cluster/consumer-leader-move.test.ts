// A group consumer of Brook's client keeps reading a partition whose leader moves (finding F1 of the chaos
// harness). In a three-broker cluster, rf=3 topics: a reassignment moves a partition off its leader (the old
// leader, no longer a replica, answers NOT_LEADER_OR_FOLLOWER; a follower would go on serving the consumer as
// Kafka's do), and a killed leader is replaced (fetches to it fail to connect). Records produced after the move must reach the consumer within 20 s: the consumer has to refresh its
// metadata to find the new leader, since metadata.max.age.ms (5 minutes) and a rebalance would come too late.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { findCoordinator } from '../../src/client/requests.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { agreedLeader, produceToLeader } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';

const AFTER_MOVE_MS = 20_000;

function values(prefix: string, from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${from + i}`);
}

/** A group consumer of one topic that collects values in the background until stopped. */
function startReading(c: TestCluster, topic: string) {
  const consumer = new Consumer({
    bootstrapServers: c.bootstrap,
    groupId: `g-${topic}`,
    autoOffsetReset: 'earliest',
    fetchMaxWaitMs: 200,
    requestTimeoutMs: 5000,
    sessionTimeoutMs: 10_000,
    heartbeatIntervalMs: 1000,
  });
  const got: string[] = [];
  let stopped = false;
  consumer.subscribe([topic]);
  const loop = (async () => {
    while (!stopped) {
      try {
        for (const r of await consumer.poll(200)) got.push(r.value!.toString());
      } catch {
        // A retriable error reported by poll(): poll again, as an application would.
      }
    }
  })();
  return {
    consumer,
    got,
    async until(count: number, timeoutMs: number): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (got.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    },
    async stop(): Promise<void> {
      stopped = true;
      await loop;
      await consumer.close();
    },
  };
}

describe('a group consumer follows a partition leader that moves', () => {
  let cluster: TestCluster | undefined;
  let admin: Admin | undefined;

  before(async () => {
    // Broker 0 starts first and runs the controller, which the test never kills.
    cluster = await startCluster({
      order: [0, 1, 2],
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'min.insync.replicas': 2,
        'offsets.topic.replication.factor': 3,
      },
    });
    admin = new Admin({ bootstrapServers: cluster.bootstrap });
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  it('reads on from the new leader after a reassignment moves the partition off its leader', async () => {
    const c = cluster!;
    const topic = 'reassigned';
    await createTopicOn(c.brokers[0]!, topic, { assignments: { 0: [1, 2, 0] } });
    await agreedLeader(c.brokers, topic, (v) => v.leaderId === 1 && v.isrNodes.length === 3);
    const reader = startReading(c, topic);
    try {
      const first = values('e', 0, 10);
      assert.deepEqual(new Set(await produceToLeader(c.brokers, topic, first)), new Set([ErrorCode.NONE]));
      await reader.until(first.length, 30_000);
      assert.deepEqual(reader.got, first, 'read from the first leader');

      // Broker 1 leaves the replicas: broker 2 becomes the leader and broker 1 drops its copy.
      const moved = await admin!.alterPartitionReassignments([{ topic, partition: 0, replicas: [2, 0] }]);
      assert.deepEqual(moved, [{ topic, partition: 0, error: null }]);
      await agreedLeader(c.brokers, topic, (v) => v.leaderId === 2 && v.replicaNodes.length === 2);

      const later = values('e', 10, 10);
      assert.deepEqual(new Set(await produceToLeader(c.brokers, topic, later)), new Set([ErrorCode.NONE]));
      const movedAt = Date.now();
      await reader.until(first.length + later.length, AFTER_MOVE_MS);
      assert.deepEqual(
        reader.got,
        [...first, ...later],
        `every record after the move within ${AFTER_MOVE_MS} ms (waited ${Date.now() - movedAt} ms)`,
      );
    } finally {
      await reader.stop();
    }
  });

  it('reads on from the new leader after the leader is killed', async () => {
    const c = cluster!;
    const topic = 'killed';
    // The victim leads the topic and is neither the controller nor the group's coordinator, so that nothing but
    // the consumer's own metadata refresh can lead it to the new leader (no rebalance, no coordinator move).
    const coordinator = await findCoordinator(admin!.cluster, `g-${topic}`);
    const victim = coordinator === 1 ? 2 : 1;
    const other = victim === 1 ? 2 : 1;
    await createTopicOn(c.brokers[0]!, topic, { assignments: { 0: [victim, other, 0] } });
    await agreedLeader(c.brokers, topic, (v) => v.leaderId === victim && v.isrNodes.length === 3);
    const reader = startReading(c, topic);
    try {
      const first = values('k', 0, 10);
      assert.deepEqual(new Set(await produceToLeader(c.brokers, topic, first)), new Set([ErrorCode.NONE]));
      await reader.until(first.length, 30_000);
      assert.deepEqual(reader.got, first, 'read from the first leader');

      await c.brokers[victim]!.kill();
      const survivors = [c.brokers[0]!, c.brokers[other]!];
      await agreedLeader(survivors, topic, (v) => v.leaderId !== victim);
      const later = values('k', 10, 10);
      assert.deepEqual(new Set(await produceToLeader(survivors, topic, later)), new Set([ErrorCode.NONE]));
      const movedAt = Date.now();
      await reader.until(first.length + later.length, AFTER_MOVE_MS);
      assert.deepEqual(
        reader.got,
        [...first, ...later],
        `every record after the move within ${AFTER_MOVE_MS} ms (waited ${Date.now() - movedAt} ms)`,
      );
    } finally {
      await reader.stop();
    }
  });
});
