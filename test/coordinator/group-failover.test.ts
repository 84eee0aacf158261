// Group coordinator failover in a real three-broker cluster: __consumer_offsets is replicated three ways, a
// kafkajs group commits its offsets, the broker coordinating the group is killed, another broker becomes leader
// of the group's partition and loads it from its replica, and the group resumes exactly after its commits.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { WireClient } from '../helpers/wire-client.js';

const { Kafka, logLevel } = kafkajs;
const GROUP = 'failover-group';

async function coordinatorOf(broker: BrokerProcess): Promise<number | undefined> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const r = await client.call(ApiKey.FIND_COORDINATOR, 4, {
      key: '',
      keyType: 0,
      coordinatorKeys: [GROUP],
    });
    const c = r.coordinators[0];
    return c.errorCode === 0 ? c.nodeId : undefined;
  } finally {
    client.close();
  }
}

describe('group coordinator failover in a three-broker cluster', () => {
  let cluster: TestCluster | undefined;
  let brokers: BrokerProcess[] = [];
  before(async () => {
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 4000,
        'offsets.topic.replication.factor': 3,
        'offsets.topic.num.partitions': 3,
        'default.replication.factor': 3,
      },
    });
    brokers = cluster.brokers;
  });
  after(() => cluster?.stop());

  it('a new coordinator loads the group and its offsets from its replica', { timeout: 90_000 }, async () => {
    const kafkaOf = (bs: BrokerProcess[]) =>
      new Kafka({
        clientId: 'failover',
        brokers: bs.map((b) => b.bootstrap),
        logLevel: logLevel.NOTHING,
        retry: { retries: 20, initialRetryTime: 200 },
      });
    let kafka = kafkaOf(brokers);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'fo', numPartitions: 3 }], waitForLeaders: true });
    await admin.disconnect();
    let producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: 'fo',
      messages: Array.from({ length: 30 }, (_, i) => ({ value: `old-${i}` })),
    });
    await producer.disconnect();

    const first = kafka.consumer({ groupId: GROUP, sessionTimeout: 6000, heartbeatInterval: 500 });
    const seen: string[] = [];
    await first.connect();
    await first.subscribe({ topic: 'fo', fromBeginning: true });
    await first.run({
      eachMessage: async ({ message }) => {
        seen.push(message.value!.toString());
      },
    });
    await waitFor('30 records consumed', async () => (seen.length >= 30 ? true : undefined), 30_000);
    await first.disconnect();

    const coordinatorId = await waitFor('the coordinator', () => coordinatorOf(brokers[0]!));
    const victim = brokers.find((b) => b === brokers[coordinatorId])!;
    await victim.kill();
    const survivors = brokers.filter((b) => b !== victim);
    const next = await waitFor(
      'a new coordinator',
      async () => {
        const id = await coordinatorOf(survivors[0]!);
        return id !== undefined && id !== coordinatorId ? id : undefined;
      },
      30_000,
    );
    assert.notEqual(next, coordinatorId);

    kafka = kafkaOf(survivors);
    // Idempotent: leadership is still settling, and kafkajs retries a broker's whole request when one of its
    // partitions answers an error (here NOT_LEADER_OR_FOLLOWER from a broker not yet leading it), re-sending
    // the partitions that were stored; without sequence numbers those would be stored twice.
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({
      topic: 'fo',
      messages: Array.from({ length: 6 }, (_, i) => ({ value: `new-${i}` })),
    });
    await producer.disconnect();
    const second = kafka.consumer({ groupId: GROUP, sessionTimeout: 6000, heartbeatInterval: 500 });
    const resumed: string[] = [];
    const where: string[] = [];
    await second.connect();
    await second.subscribe({ topic: 'fo', fromBeginning: true });
    await second.run({
      eachMessage: async ({ message, partition }) => {
        resumed.push(message.value!.toString());
        where.push(`${message.value!.toString()}@${partition}:${message.offset}`);
      },
    });
    try {
      await waitFor('6 new records consumed', async () => (resumed.length >= 6 ? true : undefined), 30_000);
      await new Promise((r) => setTimeout(r, 1000));
      assert.deepEqual(
        resumed.sort(),
        Array.from({ length: 6 }, (_, i) => `new-${i}`).sort(),
        `records read (value@partition:offset): ${where.join(' ')}`,
      );
    } finally {
      await second.disconnect();
    }
  });
});
