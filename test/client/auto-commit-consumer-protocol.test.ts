// enable.auto.commit of a KIP-848 member (group.protocol=consumer) around its reconciliations and unsubscribe(), as
// Kafka 3.9's AsyncKafkaConsumer: before reconciling a new target assignment the member commits the position of
// every partition it owns (MembershipManagerImpl.maybeReconcile, CommitRequestManager
// .maybeAutoCommitSyncBeforeRevocation with allConsumed), not only of those it gives up; unsubscribe() leaves the
// group without an auto-commit (membershipManager.leaveGroup revokes without committing); close() commits. Against
// an in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'auto-commit-consumer-protocol';
const RECORDS_PER_PARTITION = 5;

describe('KIP-848 auto-commit around reconciliation and unsubscribe', () => {
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
    for (let i = 0; i < 2 * RECORDS_PER_PARTITION; i++)
      await producer.send({ topic: TOPIC, partition: i % 2, value: Buffer.from(`v${i}`) });
    await producer.close();
  });
  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  function member(groupId: string): Consumer {
    return new Consumer({
      bootstrapServers,
      groupId,
      groupProtocol: 'consumer',
      autoOffsetReset: 'earliest',
      // No interval commit during the test.
      autoCommitIntervalMs: 600_000,
    });
  }

  async function readAll(c: Consumer): Promise<void> {
    const deadline = Date.now() + 10_000;
    let read = 0;
    while (read < 2 * RECORDS_PER_PARTITION && Date.now() < deadline) read += (await c.poll(100)).length;
    assert.equal(read, 2 * RECORDS_PER_PARTITION, 'the member read every record');
  }

  async function committed(groupId: string): Promise<Map<number, number>> {
    const offsets = await admin.listConsumerGroupOffsets(groupId);
    return new Map(offsets.filter((o) => o.topic === TOPIC).map((o) => [o.partition, o.offset]));
  }

  it('a reconciliation commits the partition the member keeps as well as the one it gives up', async () => {
    const groupId = 'auto-commit-848-reconcile';
    const first = member(groupId);
    const second = member(groupId);
    try {
      first.subscribe([TOPIC]);
      await readAll(first);
      second.subscribe([TOPIC]);
      const deadline = Date.now() + 15_000;
      while (second.assignment().length === 0 && Date.now() < deadline)
        await Promise.all([first.poll(50), second.poll(50)]);
      assert.equal(first.assignment().length, 1, 'the first member gave a partition up');
      const kept = first.assignment()[0]!.partition;
      const stored = await committed(groupId);
      assert.equal(stored.get(kept), RECORDS_PER_PARTITION, `the kept partition ${kept} was committed`);
      assert.equal(stored.get(1 - kept), RECORDS_PER_PARTITION, 'the revoked partition was committed');
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('unsubscribe() leaves without an auto-commit', async () => {
    const groupId = 'auto-commit-848-unsubscribe';
    const c = member(groupId);
    try {
      c.subscribe([TOPIC]);
      await readAll(c);
      await c.unsubscribe();
      assert.deepEqual([...(await committed(groupId))], [], 'Kafka 3.9 commits nothing on unsubscribe()');
    } finally {
      await c.close();
    }
  });
});
