// seekToBeginning() and seekToEnd() as Kafka's consumer does them (SubscriptionState.requestOffsetReset, resolved by
// the next poll's or position()'s resetPositionsIfNeeded): lazily. The end a seekToEnd() moves to is the one at the
// next poll, so records written between the two are skipped, and a seek() after it decides the position. A
// partition reset this way gets its offset even under auto.offset.reset=none. Against an in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'seek-to-end-lazy';
const TP = { topic: TOPIC, partition: 0 };

describe('seekToBeginning() and seekToEnd() resolve at the next poll', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  let producer: Producer;

  async function produce(n: number): Promise<void> {
    for (let i = 0; i < n; i++) await producer.send({ ...TP, value: Buffer.from(`v${i}`) });
  }

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    producer = new Producer({ bootstrapServers });
    await produce(3);
  });
  after(async () => {
    await producer?.close();
    await admin?.close();
    await broker?.stop();
  });

  it('seekToEnd() moves to the end as of the next poll, skipping records written in between', async () => {
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest' });
    try {
      consumer.assign([TP]);
      await consumer.seekToEnd([TP]);
      const [before] = await consumer.endOffsets([TP]);
      await produce(2);
      const records = await consumer.poll(500);
      assert.deepEqual(
        records.map((r) => r.offset),
        [],
        'records written after seekToEnd() but before the poll are skipped',
      );
      assert.equal(await consumer.position(TP), before!.offset + 2);
    } finally {
      await consumer.close();
    }
  });

  it('a seek() after seekToBeginning() decides the position', async () => {
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'latest' });
    try {
      consumer.assign([TP]);
      await consumer.seekToBeginning([TP]);
      consumer.seek(TP, 1);
      const first = await consumer.poll(2000);
      assert.equal(first[0]?.offset, 1);
    } finally {
      await consumer.close();
    }
  });

  it('a reset whose ListOffsets is never answered holds neither poll() nor position() past its timeout', async () => {
    const clientId = 'lazy-reset-unanswered';
    // The consumer's ListOffsets (key 2) get no answer: the reset stays in flight for as long as the test runs.
    broker.interception.set((request) =>
      request.apiKey === 2 && request.header.clientId === clientId ? null : undefined,
    );
    const consumer = new Consumer({ bootstrapServers, clientId, autoOffsetReset: 'earliest' });
    try {
      consumer.assign([TP]);
      await consumer.seekToEnd([TP]);
      let started = Date.now();
      assert.deepEqual(await consumer.poll(300), []);
      assert.ok(Date.now() - started < 2000, `poll(300) took ${Date.now() - started} ms`);
      started = Date.now();
      await assert.rejects(consumer.position(TP, 500), /Timeout of 500ms expired before the position/);
      assert.ok(Date.now() - started < 2000, `position(500) took ${Date.now() - started} ms`);
    } finally {
      broker.interception.clear();
      await consumer.close();
    }
  });

  it('seekToBeginning() works under auto.offset.reset=none', async () => {
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'none' });
    try {
      consumer.assign([TP]);
      await consumer.seekToBeginning();
      assert.equal(await consumer.position(TP), 0);
      const first = await consumer.poll(2000);
      assert.equal(first[0]?.offset, 0);
    } finally {
      await consumer.close();
    }
  });
});
