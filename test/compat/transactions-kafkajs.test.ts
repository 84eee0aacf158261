// kafkajs transactions against a Brook broker: a transactional producer commits records and consumed offsets,
// aborts a second transaction, and a read_committed kafkajs consumer sees only the committed records; a second
// producer with the same transactional id fences the first.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';

const { Kafka, logLevel } = kafkajs;
type Kafka = InstanceType<typeof Kafka>;

const TOPIC = 'kjs-txn';
const TID = 'kjs-tid';

describe('kafkajs transactions against a Brook broker', () => {
  let broker: BrokerProcess;
  let kafka: Kafka;
  before(async () => {
    broker = await startBroker();
    kafka = new Kafka({
      clientId: 'brook-txn',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 100 },
    });
  });
  after(async () => {
    await broker?.stop();
  });

  it('commits, aborts, sends offsets, reads committed, fences', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }], waitForLeaders: true });
    await admin.disconnect();

    const producer = kafka.producer({ transactionalId: TID, idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const committed = await producer.transaction();
    await committed.send({
      topic: TOPIC,
      messages: Array.from({ length: 6 }, (_, i) => ({ partition: i % 2, value: `c-${i}` })),
    });
    await committed.sendOffsets({
      consumerGroupId: 'kjs-txn-group',
      topics: [{ topic: TOPIC, partitions: [{ partition: 0, offset: '3' }] }],
    });
    await committed.commit();

    const aborted = await producer.transaction();
    await aborted.send({
      topic: TOPIC,
      messages: Array.from({ length: 4 }, (_, i) => ({ partition: i % 2, value: `a-${i}` })),
    });
    await aborted.abort();

    const last = await producer.transaction();
    await last.send({ topic: TOPIC, messages: [{ partition: 1, value: 'c-last' }] });
    await last.commit();

    // Fencing: a second producer with the same id; the first one's next transaction fails.
    const second = kafka.producer({ transactionalId: TID, idempotent: true, maxInFlightRequests: 1 });
    await second.connect();
    // kafkajs sends InitProducerId with its first transaction, which fences the first producer.
    const secondTxn = await second.transaction();
    const zombie = await producer.transaction();
    await assert.rejects(
      async () => {
        await zombie.send({ topic: TOPIC, messages: [{ partition: 0, value: 'zombie' }] });
        await zombie.commit();
      },
      (e: Error & { type?: string }) =>
        /FENCED|INVALID_PRODUCER_EPOCH/.test(`${e.type ?? ''} ${e.name} ${e.message}`),
    );
    await secondTxn.send({ topic: TOPIC, messages: [{ partition: 0, value: 'c-second' }] });
    await secondTxn.commit();
    await producer.disconnect();
    await second.disconnect();

    const consumer = kafka.consumer({ groupId: 'kjs-txn-reader', readUncommitted: false });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    const seen: string[] = [];
    const expected = [...Array.from({ length: 6 }, (_, i) => `c-${i}`), 'c-last', 'c-second'].sort();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read only ${JSON.stringify(seen)}`)), 60_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length >= expected.length) {
            clearTimeout(timer);
            // A little longer, so that an aborted record read by mistake would show.
            setTimeout(resolve, 1000);
          }
        },
      });
    });
    await consumer.disconnect();
    assert.deepEqual(seen.sort(), expected);

    const offsetsAdmin = kafka.admin();
    await offsetsAdmin.connect();
    const offsets = await offsetsAdmin.fetchOffsets({ groupId: 'kjs-txn-group', topics: [TOPIC] });
    await offsetsAdmin.disconnect();
    const p0 = offsets[0]!.partitions.find((p) => p.partition === 0);
    assert.equal(p0?.offset, '3', 'the transaction committed the group offset');
  });
});
