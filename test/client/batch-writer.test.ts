// The producer's in-place batch encoder agrees byte for byte with the protocol's batch builder, survives being
// finished again with new producer fields (a retry under a new producer id), and compresses when asked; and the
// FIFO behind the producer's memory waiters keeps order through growth, compaction and removal.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BatchWriter, type EncodedHeader } from '../../src/client/batch-writer.js';
import { BufferPool } from '../../src/client/buffer-pool.js';
import { Fifo } from '../../src/client/fifo.js';
import { CompressionType } from '../../src/protocol/compression/compression-type.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { isBatchCrcValid } from '../../src/protocol/records/batch-crc.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';

interface Input {
  key: Buffer | null;
  value: Buffer | null;
  headers?: EncodedHeader[];
  timestamp: number;
}

const t0 = 1_700_000_000_000;
const inputs: Input[] = [
  { key: null, value: Buffer.from('plain'), timestamp: t0 },
  { key: Buffer.from('k'), value: null, timestamp: t0 + 5 },
  { key: Buffer.alloc(300, 1), value: Buffer.alloc(70_000, 2), timestamp: t0 - 3 },
  {
    key: Buffer.alloc(0),
    value: Buffer.from('h'),
    headers: [
      { key: Buffer.from('a'), value: Buffer.from('1') },
      { key: Buffer.from('nul'), value: null },
    ],
    timestamp: t0 + 2 ** 40,
  },
];

function written(capacity: number): BatchWriter {
  const w = new BatchWriter(capacity);
  for (const r of inputs) w.append(r.key, r.value, r.headers, r.timestamp);
  return w;
}

const fields = { producerId: 42, producerEpoch: 3, baseSequence: 7 };

test('the batch writer encodes exactly what the batch builder does, growing its buffer as needed', () => {
  const w = written(64);
  assert.equal(w.count, inputs.length);
  const out = w.finish({ compression: CompressionType.None, compressionLevel: undefined, ...fields });
  const expected = buildBatch(
    inputs.map((r) => ({
      key: r.key,
      value: r.value,
      timestamp: r.timestamp,
      headers: r.headers?.map((h) => ({ key: h.key.toString(), value: h.value })),
    })),
    fields,
  );
  assert.deepEqual(out, expected);
  assert.equal(w.sizeInBytes, out.length);
});

test('finishing again rewrites the producer fields and the CRC in place; compressed batches decode', () => {
  const w = written(1 << 20);
  const first = w.finish({ compression: CompressionType.None, compressionLevel: undefined, ...fields });
  const again = w.finish({
    compression: CompressionType.None,
    compressionLevel: undefined,
    producerId: 43,
    producerEpoch: 0,
    baseSequence: 0,
  });
  assert.equal(again.buffer, first.buffer, 'no copy');
  assert.equal(again.readBigInt64BE(43), 43n);
  assert.equal(again.readInt32BE(53), 0);
  assert.ok(isBatchCrcValid(again));
  for (const codec of [
    CompressionType.Gzip,
    CompressionType.Lz4,
    CompressionType.Zstd,
    CompressionType.Snappy,
  ]) {
    const packed = w.finish({ compression: codec, compressionLevel: undefined, ...fields });
    assert.ok(isBatchCrcValid(packed));
    assert.ok(packed.length < first.length);
    const records = readRecords(packed);
    assert.deepEqual(
      records.map((r) => [
        r.offset,
        r.timestamp,
        r.key?.length ?? -1,
        r.value?.length ?? -1,
        r.headers.length,
      ]),
      inputs.map((r, i) => [
        i,
        r.timestamp,
        r.key?.length ?? -1,
        r.value?.length ?? -1,
        r.headers?.length ?? 0,
      ]),
    );
  }
});

test('the FIFO keeps order through compaction and removal', () => {
  const q = new Fifo<number>();
  for (let i = 0; i < 5000; i++) q.push(i);
  for (let i = 0; i < 3000; i++) assert.equal(q.shift(), i);
  assert.equal(q.length, 2000);
  assert.equal(q.peek(), 3000);
  assert.ok(q.remove(3001));
  assert.ok(!q.remove(10));
  assert.equal(q.shift(), 3000);
  assert.equal(q.shift(), 3002);
  q.push(9999);
  const rest = q.drain();
  assert.equal(rest.length, 1998);
  assert.equal(rest[rest.length - 1], 9999);
  assert.equal(q.length, 0);
  assert.equal(q.shift(), undefined);
});

test('the buffer pool hands back a spare buffer that fits, keeps spares within its bound, and writers use it', () => {
  const pool = new BufferPool(10_000);
  const a = pool.take(4_000);
  assert.ok(a.length >= 4_000);
  pool.give(a);
  assert.equal(pool.bytes, a.length);
  assert.equal(pool.take(3_000), a, 'a spare that fits is reused');
  assert.equal(pool.bytes, 0);
  const big = pool.take(8_000);
  pool.give(big);
  pool.give(Buffer.allocUnsafe(4_000));
  assert.equal(pool.bytes, big.length, 'a spare past the bound is dropped');
  assert.notEqual(pool.take(9_000), big, 'nothing spare fits 9,000 bytes: a new buffer');

  // A writer takes its buffer from the pool, gives back the one it outgrew, and its last on release, once.
  const writers = new BufferPool(1 << 20);
  const w = new BatchWriter(64, 100_000, writers);
  for (const r of inputs) w.append(r.key, r.value, r.headers, r.timestamp);
  assert.equal(writers.bytes, 61 + 64, 'the outgrown first buffer came back');
  const out = w.finish({ compression: CompressionType.None, compressionLevel: undefined, ...fields });
  assert.ok(isBatchCrcValid(out));
  w.release();
  w.release();
  assert.equal(writers.bytes, 61 + 64 + 61 + 100_000, 'released once, however often release is called');
});
