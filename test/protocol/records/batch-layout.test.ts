import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crc32, crc32c } from '@node-rs/crc32';
import {
  Attribute,
  batchHeader,
  buildBatch,
  buildEndTxnMarkerBatch,
  ControlRecordType,
  decodeControlKey,
  decodeEndTxnMarker,
  readRecords,
  TimestampType,
  validateBatch,
} from '../../../src/protocol/records/index.js';
import { Bytes, crc32cOracle, crc32Oracle } from './oracles.js';

const T0 = 1_700_000_000_000;

/** The v2 header written field by field from Kafka's documented layout; CRC left 0 to be filled in. */
function header(fields: {
  batchLength: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordsCount: number;
}): Bytes {
  return new Bytes()
    .int64(0n) // baseOffset
    .int32(fields.batchLength)
    .int32(-1) // partitionLeaderEpoch
    .int8(2) // magic
    .int32(0) // crc, patched below
    .int16(fields.attributes)
    .int32(fields.lastOffsetDelta)
    .int64(BigInt(fields.baseTimestamp))
    .int64(BigInt(fields.maxTimestamp))
    .int64(fields.producerId)
    .int16(fields.producerEpoch)
    .int32(fields.baseSequence)
    .int32(fields.recordsCount);
}

function withOracleCrc(bytes: Buffer): Buffer {
  bytes.writeUInt32BE(crc32cOracle(bytes.subarray(21)), 17);
  return bytes;
}

describe('v2 batch layout', () => {
  it('has CRC oracles that agree with the standard check values and with the native CRCs', () => {
    assert.equal(crc32cOracle(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32Oracle(Buffer.from('123456789')), 0xcbf43926);
    const sample = Buffer.from('a record batch body with some bytes in it');
    assert.equal(crc32c(sample) >>> 0, crc32cOracle(sample));
    assert.equal(crc32(sample) >>> 0, crc32Oracle(sample));
  });

  it('builds exactly the bytes of a two-record batch written by hand', () => {
    const records = new Bytes()
      // record 0: length 8, attributes, tsDelta 0, offsetDelta 0, key "k", value "v", no headers
      .raw([0x10, 0x00, 0x00, 0x00, 0x02])
      .raw('k')
      .raw([0x02])
      .raw('v')
      .raw([0x00])
      // record 1: length 16, tsDelta 5, offsetDelta 1, null key, value "hello", one header h1=x
      .raw([0x20, 0x00, 0x0a, 0x02, 0x01, 0x0a])
      .raw('hello')
      .raw([0x02, 0x04])
      .raw('h1')
      .raw([0x02])
      .raw('x');
    const expected = header({
      batchLength: 49 + records.length,
      attributes: 0,
      lastOffsetDelta: 1,
      baseTimestamp: T0,
      maxTimestamp: T0 + 5,
      producerId: -1n,
      producerEpoch: -1,
      baseSequence: -1,
      recordsCount: 2,
    })
      .raw(records.toBuffer())
      .toBuffer();
    withOracleCrc(expected);

    const built = buildBatch([
      { key: 'k', value: 'v', timestamp: T0 },
      { key: null, value: 'hello', timestamp: T0 + 5, headers: [{ key: 'h1', value: 'x' }] },
    ]);
    assert.equal(built.toString('hex'), expected.toString('hex'));
    assert.equal(validateBatch(expected), null);

    const [r0, r1] = readRecords(expected);
    assert.equal(r0!.key!.toString(), 'k');
    assert.equal(r0!.timestamp, T0);
    assert.equal(r1!.key, null);
    assert.equal(r1!.value!.toString(), 'hello');
    assert.equal(r1!.offset, 1);
    assert.equal(r1!.timestamp, T0 + 5);
    assert.deepEqual(
      r1!.headers.map((h) => [h.key, h.value?.toString()]),
      [['h1', 'x']],
    );
  });

  it('reads every header field where the layout puts it', () => {
    const batch = buildBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }], {
      baseOffset: 2 ** 40,
      partitionLeaderEpoch: 9,
      producerId: 2 ** 33,
      producerEpoch: 4,
      baseSequence: 0x7fff_fffe,
      transactional: true,
      timestamp: T0,
    });
    assert.equal(batchHeader.baseOffset(batch), 2 ** 40);
    assert.equal(batchHeader.lastOffset(batch), 2 ** 40 + 2);
    assert.equal(batchHeader.partitionLeaderEpoch(batch), 9);
    assert.equal(batchHeader.producerId(batch), 2 ** 33);
    assert.equal(batchHeader.producerEpoch(batch), 4);
    assert.equal(batchHeader.hasProducerId(batch), true);
    assert.equal(batchHeader.isTransactional(batch), true);
    assert.equal(batchHeader.isControl(batch), false);
    // Sequences wrap at 2^31 - 1 to 0, so the third record's sequence is 0.
    assert.equal(batchHeader.lastSequence(batch), 0);
    assert.equal(batchHeader.recordsCount(batch), 3);
    assert.equal(batchHeader.timestampType(batch), TimestampType.CreateTime);
  });

  it('writes a COMMIT marker as a transactional control batch, byte for byte', () => {
    const record = new Bytes()
      .raw([0x20, 0x00, 0x00, 0x00, 0x08])
      .int16(0) // key version
      .int16(ControlRecordType.Commit)
      .raw([0x0c])
      .int16(0) // value version
      .int32(7) // coordinator epoch
      .raw([0x00]);
    const expected = withOracleCrc(
      header({
        batchLength: 49 + record.length,
        attributes: Attribute.Transactional | Attribute.Control,
        lastOffsetDelta: 0,
        baseTimestamp: T0,
        maxTimestamp: T0,
        producerId: 42n,
        producerEpoch: 3,
        baseSequence: -1,
        recordsCount: 1,
      })
        .raw(record.toBuffer())
        .toBuffer(),
    );
    const built = buildEndTxnMarkerBatch({
      commit: true,
      coordinatorEpoch: 7,
      producerId: 42,
      producerEpoch: 3,
      timestamp: T0,
    });
    assert.equal(built.toString('hex'), expected.toString('hex'));
    const [marker] = readRecords(built);
    assert.deepEqual(decodeControlKey(marker!.key), { version: 0, type: ControlRecordType.Commit });
    assert.deepEqual(decodeEndTxnMarker(marker!.value), { version: 0, coordinatorEpoch: 7 });
  });

  it('builds ABORT markers and refuses short or negative-version control records', () => {
    const abort = buildEndTxnMarkerBatch({
      commit: false,
      coordinatorEpoch: 1,
      producerId: 5,
      producerEpoch: 0,
    });
    assert.equal(decodeControlKey(readRecords(abort)[0]!.key).type, ControlRecordType.Abort);
    assert.throws(() => decodeControlKey(Buffer.from([0, 0, 0])));
    assert.throws(() => decodeControlKey(null));
    assert.throws(() => decodeControlKey(Buffer.from([0xff, 0xff, 0, 1])));
    assert.throws(() => decodeEndTxnMarker(Buffer.from([0, 0, 0, 0, 0])));
    // A newer marker version with extra bytes is still readable.
    assert.deepEqual(decodeEndTxnMarker(Buffer.from([0, 1, 0, 0, 0, 9, 0xaa])), {
      version: 1,
      coordinatorEpoch: 9,
    });
  });
});
