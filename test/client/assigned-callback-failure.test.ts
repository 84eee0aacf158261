// A KIP-848 member (groupProtocol 'consumer') whose onPartitionsAssigned callback throws, as Kafka's
// AbstractMembershipManager: the poll that ran the callback throws its error; the newly assigned partitions stay in
// the assignment but are not fetched (SubscriptionState's pending-on-assigned-callback flag is left set); the member
// does not acknowledge the assignment (its heartbeats keep naming the partitions it owned before); and the member
// stays reconciling, so the next poll runs the callback again for those partitions, until it succeeds. Only then
// are the partitions fetched and acknowledged. A failed onPartitionsRevoked likewise keeps the partition, owned and
// unacknowledged, until a later poll's revocation succeeds. Against an in-process broker whose interceptor reads
// the ConsumerGroupHeartbeat and Fetch requests.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { TopicPartition } from '../../src/client/requests.js';
import type { FetchRequest } from '../../src/protocol/messages/01-fetch.js';
import type { OffsetFetchRequest } from '../../src/protocol/messages/09-offset-fetch.js';
import type { ConsumerGroupHeartbeatRequest } from '../../src/protocol/messages/68-consumer-group-heartbeat.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'assigned-callback-failure';
const GROUP = 'assigned-callback-failure';
/** A second topic, so that two members of a group each get a partition. */
const OTHER_TOPIC = 'assigned-callback-failure-other';

describe('KIP-848 onPartitionsAssigned failure', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  /** The partition counts each of the group's heartbeats (member epoch above 0) said the member owns. */
  const ownedInHeartbeats: number[] = [];
  let fetchesOfTopic = 0;
  /** OffsetFetch requests by the group they name. */
  const offsetFetches = new Map<string, number>();

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
      'group.consumer.min.heartbeat.interval.ms': 100,
      'group.consumer.heartbeat.interval.ms': 100,
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    const [created] = await admin.createTopics([
      { topic: TOPIC, numPartitions: 1, replicationFactor: 1 },
      { topic: OTHER_TOPIC, numPartitions: 1, replicationFactor: 1 },
    ]);
    // The consumer's Fetch names the topic by id (v13+).
    const topicId = created!.topicId;
    const producer = new Producer({ bootstrapServers });
    for (let i = 0; i < 5; i++)
      await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from(`v${i}`) });
    await producer.close();
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.CONSUMER_GROUP_HEARTBEAT) {
        const body = request.body as ConsumerGroupHeartbeatRequest;
        if (body.groupId === GROUP && body.memberEpoch > 0 && body.topicPartitions !== null)
          ownedInHeartbeats.push(body.topicPartitions.reduce((n, t) => n + t.partitions.length, 0));
      } else if (request.apiKey === ApiKey.OFFSET_FETCH) {
        const body = request.body as OffsetFetchRequest;
        const groups = request.apiVersion >= 8 ? body.groups.map((g) => g.groupId) : [body.groupId];
        for (const g of groups) offsetFetches.set(g, (offsetFetches.get(g) ?? 0) + 1);
      } else if (request.apiKey === ApiKey.FETCH) {
        if ((request.body as FetchRequest).topics.some((t) => t.topic === TOPIC || t.topicId === topicId))
          fetchesOfTopic++;
      }
      return undefined;
    });
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  it('the partitions are neither fetched nor acknowledged, and the callback runs again at the next poll', async () => {
    const consumer = new Consumer({
      bootstrapServers,
      groupId: GROUP,
      groupProtocol: 'consumer',
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
      fetchMaxWaitMs: 100,
    });
    const calls: TopicPartition[][] = [];
    let failures = 2;
    try {
      consumer.subscribe([TOPIC], {
        onPartitionsAssigned: (tps) => {
          calls.push(tps);
          if (failures-- > 0) throw new Error(`callback failure ${calls.length}`);
        },
      });
      // The first polls join; the one that applies the assignment throws the callback's error.
      const deadline = Date.now() + 10_000;
      let thrown: unknown = null;
      while (thrown === null && Date.now() < deadline)
        await consumer.poll(100).catch((err) => (thrown = err));
      assert.equal((thrown as Error | null)?.message, 'callback failure 1', 'poll throws the callback error');
      assert.deepEqual(
        consumer.assignment(),
        [{ topic: TOPIC, partition: 0 }],
        'the partition stays assigned',
      );

      // Several heartbeat intervals without a poll: the member neither fetches nor acknowledges the partition.
      ownedInHeartbeats.length = 0;
      fetchesOfTopic = 0;
      await sleep(600);
      assert.ok(ownedInHeartbeats.length > 0, 'the member went on heartbeating');
      assert.deepEqual(new Set(ownedInHeartbeats), new Set([0]), 'no heartbeat names the partition as owned');
      assert.equal(fetchesOfTopic, 0, 'no Fetch of the partition after the callback failed');
      // As Kafka's position() (SubscriptionState: the partition is INITIALIZING; only fetching waits for the
      // callback), position() resolves it meanwhile (auto.offset.reset earliest: 0), and it is still not fetched.
      assert.equal(await consumer.position({ topic: TOPIC, partition: 0 }, 5_000), 0);
      await sleep(300);
      assert.equal(fetchesOfTopic, 0, 'no Fetch of the partition after position() resolved it');

      // The next poll runs the callback again for the same partition; it fails once more.
      await assert.rejects(consumer.poll(100), { message: 'callback failure 2' });
      assert.deepEqual(calls, [[{ topic: TOPIC, partition: 0 }], [{ topic: TOPIC, partition: 0 }]]);

      // The third attempt succeeds: the partition is read and the assignment acknowledged.
      let read = 0;
      while (read < 5 && Date.now() < deadline) read += (await consumer.poll(100)).length;
      assert.equal(read, 5, 'the records are read once the callback succeeded');
      assert.equal(calls.length, 3, 'the callback ran three times');
      assert.deepEqual(calls[2], [{ topic: TOPIC, partition: 0 }]);
      ownedInHeartbeats.length = 0;
      await sleep(300);
      assert.ok(ownedInHeartbeats.includes(1), 'the heartbeats name the partition as owned now');
    } finally {
      await consumer.close();
    }
  });

  it("the poll whose callback failed still reads the new partition's committed offset", async () => {
    // As Kafka 3.9's poll (updateFetchPositions over SubscriptionState.initializingPartitions, which a partition
    // awaiting its onPartitionsAssigned callback is part of): the position is resolved, only fetching waits.
    const groupId = `${GROUP}-positions`;
    await admin.alterConsumerGroupOffsets(groupId, [{ topic: TOPIC, partition: 0, offset: 2 }]);
    const consumer = new Consumer({
      bootstrapServers,
      groupId,
      groupProtocol: 'consumer',
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
      fetchMaxWaitMs: 100,
    });
    let failures = 1;
    try {
      consumer.subscribe([TOPIC], {
        onPartitionsAssigned: () => {
          if (failures-- > 0) throw new Error('callback failure');
        },
      });
      offsetFetches.delete(groupId);
      const deadline = Date.now() + 10_000;
      let thrown: unknown = null;
      while (thrown === null && Date.now() < deadline)
        await consumer.poll(100).catch((err) => (thrown = err));
      assert.equal((thrown as Error | null)?.message, 'callback failure', 'poll throws the callback error');
      assert.ok(
        (offsetFetches.get(groupId) ?? 0) > 0,
        'that poll read the committed offset of the new partition',
      );
      fetchesOfTopic = 0;
      await sleep(300);
      assert.equal(fetchesOfTopic, 0, 'the partition is still not fetched');
      // The callback succeeds at the next poll: reading starts at the committed offset.
      const values: string[] = [];
      while (values.length < 3 && Date.now() < deadline)
        for (const r of await consumer.poll(100)) values.push(String(r.value));
      assert.deepEqual(values, ['v2', 'v3', 'v4']);
    } finally {
      await consumer.close();
    }
  });

  it('a failed onPartitionsRevoked keeps the partition until a later poll revokes it', async () => {
    const groupId = `${GROUP}-revoke`;
    const options = {
      bootstrapServers,
      groupId,
      groupProtocol: 'consumer' as const,
      autoOffsetReset: 'earliest' as const,
      enableAutoCommit: false,
      fetchMaxWaitMs: 100,
    };
    const first = new Consumer(options);
    const second = new Consumer(options);
    const revokedCalls: TopicPartition[][] = [];
    try {
      first.subscribe([TOPIC, OTHER_TOPIC], {
        onPartitionsRevoked: (tps) => {
          revokedCalls.push(tps);
          if (revokedCalls.length === 1) throw new Error('revocation failure');
        },
      });
      const deadline = Date.now() + 15_000;
      while (first.assignment().length < 2 && Date.now() < deadline) await first.poll(100);
      assert.equal(first.assignment().length, 2, 'the first member owns both partitions');
      second.subscribe([TOPIC, OTHER_TOPIC]);
      await second.poll(100);
      // The first member's next target gives one partition up; the poll that applies it throws the callback's error.
      let thrown: unknown = null;
      while (thrown === null && Date.now() < deadline) await first.poll(100).catch((err) => (thrown = err));
      assert.equal((thrown as Error | null)?.message, 'revocation failure');
      assert.equal(first.assignment().length, 2, 'the partition is kept while its revocation failed');
      await second.poll(300);
      assert.deepEqual(second.assignment(), [], 'not acknowledged: the coordinator does not hand it over');
      // The next poll revokes it again, successfully, and the second member gets it.
      await first.poll(100);
      assert.equal(revokedCalls.length, 2, 'the revocation ran again');
      assert.deepEqual(revokedCalls[1], revokedCalls[0]);
      assert.equal(first.assignment().length, 1);
      while (second.assignment().length === 0 && Date.now() < deadline) await second.poll(100);
      assert.equal(second.assignment().length, 1, 'the second member got the revoked partition');
    } finally {
      await second.close();
      await first.close();
    }
  });
});
