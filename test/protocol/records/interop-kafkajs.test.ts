// kafkajs's own record batch encoder and decoder as a second independent implementation of magic 2 (it ships
// with gzip only, so that is the codec compared here besides none).

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { buildBatch, readRecords, validateBatch } from '../../../src/protocol/records/index.js';

const require = createRequire(import.meta.url);
type Encoded = { buffer: Buffer };
const encodeRecordBatch: (options: object) => Promise<Encoded> =
  require('kafkajs/src/protocol/recordBatch/v0').RecordBatch;
const encodeRecord: (options: object) => Encoded = require('kafkajs/src/protocol/recordBatch/record/v0');
const decodeRecordBatch: (decoder: unknown) => Promise<{
  records: {
    offset: string;
    timestamp: string;
    key: Buffer | null;
    value: Buffer | null;
    headers: Record<string, Buffer>;
  }[];
}> = require('kafkajs/src/protocol/recordBatch/v0/decoder');
const KafkajsDecoder: new (buffer: Buffer) => unknown = require('kafkajs/src/protocol/decoder');

const T0 = 1_700_000_000_000;
const ROWS = Array.from({ length: 25 }, (_, i) => ({
  key: i % 5 === 0 ? null : Buffer.from(`k${i}`),
  value: Buffer.from(`value ${i} `.repeat(i + 1)),
  headers: i % 2 === 0 ? { trace: Buffer.from(`t${i}`) } : {},
  timestamp: T0 + 3 * i,
}));

describe('interoperability with kafkajs (magic 2)', () => {
  for (const codec of [0, 1]) {
    it(`reads a batch kafkajs encodes with codec ${codec}`, async () => {
      const encoded = await encodeRecordBatch({
        compression: codec,
        firstOffset: BigInt(500),
        firstTimestamp: T0,
        maxTimestamp: T0 + 3 * 24,
        lastOffsetDelta: ROWS.length - 1,
        partitionLeaderEpoch: 2,
        producerId: BigInt(-1),
        records: ROWS.map((r, i) =>
          encodeRecord({
            offsetDelta: i,
            timestampDelta: r.timestamp - T0,
            key: r.key,
            value: r.value,
            headers: r.headers,
          }),
        ),
      });
      const bytes = encoded.buffer;
      assert.equal(validateBatch(bytes, 0, bytes.length, { deep: true }), null);
      const records = readRecords(bytes);
      assert.deepEqual(
        records.map((r) => [r.offset, r.timestamp, r.key, r.value, r.headers.map((h) => [h.key, h.value])]),
        ROWS.map((r, i) => [500 + i, r.timestamp, r.key, r.value, Object.entries(r.headers)]),
      );
    });

    it(`writes a codec ${codec} batch that kafkajs decodes`, async () => {
      const batch = buildBatch(
        ROWS.map((r) => ({
          ...r,
          headers: Object.entries(r.headers).map(([key, value]) => ({ key, value })),
        })),
        { baseOffset: 500, compression: codec },
      );
      const decoded = await decodeRecordBatch(new KafkajsDecoder(batch));
      assert.deepEqual(
        decoded.records.map((r) => [Number(r.offset), Number(r.timestamp), r.key, r.value, r.headers]),
        ROWS.map((r, i) => [500 + i, r.timestamp, r.key, r.value, r.headers]),
      );
    });
  }
});
