// The records a consumer delivers from fetched bytes: from the fetch offset on, no control records, and under
// read_committed nothing of an aborted transaction (Kafka's aborted-transactions list and ABORT markers).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FetchedRecords, selectRecords } from '../../src/client/fetch-records.js';
import { CompressionType } from '../../src/protocol/compression/compression-type.js';
import { buildBatch, buildEndTxnMarkerBatch } from '../../src/protocol/records/batch-builder.js';
import { BatchFaultError } from '../../src/protocol/records/batch-fault.js';

function txBatch(baseOffset: number, producerId: number, values: string[]): Buffer {
  return buildBatch(
    values.map((value) => ({ value })),
    { baseOffset, producerId, producerEpoch: 0, baseSequence: 0, transactional: true },
  );
}

const marker = (baseOffset: number, producerId: number, commit: boolean) =>
  buildEndTxnMarkerBatch({ baseOffset, producerId, producerEpoch: 0, commit, coordinatorEpoch: 0 });

// Offsets: 0-1 txn of producer 7 (aborted at 2), 3-4 txn of producer 8 (committed at 5), 6 plain record.
const log = Buffer.concat([
  txBatch(0, 7, ['a0', 'a1']),
  marker(2, 7, false),
  txBatch(3, 8, ['c3', 'c4']),
  marker(5, 8, true),
  buildBatch([{ value: 'p6' }], { baseOffset: 6 }),
]);
const values = (r: ReturnType<typeof selectRecords>) => r.records.map((x) => x.value!.toString());

test('read_uncommitted delivers every data record and skips the markers', () => {
  const r = selectRecords(log, 0, null, false);
  assert.deepEqual(values(r), ['a0', 'a1', 'c3', 'c4', 'p6']);
  assert.deepEqual(
    r.records.map((x) => x.offset),
    [0, 1, 3, 4, 6],
  );
  assert.equal(r.nextOffset, 7);
});

test('read_committed drops the aborted transaction and keeps the committed one', () => {
  const r = selectRecords(log, 0, [{ producerId: 7n, firstOffset: 0n }], true);
  assert.deepEqual(values(r), ['c3', 'c4', 'p6']);
  assert.equal(r.nextOffset, 7);
});

test('an ABORT marker ends the abort: later transactions of the same producer are delivered', () => {
  const again = Buffer.concat([log, txBatch(7, 7, ['a7']), marker(8, 7, true)]);
  const r = selectRecords(again, 0, [{ producerId: 7n, firstOffset: 0n }], true);
  assert.deepEqual(values(r), ['c3', 'c4', 'p6', 'a7']);
  assert.equal(r.nextOffset, 9);
});

test('records before the fetch offset are not delivered again; a fetch of only markers moves past them', () => {
  assert.deepEqual(values(selectRecords(log, 4, null, false)), ['c4', 'p6']);
  const markersOnly = selectRecords(marker(2, 7, false), 2, null, true);
  assert.deepEqual(markersOnly.records, []);
  assert.equal(markersOnly.nextOffset, 3);
});

test('records are decoded lazily in takes of any size, across plain and compressed batches, with headers', () => {
  const blob = Buffer.concat([
    buildBatch(
      Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `v${i}`, timestamp: 1000 + i })),
      { baseOffset: 10 },
    ),
    buildBatch(
      Array.from({ length: 4 }, (_, i) => ({
        value: `z${i}`,
        timestamp: 2000,
        headers: [{ key: 'h', value: `${i}` }],
      })),
      { baseOffset: 15, compression: CompressionType.Lz4 },
    ),
  ]);
  const fetched = new FetchedRecords(blob, 12, null, false);
  assert.equal(fetched.nextOffset, 19, 'known before any record is decoded');
  const out: string[] = [];
  const make = (
    offset: number,
    timestamp: number,
    key: Buffer | null,
    value: Buffer | null,
    headers: { key: string; value: Buffer | null }[],
  ) =>
    `${offset}:${timestamp}:${key?.toString() ?? '-'}:${value!.toString()}:${headers.map((h) => `${h.key}=${h.value}`).join(',')}`;
  const sizes: number[] = [];
  while (!fetched.done) sizes.push(fetched.take(2, out, make));
  assert.deepEqual(sizes, [2, 2, 2, 1]);
  assert.deepEqual(out, [
    '12:1002:k2:v2:',
    '13:1003:k3:v3:',
    '14:1004:k4:v4:',
    '15:2000:-:z0:h=0',
    '16:2000:-:z1:h=1',
    '17:2000:-:z2:h=2',
    '18:2000:-:z3:h=3',
  ]);
  assert.equal(fetched.lastTakenOffset, 18);
});

test('a corrupted batch is refused when the fetch arrives, before any record is decoded', () => {
  const batch = buildBatch([{ value: 'x' }], { baseOffset: 0 });
  batch[batch.length - 1]! ^= 0xff;
  assert.throws(() => new FetchedRecords(batch, 0, null, false), BatchFaultError);
  assert.equal(
    new FetchedRecords(batch, 0, null, false, false).done,
    false,
    'check.crcs=false skips the check',
  );
});
