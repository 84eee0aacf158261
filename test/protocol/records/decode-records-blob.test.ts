import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompressionType } from '../../../src/protocol/compression/index.js';
import {
  BatchFaultError,
  buildBatch,
  buildEndTxnMarkerBatch,
  buildMessageSet,
  decodeRecordsBlob,
} from '../../../src/protocol/records/index.js';

const T0 = 1_700_000_000_000;

describe('decodeRecordsBlob', () => {
  const blob = Buffer.concat([
    buildMessageSet(
      [
        { offset: 0, timestamp: T0, value: Buffer.from('m0') },
        { offset: 1, timestamp: T0, value: Buffer.from('m1') },
      ],
      { magic: 1, compression: CompressionType.Gzip },
    ),
    buildBatch([{ value: 'txn', timestamp: T0 }], {
      baseOffset: 2,
      producerId: 8,
      producerEpoch: 1,
      baseSequence: 0,
      transactional: true,
    }),
    buildEndTxnMarkerBatch({
      commit: false,
      coordinatorEpoch: 0,
      producerId: 8,
      producerEpoch: 1,
      baseOffset: 3,
    }),
    buildBatch([{ value: 'plain', timestamp: T0 }], { baseOffset: 4, compression: CompressionType.Snappy }),
  ]);

  it('decodes legacy wrappers and v2 batches with the fields a read_committed consumer needs', () => {
    const { batches, partialBytes } = decodeRecordsBlob(blob);
    assert.equal(partialBytes, 0);
    assert.deepEqual(
      batches.map((b) => [b.magic, b.baseOffset, b.lastOffset, b.producerId, b.isTransactional, b.isControl]),
      [
        [1, 0, 1, -1, false, false],
        [2, 2, 2, 8, true, false],
        [2, 3, 3, 8, true, true],
        [2, 4, 4, -1, false, false],
      ],
    );
    assert.deepEqual(
      batches.flatMap((b) => (b.isControl ? [] : b.records.map((r) => [r.offset, r.value?.toString()]))),
      [
        [0, 'm0'],
        [1, 'm1'],
        [2, 'txn'],
        [4, 'plain'],
      ],
    );
  });

  it('reports a partial tail and refuses a corrupt batch unless told the CRC was checked', () => {
    assert.equal(decodeRecordsBlob(blob, 0, blob.length - 3).batches.length, 3);
    assert.ok(decodeRecordsBlob(blob, 0, blob.length - 3).partialBytes > 0);
    const bad = Buffer.from(blob);
    bad[bad.length - 1] = bad[bad.length - 1]! ^ 0xff;
    assert.throws(
      () => decodeRecordsBlob(bad),
      (e) => e instanceof BatchFaultError && e.fault.kind === 'crc-mismatch',
    );
  });
});
