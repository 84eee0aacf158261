// The records a consumer delivers from fetched bytes: from the fetch offset on, no control records, and under
// read_committed nothing of an aborted transaction (Kafka's aborted-transactions list and ABORT markers).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selectRecords } from '../../src/client/fetch-records.js';
import { buildBatch, buildEndTxnMarkerBatch } from '../../src/protocol/records/batch-builder.js';

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
