// Delete-policy retention through the wire, against Kafka's UnifiedLog.deleteOldSegments: a broker process that
// checks retention every 200 ms, records produced over Produce, and the log start offset seen by ListOffsets and
// Fetch. Kafka deletes the active segment too once all of it is past retention and below the high watermark
// (rolling a new empty one first), and ages a segment whose records carry no timestamp by its file's last
// modification time.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic, fetchBody, produceBatch } from '../helpers/wire-client.js';

const HOUR_MS = 3_600_000;
/** Retention runs every 200 ms: a record that should go is gone well within this. */
const DELETED_WITHIN_MS = 10_000;

describe('retention over the wire', () => {
  const suite = useBrokerWithClient({ overrides: { 'log.retention.check.interval.ms': 200 } });

  const create = (name: string, configs: Record<string, string>) =>
    createTopic(suite.client, name, { numPartitions: 1, replicationFactor: 1, configs });

  async function earliestOffset(topic: string): Promise<number> {
    const response = await suite.client.call(ApiKey.LIST_OFFSETS, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: topic,
          partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -2n, maxNumOffsets: 1 }],
        },
      ],
      timeoutMs: 1000,
    });
    const partition = response.topics[0].partitions[0];
    assert.equal(partition.errorCode, ErrorCode.NONE);
    return Number(partition.offset);
  }

  /** Polls ListOffsets EARLIEST until it reaches `offset`; answers the last value seen. */
  async function waitForEarliest(topic: string, offset: number): Promise<number> {
    const deadline = Date.now() + DELETED_WITHIN_MS;
    let earliest = await earliestOffset(topic);
    while (earliest < offset && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      earliest = await earliestOffset(topic);
    }
    return earliest;
  }

  it('retention.ms deletes records that sit in the active segment, as Kafka does', async () => {
    await create('idle', { 'retention.ms': String(60_000) });
    const old = Date.now() - HOUR_MS;
    for (let i = 0; i < 3; i++) {
      const response = await produceBatch(
        suite.client,
        'idle',
        buildBatch([{ value: `old-${i}`, timestamp: old }]),
      );
      assert.equal(response.errorCode, ErrorCode.NONE);
    }
    // All three are in the one (active) segment; nothing is produced after them.
    assert.equal(await waitForEarliest('idle', 3), 3, 'the hour-old records are deleted');
    const fetched = await suite.client.call(ApiKey.FETCH, 12, fetchBody('idle', 0, 0));
    assert.equal(fetched.responses[0].partitions[0].errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    const next = await produceBatch(suite.client, 'idle', buildBatch([{ value: 'fresh' }]));
    assert.equal(next.errorCode, ErrorCode.NONE);
    assert.equal(Number(next.baseOffset), 3, 'offsets go on from the log end');
  });

  it('retention.ms ages records without a timestamp by their segment file, as Kafka does', async () => {
    await create('untimed', { 'retention.ms': '1000', 'segment.bytes': '1024' });
    // Records without a timestamp (-1, as a v0 client's records are stored): two segments of them.
    for (let i = 0; i < 2; i++) {
      const batch = buildBatch([{ value: 'x'.repeat(900), timestamp: -1 }]);
      const response = await produceBatch(suite.client, 'untimed', batch);
      assert.equal(response.errorCode, ErrorCode.NONE);
    }
    assert.ok((await waitForEarliest('untimed', 1)) >= 1, 'the untimestamped segment is deleted');
  });
});
