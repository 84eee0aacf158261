// A batch the broker refuses as MESSAGE_TOO_LARGE (larger than the topic's max.message.bytes) while it holds more
// than one record: Kafka's Sender splits it into batch.size batches that keep its sequences
// (RecordAccumulator.splitAndReenqueue, ProducerBatch.split) and sends them again, so records that each fit are
// delivered. Brook's batches grow past batch.size while a partition waits for an in-flight slot, so a backlog meets
// a topic whose max.message.bytes lies between batch.size and max.request.size. Against a real broker, behind the
// produce proxy that records each batch's producer fields (test/helpers/produce-proxy.ts).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { CompressionType } from '../../src/protocol/records/batch-header.js';
import { type SeenBatch, withProxiedTopic } from '../helpers/produce-proxy.js';
import { readPartition } from '../helpers/wire-client.js';

const RECORDS = 3_000;
/** Above batch.size (16384) with room for its header, far below max.request.size (1 MiB). */
const MAX_MESSAGE_BYTES = 20_000;

const paddedValue = (i: number) => Buffer.from(String(i).padStart(100, '0'));

/**
 * The split seen in `seen`: the first batch whose records are more than `maxBytes` at `recordBytes` each, and the
 * batch its first record went again in. Asserts that there is one, that the parts fit the topic, and that they
 * kept the refused batch's producer id, epoch and base sequence (no epoch bump was needed).
 */
function assertSplit(seen: readonly SeenBatch[], recordBytes: number, maxBytes: number): SeenBatch[] {
  const big = seen.findIndex((b) => b.values.length * recordBytes > maxBytes);
  assert.ok(big >= 0, 'a batch larger than max.message.bytes was sent');
  const refused = seen[big]!;
  const again = seen.slice(big + 1).filter((b) => b.values[0] === refused.values[0]);
  assert.equal(again.length, 1, 'its first record went again once');
  const retried = again[0]!;
  assert.ok(retried.values.length < refused.values.length, 'in a smaller batch');
  assert.deepEqual(
    [retried.producerId, retried.epoch, retried.baseSequence],
    [refused.producerId, refused.epoch, refused.baseSequence],
  );
  assert.equal(new Set(seen.map((b) => b.epoch)).size, 1, 'no epoch bump was needed');
  for (const b of seen.slice(big + 1))
    assert.ok(b.values.length * recordBytes < maxBytes, 'split batches fit the topic');
  return [refused, retried];
}

test('a backlog batch refused as MESSAGE_TOO_LARGE is split and sent again with its sequences', async () => {
  const topic = 'split-too-large';
  await withProxiedTopic(
    topic,
    1,
    async ({ proxy, wire, closing }) => {
      const producer = closing(
        new Producer({ bootstrapServers: `127.0.0.1:${proxy.port}`, lingerMs: 5, retryBackoffMs: 20 }),
      );
      await producer.connect();
      await producer.cluster.refreshMetadata([topic]);
      // All at once: five batch.size batches fill the in-flight slots and the rest grows one large batch.
      const sends = Array.from({ length: RECORDS }, (_, i) =>
        producer.send({ topic, value: paddedValue(i) }),
      );
      const outcomes = await Promise.allSettled(sends);
      const failed = outcomes.filter((o) => o.status === 'rejected');
      assert.equal(
        failed.length,
        0,
        `first failure: ${(failed[0] as PromiseRejectedResult | undefined)?.reason}`,
      );
      const offsets = outcomes.map((o) => (o as PromiseFulfilledResult<{ offset: number }>).value.offset);
      assert.deepEqual(
        offsets,
        Array.from({ length: RECORDS }, (_, i) => i),
      );
      const log = (await readPartition(wire, topic, 0)).map((r) => Number(r.value!.toString()));
      assert.deepEqual(
        log,
        Array.from({ length: RECORDS }, (_, i) => i),
        'each record once, in send order',
      );

      // The test saw a split: a batch too large for the topic reached the broker, and its records went again in
      // smaller batches numbered from its own base sequence, under the same producer id and epoch.
      assertSplit(proxy.forwarded, paddedValue(0).length, MAX_MESSAGE_BYTES);
    },
    { 'max.message.bytes': String(MAX_MESSAGE_BYTES) },
  );
});

test('a batch within batch.size but over max.message.bytes is halved until its parts fit', async () => {
  // Kafka would split such a batch into the same batch again, and send it again until delivery.timeout.ms.
  const topic = 'split-halves';
  const records = 200;
  await withProxiedTopic(
    topic,
    1,
    async ({ proxy, wire, closing }) => {
      const producer = closing(
        new Producer({
          bootstrapServers: `127.0.0.1:${proxy.port}`,
          lingerMs: 50,
          requestTimeoutMs: 5_000,
          deliveryTimeoutMs: 10_000,
        }),
      );
      await producer.connect();
      await producer.cluster.refreshMetadata([topic]);
      // The partition knows the producer: a batch sent behind the refused one is refused as out of sequence. (A
      // broker without state for a producer takes any sequence, as Kafka's does, and would write it first.)
      await producer.send({ topic, value: Buffer.from('first') });
      // 200 records of 100 bytes close at batch.size into a batch of about 16 KB, refused whole, and one that fits.
      const sent = await producer.sendBatch(
        Array.from({ length: records }, (_, i) => ({ topic, value: paddedValue(i) })),
      );
      assert.deepEqual(
        sent.map((m) => m.offset),
        Array.from({ length: records }, (_, i) => i + 1),
      );
      const log = (await readPartition(wire, topic, 0)).slice(1).map((r) => Number(r.value!.toString()));
      assert.deepEqual(
        log,
        Array.from({ length: records }, (_, i) => i),
      );
      const sizes = proxy.forwarded.map((b) => b.values.length);
      const sent148 = sizes.filter((n) => n === 148).length;
      // Halves (still refused), then quarters (taken), each sent once.
      assert.deepEqual(
        [sent148, sizes.filter((n) => n === 74).length, sizes.filter((n) => n === 37).length],
        [1, 2, 4],
        `batch sizes sent: ${sizes}`,
      );
    },
    { 'max.message.bytes': '6000' },
  );
});

test('a transactional backlog batch refused as MESSAGE_TOO_LARGE is split inside the transaction, which commits', async () => {
  const topic = 'split-too-large-txn';
  await withProxiedTopic(
    topic,
    1,
    async ({ proxy, broker, closing }) => {
      const producer = closing(
        new Producer({
          bootstrapServers: `127.0.0.1:${proxy.port}`,
          transactionalId: 'split-txn',
          lingerMs: 5,
          retryBackoffMs: 20,
        }),
      );
      await producer.initTransactions();
      producer.beginTransaction();
      // Sent before the partition is in the transaction: the backlog grows one large batch behind batch.size ones.
      const sends = Array.from({ length: RECORDS }, (_, i) =>
        producer.send({ topic, value: paddedValue(i) }),
      );
      const outcomes = await Promise.allSettled(sends);
      const failed = outcomes.filter((o) => o.status === 'rejected');
      assert.equal(
        failed.length,
        0,
        `first failure: ${(failed[0] as PromiseRejectedResult | undefined)?.reason}`,
      );
      await producer.commitTransaction();

      const seen = proxy.forwarded;
      const [refused, retried] = assertSplit(seen, paddedValue(0).length, MAX_MESSAGE_BYTES);
      assert.ok(refused!.transactional && retried!.transactional, 'the parts are in the transaction');
      assert.ok(
        seen.every((b) => b.transactional),
        'every batch sent is transactional',
      );

      const consumer = new Consumer({
        bootstrapServers: `127.0.0.1:${broker.port}`,
        isolationLevel: 'read_committed',
      });
      try {
        consumer.assign([{ topic, partition: 0 }]);
        consumer.seek({ topic, partition: 0 }, 0);
        const read: number[] = [];
        const deadline = Date.now() + 30_000;
        while (read.length < RECORDS && Date.now() < deadline)
          for (const r of await consumer.poll(200)) read.push(Number(r.value!.toString()));
        assert.deepEqual(
          read,
          Array.from({ length: RECORDS }, (_, i) => i),
          'read_committed sees each record once, in send order',
        );
      } finally {
        await consumer.close();
      }
    },
    { 'max.message.bytes': String(MAX_MESSAGE_BYTES) },
  );
});

test('a compressed backlog batch refused as MESSAGE_TOO_LARGE is split into parts compressed again', async () => {
  const topic = 'split-too-large-gzip';
  // Random bytes after the index: gzip leaves them about their size, so the compressed backlog batch is too large.
  const RECORD_BYTES = 100;
  const value = (i: number) => {
    const v = randomBytes(RECORD_BYTES);
    v.writeUInt32BE(i, 0);
    return v;
  };
  await withProxiedTopic(
    topic,
    1,
    async ({ proxy, wire, closing }) => {
      const producer = closing(
        new Producer({
          bootstrapServers: `127.0.0.1:${proxy.port}`,
          compression: 'gzip',
          lingerMs: 5,
          retryBackoffMs: 20,
        }),
      );
      await producer.connect();
      await producer.cluster.refreshMetadata([topic]);
      const sends = Array.from({ length: RECORDS }, (_, i) => producer.send({ topic, value: value(i) }));
      const outcomes = await Promise.allSettled(sends);
      const failed = outcomes.filter((o) => o.status === 'rejected');
      assert.equal(
        failed.length,
        0,
        `first failure: ${(failed[0] as PromiseRejectedResult | undefined)?.reason}`,
      );
      const offsets = outcomes.map((o) => (o as PromiseFulfilledResult<{ offset: number }>).value.offset);
      assert.deepEqual(
        offsets,
        Array.from({ length: RECORDS }, (_, i) => i),
      );
      const log = (await readPartition(wire, topic, 0)).map((r) => r.value!.readUInt32BE(0));
      assert.deepEqual(
        log,
        Array.from({ length: RECORDS }, (_, i) => i),
        'each record once, in send order',
      );

      const seen = proxy.forwarded;
      const [refused, retried] = assertSplit(seen, RECORD_BYTES, MAX_MESSAGE_BYTES);
      assert.deepEqual(
        [refused!.compression, retried!.compression],
        [CompressionType.Gzip, CompressionType.Gzip],
        'the refused batch and its parts are compressed',
      );
      assert.ok(
        seen.every((b) => b.compression === CompressionType.Gzip),
        'every batch sent is compressed',
      );
    },
    { 'max.message.bytes': String(MAX_MESSAGE_BYTES) },
  );
});
