// What Admin.listConsumerGroupOffsets answers for each partition asked, as Kafka's ListConsumerGroupOffsetsHandler
// (ListConsumerGroupOffsetsResult.partitionsToOffsetAndMetadata): a committed offset is listed; a partition without
// one is listed with no offset (Kafka's null value; offset -1 here); a partition the coordinator answers with an
// error is left out (Kafka logs and skips it), in the single-group form as in the several-group one. The error here
// is UNSTABLE_OFFSET_COMMIT under requireStable, for an offset an open transaction has sent. Against a broker in
// this process.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'list-group-offsets-partitions';
const GROUP = 'list-group-offsets-partitions-group';
/** Partition 0: an offset of an open transaction; 1: a committed offset; 2: none. */
const partitions = [0, 1, 2].map((partition) => ({ topic: TOPIC, partition }));

describe('listConsumerGroupOffsets per partition', () => {
  let broker: InProcessBroker;
  let admin: Admin;
  let producer: Producer;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'transaction.state.log.num.partitions': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
    });
    const bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 3, replicationFactor: 1 }]);
    await admin.alterConsumerGroupOffsets(GROUP, [{ topic: TOPIC, partition: 1, offset: 4 }]);
    producer = new Producer({ bootstrapServers, transactionalId: 'list-group-offsets-partitions-txn' });
    await producer.initTransactions();
    producer.beginTransaction();
    await producer.sendOffsetsToTransaction([{ topic: TOPIC, partition: 0, offset: 3 }], GROUP);
  });
  after(async () => {
    await producer?.abortTransaction().catch(() => {});
    await producer?.close();
    await admin?.close();
    await broker?.stop();
  });

  it('single-group form: an unstable offset is left out, a partition without one listed with -1', async () => {
    const listed = await admin.listConsumerGroupOffsets(GROUP, partitions, { requireStable: true });
    assert.deepEqual(
      listed.map((o) => [o.partition, o.offset]),
      [
        [1, 4],
        [2, -1],
      ],
    );
  });

  it('several-group form: the same listing', async () => {
    const listed = await admin.listConsumerGroupOffsets(new Map([[GROUP, { topicPartitions: partitions }]]), {
      requireStable: true,
    });
    assert.equal(listed.get(GROUP)?.error, null);
    assert.deepEqual(
      listed.get(GROUP)?.offsets.map((o) => [o.partition, o.offset]),
      [
        [1, 4],
        [2, -1],
      ],
    );
  });

  it('without requireStable the transaction does not hide the partition', async () => {
    const listed = await admin.listConsumerGroupOffsets(GROUP, partitions);
    assert.deepEqual(
      listed.map((o) => o.partition),
      [0, 1, 2],
    );
  });
});
