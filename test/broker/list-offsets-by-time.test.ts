// ListOffsets by time answers the first record whose timestamp reaches the target with that record's own
// timestamp (Kafka's LogSegment.findOffsetByTimestamp), not the max timestamp of the batch holding it; in a
// LogAppendTime topic every record carries the append time. MAX_TIMESTAMP (-3, KIP-734) answers the record that
// holds the largest timestamp, not the last record of its batch. ListOffsets v0 (old clients: Sarama before 0.10.1,
// kafka-python with api_version 0.9/0.10.0) answers by segment modification time, as Kafka's
// legacyFetchOffsetsBefore, with up to max_num_offsets segment offsets, newest first.
// After DeleteRecords cut a batch, the records below the log start offset take no part in a lookup by time.

import assert from 'node:assert/strict';
import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic, produceBatch } from '../helpers/wire-client.js';

const BASE_MS = 1_700_000_000_000;

describe('ListOffsets by time', () => {
  const suite = useBrokerWithClient();

  const lookup = async (topic: string, timestamp: number): Promise<{ offset: bigint; timestamp: bigint }> => {
    const response = await suite.client.call(ApiKey.LIST_OFFSETS, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: topic,
          partitions: [
            { partitionIndex: 0, currentLeaderEpoch: -1, timestamp: BigInt(timestamp), maxNumOffsets: 1 },
          ],
        },
      ],
      timeoutMs: 1000,
    });
    const partition = response.topics[0].partitions[0];
    assert.equal(partition.errorCode, ErrorCode.NONE);
    return { offset: partition.offset, timestamp: partition.timestamp };
  };

  it("answers the found record's own timestamp (CreateTime)", async () => {
    await createTopic(suite.client, 'by-time', { numPartitions: 1 });
    // One batch, records 10 s apart: the batch's max timestamp (BASE + 30 s) belongs to its last record only.
    const records = [0, 10, 20, 30].map((s, i) => ({ value: `v${i}`, timestamp: BASE_MS + s * 1000 }));
    const produced = await produceBatch(suite.client, 'by-time', buildBatch(records));
    assert.equal(produced.errorCode, ErrorCode.NONE);

    assert.deepEqual(await lookup('by-time', BASE_MS), { offset: 0n, timestamp: BigInt(BASE_MS) });
    assert.deepEqual(await lookup('by-time', BASE_MS + 5000), {
      offset: 1n,
      timestamp: BigInt(BASE_MS + 10_000),
    });
    assert.deepEqual(await lookup('by-time', BASE_MS + 20_000), {
      offset: 2n,
      timestamp: BigInt(BASE_MS + 20_000),
    });
    assert.deepEqual(await lookup('by-time', BASE_MS + 30_001), { offset: -1n, timestamp: -1n });
  });

  it('answers the append time in a LogAppendTime topic', async () => {
    await createTopic(suite.client, 'by-append-time', {
      numPartitions: 1,
      configs: { 'message.timestamp.type': 'LogAppendTime' },
    });
    const before = Date.now();
    const records = [0, 1, 2].map((i) => ({ value: `v${i}`, timestamp: BASE_MS + i }));
    const produced = await produceBatch(suite.client, 'by-append-time', buildBatch(records));
    assert.equal(produced.errorCode, ErrorCode.NONE);
    const appendTime = Number(produced.logAppendTimeMs);
    assert.ok(appendTime >= before, `append time ${appendTime} before the produce at ${before}`);

    // The producer's timestamps are replaced: a target between them finds the first record at the append time.
    assert.deepEqual(await lookup('by-append-time', BASE_MS + 1), {
      offset: 0n,
      timestamp: BigInt(appendTime),
    });
    assert.deepEqual(await lookup('by-append-time', appendTime + 1), { offset: -1n, timestamp: -1n });
  });

  it('MAX_TIMESTAMP answers the record with the largest timestamp, inside its batch (KIP-734)', async () => {
    await createTopic(suite.client, 'max-time', { numPartitions: 1 });
    // The largest timestamp is the second record of the second batch (offset 4); the batch ends at offset 6.
    const first = [0, 10, 20].map((s, i) => ({ value: `a${i}`, timestamp: BASE_MS + s * 1000 }));
    const second = [5, 90, 30, 40].map((s, i) => ({ value: `b${i}`, timestamp: BASE_MS + s * 1000 }));
    for (const records of [first, second]) {
      const produced = await produceBatch(suite.client, 'max-time', buildBatch(records));
      assert.equal(produced.errorCode, ErrorCode.NONE);
    }
    assert.deepEqual(await lookup('max-time', -3), { offset: 4n, timestamp: BigInt(BASE_MS + 90_000) });
  });

  it('MAX_TIMESTAMP in a LogAppendTime topic answers the first record of the latest batch', async () => {
    await createTopic(suite.client, 'max-append-time', {
      numPartitions: 1,
      configs: { 'message.timestamp.type': 'LogAppendTime' },
    });
    const records = [0, 1, 2].map((i) => ({ value: `v${i}`, timestamp: BASE_MS + i }));
    const produced = await produceBatch(suite.client, 'max-append-time', buildBatch(records));
    assert.equal(produced.errorCode, ErrorCode.NONE);
    assert.deepEqual(await lookup('max-append-time', -3), {
      offset: 0n,
      timestamp: produced.logAppendTimeMs,
    });
  });

  const deleteRecordsBefore = async (topic: string, offset: number): Promise<void> => {
    const deleted = await suite.client.call(ApiKey.DELETE_RECORDS, 2, {
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, offset: BigInt(offset) }] }],
      timeoutMs: 5000,
    });
    assert.equal(deleted.topics[0].partitions[0].errorCode, ErrorCode.NONE);
  };

  it('after DeleteRecords inside a batch, answers the first readable record reaching the time', async () => {
    // Kafka's FileRecords.searchForTimestamp skips the records below the log start offset: the answer is a record
    // still readable, with its own timestamp, not a deleted record's timestamp next to the log start offset.
    await createTopic(suite.client, 'by-time-trimmed', { numPartitions: 1 });
    const records = [0, 10, 20, 30].map((s, i) => ({ value: `v${i}`, timestamp: BASE_MS + s * 1000 }));
    assert.equal((await produceBatch(suite.client, 'by-time-trimmed', buildBatch(records))).errorCode, 0);
    await deleteRecordsBefore('by-time-trimmed', 2);
    assert.deepEqual(await lookup('by-time-trimmed', BASE_MS + 5000), {
      offset: 2n,
      timestamp: BigInt(BASE_MS + 20_000),
    });
  });

  it('goes on to the next batch when no record of a batch at or after the log start reaches the time', async () => {
    // The first batch's max (BASE + 30 s) reaches the target, but its record at the log start offset is older
    // than the target: Kafka's search continues with the next batch (offset 2, BASE + 40 s).
    await createTopic(suite.client, 'by-time-skip', { numPartitions: 1 });
    const first = [30, 0].map((s, i) => ({ value: `a${i}`, timestamp: BASE_MS + s * 1000 }));
    const second = [{ value: 'b0', timestamp: BASE_MS + 40_000 }];
    for (const batch of [first, second]) {
      assert.equal((await produceBatch(suite.client, 'by-time-skip', buildBatch(batch))).errorCode, 0);
    }
    await deleteRecordsBefore('by-time-skip', 1);
    assert.deepEqual(await lookup('by-time-skip', BASE_MS + 20_000), {
      offset: 2n,
      timestamp: BigInt(BASE_MS + 40_000),
    });
  });

  /** ListOffsets v0 of partition 0 of `topic`: the old-style offsets, newest first. */
  const lookupV0 = async (topic: string, timestamp: number, maxNumOffsets: number): Promise<bigint[]> => {
    const response = await suite.client.call(ApiKey.LIST_OFFSETS, 0, {
      replicaId: -1,
      topics: [
        {
          name: topic,
          partitions: [
            { partitionIndex: 0, currentLeaderEpoch: -1, timestamp: BigInt(timestamp), maxNumOffsets },
          ],
        },
      ],
    });
    const partition = response.topics[0].partitions[0];
    assert.equal(partition.errorCode, ErrorCode.NONE);
    return partition.oldStyleOffsets;
  };

  it('v0 answers segment offsets by file modification time, up to max_num_offsets (legacyFetchOffsetsBefore)', async () => {
    const topic = 'by-time-v0';
    // A segment for each one-record batch: segments at offsets 0, 1 and 2, the last one active and not empty.
    await createTopic(suite.client, topic, { numPartitions: 1, configs: { 'segment.bytes': '100' } });
    // Records of now: retention does not touch them, and v0 does not read their timestamps anyway.
    for (const value of ['a', 'b', 'c']) {
      const produced = await produceBatch(suite.client, topic, buildBatch([{ value }]));
      assert.equal(produced.errorCode, ErrorCode.NONE);
    }
    // The segments were last written at BASE, BASE + 10 s and BASE + 20 s.
    for (const [base, seconds] of [
      [0, 0],
      [1, 10],
      [2, 20],
    ]) {
      const file = join(suite.broker.dataDir, `${topic}-0`, `${String(base).padStart(20, '0')}.log`);
      utimesSync(file, (BASE_MS + seconds! * 1000) / 1000, (BASE_MS + seconds! * 1000) / 1000);
    }

    assert.deepEqual(await lookupV0(topic, -1, 1), [3n], 'latest: the high watermark');
    assert.deepEqual(await lookupV0(topic, -1, 10), [3n, 2n, 1n, 0n], 'latest, then the segments');
    assert.deepEqual(await lookupV0(topic, -2, 10), [0n], 'earliest: the log start alone');
    assert.deepEqual(await lookupV0(topic, BASE_MS + 15_000, 10), [1n, 0n], 'segments modified by then');
    assert.deepEqual(await lookupV0(topic, BASE_MS + 15_000, 1), [1n]);
    assert.deepEqual(await lookupV0(topic, BASE_MS - 1, 10), [], 'every segment modified later');
    assert.deepEqual(await lookupV0(topic, Date.now() + 3_600_000, 1), [3n], 'a time to come: the end');
  });
});
