// A DeleteRecords request that names a partition more than once, which no Kafka client sends but a raw request
// can: Kafka 3.9's KafkaApis.handleDeleteRecordsRequest reads the request into a map by partition, so the last
// entry's offset is the one deleted to, and the answer (built from that map, grouped by topic) holds the partition
// once, under one entry for its topic, also when the topic is named twice.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';

describe('DeleteRecords naming a partition twice', () => {
  let broker: InProcessBroker;
  let client: WireClient;
  before(async () => {
    broker = await startInProcessBroker({ 'auto.create.topics.enable': false });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  async function withRecords(topic: string, count: number): Promise<void> {
    await createTopic(client, topic, { numPartitions: 1 });
    const values = Array.from({ length: count }, (_, i) => ({ value: `v${i}` }));
    const produced = await produceBatch(client, topic, buildBatch(values));
    assert.equal(produced.errorCode, ErrorCode.NONE);
  }

  /** The answer as [topic, partition, error code, low watermark] rows, in the order given. */
  // biome-ignore lint/suspicious/noExplicitAny: a decoded response, as WireClient.call answers it.
  function rows(response: any): [string, number, number, bigint][] {
    return response.topics.flatMap(
      (t: {
        name: string;
        partitions: { partitionIndex: number; errorCode: number; lowWatermark: bigint }[];
      }) => t.partitions.map((p) => [t.name, p.partitionIndex, p.errorCode, p.lowWatermark]),
    );
  }

  it('the last offset given wins, and the partition is answered once', async () => {
    await withRecords('twice-in-topic', 10);
    const response = await client.call(ApiKey.DELETE_RECORDS, 2, {
      topics: [
        {
          name: 'twice-in-topic',
          partitions: [
            { partitionIndex: 0, offset: 7n },
            { partitionIndex: 0, offset: 3n },
          ],
        },
      ],
      timeoutMs: 5000,
    });
    assert.deepEqual(rows(response), [['twice-in-topic', 0, ErrorCode.NONE, 3n]]);
  });

  it('a topic named twice is answered under one entry, with its partition once', async () => {
    await withRecords('twice-as-topic', 10);
    const response = await client.call(ApiKey.DELETE_RECORDS, 2, {
      topics: [
        { name: 'twice-as-topic', partitions: [{ partitionIndex: 0, offset: 2n }] },
        { name: 'twice-as-topic', partitions: [{ partitionIndex: 0, offset: 5n }] },
      ],
      timeoutMs: 5000,
    });
    assert.equal(response.topics.length, 1);
    assert.deepEqual(rows(response), [['twice-as-topic', 0, ErrorCode.NONE, 5n]]);
  });

  it('an out-of-range first entry does not fail the partition when the last is in range', async () => {
    await withRecords('twice-range', 4);
    const response = await client.call(ApiKey.DELETE_RECORDS, 2, {
      topics: [
        {
          name: 'twice-range',
          partitions: [
            { partitionIndex: 0, offset: 99n },
            { partitionIndex: 0, offset: 1n },
          ],
        },
      ],
      timeoutMs: 5000,
    });
    assert.deepEqual(rows(response), [['twice-range', 0, ErrorCode.NONE, 1n]]);
  });
});
