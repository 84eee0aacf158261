// Per-partition send order while a topic's metadata is loading, against a real broker process. Kafka's producer
// writes a partition's records in the order send() was called (with idempotence, also across retries). Brook's
// send() takes a synchronous path once a topic's metadata is cached and a waiting one before: records sent after
// the metadata arrived must not overtake records sent earlier that were still waiting for it, and those waiting
// must not overtake each other (each used to retry the metadata on its own jittered backoff).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Producer, type RecordMetadata } from '../../src/client/producer.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic, readPartition } from '../helpers/wire-client.js';

const suite = useBrokerWithClient({ overrides: { 'num.partitions': 1, 'auto.create.topics.enable': true } });

const RECORDS = 400;

/**
 * Sends RECORDS records (more while a topic's metadata has not arrived) to each of two topics, alternating, to one partition of each and without awaiting any: a
 * few at once, then a few per millisecond. The first send to the first topic starts a metadata request that does
 * not name the second (its list is made at once), so the second topic's first records wait for a later one: a
 * streams application writing a changelog and an output topic sends so. Some records are sent before the producer
 * knows their topic, some while its metadata is loading, the rest once it is known. Answers, per topic, the values
 * in send order, the metadata the producer reported, and how many were sent once the topic was known.
 */
async function sendSpread(
  producer: Producer,
  topics: [string, string],
  record: (i: number) => { partition?: number; key?: Buffer },
): Promise<{ sent: string[]; acked: RecordMetadata[]; fastAfterSlow: number }[]> {
  const out = topics.map(() => ({
    sent: [] as string[],
    promises: [] as Promise<RecordMetadata>[],
    fastAfterSlow: 0,
  }));
  // On a loaded machine the metadata may come after the RECORDS-th send: the sends go on, in the same pattern,
  // until each topic has had records sent once it was known, so the test always covers all three cases.
  const deadline = Date.now() + 60_000;
  for (let i = 0; i < RECORDS || (out.some((o) => o.fastAfterSlow === 0) && Date.now() < deadline); i++) {
    for (let t = 0; t < topics.length; t++) {
      const topic = topics[t]!;
      const o = out[t]!;
      const value = `${topic}-${i}`;
      if (producer.cluster.snapshot.topics.get(topic)?.errorCode === 0) o.fastAfterSlow++;
      o.promises.push(producer.send({ topic, value: Buffer.from(value), ...record(i) }));
      o.sent.push(value);
    }
    if (i >= 20 && i % 4 === 0) await sleep(1);
  }
  return Promise.all(
    out.map(async (o) => ({
      sent: o.sent,
      acked: await Promise.all(o.promises),
      fastAfterSlow: o.fastAfterSlow,
    })),
  );
}

async function logValues(topic: string, partition: number): Promise<string[]> {
  return (await readPartition(suite.client, topic, partition)).map((r) => r.value!.toString());
}

function assertInSendOrder(sent: string[], acked: RecordMetadata[], log: string[]): void {
  assert.equal(log.length, sent.length, 'each record once');
  const firstOutOfOrder = log.findIndex((v, i) => v !== sent[i]);
  assert.equal(
    firstOutOfOrder,
    -1,
    `the log differs from the send order at offset ${firstOutOfOrder}: ` +
      `${log.slice(Math.max(0, firstOutOfOrder - 2), firstOutOfOrder + 3).join(',')}`,
  );
  assert.deepEqual(
    acked.map((m) => m.offset),
    log.map((_, i) => i),
    'each record acknowledged at its offset in the log',
  );
}

test('records to two auto-created topics are written in send order, those sent after the metadata arrived included', async () => {
  const topics: [string, string] = ['order-auto-a', 'order-auto-b'];
  const producer = new Producer({ bootstrapServers: suite.broker.bootstrap, retryBackoffMs: 20 });
  try {
    const results = await sendSpread(producer, topics, () => ({ partition: 0 }));
    for (const [t, { sent, acked, fastAfterSlow }] of results.entries()) {
      // The test means something only if the metadata arrived while records were still being sent.
      assert.ok(
        fastAfterSlow > 0 && fastAfterSlow < sent.length,
        `sent after the metadata: ${fastAfterSlow}`,
      );
      assertInSendOrder(sent, acked, await logValues(topics[t]!, 0));
    }
  } finally {
    await producer.close();
  }
});

test('records with one key to topics created just before keep their send order in its partition', async () => {
  const topics: [string, string] = ['order-created-a', 'order-created-b'];
  for (const topic of topics)
    await createTopic(suite.client, topic, { numPartitions: 3, replicationFactor: 1 });
  const producer = new Producer({ bootstrapServers: suite.broker.bootstrap, retryBackoffMs: 20 });
  try {
    const key = Buffer.from('one-key');
    const results = await sendSpread(producer, topics, () => ({ key }));
    for (const [t, { sent, acked, fastAfterSlow }] of results.entries()) {
      assert.ok(
        fastAfterSlow > 0 && fastAfterSlow < sent.length,
        `sent after the metadata: ${fastAfterSlow}`,
      );
      const partition = acked[0]!.partition;
      assert.ok(
        acked.every((m) => m.partition === partition),
        'one key, one partition',
      );
      assertInSendOrder(sent, acked, await logValues(topics[t]!, partition));
    }
  } finally {
    await producer.close();
  }
});

test('sendBatch() and send() to topics whose metadata is loading keep their order', async () => {
  const topics = ['order-batch-a', 'order-batch-b'];
  const producer = new Producer({ bootstrapServers: suite.broker.bootstrap, retryBackoffMs: 20 });
  try {
    const sent = new Map<string, string[]>(topics.map((t) => [t, []]));
    const waits: Promise<unknown>[] = [];
    for (let round = 0; round < 60; round++) {
      for (const topic of topics) {
        const values = [0, 1, 2].map((j) => `b${round}-${j}`);
        waits.push(producer.sendBatch(values.map((v) => ({ topic, partition: 0, value: Buffer.from(v) }))));
        const single = `s${round}`;
        waits.push(producer.send({ topic, partition: 0, value: Buffer.from(single) }));
        sent.get(topic)!.push(...values, single);
      }
      await sleep(2);
    }
    await Promise.all(waits);
    for (const topic of topics) assert.deepEqual(await logValues(topic, 0), sent.get(topic));
  } finally {
    await producer.close();
  }
});

test('flush() waits for records still waiting for their topic metadata', async () => {
  const topic = 'order-flush-waiting';
  const producer = new Producer({ bootstrapServers: suite.broker.bootstrap, lingerMs: 1_000 });
  try {
    let acked = 0;
    for (let i = 0; i < 10; i++) {
      producer.send({ topic, partition: 0, value: Buffer.from(`f${i}`) }).then(
        () => acked++,
        () => {},
      );
    }
    await producer.flush();
    assert.equal(acked, 10, 'every record sent before flush() is acknowledged when it resolves');
  } finally {
    await producer.close();
  }
});
