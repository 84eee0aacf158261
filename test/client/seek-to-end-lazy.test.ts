// seekToBeginning() and seekToEnd() as Kafka's consumer does them (SubscriptionState.requestOffsetReset, resolved by
// the next poll's or position()'s resetPositionsIfNeeded): lazily. The end a seekToEnd() moves to is the one at the
// next poll, so records written between the two are skipped, and a seek() after it decides the position. A
// partition reset this way gets its offset even under auto.offset.reset=none. A reset whose ListOffsets fails for good
// after the poll that sent it has returned keeps its error for the next call that needs positions, as Kafka's
// OffsetFetcherUtils.cachedResetPositionsException. Against an in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ListOffsetsRequest } from '../../src/protocol/messages/02-list-offsets.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { sleep } from '../helpers/wait.js';

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

  it('a reset that fails after its poll returned is thrown by the next poll, which asks no ListOffsets', async () => {
    const clientId = 'lazy-reset-late-failure';
    let listOffsets = 0;
    // The consumer's ListOffsets (key 2) are answered after 1 s with TOPIC_AUTHORIZATION_FAILED, not retriable.
    broker.interception.set((request) => {
      if (request.apiKey !== 2 || request.header.clientId !== clientId) return undefined;
      listOffsets++;
      const body = request.body as ListOffsetsRequest;
      return sleep(1000).then(() => ({
        throttleTimeMs: 0,
        topics: body.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            oldStyleOffsets: [],
            timestamp: -1n,
            offset: -1n,
            leaderEpoch: -1,
          })),
        })),
      }));
    });
    const consumer = new Consumer({ bootstrapServers, clientId, autoOffsetReset: 'earliest' });
    try {
      consumer.assign([TP]);
      assert.deepEqual(await consumer.poll(200), [], 'the reset outlasts the poll');
      await sleep(1500);
      assert.equal(listOffsets, 1);
      await assert.rejects(
        consumer.poll(200),
        (err: unknown) =>
          err instanceof KafkaProtocolError && err.code === ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      );
      assert.equal(listOffsets, 1, 'the poll that threw the kept error sent no ListOffsets');
      // Thrown once: the call after it resets again.
      broker.interception.clear();
      assert.equal(await consumer.position(TP), 0);
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
