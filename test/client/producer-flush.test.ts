// flush() waits for the records sent before it, not for those sent while it waits, as Kafka's
// RecordAccumulator.awaitFlushCompletion waits for the batches incomplete when flush() was called. A record sent
// during a flush that waits a long time (its topic's metadata, here a topic that never comes) must not hold the
// flush: a producer sending steadily from other tasks would otherwise never see its flush() end.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic } from '../helpers/wire-client.js';

const suite = useBrokerWithClient({ overrides: { 'auto.create.topics.enable': false } });

const MAX_BLOCK_MS = 4_000;

test('flush() ends when the records sent before it have their outcome', async () => {
  const topic = 'flush-before';
  await createTopic(suite.client, topic, { numPartitions: 1 });
  const producer = new Producer({
    bootstrapServers: suite.broker.bootstrap,
    lingerMs: 1_000,
    maxBlockMs: MAX_BLOCK_MS,
    allowAutoCreateTopics: false,
  });
  try {
    await producer.connect();
    await producer.cluster.refreshMetadata([topic]);
    const before = producer.send({ topic, value: Buffer.from('before') });
    const started = Date.now();
    const flushed = producer.flush().then(() => Date.now() - started);
    // Sent while the flush waits; it waits for its topic's metadata up to max.block.ms, then fails.
    const during = producer.send({ topic: 'flush-missing-topic', value: Buffer.from('during') }).then(
      () => null,
      (e: Error) => e,
    );
    const flushMs = await flushed;
    assert.ok(flushMs < MAX_BLOCK_MS / 2, `flush() took ${flushMs} ms`);
    assert.equal((await before).offset, 0, 'the record sent before flush() was acknowledged when it ended');
    assert.ok((await during) !== null, 'the record sent during the flush fails at max.block.ms');
    // A flush after it waits for it.
    const again = producer.send({ topic: 'flush-missing-topic', value: Buffer.from('held') }).catch(() => {});
    await producer.flush();
    await again;
  } finally {
    await producer.close(0);
  }
});
