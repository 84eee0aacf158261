import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CompressionType,
  compress,
  decompress,
  scanLz4Frame,
} from '../../../src/protocol/compression/index.js';
import {
  BatchFaultError,
  batchHeader,
  buildBatch,
  buildEndTxnMarkerBatch,
  buildMessageSet,
  decodeMessageSet,
  downConvertRecords,
  legacyToBatch,
  listEntries,
  messageSetToBatch,
  RecordErrorCode,
  readRecords,
  TimestampType,
  upConvertRecords,
  validateBatch,
  validateMessageSet,
} from '../../../src/protocol/records/index.js';
import { Bytes, crc32Oracle } from './oracles.js';

const T0 = 1_700_000_000_000;

/** A legacy message written field by field, its CRC32 computed by the oracle. */
function handMessage(m: {
  offset: bigint;
  magic: 0 | 1;
  attributes: number;
  timestamp?: bigint;
  key: Buffer | null;
  value: Buffer | null;
}): Buffer {
  const body = new Bytes().int8(m.magic).int8(m.attributes);
  if (m.magic === 1) body.int64(m.timestamp ?? -1n);
  for (const field of [m.key, m.value]) {
    if (field === null) body.int32(-1);
    else body.int32(field.length).raw(field);
  }
  const bodyBytes = body.toBuffer();
  return new Bytes()
    .int64(m.offset)
    .int32(4 + bodyBytes.length)
    .int32(crc32Oracle(bodyBytes))
    .raw(bodyBytes)
    .toBuffer();
}

function faultKind(kind: string, errorCode?: number) {
  return (e: unknown) =>
    e instanceof BatchFaultError &&
    e.fault.kind === kind &&
    (errorCode === undefined || e.fault.errorCode === errorCode);
}

describe('legacy messages', () => {
  it('writes a v0 message exactly as laid out by hand, with its CRC32', () => {
    const expected = handMessage({
      offset: 0n,
      magic: 0,
      attributes: 0,
      key: null,
      value: Buffer.from('hello'),
    });
    assert.equal(expected.length, 12 + 19);
    const built = buildMessageSet([{ offset: 0, value: Buffer.from('hello') }], { magic: 0 });
    assert.equal(built.toString('hex'), expected.toString('hex'));
    const [m] = decodeMessageSet(expected).messages;
    assert.equal(m!.magic, 0);
    assert.equal(m!.timestamp, -1);
    assert.equal(m!.key, null);
    assert.equal(m!.value!.toString(), 'hello');
  });

  it('writes a v1 message exactly as laid out by hand, with its timestamp', () => {
    const expected = handMessage({
      offset: 5n,
      magic: 1,
      attributes: 0,
      timestamp: BigInt(T0),
      key: Buffer.from('k'),
      value: Buffer.from('v'),
    });
    const built = buildMessageSet(
      [{ offset: 5, timestamp: T0, key: Buffer.from('k'), value: Buffer.from('v') }],
      {
        magic: 1,
      },
    );
    assert.equal(built.toString('hex'), expected.toString('hex'));
    const [m] = decodeMessageSet(expected).messages;
    assert.deepEqual([m!.offset, m!.timestamp, m!.timestampType], [5, T0, TimestampType.CreateTime]);
  });

  it('reports a wrong CRC32 as CORRUPT_MESSAGE', () => {
    const bad = buildMessageSet([{ offset: 0, value: Buffer.from('hello') }], { magic: 1 });
    bad[bad.length - 1] = 0x21;
    assert.throws(() => decodeMessageSet(bad), faultKind('crc-mismatch', RecordErrorCode.CORRUPT_MESSAGE));
    assert.equal(validateMessageSet(bad)?.errorCode, RecordErrorCode.CORRUPT_MESSAGE);
  });

  for (const magic of [0, 1] as const) {
    for (const codec of [CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4]) {
      it(`reads a magic ${magic} wrapper with codec ${codec} as its inner messages with absolute offsets`, () => {
        const messages = [10, 11, 12, 14].map((offset) => ({
          offset,
          timestamp: T0 + offset,
          key: Buffer.from(`k${offset}`),
          value: Buffer.from(`v${offset}`),
        }));
        const set = buildMessageSet(messages, { magic, compression: codec });
        assert.equal(listEntries(set).entries.length, 1, 'one wrapper');
        // The wrapper carries the last offset; v1 inner offsets are relative, v0 inner offsets absolute.
        assert.equal(set.readBigInt64BE(0), 14n);
        const value = decodeMessageSet(set).messages;
        assert.deepEqual(
          value.map((m) => m.offset),
          [10, 11, 12, 14],
        );
        assert.deepEqual(
          value.map((m) => m.key!.toString()),
          ['k10', 'k11', 'k12', 'k14'],
        );
        assert.deepEqual(
          value.map((m) => m.timestamp),
          magic === 1 ? [T0 + 10, T0 + 11, T0 + 12, T0 + 14] : [-1, -1, -1, -1],
        );
        assert.ok(value.every((m) => m.compression === codec));
        const inner = decompress(codec, set.subarray(12 + 4 + 2 + (magic === 1 ? 8 : 0) + 4 + 4), undefined, {
          magic,
        });
        assert.equal(inner.readBigInt64BE(0), magic === 1 ? 0n : 10n);
      });
    }
  }

  it("writes magic 0 lz4 with Kafka's broken header checksum and magic 1 with the correct one", () => {
    const messages = [{ offset: 0, value: Buffer.from('lz4 legacy') }];
    const valueStart = (magic: number) => 12 + 4 + 2 + (magic === 1 ? 8 : 0) + 4 + 4;
    const v0 = buildMessageSet(messages, { magic: 0, compression: CompressionType.Lz4 });
    const v1 = buildMessageSet(messages, { magic: 1, compression: CompressionType.Lz4 });
    assert.equal(scanLz4Frame(v0.subarray(valueStart(0)), 0).hcBroken, true);
    assert.equal(scanLz4Frame(v1.subarray(valueStart(1)), 0).hcValid, true);
    assert.equal(decodeMessageSet(v0).messages[0]!.value!.toString(), 'lz4 legacy');
  });

  it('gives inner messages the wrapper timestamp when a v1 wrapper is LogAppendTime', () => {
    const set = buildMessageSet(
      [
        { offset: 0, timestamp: T0, value: Buffer.from('a') },
        { offset: 1, timestamp: T0 + 1, value: Buffer.from('b') },
      ],
      { magic: 1, compression: CompressionType.Gzip, logAppendTimeMs: T0 + 500 },
    );
    const { messages } = decodeMessageSet(set);
    assert.deepEqual(
      messages.map((m) => [m.timestamp, m.timestampType]),
      [
        [T0 + 500, TimestampType.LogAppendTime],
        [T0 + 500, TimestampType.LogAppendTime],
      ],
    );
  });

  it('refuses compressed messages nested in compressed messages, and mismatched inner magic', () => {
    const innerWrapper = buildMessageSet([{ offset: 0, value: Buffer.from('x') }], {
      magic: 1,
      compression: CompressionType.Gzip,
    });
    const nested = handMessage({
      offset: 0n,
      magic: 1,
      attributes: CompressionType.Gzip,
      timestamp: 0n,
      key: null,
      value: compress(CompressionType.Gzip, innerWrapper),
    });
    assert.throws(
      () => decodeMessageSet(nested),
      faultKind('bad-inner-message', RecordErrorCode.INVALID_RECORD),
    );

    const v0Inner = buildMessageSet([{ offset: 0, value: Buffer.from('x') }], { magic: 0 });
    const mixed = handMessage({
      offset: 0n,
      magic: 1,
      attributes: CompressionType.Gzip,
      timestamp: 0n,
      key: null,
      value: compress(CompressionType.Gzip, v0Inner),
    });
    assert.throws(() => decodeMessageSet(mixed), faultKind('bad-inner-message'));
  });

  it('refuses zstd and unknown codecs in legacy messages with UNSUPPORTED_COMPRESSION_TYPE', () => {
    const inner = buildMessageSet([{ offset: 0, value: Buffer.from('x') }], { magic: 1 });
    for (const codec of [CompressionType.Zstd, 5]) {
      const message = handMessage({
        offset: 0n,
        magic: 1,
        attributes: codec,
        timestamp: 0n,
        key: null,
        value: codec === CompressionType.Zstd ? compress(codec, inner) : inner,
      });
      assert.throws(
        () => decodeMessageSet(message),
        faultKind('unsupported-compression', RecordErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
      );
    }
  });

  it('refuses offsets and timestamps beyond 2^53 instead of rounding them', () => {
    const hugeOffset = handMessage({ offset: 2n ** 62n, magic: 0, attributes: 0, key: null, value: null });
    assert.throws(
      () => decodeMessageSet(hugeOffset),
      faultKind('offset-out-of-range', RecordErrorCode.INVALID_RECORD),
    );
    const hugeTime = handMessage({
      offset: 0n,
      magic: 1,
      attributes: 0,
      timestamp: 2n ** 63n - 1n,
      key: null,
      value: null,
    });
    assert.throws(() => decodeMessageSet(hugeTime), faultKind('timestamp-out-of-range', 32));
  });

  it('refuses to up-convert messages whose offsets or timestamps a single batch cannot express', () => {
    const far = [
      { offset: 0, timestamp: -(2 ** 53) + 1, value: Buffer.from('a') },
      { offset: 1, timestamp: 2 ** 53 - 1, value: Buffer.from('b') },
    ];
    const farTimes = decodeMessageSet(buildMessageSet(far, { magic: 1 })).messages;
    assert.throws(() => legacyToBatch(farTimes), faultKind('timestamp-out-of-range'));
    const spread = decodeMessageSet(
      buildMessageSet(
        [
          { offset: 0, timestamp: 0, value: null },
          { offset: 2 ** 40, timestamp: 0, value: null },
        ],
        { magic: 1 },
      ),
    ).messages;
    assert.throws(() => legacyToBatch(spread), faultKind('offset-range'));
    assert.equal(readRecords(legacyToBatch(spread, { offsets: 'sequential' })).length, 2);
  });

  it('bounds the decompressed size of all wrappers together', () => {
    const big = buildMessageSet([{ offset: 0, value: Buffer.alloc(600_000) }], { magic: 1, compression: 1 });
    const twice = Buffer.concat([big, big]);
    assert.equal(
      decodeMessageSet(twice, 0, twice.length, { maxDecompressedBytes: 1_300_000 }).messages.length,
      2,
    );
    assert.throws(
      () => decodeMessageSet(twice, 0, twice.length, { maxDecompressedBytes: 1_000_000 }),
      faultKind('too-large'),
    );
  });

  it('handles a message set cut at every point: a partial tail, or a typed fault, never a crash', () => {
    const set = Buffer.concat([
      buildMessageSet([{ offset: 0, value: Buffer.from('plain') }], { magic: 1 }),
      buildMessageSet(
        [
          { offset: 1, value: Buffer.from('a') },
          { offset: 2, value: Buffer.from('b') },
        ],
        { magic: 1, compression: CompressionType.Snappy },
      ),
    ]);
    const firstBytes = listEntries(set).entries[0]!.sizeInBytes;
    for (let cut = 0; cut < set.length; cut++) {
      try {
        const { messages, partialBytes } = decodeMessageSet(set, 0, cut);
        const complete = cut >= firstBytes ? 1 : 0;
        assert.equal(messages.length, complete, `cut ${cut}`);
        assert.equal(partialBytes, cut - complete * firstBytes, `cut ${cut}`);
      } catch (e) {
        assert.ok(e instanceof BatchFaultError, `cut ${cut}: ${String(e)}`);
      }
    }
    assert.equal(decodeMessageSet(set).messages.length, 3);
  });
});

describe('conversions', () => {
  const records = [
    { key: 'a', value: 'one', timestamp: T0, headers: [{ key: 'h', value: 'dropped' }] },
    { key: null, value: 'two', timestamp: T0 + 7 },
    { key: 'c', value: null, timestamp: T0 + 3 },
  ];

  for (const codec of [
    CompressionType.None,
    CompressionType.Gzip,
    CompressionType.Snappy,
    CompressionType.Lz4,
  ]) {
    for (const magic of [0, 1] as const) {
      it(`down-converts a codec ${codec} v2 batch to magic ${magic} keeping keys, values and offsets`, () => {
        const batch = buildBatch(records, {
          baseOffset: 40,
          compression: codec,
          producerId: 1,
          producerEpoch: 0,
          baseSequence: 0,
        });
        const { records: out, partialBytes } = downConvertRecords(batch, magic);
        assert.equal(partialBytes, 0);
        const { entries } = listEntries(out);
        assert.ok(entries.every((e) => e.magic === magic));
        assert.equal(entries.length, codec === CompressionType.None ? 3 : 1);
        const { messages } = decodeMessageSet(out);
        assert.deepEqual(
          messages.map((m) => [
            m.offset,
            m.key?.toString() ?? null,
            m.value?.toString() ?? null,
            m.timestamp,
          ]),
          records.map((r, i) => [40 + i, r.key, r.value, magic === 1 ? r.timestamp : -1]),
        );
      });

      it(`up-converts a codec ${codec} magic ${magic} set to one v2 batch keeping keys, values and timestamps`, () => {
        const set = buildMessageSet(
          records.map((r, i) => ({
            offset: 100 + i,
            timestamp: r.timestamp,
            key: r.key === null ? null : Buffer.from(r.key),
            value: r.value === null ? null : Buffer.from(r.value),
          })),
          { magic, compression: codec },
        );
        const batch = messageSetToBatch(set)!;
        assert.equal(validateBatch(batch, 0, batch.length, { deep: true }), null);
        assert.equal(batchHeader.compression(batch), codec, 'keeps the codec the messages came with');
        assert.equal(batchHeader.baseOffset(batch), 100);
        const out = readRecords(batch);
        assert.deepEqual(
          out.map((r) => [
            r.offset,
            r.key?.toString() ?? null,
            r.value?.toString() ?? null,
            r.timestamp,
            r.headers.length,
          ]),
          records.map((r, i) => [100 + i, r.key, r.value, magic === 1 ? r.timestamp : -1, 0]),
        );
      });
    }
  }

  it('numbers records sequentially when asked and recompresses on the way up', () => {
    const set = buildMessageSet(
      [
        { offset: 0, value: Buffer.from('x') },
        { offset: 0, value: Buffer.from('y') },
      ],
      { magic: 0 },
    );
    const batch = messageSetToBatch(set, 0, set.length, {
      offsets: 'sequential',
      compression: CompressionType.Zstd,
    })!;
    assert.equal(validateBatch(batch, 0, batch.length, { deep: true, fromClient: true }), null);
    assert.equal(batchHeader.compression(batch), CompressionType.Zstd);
    assert.deepEqual(
      readRecords(batch).map((r) => r.offset),
      [0, 1],
    );
  });

  it('keeps LogAppendTime through both conversions', () => {
    const batch = buildBatch(records, { logAppendTimeMs: T0 + 100 });
    const { records: v1 } = downConvertRecords(batch, 1);
    const { messages } = decodeMessageSet(v1);
    assert.ok(
      messages.every((m) => m.timestamp === T0 + 100 && m.timestampType === TimestampType.LogAppendTime),
    );
    const back = legacyToBatch(messages);
    assert.equal(batchHeader.timestampType(back), TimestampType.LogAppendTime);
    assert.equal(batchHeader.maxTimestamp(back), T0 + 100);
  });

  it('skips control batches and refuses zstd when down-converting', () => {
    const blob = Buffer.concat([
      buildBatch([{ value: 'data' }], {
        baseOffset: 0,
        producerId: 9,
        producerEpoch: 0,
        baseSequence: 0,
        transactional: true,
      }),
      buildEndTxnMarkerBatch({
        commit: true,
        coordinatorEpoch: 0,
        producerId: 9,
        producerEpoch: 0,
        baseOffset: 1,
      }),
    ]);
    const { messages } = decodeMessageSet(downConvertRecords(blob, 1).records);
    assert.deepEqual(
      messages.map((m) => m.value?.toString()),
      ['data'],
    );
    const zstd = buildBatch([{ value: 'z' }], { compression: CompressionType.Zstd });
    assert.throws(
      () => downConvertRecords(zstd, 0),
      faultKind('unsupported-compression', RecordErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
    );
  });

  it('passes lower-magic entries through, converts v1 to v0, and drops a partial tail', () => {
    const v0 = buildMessageSet([{ offset: 0, value: Buffer.from('zero') }], { magic: 0 });
    const v1 = buildMessageSet([{ offset: 1, timestamp: T0, value: Buffer.from('one') }], {
      magic: 1,
      compression: 1,
    });
    const v2 = buildBatch([{ value: 'two' }], { baseOffset: 2 });
    const blob = Buffer.concat([v0, v1, v2]);
    const cut = blob.length - 5;
    const { records: out, partialBytes } = downConvertRecords(blob, 0, 0, cut);
    assert.equal(partialBytes, v2.length - 5);
    assert.ok(out.subarray(0, v0.length).equals(v0));
    const { messages } = decodeMessageSet(out);
    assert.deepEqual(
      messages.map((m) => [m.magic, m.offset, m.value!.toString()]),
      [
        [0, 0, 'zero'],
        [0, 1, 'one'],
      ],
    );
  });

  it('up-converts a produce blob that mixes legacy messages and v2 batches', () => {
    const v1 = buildMessageSet([{ offset: 0, timestamp: T0, value: Buffer.from('old') }], { magic: 1 });
    const v2 = buildBatch([{ value: 'new' }], { baseOffset: 1 });
    const out = upConvertRecords(Buffer.concat([v1, v2]));
    const { entries } = listEntries(out);
    assert.deepEqual(
      entries.map((e) => e.magic),
      [2, 2],
    );
    assert.ok(out.subarray(entries[1]!.position).equals(v2), 'v2 batches pass unchanged');
    assert.throws(
      () => upConvertRecords(Buffer.concat([v1, v2]).subarray(0, v1.length + 10)),
      faultKind('truncated'),
    );
  });
});
