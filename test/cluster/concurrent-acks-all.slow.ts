// Many acks=all sends in flight at once, to explicit partitions of a topic with replication factor 3 just
// created on a fresh four-broker ZooKeeper cluster: every one of them completes, none waits for its delivery timeout.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { agreedController, waitForInSync } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';

const PARTITIONS = 4;

describe('concurrent acks=all sends to a new rf=3 topic', () => {
  let cluster: TestCluster;
  let admin: Admin;

  before(async () => {
    cluster = await startCluster({ brokers: 4, overrides: { 'min.insync.replicas': 2 } });
    const controllerId = await agreedController(cluster.brokers);
    admin = new Admin({
      bootstrapServers: cluster.brokers[controllerId]!.bootstrap,
      clientId: 'concurrent-test',
    });
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  for (const round of [1, 2, 3]) {
    it(`20 sends in flight at once all complete (round ${round})`, async () => {
      const topic = `concurrent-${round}`;
      const created = await admin.createTopics([{ topic, numPartitions: PARTITIONS, replicationFactor: 3 }]);
      assert.equal(created[0]!.error, null);
      await waitForInSync(admin, topic, PARTITIONS, 3);
      const producer = new Producer({
        bootstrapServers: cluster.bootstrap,
        acks: -1,
        deliveryTimeoutMs: 20_000,
        requestTimeoutMs: 10_000,
      });
      try {
        const value = Buffer.alloc(50_000, 1);
        const outcomes = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) => producer.send({ topic, partition: i % PARTITIONS, value })),
        );
        const failed = outcomes
          .map((o, i) => (o.status === 'rejected' ? `#${i} p${i % PARTITIONS}: ${String(o.reason)}` : null))
          .filter((f) => f !== null);
        assert.deepEqual(failed, []);
      } finally {
        await producer.close(1000);
      }
    });
  }
});
