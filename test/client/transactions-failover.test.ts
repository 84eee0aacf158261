// The client's transactional Producer in a three-broker cluster whose transaction coordinator dies in the middle
// of a transaction: the producer finds the new coordinator (FindCoordinator key type 1, NOT_COORDINATOR and lost
// connections retried), adds the partitions it writes next there, and commits; a read_committed consumer then
// reads every record of the transaction once, and those of an aborted one never.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Consumer, type ConsumerRecord } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { callCoordinator } from '../helpers/txn-session.js';

const TOPIC = 'txn-failover';
const TRANSACTIONAL_ID = 'txn-failover-1';

describe('transactional producer when the transaction coordinator dies', () => {
  let cluster: TestCluster | undefined;
  after(() => cluster?.stop());

  it('commits through the new coordinator; read_committed sees the transaction once', async () => {
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'default.replication.factor': 3,
        'min.insync.replicas': 2,
        'offsets.topic.replication.factor': 3,
        'offsets.topic.num.partitions': 1,
        'transaction.state.log.num.partitions': 1,
        'transaction.state.log.replication.factor': 3,
        'transaction.state.log.min.isr': 2,
      },
    });
    const c = cluster;
    await createTopicOn(c.brokers[0]!, TOPIC, { numPartitions: 3, replicationFactor: 3 });
    const alive = new Set(c.brokers);
    const brokers = () => [...alive];
    const producer = new Producer({
      bootstrapServers: c.bootstrap,
      transactionalId: TRANSACTIONAL_ID,
      maxBlockMs: 60_000,
      requestTimeoutMs: 5_000,
    });
    const expected: string[] = [];
    try {
      await producer.initTransactions();
      // An aborted transaction first: its records must never show.
      producer.beginTransaction();
      await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('aborted') });
      await producer.abortTransaction();

      producer.beginTransaction();
      for (let i = 0; i < 20; i++) {
        await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from(`before-${i}`) });
        expected.push(`0:before-${i}`);
      }
      const found = await callCoordinator(
        brokers,
        1,
        TRANSACTIONAL_ID,
        ApiKey.FIND_COORDINATOR,
        4,
        { key: '', keyType: 1, coordinatorKeys: [TRANSACTIONAL_ID] },
        (x) => x.coordinators[0].errorCode,
      );
      const victim = c.brokers[found.coordinators[0].nodeId]!;
      await victim.kill();
      alive.delete(victim);
      // Partitions 1 and 2 join the transaction at the new coordinator; partition 0 is written on.
      const sends: Promise<unknown>[] = [];
      for (let i = 0; i < 30; i++) {
        sends.push(producer.send({ topic: TOPIC, partition: i % 3, value: Buffer.from(`after-${i}`) }));
        expected.push(`${i % 3}:after-${i}`);
      }
      await producer.commitTransaction();
      await Promise.all(sends);
    } finally {
      await producer.close();
    }

    const consumer = new Consumer({ bootstrapServers: c.bootstrap, isolationLevel: 'read_committed' });
    try {
      const tps = [0, 1, 2].map((partition) => ({ topic: TOPIC, partition }));
      consumer.assign(tps);
      for (const tp of tps) consumer.seek(tp, 0);
      const seen: ConsumerRecord[] = [];
      const deadline = Date.now() + 60_000;
      while (seen.length < expected.length && Date.now() < deadline) seen.push(...(await consumer.poll(500)));
      // A little longer: anything beyond the expected records (a duplicate, the aborted one) would show.
      seen.push(...(await consumer.poll(1_000)));
      assert.deepEqual(seen.map((r) => `${r.partition}:${r.value?.toString()}`).sort(), expected.sort());
    } finally {
      await consumer.close();
    }
  });
});
