import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompressionType } from '../../../src/protocol/compression/index.js';
import {
  ATTRIBUTES,
  BATCH_HEADER_BYTES,
  type BatchFault,
  batchRecordsSection,
  buildBatch,
  buildEndTxnMarkerBatch,
  LAST_OFFSET_DELTA,
  MAGIC,
  RECORDS_COUNT,
  RecordErrorCode,
  validateBatch,
  validateRecordsSection,
  writeBatchCrc,
} from '../../../src/protocol/records/index.js';

const T0 = 1_700_000_000_000;

function sample(compression: number = CompressionType.None): Buffer {
  return buildBatch(
    Array.from({ length: 10 }, (_, i) => ({
      key: `key-${i}`,
      value: `value-${i}`.repeat(5),
      timestamp: T0 + i,
    })),
    { compression, producerId: 7, producerEpoch: 1, baseSequence: 0 },
  );
}

function expectFault(fault: BatchFault | null, kind: BatchFault['kind'], errorCode: number): void {
  assert.ok(fault !== null, `expected ${kind}`);
  assert.equal(fault.kind, kind);
  assert.equal(fault.errorCode, errorCode);
}

/** Changes a header field covered by the CRC and recomputes the CRC, so that only the field is wrong. */
function patched(batch: Buffer, patch: (b: Buffer) => void): Buffer {
  const copy = Buffer.from(batch);
  patch(copy);
  writeBatchCrc(copy);
  return copy;
}

describe('validateBatch', () => {
  for (const codec of [0, 1, 2, 3, 4]) {
    it(`accepts a well-formed batch with codec ${codec}, shallow and deep, from a client and from the log`, () => {
      const batch = sample(codec);
      assert.equal(validateBatch(batch), null);
      assert.equal(validateBatch(batch, 0, batch.length, { fromClient: true, deep: true }), null);
      assert.equal(validateBatch(batch, 0, batch.length, { deep: true }), null);
    });
  }

  it('finds the batch inside a larger buffer by position', () => {
    const batch = sample();
    const framed = Buffer.concat([Buffer.alloc(5, 0xee), batch, Buffer.alloc(3, 0xee)]);
    assert.equal(validateBatch(framed, 5, 5 + batch.length), null);
  });

  it('reports a flipped bit anywhere in the CRC range as CORRUPT_MESSAGE', () => {
    const batch = sample();
    for (let pos = 21; pos < batch.length; pos += 7) {
      const copy = Buffer.from(batch);
      copy[pos] = copy[pos]! ^ 0x01;
      expectFault(validateBatch(copy), 'crc-mismatch', RecordErrorCode.CORRUPT_MESSAGE);
    }
  });

  it('ignores baseOffset and partitionLeaderEpoch, which the CRC does not cover', () => {
    const copy = Buffer.from(sample());
    copy.writeBigInt64BE(123456n, 0);
    copy.writeInt32BE(77, 12);
    assert.equal(validateBatch(copy), null);
  });

  it('reports a batch truncated at every cut point, never throwing', () => {
    const batch = sample();
    for (let cut = 0; cut < batch.length; cut++) {
      const fault = validateBatch(batch.subarray(0, cut));
      assert.ok(fault !== null, `cut ${cut}`);
      assert.equal(fault.errorCode, RecordErrorCode.CORRUPT_MESSAGE);
    }
  });

  it('refuses lengths smaller than a header', () => {
    const copy = Buffer.from(sample());
    copy.writeInt32BE(48, 8);
    expectFault(validateBatch(copy), 'length-too-small', RecordErrorCode.CORRUPT_MESSAGE);
    copy.writeInt32BE(-5, 8);
    expectFault(validateBatch(copy), 'length-too-small', RecordErrorCode.CORRUPT_MESSAGE);
  });

  it('refuses legacy magic with INVALID_RECORD and unknown magic with CORRUPT_MESSAGE', () => {
    const copy = Buffer.from(sample());
    copy[MAGIC] = 1;
    expectFault(validateBatch(copy), 'bad-magic', RecordErrorCode.INVALID_RECORD);
    copy[MAGIC] = 3;
    expectFault(validateBatch(copy), 'bad-magic', RecordErrorCode.CORRUPT_MESSAGE);
  });

  it('refuses unknown compression ids with UNSUPPORTED_COMPRESSION_TYPE', () => {
    for (const id of [5, 6, 7]) {
      const bad = patched(sample(), (b) => b.writeInt16BE(id, ATTRIBUTES));
      expectFault(
        validateBatch(bad),
        'unsupported-compression',
        RecordErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
      );
    }
  });

  it('refuses record counts that are negative, above the limit, or more than the bytes can hold', () => {
    for (const count of [-1, 1_000_001, 1000]) {
      const bad = patched(sample(), (b) => b.writeInt32BE(count, RECORDS_COUNT));
      expectFault(validateBatch(bad), 'records-count', RecordErrorCode.INVALID_RECORD);
    }
  });

  it('checks lastOffsetDelta against the count: strictly for clients, at least count-1 from the log', () => {
    const short = patched(sample(), (b) => b.writeInt32BE(5, LAST_OFFSET_DELTA));
    expectFault(validateBatch(short), 'offset-range', RecordErrorCode.INVALID_RECORD);
    // Compaction keeps the range of a batch whose records it removed, so a larger delta is fine from the log.
    const gapped = patched(sample(), (b) => b.writeInt32BE(20, LAST_OFFSET_DELTA));
    assert.equal(validateBatch(gapped), null);
    expectFault(validateBatch(gapped, 0, gapped.length, { fromClient: true }), 'offset-range', 87);
  });

  it('applies the producer rules to client batches only', () => {
    const marker = buildEndTxnMarkerBatch({
      commit: true,
      coordinatorEpoch: 0,
      producerId: 3,
      producerEpoch: 0,
    });
    assert.equal(validateBatch(marker), null);
    expectFault(validateBatch(marker, 0, marker.length, { fromClient: true }), 'control-from-client', 87);

    const txnNoPid = buildBatch([{ value: 'x' }], { transactional: true });
    expectFault(validateBatch(txnNoPid, 0, txnNoPid.length, { fromClient: true }), 'producer-fields', 87);

    const pidNoSeq = buildBatch([{ value: 'x' }], { producerId: 4, producerEpoch: 0 });
    expectFault(validateBatch(pidNoSeq, 0, pidNoSeq.length, { fromClient: true }), 'producer-fields', 87);

    const empty = buildBatch([], { lastOffsetDelta: 3 });
    assert.equal(validateBatch(empty), null);
    expectFault(validateBatch(empty, 0, empty.length, { fromClient: true }), 'records-count', 87);
  });

  it('deep validation finds a malformed record behind a valid CRC', () => {
    const bad = patched(sample(), (b) => {
      b[BATCH_HEADER_BYTES] = 0x7e; // first record's length: 63, longer than the record
    });
    assert.equal(validateBatch(bad), null, 'the header alone looks fine');
    expectFault(
      validateBatch(bad, 0, bad.length, { deep: true }),
      'records-framing',
      RecordErrorCode.CORRUPT_MESSAGE,
    );
  });

  it('validateRecordsSection walks a section read once; a client batch with a malformed record is INVALID_RECORD', () => {
    const bad = patched(sample(), (b) => {
      b[BATCH_HEADER_BYTES] = 0x7e;
    });
    const badSection = batchRecordsSection(bad, 0);
    expectFault(
      validateRecordsSection(bad, 0, badSection, false),
      'records-framing',
      RecordErrorCode.CORRUPT_MESSAGE,
    );
    expectFault(
      validateRecordsSection(bad, 0, badSection, true),
      'records-framing',
      RecordErrorCode.INVALID_RECORD,
    );
    // A compressed batch whose header lies about its count, found in its decompressed section.
    const fewer = patched(sample(CompressionType.Gzip), (b) => {
      b.writeInt32BE(9, RECORDS_COUNT);
      b.writeInt32BE(8, LAST_OFFSET_DELTA);
    });
    assert.equal(
      validateBatch(fewer, 0, fewer.length, { fromClient: true }),
      null,
      'the header alone looks fine',
    );
    expectFault(validateRecordsSection(fewer, 0, batchRecordsSection(fewer, 0), true), 'records-count', 87);
    const good = sample(CompressionType.Gzip);
    assert.equal(validateRecordsSection(good, 0, batchRecordsSection(good, 0), true), null);
  });

  it('deep validation compares the records with the header count and offsets', () => {
    const fewer = patched(sample(CompressionType.Gzip), (b) => {
      b.writeInt32BE(9, RECORDS_COUNT);
      b.writeInt32BE(8, LAST_OFFSET_DELTA);
    });
    assert.equal(validateBatch(fewer), null);
    expectFault(validateBatch(fewer, 0, fewer.length, { deep: true }), 'records-count', 87);

    const gaps = buildBatch([
      { value: 'a', offsetDelta: 0 },
      { value: 'b', offsetDelta: 4 },
    ]);
    assert.equal(validateBatch(gaps, 0, gaps.length, { deep: true }), null);
    expectFault(validateBatch(gaps, 0, gaps.length, { deep: true, fromClient: true }), 'offset-range', 87);
  });

  it('deep validation turns a compressed bomb into MESSAGE_TOO_LARGE without inflating it', () => {
    const bomb = buildBatch([{ value: Buffer.alloc(4 * 1024 * 1024) }], {
      compression: CompressionType.Zstd,
    });
    assert.ok(bomb.length < 4096);
    const fault = validateBatch(bomb, 0, bomb.length, { deep: true, maxDecompressedBytes: 1024 * 1024 });
    expectFault(fault, 'too-large', RecordErrorCode.MESSAGE_TOO_LARGE);
  });

  it("deep validation reports undecodable compressed payloads as UNKNOWN_SERVER_ERROR (Kafka's KafkaException)", () => {
    const batch = sample(CompressionType.Lz4);
    const bad = patched(batch, (b) => b.fill(0x41, BATCH_HEADER_BYTES + 8, b.length - 4));
    expectFault(
      validateBatch(bad, 0, bad.length, { deep: true }),
      'decompression',
      RecordErrorCode.UNKNOWN_SERVER_ERROR,
    );
  });
});
