// The interval auto-commit of a KIP-848 consumer (groupProtocol 'consumer') goes on while a reconciliation is
// pending, as Kafka's CommitRequestManager.maybeAutoCommitAsync, which commits every auto.commit.interval.ms
// whatever the member's state (the partitions about to be revoked are committed again before the revocation).
// A member owns two partitions and has read from them; a second member joins, so the coordinator's next heartbeat
// answer gives the first a smaller target, which it applies only at its next poll. It does not poll: its positions
// still reach the group at the next interval. Against an in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'auto-commit-reconciliation';
const INTERVAL_MS = 5000;

describe('KIP-848 auto-commit during a reconciliation', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
      'group.consumer.min.heartbeat.interval.ms': 100,
      'group.consumer.heartbeat.interval.ms': 200,
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 2, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers });
    for (let i = 0; i < 20; i++)
      await producer.send({ topic: TOPIC, partition: i % 2, value: Buffer.from(`v${i}`) });
    await producer.close();
  });
  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  it('positions are committed at the interval while the new assignment waits for a poll', async () => {
    const groupId = 'auto-commit-reconciliation';
    const options = {
      bootstrapServers,
      groupId,
      groupProtocol: 'consumer' as const,
      autoOffsetReset: 'earliest' as const,
      autoCommitIntervalMs: INTERVAL_MS,
    };
    const first = new Consumer(options);
    const second = new Consumer(options);
    try {
      const started = Date.now();
      first.subscribe([TOPIC]);
      const deadline = started + 10_000;
      let read = 0;
      while ((first.assignment().length < 2 || read === 0) && Date.now() < deadline)
        read += (await first.poll(100)).length;
      assert.equal(first.assignment().length, 2, 'the first member owns both partitions');
      assert.ok(read > 0, 'the first member read records');
      const positions = new Map<number, number>();
      for (const p of first.assignment()) positions.set(p.partition, await first.position(p));
      second.subscribe([TOPIC]);
      await second.poll(100);
      assert.ok(Date.now() - started < INTERVAL_MS - 500, 'set up before the first interval');
      // The first member's next heartbeats bring its new target; it does not poll, so it stays pending past the
      // first interval.
      await sleep(started + INTERVAL_MS + 1000 - Date.now());
      assert.deepEqual(second.assignment(), [], 'the revocation is still pending');
      const stored = await admin.listConsumerGroupOffsets(groupId);
      assert.deepEqual(
        stored.map((o) => [o.partition, o.offset]),
        [...positions].sort((a, b) => a[0] - b[0]),
        'the positions were committed during the reconciliation',
      );
    } finally {
      await second.close();
      await first.close();
    }
  });
});
