import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompressionType } from '../../../src/protocol/compression/index.js';
import {
  BATCH_HEADER_BYTES,
  BatchFaultError,
  batchHeader,
  batchRecordsSection,
  buildBatch,
  estimateRecordBytes,
  iterateRecords,
  RECORDS_COUNT,
  readRecords,
  recompressBatch,
  TimestampType,
  validateBatch,
  writeBatchCrc,
} from '../../../src/protocol/records/index.js';

const T0 = 1_700_000_000_000;
const CODECS = [0, 1, 2, 3, 4];

function inputs(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    key: i % 3 === 0 ? null : `key-${i}`,
    value: `value-${i}-`.repeat(i % 7),
    headers: i % 2 === 0 ? [{ key: 'n', value: String(i) }] : [],
    timestamp: T0 + ((i * 37) % 11) - 5,
  }));
}

describe('building and reading batches', () => {
  for (const codec of CODECS) {
    it(`round-trips records through a codec ${codec} batch with absolute offsets and timestamps`, () => {
      const input = inputs(50);
      const batch = buildBatch(input, { baseOffset: 1000, compression: codec });
      assert.equal(batchHeader.compression(batch), codec);
      assert.equal(batchHeader.recordsCount(batch), 50);
      assert.equal(batchHeader.lastOffsetDelta(batch), 49);
      assert.equal(batchHeader.baseTimestamp(batch), input[0]!.timestamp);
      assert.equal(batchHeader.maxTimestamp(batch), Math.max(...input.map((r) => r.timestamp)));
      const records = readRecords(batch);
      assert.equal(records.length, 50);
      records.forEach((r, i) => {
        assert.equal(r.offset, 1000 + i);
        assert.equal(r.timestamp, input[i]!.timestamp);
        assert.equal(r.key?.toString() ?? null, input[i]!.key);
        assert.equal(r.value?.toString(), input[i]!.value);
        assert.deepEqual(
          r.headers.map((h) => [h.key, h.value?.toString()]),
          input[i]!.headers.map((h) => [h.key, h.value]),
        );
      });
    });
  }

  it('gives every record the batch maxTimestamp in a LogAppendTime batch', () => {
    const batch = buildBatch(inputs(3), { logAppendTimeMs: T0 + 999 });
    assert.equal(batchHeader.timestampType(batch), TimestampType.LogAppendTime);
    assert.deepEqual(
      readRecords(batch).map((r) => r.timestamp),
      [T0 + 999, T0 + 999, T0 + 999],
    );
  });

  it('stores the delete horizon in baseTimestamp and keeps record timestamps exact', () => {
    const batch = buildBatch(
      [
        { value: 'a', timestamp: T0 },
        { value: 'b', timestamp: T0 + 10 },
      ],
      { deleteHorizonMs: T0 + 86_400_000 },
    );
    assert.equal(batchHeader.hasDeleteHorizon(batch), true);
    assert.equal(batchHeader.deleteHorizonMs(batch), T0 + 86_400_000);
    assert.deepEqual(
      readRecords(batch).map((r) => r.timestamp),
      [T0, T0 + 10],
    );
    assert.equal(batchHeader.deleteHorizonMs(buildBatch([{ value: 'x' }])), -1);
  });

  it('reports records that do not match the header count as a fault', () => {
    const batch = Buffer.from(buildBatch(inputs(4)));
    batch.writeInt32BE(3, RECORDS_COUNT);
    writeBatchCrc(batch);
    assert.throws(
      () => readRecords(batch),
      (e) => e instanceof BatchFaultError && e.fault.kind === 'records-count',
    );
    batch.writeInt32BE(5, RECORDS_COUNT);
    writeBatchCrc(batch);
    assert.throws(
      () => readRecords(batch),
      (e) => e instanceof BatchFaultError && e.fault.kind === 'records-framing',
    );
  });

  it('refuses record timestamps that would not be exact as numbers', () => {
    const batch = Buffer.from(buildBatch([{ value: 'x', timestamp: 0 }]));
    batch.writeBigInt64BE(2n ** 62n, 27); // baseTimestamp
    writeBatchCrc(batch);
    assert.equal(validateBatch(batch), null, 'the bytes themselves are a valid batch');
    assert.throws(
      () => readRecords(batch),
      (e) =>
        e instanceof BatchFaultError && e.fault.kind === 'timestamp-out-of-range' && e.fault.errorCode === 32,
    );
  });

  it('bounds decompression while iterating', () => {
    const batch = buildBatch([{ value: Buffer.alloc(2_000_000) }], { compression: CompressionType.Gzip });
    assert.throws(
      () => iterateRecords(batch, 0, { maxDecompressedBytes: 1_000_000 }).next(),
      (e) => e instanceof BatchFaultError && e.fault.kind === 'too-large' && e.fault.errorCode === 10,
    );
  });

  it('estimates record sizes from above, so a producer never overfills batch.size', () => {
    const input = inputs(30);
    const batch = buildBatch(input);
    const estimate = input.reduce((n, r) => n + estimateRecordBytes(r), BATCH_HEADER_BYTES);
    assert.ok(estimate >= batch.length);
    // ...and not wildly: within the reserved varint bytes of each record.
    assert.ok(estimate - batch.length <= 30 * 40);
    for (const r of input) {
      assert.ok(estimateRecordBytes(r) >= buildBatch([r]).length - BATCH_HEADER_BYTES);
    }
  });

  it('returns the records section as a view when uncompressed', () => {
    const batch = buildBatch(inputs(2));
    assert.equal(batchRecordsSection(batch).buffer, batch.buffer);
  });
});

describe('recompressBatch', () => {
  for (const from of CODECS) {
    for (const to of CODECS) {
      it(`recompresses codec ${from} to codec ${to}, keeping header fields and records`, () => {
        const original = buildBatch(inputs(20), {
          compression: from,
          baseOffset: 77,
          partitionLeaderEpoch: 3,
          producerId: 11,
          producerEpoch: 2,
          baseSequence: 40,
          transactional: true,
        });
        const out = recompressBatch(original, 0, to);
        assert.equal(validateBatch(out, 0, out.length, { deep: true, fromClient: true }), null);
        assert.equal(batchHeader.compression(out), to);
        for (const field of [
          'baseOffset',
          'partitionLeaderEpoch',
          'lastOffsetDelta',
          'baseTimestamp',
          'maxTimestamp',
          'producerId',
          'producerEpoch',
          'baseSequence',
          'recordsCount',
          'isTransactional',
        ] as const) {
          assert.equal(batchHeader[field](out), batchHeader[field](original), field);
        }
        assert.deepEqual(readRecords(out), readRecords(original));
      });
    }
  }

  it('refuses an unknown target codec', () => {
    const batch = buildBatch(inputs(1));
    assert.throws(() => recompressBatch(batch, 0, 6), BatchFaultError);
  });
});
