// A fetch position outside the log, as Kafka's consumer takes it (FetchCollector.handleInitializeErrors): with
// auto.offset.reset=none, poll() throws OffsetOutOfRangeException naming the partition and its position
// (offsetOutOfRangePartitions), the position stays, and the next poll throws again until a seek; with a policy,
// the position is reset by it. A partition without a committed offset under none throws
// NoOffsetForPartitionException naming the partitions. Against an in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { KafkaClientError, KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'offset-out-of-range';
const TP = { topic: TOPIC, partition: 0 };
const RECORDS = 3;
const BEYOND_END = 100;

/** Polls until a poll throws (returned) or `ms` pass (null). */
async function pollError(consumer: Consumer, ms = 5000): Promise<unknown> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      await consumer.poll(100);
    } catch (err) {
      return err;
    }
  }
  return null;
}

describe('fetch position out of range', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers });
    for (let i = 0; i < RECORDS; i++) await producer.send({ ...TP, value: Buffer.from(`v${i}`) });
    await producer.close();
  });
  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  it('auto.offset.reset=none: poll() throws OffsetOutOfRangeError with the partition and position', async () => {
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'none' });
    try {
      consumer.assign([TP]);
      consumer.seek(TP, BEYOND_END);
      for (let round = 0; round < 2; round++) {
        const err = await pollError(consumer);
        assert.ok(err instanceof KafkaProtocolError, `poll() threw ${String(err)}`);
        assert.equal(err.code, ErrorCode.OFFSET_OUT_OF_RANGE);
        assert.equal(err.name, 'OffsetOutOfRangeError');
        const partitions = (err as { offsetOutOfRangePartitions?: ReadonlyMap<string, number> })
          .offsetOutOfRangePartitions;
        assert.deepEqual([...(partitions ?? [])], [[`${TOPIC}-0`, BEYOND_END]]);
        assert.equal(await consumer.position(TP), BEYOND_END, 'the position stays');
      }
      consumer.seek(TP, 1);
      const got: number[] = [];
      const deadline = Date.now() + 5000;
      while (got.length < RECORDS - 1 && Date.now() < deadline)
        for (const r of await consumer.poll(100)) got.push(r.offset);
      assert.deepEqual(got, [1, 2]);
    } finally {
      await consumer.close();
    }
  });

  it('auto.offset.reset=latest: a position past the end is reset to the end', async () => {
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'latest' });
    try {
      consumer.assign([TP]);
      consumer.seek(TP, BEYOND_END);
      const deadline = Date.now() + 5000;
      while ((await consumer.position(TP)) !== RECORDS && Date.now() < deadline) await consumer.poll(100);
      assert.equal(await consumer.position(TP), RECORDS);
    } finally {
      await consumer.close();
    }
  });

  it('auto.offset.reset=none without a committed offset: NoOffsetForPartitionError names the partitions', async () => {
    const consumer = new Consumer({
      bootstrapServers,
      groupId: 'offset-out-of-range-none',
      autoOffsetReset: 'none',
      enableAutoCommit: false,
    });
    try {
      consumer.assign([TP]);
      const err = await pollError(consumer);
      assert.ok(err instanceof KafkaClientError, `poll() threw ${String(err)}`);
      assert.equal(err.name, 'NoOffsetForPartitionError');
      assert.deepEqual((err as { partitions?: readonly string[] }).partitions, [`${TOPIC}-0`]);
    } finally {
      await consumer.close();
    }
  });
});
