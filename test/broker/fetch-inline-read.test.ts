// Inline file reads (brook.log.read.inline.max.bytes, storage/inline-reads.ts) through a real broker process with
// no tail cache, so every fetch reads the segment files: a fetch of one partition reads on the event loop (the
// brook_log_read_inline_* counters of /metrics move) and answers every record; a fetch of two partitions that both
// read their files reads one of them inline and the other in the thread pool, and answers both; a fetch of two
// partitions, one caught up, reads the other inline; a kafkajs consumer of a one-partition topic reads it whole
// through inline reads.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { INLINE_READ_PAUSE_MS } from '../../src/storage/inline-reads.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { createTopic, fetchBody, produceBatch, readPartition, WireClient } from '../helpers/wire-client.js';
import { scrape, startMeteredBroker } from '../metrics/scrape.js';

const { Kafka, logLevel } = kafkajs;
const BATCHES = 5;
const PER_BATCH = 10;
const VALUE_BYTES = 1000;
const INLINE = 'brook_log_read_inline';

const recordValue = (partition: number, i: number): string => `${partition}:${i}:`.padEnd(VALUE_BYTES, 'x');

describe('inline file reads of fetches', () => {
  let broker: BrokerProcess;
  let metricsPort: number;
  let client: WireClient;

  const counters = async (): Promise<{ reads: number; bytes: number; slow: number }> => {
    const s = await scrape(metricsPort);
    return {
      reads: s.value(`${INLINE}_total`),
      bytes: s.value(`${INLINE}_bytes_total`),
      slow: s.value(`${INLINE}_slow_total`),
    };
  };

  // A read slower than 1 ms (a busy machine can take that long over any read) turns inline reads off for a while.
  let slowSeen = 0;
  /** The counters once inline reads are on: a slow read seen since the last look is waited out first. */
  const countersWhenOn = async (): Promise<{ reads: number; bytes: number; slow: number }> => {
    const now = await counters();
    if (now.slow === slowSeen) return now;
    slowSeen = now.slow;
    await new Promise((r) => setTimeout(r, INLINE_READ_PAUSE_MS + 100));
    return counters();
  };

  /** Fetches `offsets[p]` of each partition p of 'two' in one request; answers each partition's record values. */
  const fetchTwo = async (offsets: readonly number[]): Promise<string[][]> => {
    const body = fetchBody('two', 0, offsets[0]!);
    const first = body.topics[0]!.partitions[0]!;
    body.topics[0]!.partitions.push({ ...first, partition: 1, fetchOffset: BigInt(offsets[1]!) });
    body.maxBytes = 4 << 20;
    const response = await client.call(ApiKey.FETCH, 12, body);
    const partitions = response.responses[0].partitions;
    assert.equal(partitions.length, 2);
    return partitions.map((p: { errorCode: number; records: Buffer | null }) => {
      assert.equal(p.errorCode, ErrorCode.NONE);
      const values: string[] = [];
      const records = p.records ?? Buffer.alloc(0);
      for (let pos = 0; pos < records.length; pos += 12 + records.readInt32BE(pos + 8)) {
        for (const r of readRecords(records, pos)) values.push(r.value?.toString() ?? '');
      }
      return values;
    });
  };

  const fill = async (topic: string, partition: number): Promise<void> => {
    for (let b = 0; b < BATCHES; b++) {
      const records = buildBatch(
        Array.from({ length: PER_BATCH }, (_, j) => ({ value: recordValue(partition, b * PER_BATCH + j) })),
      );
      const answer = await produceBatch(client, topic, records, -1, partition);
      assert.equal(answer.errorCode, ErrorCode.NONE);
    }
  };

  const expected = (partition: number): string[] =>
    Array.from({ length: BATCHES * PER_BATCH }, (_, i) => recordValue(partition, i));

  before(async () => {
    ({ broker, metricsPort } = await startMeteredBroker({ 'brook.log.tail.cache.bytes': 0 }));
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, 'one', { numPartitions: 1 });
    await createTopic(client, 'two', { numPartitions: 2 });
    await fill('one', 0);
    await fill('two', 0);
    await fill('two', 1);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('a fetch of one partition reads on the event loop and answers every record', async () => {
    const start = await counters();
    const records = await readPartition(client, 'one', 0);
    assert.deepEqual(
      records.map((r) => r.value?.toString()),
      expected(0),
    );
    const end = await counters();
    assert.ok(end.reads > start.reads, `inline reads ${start.reads} -> ${end.reads}`);
    assert.ok(
      end.bytes - start.bytes >= BATCHES * PER_BATCH * VALUE_BYTES,
      `inline bytes ${start.bytes} -> ${end.bytes}`,
    );
  });

  it('a fetch of two partitions reading their files reads one inline, and answers both', async () => {
    const start = await countersWhenOn();
    assert.deepEqual(await fetchTwo([0, 0]), [expected(0), expected(1)]);
    const end = await counters();
    assert.equal(end.reads - start.reads, 1, 'one inline read per fetch');
    const partitionBytes = BATCHES * PER_BATCH * VALUE_BYTES;
    const inlineBytes = end.bytes - start.bytes;
    assert.ok(
      inlineBytes >= partitionBytes && inlineBytes < 2 * partitionBytes,
      `inline bytes ${inlineBytes}`,
    );
  });

  it('a fetch of two partitions, one caught up, reads the other inline', async () => {
    const start = await countersWhenOn();
    const end0 = BATCHES * PER_BATCH;
    assert.deepEqual(await fetchTwo([end0, 0]), [[], expected(1)]);
    const end = await counters();
    assert.equal(end.reads - start.reads, 1);
    assert.ok(end.bytes - start.bytes >= BATCHES * PER_BATCH * VALUE_BYTES);
  });

  it('a kafkajs consumer of a one-partition topic reads it whole through inline reads', async () => {
    const start = await countersWhenOn();
    const kafka = new Kafka({
      clientId: 'inline-read',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
    });
    const consumer = kafka.consumer({ groupId: 'inline-read-group' });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: 'one', fromBeginning: true });
      const values: string[] = [];
      await new Promise<void>((resolve, reject) => {
        consumer
          .run({
            eachMessage: async ({ message }) => {
              values.push(message.value?.toString() ?? '');
              if (values.length === BATCHES * PER_BATCH) resolve();
            },
          })
          .catch(reject);
      });
      assert.deepEqual(values, expected(0));
    } finally {
      await consumer.disconnect();
    }
    const end = await counters();
    assert.ok(end.reads > start.reads, `inline reads ${start.reads} -> ${end.reads}`);
  });
});
