// A cooperative-sticky member that drops a topic from its subscription gives that topic's partitions up before it
// sends its JoinGroup, as Kafka's ConsumerCoordinator.onJoinPrepare (COOPERATIVE: owned partitions of topics no
// longer subscribed are revoked, onPartitionsRevoked called, then the join); the partitions of the topics it keeps
// stay with it through the rebalance. The order is seen on the wire: the broker notes each JoinGroup as it arrives,
// the listener notes the revocation, both in one list.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import type { TopicPartition } from '../../src/client/requests.js';
import { onKey, startInProcessBroker } from '../helpers/in-process-broker.js';

const JOIN_GROUP = 11;
const names = (tps: TopicPartition[]): string[] => tps.map((tp) => `${tp.topic}-${tp.partition}`).sort();

test('a cooperative member revokes the partitions of an unsubscribed topic before it joins again', {
  timeout: 60_000,
}, async (t) => {
  const broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
  const bootstrapServers = `127.0.0.1:${broker.port}`;
  const admin = new Admin({ bootstrapServers });
  const consumer = new Consumer({
    bootstrapServers,
    groupId: 'coop-revoke-before-join',
    partitionAssignmentStrategy: ['cooperative-sticky'],
    autoOffsetReset: 'earliest',
    heartbeatIntervalMs: 200,
  });
  t.after(async () => {
    broker.interception.clear();
    await consumer.close();
    await admin.close();
    await broker.stop();
  });
  await admin.createTopics([
    { topic: 'kept', numPartitions: 2, replicationFactor: 1 },
    { topic: 'dropped', numPartitions: 2, replicationFactor: 1 },
  ]);
  const events: string[] = [];
  broker.interception.set(
    onKey(JOIN_GROUP, () => {
      events.push('join');
      return undefined;
    }),
  );
  const listener = {
    onPartitionsRevoked: (tps: TopicPartition[]) => {
      if (tps.length > 0) events.push(`revoked ${names(tps).join(' ')}`);
    },
  };
  consumer.subscribe(['kept', 'dropped'], listener);
  const deadline = Date.now() + 30_000;
  while (consumer.assignment().length < 4) {
    assert.ok(Date.now() < deadline, `assigned: ${JSON.stringify(consumer.assignment())}`);
    await consumer.poll(100);
  }
  const joinsBefore = events.filter((e) => e === 'join').length;

  consumer.subscribe(['kept'], listener);
  while (events.filter((e) => e === 'join').length === joinsBefore || consumer.assignment().length !== 2) {
    assert.ok(Date.now() < deadline, `events: ${JSON.stringify(events)}`);
    await consumer.poll(100);
  }
  // The first JoinGroup after the new subscription, and the revocation of the dropped topic's partitions.
  const rejoin = events.findIndex(
    (e, i) => e === 'join' && events.slice(0, i).filter((x) => x === 'join').length === joinsBefore,
  );
  const revoked = events.indexOf('revoked dropped-0 dropped-1');
  assert.ok(revoked >= 0, `the dropped topic's partitions were revoked: ${JSON.stringify(events)}`);
  assert.ok(revoked < rejoin, `revoked before the JoinGroup was sent: ${JSON.stringify(events)}`);
  assert.ok(
    !events.some((e) => e.includes('kept')),
    `the kept topic's partitions stayed: ${JSON.stringify(events)}`,
  );
  assert.deepEqual(names(consumer.assignment()), ['kept-0', 'kept-1']);
});
