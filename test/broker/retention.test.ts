// Delete-policy retention through the wire, against Kafka's UnifiedLog.deleteOldSegments: a broker process that
// checks retention every 200 ms, records produced over Produce, and the log start offset seen by ListOffsets and
// Fetch. Kafka deletes the active segment too once all of it is past retention and below the high watermark
// (rolling a new empty one first), ages a segment whose records carry no timestamp by its file's last
// modification time, and applies every reason (log start offset, retention.bytes, retention.ms) in one check.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { alterConfigs, TOPIC_RESOURCE } from '../helpers/dynamic-configs.js';
import { createTopic, fetchBody, produceBatch, type WireClient } from '../helpers/wire-client.js';

const HOUR_MS = 3_600_000;
/** Retention runs every 200 ms: a record that should go is gone well within this. */
const DELETED_WITHIN_MS = 10_000;

/** ListOffsets EARLIEST of partition 0 of `topic`: the log start offset. */
async function earliestOffset(client: WireClient, topic: string): Promise<number> {
  const response = await client.call(ApiKey.LIST_OFFSETS, 7, {
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

describe('retention over the wire', () => {
  const suite = useBrokerWithClient({ overrides: { 'log.retention.check.interval.ms': 200 } });

  const create = (name: string, configs: Record<string, string>) =>
    createTopic(suite.client, name, { numPartitions: 1, replicationFactor: 1, configs });

  /** Polls ListOffsets EARLIEST until it reaches `offset`; answers the last value seen. */
  async function waitForEarliest(topic: string, offset: number): Promise<number> {
    const deadline = Date.now() + DELETED_WITHIN_MS;
    let earliest = await earliestOffset(suite.client, topic);
    while (earliest < offset && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      earliest = await earliestOffset(suite.client, topic);
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

describe('one retention check applies every reason, as Kafka does', () => {
  // Long enough that two checks cannot pass for one: the test looks right after the first deletion.
  const CHECK_INTERVAL_MS = 2000;
  const suite = useBrokerWithClient({ overrides: { 'log.retention.check.interval.ms': CHECK_INTERVAL_MS } });

  it('retention.bytes and retention.ms both delete in the same check', async () => {
    const topic = 'both-reasons';
    // One batch per segment: a second one would not fit in segment.bytes.
    await createTopic(suite.client, topic, {
      numPartitions: 1,
      replicationFactor: 1,
      configs: { 'segment.bytes': '1024' },
    });
    const batch = (timestamp: number) => buildBatch([{ value: 'x'.repeat(900), timestamp }]);
    const segmentBytes = batch(0).length;
    // Segment 0 an hour old, 1 to 3 fresh (3 is the active one).
    for (const timestamp of [Date.now() - HOUR_MS, Date.now(), Date.now(), Date.now()]) {
      const response = await produceBatch(suite.client, topic, batch(timestamp));
      assert.equal(response.errorCode, ErrorCode.NONE);
    }
    // retention.ms breaches segment 0 only; retention.bytes (1.5 segments) segments 0 and 1. Kafka's
    // deleteOldSegments runs the log start offset, retention.bytes and retention.ms reasons in one pass, so one
    // check deletes both segments; checking one reason per pass left segment 1 for the next check.
    await alterConfigs(
      suite.client,
      topic,
      { 'retention.ms': '60000', 'retention.bytes': String(Math.floor(segmentBytes * 1.5)) },
      TOPIC_RESOURCE,
    );
    const deadline = Date.now() + DELETED_WITHIN_MS;
    let earliest = 0;
    while (earliest === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      earliest = await earliestOffset(suite.client, topic);
    }
    assert.equal(earliest, 2, 'the first check that deletes anything deletes segments 0 and 1');
  });
});
