// What the client refuses or skips before it sends an offset commit, as Kafka's client does: an empty commit sends
// no OffsetCommit (commitSync(emptyMap) returns at once), and a negative offset is refused by the caller's side
// (OffsetAndMetadata's "Invalid negative offset") in Consumer.commit, Admin.alterConsumerGroupOffsets and
// Producer.sendOffsetsToTransaction, so that nothing reaches the group. A negative leader epoch means none, as
// OffsetAndMetadata's leaderEpoch() is empty for it: every one of the three sends -1. Against an in-process broker
// whose request interceptor counts the OffsetCommit and TxnOffsetCommit requests it is sent and keeps their epochs.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { OffsetCommitRequest } from '../../src/protocol/messages/08-offset-commit.js';
import type { TxnOffsetCommitRequest } from '../../src/protocol/messages/28-txn-offset-commit.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'commit-arguments';

describe('offset commit arguments', () => {
  let broker: InProcessBroker;
  const sent = { offsetCommit: 0, txnOffsetCommit: 0 };
  /** The committed leader epochs of every OffsetCommit and TxnOffsetCommit partition, in order. */
  const epochs: number[] = [];

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'transaction.state.log.num.partitions': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
    });
    const wire = await WireClient.connect(broker.host, broker.port);
    try {
      await createTopic(wire, TOPIC, { numPartitions: 1, replicationFactor: 1 });
    } finally {
      wire.close();
    }
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.OFFSET_COMMIT) {
        sent.offsetCommit++;
        const body = request.body as OffsetCommitRequest;
        for (const t of body.topics) for (const p of t.partitions) epochs.push(p.committedLeaderEpoch);
      }
      if (request.apiKey === ApiKey.TXN_OFFSET_COMMIT) {
        sent.txnOffsetCommit++;
        const body = request.body as TxnOffsetCommitRequest;
        for (const t of body.topics) for (const p of t.partitions) epochs.push(p.committedLeaderEpoch);
      }
      return undefined;
    });
  });
  after(() => broker?.stop());

  it('an empty commit sends nothing; a negative offset is refused before anything is sent', async () => {
    const bootstrapServers = `127.0.0.1:${broker.port}`;
    const consumer = new Consumer({ bootstrapServers, groupId: 'commit-arguments' });
    const admin = new Admin({ bootstrapServers });
    const producer = new Producer({ bootstrapServers, transactionalId: 'commit-arguments-txn' });
    try {
      await consumer.commit([{ topic: TOPIC, partition: 0, offset: 7 }]);
      assert.equal(sent.offsetCommit, 1, 'a commit with offsets is sent (and counted)');

      await consumer.commit([]);
      assert.equal(sent.offsetCommit, 1, 'an empty commit sends no OffsetCommit');

      await assert.rejects(consumer.commit([{ topic: TOPIC, partition: 0, offset: -1 }]), {
        name: 'RangeError',
        message: /Invalid negative offset -1/,
      });
      await assert.rejects(
        admin.alterConsumerGroupOffsets('commit-arguments', [{ topic: TOPIC, partition: 0, offset: -5 }]),
        { name: 'RangeError', message: /Invalid negative offset -5/ },
      );
      assert.equal(sent.offsetCommit, 1, 'neither refusal sent an OffsetCommit');

      await producer.initTransactions();
      producer.beginTransaction();
      await assert.rejects(
        producer.sendOffsetsToTransaction([{ topic: TOPIC, partition: 0, offset: -2 }], 'commit-arguments'),
        { name: 'RangeError', message: /Invalid negative offset -2/ },
      );
      assert.equal(sent.txnOffsetCommit, 0, 'no TxnOffsetCommit was sent');
      await producer.abortTransaction();

      const [stored] = await admin.listConsumerGroupOffsets('commit-arguments', [
        { topic: TOPIC, partition: 0 },
      ]);
      assert.equal(stored?.offset, 7, 'the group keeps the offset committed first');
    } finally {
      await producer.close();
      await admin.close();
      await consumer.close();
    }
  });

  it('a negative leader epoch goes out as -1 from the consumer, the admin client and a transaction', async () => {
    const bootstrapServers = `127.0.0.1:${broker.port}`;
    const consumer = new Consumer({ bootstrapServers, groupId: 'negative-epoch', enableAutoCommit: false });
    const admin = new Admin({ bootstrapServers });
    const producer = new Producer({ bootstrapServers, transactionalId: 'negative-epoch-txn' });
    try {
      epochs.length = 0;
      await consumer.commit([{ topic: TOPIC, partition: 0, offset: 1, leaderEpoch: -4 }]);
      await admin.alterConsumerGroupOffsets('negative-epoch-admin', [
        { topic: TOPIC, partition: 0, offset: 2, leaderEpoch: -7 },
      ]);
      await producer.initTransactions();
      producer.beginTransaction();
      await producer.sendOffsetsToTransaction(
        [{ topic: TOPIC, partition: 0, offset: 3, leaderEpoch: -3 }],
        'negative-epoch-txn-group',
      );
      await producer.commitTransaction();
      assert.deepEqual(epochs, [-1, -1, -1], 'each commit sent no epoch (-1)');
      const [stored] = await admin.listConsumerGroupOffsets('negative-epoch-admin', [
        { topic: TOPIC, partition: 0 },
      ]);
      assert.deepEqual(
        { offset: stored?.offset, leaderEpoch: stored?.leaderEpoch },
        { offset: 2, leaderEpoch: -1 },
      );
    } finally {
      await producer.close();
      await admin.close();
      await consumer.close();
    }
  });
});
