// The leader decompresses a producer's zstd, lz4 or multi-block snappy batch into a buffer the process reuses
// (`transient` in zstd.ts, lz4.ts and snappy.ts): what prepareProducedBatches answers must never be a view of it. A batch recompressed for the topic (here to none:
// the section's bytes themselves) must keep its records after the next batch is prepared over the same buffer.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { TopicLogSettings } from '../../src/broker/config/topic-log-settings.js';
import { prepareProducedBatches } from '../../src/broker/replica/leader-append.js';
import { CompressionType } from '../../src/protocol/compression/compression-type.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { iterateRecords } from '../../src/protocol/records/batch-records.js';

const settings = (compressionType: string) =>
  ({
    compressionType,
    maxMessageBytes: 1024 * 1024,
    messageTimestampType: 'CreateTime',
    messageTimestampBeforeMaxMs: Number.MAX_SAFE_INTEGER,
    messageTimestampAfterMaxMs: Number.MAX_SAFE_INTEGER,
    cleanupPolicy: ['delete'],
  }) as unknown as TopicLogSettings;

function packedBatch(prefix: string, compression: number): Buffer {
  // 400 records of about 180 bytes: more than one 32 KiB xerial block when snappy compresses them.
  const records = Array.from({ length: 400 }, (_, i) => ({
    key: `k${i}`,
    value: `${prefix}-${i}-`.repeat(20),
  }));
  return buildBatch(records, { compression, timestamp: Date.now() });
}

function values(prepared: ReturnType<typeof prepareProducedBatches>): string[] {
  assert.ok(prepared.ok, JSON.stringify(prepared));
  return [...iterateRecords(prepared.value.records, 0)].map((r) => r.value?.toString() ?? '');
}

for (const [name, codec] of [
  ['zstd', CompressionType.Zstd],
  ['lz4', CompressionType.Lz4],
  ['snappy', CompressionType.Snappy],
] as const) {
  it(`a ${name} batch recompressed to none keeps its records once the next batch is prepared`, () => {
    const now = Date.now();
    const first = prepareProducedBatches(
      packedBatch('first', codec),
      settings('uncompressed'),
      now,
      true,
      't-0',
    );
    assert.ok(first.ok);
    assert.equal(batchHeader.compression(first.value.records, 0), CompressionType.None);
    const expected = values(first);
    assert.equal(expected[3], 'first-3-'.repeat(20));
    // Same size, other bytes: decoded over the same reused buffer.
    const second = prepareProducedBatches(
      packedBatch('other', codec),
      settings('uncompressed'),
      now,
      true,
      't-0',
    );
    assert.equal(values(second)[3], 'other-3-'.repeat(20));
    assert.deepEqual(values(first), expected, 'the first batch does not share the reused buffer');
  });

  it(`a ${name} batch kept as the producer sent it is the request bytes, not the decompressed section`, () => {
    const batch = packedBatch('kept', codec);
    const prepared = prepareProducedBatches(batch, settings('producer'), Date.now(), true, 't-0');
    assert.ok(prepared.ok);
    assert.equal(prepared.value.records.buffer, batch.buffer);
    prepareProducedBatches(packedBatch('next', codec), settings('producer'), Date.now(), true, 't-0');
    assert.equal(values(prepared)[7], 'kept-7-'.repeat(20));
  });
}
