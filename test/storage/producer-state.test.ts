// Producer state: duplicates, sequence and epoch errors as values, transactions, snapshots and rebuild.

import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { toOffset, toProducerId } from '../../src/common/ids.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { incrementSequence, ProducerStateManager } from '../../src/storage/producer-state.js';
import { buildBatch } from './batch-builder.js';
import { openHarness } from './log-harness.js';

const PID = 4000;

test('a retried batch is a duplicate answered with its original offsets', (t) => {
  const h = openHarness(t);
  h.append({ producerId: PID, producerEpoch: 0, baseSequence: 0, count: 3 });
  h.append({ producerId: PID, producerEpoch: 0, baseSequence: 3, count: 2 });
  const retry = buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 0, count: 3 });
  assert.deepEqual(h.log.checkProducerBatch(retry), {
    kind: 'duplicate',
    firstOffset: 0,
    lastOffset: 2,
    timestampMs: h.clock.nowMs() + 2,
  });
  const next = buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 5, count: 1 });
  assert.deepEqual(h.log.checkProducerBatch(next), { kind: 'ok' });
});

test('a gap in sequences is OUT_OF_ORDER_SEQUENCE_NUMBER and an old epoch INVALID_PRODUCER_EPOCH', (t) => {
  const h = openHarness(t);
  h.append({ producerId: PID, producerEpoch: 2, baseSequence: 0, count: 3 });
  const gap = buildBatch({ producerId: PID, producerEpoch: 2, baseSequence: 7 });
  assert.deepEqual(h.log.checkProducerBatch(gap), {
    kind: 'error',
    errorCode: StorageErrorCode.OutOfOrderSequenceNumber,
  });
  const old = buildBatch({ producerId: PID, producerEpoch: 1, baseSequence: 3 });
  assert.deepEqual(h.log.checkProducerBatch(old), {
    kind: 'error',
    errorCode: StorageErrorCode.InvalidProducerEpoch,
  });
  const bumpedNonZero = buildBatch({ producerId: PID, producerEpoch: 3, baseSequence: 3 });
  assert.deepEqual(h.log.checkProducerBatch(bumpedNonZero), {
    kind: 'error',
    errorCode: StorageErrorCode.OutOfOrderSequenceNumber,
  });
  const bumped = buildBatch({ producerId: PID, producerEpoch: 3, baseSequence: 0 });
  assert.deepEqual(h.log.checkProducerBatch(bumped), { kind: 'ok' });
  const unknown = buildBatch({ producerId: PID + 1, producerEpoch: 0, baseSequence: 99 });
  assert.deepEqual(h.log.checkProducerBatch(unknown), { kind: 'ok' }, 'unknown producers may start anywhere');
});

test('only the last 5 batches are remembered for duplicates', () => {
  const state = new ProducerStateManager();
  let offset = 0;
  for (let seq = 0; seq < 7; seq++) {
    const b = buildBatch({ baseOffset: offset++, producerId: PID, producerEpoch: 0, baseSequence: seq });
    assert.deepEqual(state.check(b, 0), { kind: 'ok' });
    state.apply(b, 0);
  }
  const recent = buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 2 });
  assert.equal(state.check(recent, 0).kind, 'duplicate');
  const forgotten = buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 1 });
  assert.equal(state.check(forgotten, 0).kind, 'error');
});

test('sequences wrap from int32 max to 0', () => {
  assert.equal(incrementSequence(0x7fffffff, 1), 0);
  assert.equal(incrementSequence(0x7ffffffe, 3), 1);
  const state = new ProducerStateManager();
  state.apply(buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 0x7ffffffe, count: 2 }), 0);
  assert.deepEqual(
    state.check(buildBatch({ baseOffset: 2, producerId: PID, producerEpoch: 0, baseSequence: 0 }), 0),
    {
      kind: 'ok',
    },
  );
});

test('open transactions hold the last stable offset; aborts are indexed and collected', (t) => {
  const h = openHarness(t);
  h.append({ count: 2 }); // 0-1, not transactional
  h.append({ producerId: PID, producerEpoch: 0, baseSequence: 0, transactional: true, count: 3 }); // 2-4
  h.append({ producerId: PID + 1, producerEpoch: 0, baseSequence: 0, transactional: true, count: 1 }); // 5
  h.log.setHighWatermark(h.log.logEndOffset);
  assert.equal(h.log.lastStableOffset, 2);
  h.append({ producerId: PID, producerEpoch: 0, control: { type: 0, coordinatorEpoch: 1 } }); // 6: abort
  h.log.setHighWatermark(h.log.logEndOffset);
  assert.equal(h.log.lastStableOffset, 5, 'the other transaction still holds the LSO');
  h.append({ producerId: PID + 1, producerEpoch: 0, control: { type: 1, coordinatorEpoch: 1 } }); // 7: commit
  h.log.setHighWatermark(h.log.logEndOffset);
  assert.equal(h.log.lastStableOffset, 8);
  assert.deepEqual(h.log.collectAbortedTxns(0, 8), [
    { producerId: PID, firstOffset: 2, lastOffset: 6, lastStableOffset: 5 },
  ]);
  assert.deepEqual(h.log.collectAbortedTxns(7, 8), []);
  const stale = buildBatch({ producerId: PID, producerEpoch: 0, control: { type: 0, coordinatorEpoch: 0 } });
  assert.deepEqual(h.log.checkProducerBatch(stale), {
    kind: 'error',
    errorCode: StorageErrorCode.TransactionCoordinatorFenced,
  });
});

test('a plain batch from a producer whose transaction is open is INVALID_TXN_STATE, after its sequence checks', (t) => {
  const h = openHarness(t);
  h.append({ producerId: PID, producerEpoch: 0, baseSequence: 0, transactional: true, count: 2 });
  const plain = buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 2 });
  assert.deepEqual(h.log.checkProducerBatch(plain), {
    kind: 'error',
    errorCode: StorageErrorCode.InvalidTxnState,
  });
  // Kafka's ProducerAppendInfo checks the epoch and the sequence first.
  const gap = buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 9 });
  assert.deepEqual(h.log.checkProducerBatch(gap), {
    kind: 'error',
    errorCode: StorageErrorCode.OutOfOrderSequenceNumber,
  });
  const txn = buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 2, transactional: true });
  assert.deepEqual(h.log.checkProducerBatch(txn), { kind: 'ok' });
  // In one request, a transaction the first batch opens is open for the next.
  const other = PID + 1;
  const opens = buildBatch({ producerId: other, producerEpoch: 0, baseSequence: 0, transactional: true });
  const then = buildBatch({ baseOffset: 1, producerId: other, producerEpoch: 0, baseSequence: 1 });
  assert.deepEqual(h.log.checkProducerBatches(Buffer.concat([opens, then]), [0, opens.length]), {
    kind: 'error',
    errorCode: StorageErrorCode.InvalidTxnState,
  });
  // After the marker, the producer writes outside a transaction again.
  h.append({ producerId: PID, producerEpoch: 0, control: { type: 1, coordinatorEpoch: 0 } });
  assert.deepEqual(h.log.checkProducerBatch(plain), { kind: 'ok' });
});

test('producer state survives a clean restart through the snapshot and a crash through replay', (t) => {
  const h = openHarness(t, { segmentBytes: 400 });
  for (let seq = 0; seq < 20; seq++) h.append({ producerId: PID, producerEpoch: 1, baseSequence: seq });
  h.append({ producerId: PID + 1, producerEpoch: 0, baseSequence: 0, transactional: true });
  const retry = buildBatch({ producerId: PID, producerEpoch: 1, baseSequence: 19 });
  const expected = h.log.checkProducerBatch(retry);
  assert.equal(expected.kind, 'duplicate');
  h.log.setHighWatermark(h.log.logEndOffset);
  h.reopen(true);
  assert.deepEqual(h.log.checkProducerBatch(retry), expected);
  assert.equal(h.log.lastStableOffset, 20);
  h.reopen(false, { recoveryPoint: 0 });
  assert.deepEqual(h.log.checkProducerBatch(retry), expected);
  assert.equal(h.log.lastStableOffset, 20);
  // A damaged snapshot is ignored and the state is rebuilt from the log.
  const snapshots = readdirSync(h.dir).filter((n) => n.endsWith('.snapshot'));
  assert.ok(snapshots.length > 0);
  h.log.close();
  for (const s of snapshots) writeFileSync(join(h.dir, s), Buffer.from('garbage'));
  h.reopen(false, { recoveryPoint: h.log.logEndOffset });
  assert.deepEqual(h.log.checkProducerBatch(retry), expected);
});

test('idle producers expire and the number of producers is bounded', () => {
  const state = new ProducerStateManager(0, 3);
  for (let i = 0; i < 5; i++) {
    state.apply(
      buildBatch({
        baseOffset: i,
        producerId: i,
        producerEpoch: 0,
        baseSequence: 0,
        baseTimestamp: 1000 + i,
      }),
      0,
    );
  }
  assert.equal(state.producerCount, 3);
  assert.equal(state.producer(toProducerId(0)), undefined, 'least recently used first');
  assert.equal(state.removeExpired(1103, 100), 2, 'idle for 100 ms or more');
  assert.equal(state.producerCount, 1);
});

test('aborted transactions are indexed again when a crash forces recovery, and survive a clean restart', (t) => {
  const h = openHarness(t, { segmentBytes: 300 });
  for (let i = 0; i < 6; i++) {
    const pid = PID + i;
    h.append({ producerId: pid, producerEpoch: 0, baseSequence: 0, transactional: true, count: 2 });
    h.append({
      producerId: pid,
      producerEpoch: 0,
      control: { type: i % 2 === 0 ? 0 : 1, coordinatorEpoch: 3 },
    });
  }
  h.log.setHighWatermark(h.log.logEndOffset);
  const aborted = h.log.collectAbortedTxns(0, h.log.logEndOffset);
  assert.equal(aborted.length, 3);
  assert.ok(readdirSync(h.dir).some((n) => n.endsWith('.txnindex')));
  h.reopen(false, { recoveryPoint: 0 });
  assert.deepEqual(h.log.collectAbortedTxns(0, h.log.logEndOffset), aborted);
  h.reopen(true);
  assert.deepEqual(h.log.collectAbortedTxns(0, h.log.logEndOffset), aborted);
  assert.deepEqual(h.log.collectAbortedTxns(aborted[1]!.lastOffset + 1, h.log.logEndOffset), [aborted[2]]);
});

test('a completed transaction holds the last stable offset until the high watermark passes its marker', (t) => {
  const h = openHarness(t);
  h.append({ count: 4 }); // 0-3
  h.append({ producerId: PID, producerEpoch: 0, baseSequence: 0, transactional: true, count: 3 }); // 4-6
  h.log.setHighWatermark(toOffset(7));
  assert.equal(h.log.lastStableOffset, 4, 'open');
  h.append({ producerId: PID, producerEpoch: 0, control: { type: 0, coordinatorEpoch: 1 } }); // 7: abort
  assert.equal(h.log.lastStableOffset, 4, 'aborted, but the marker is at the high watermark');
  h.log.setHighWatermark(toOffset(7));
  assert.equal(h.log.lastStableOffset, 4, 'the same high watermark set again');
  h.log.setHighWatermark(toOffset(8));
  assert.equal(h.log.lastStableOffset, 8, 'the marker is below the high watermark');
  assert.deepEqual(h.log.collectAbortedTxns(4, 8), [
    { producerId: PID, firstOffset: 4, lastOffset: 7, lastStableOffset: 8 },
  ]);
  h.log.truncateTo(toOffset(7));
  assert.equal(h.log.lastStableOffset, 4, 'the marker truncated away: open again');
});

test('an aborted transaction is collected for a read ending segments before its ABORT marker', (t) => {
  // One transaction over several segments, aborted, then a committed record: the abort is indexed in the
  // marker's segment only, and a read of the first segment must still learn of it.
  const h = openHarness(t, { segmentBytes: 300 });
  for (let i = 0; i < 8; i++) {
    h.append({ producerId: PID, producerEpoch: 0, baseSequence: i * 2, transactional: true, count: 2 });
  }
  h.append({ producerId: PID, producerEpoch: 0, control: { type: 0, coordinatorEpoch: 1 } }); // 16: abort
  h.append({ count: 1 }); // 17
  h.log.setHighWatermark(h.log.logEndOffset);
  const segments = readdirSync(h.dir).filter((n) => n.endsWith('.log'));
  assert.ok(segments.length >= 3, `the transaction spans segments (${segments.length})`);
  const txn = { producerId: PID, firstOffset: 0, lastOffset: 16, lastStableOffset: 17 };
  assert.deepEqual(h.log.collectAbortedTxns(0, 2), [txn], 'the first batch only');
  assert.deepEqual(h.log.collectAbortedTxns(6, 8), [txn], 'a batch in the middle');
  assert.deepEqual(h.log.collectAbortedTxns(17, 18), [], 'after the marker');
  h.reopen(true);
  assert.deepEqual(h.log.collectAbortedTxns(0, 2), [txn], 'after a restart');
});

test('batches of one request are checked in sequence with each other', (t) => {
  const h = openHarness(t);
  h.append({ producerId: PID, producerEpoch: 0, baseSequence: 0, count: 2 });
  const a = buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 2, count: 3 });
  const b = buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 5, count: 1 });
  const other = buildBatch({ producerId: PID + 1, producerEpoch: 0, baseSequence: 40 });
  const request = Buffer.concat([a, other, b]);
  const positions = [0, a.length, a.length + other.length];
  assert.deepEqual(h.log.checkProducerBatches(request, positions), { kind: 'ok' });
  assert.equal(
    h.log.checkProducerBatch(request, positions[2]).kind,
    'error',
    'alone, the third is out of order',
  );
  const gap = Buffer.concat([a, buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 9 })]);
  assert.deepEqual(h.log.checkProducerBatches(gap, [0, a.length]), {
    kind: 'error',
    errorCode: StorageErrorCode.OutOfOrderSequenceNumber,
  });
  const dup = buildBatch({ producerId: PID, producerEpoch: 0, baseSequence: 0, count: 2 });
  assert.equal(h.log.checkProducerBatches(Buffer.concat([dup, a]), [0, dup.length]).kind, 'duplicate');
});

test("a producer's entry is found by its branded id, and its epoch cannot stand in for the id", (t) => {
  const h = openHarness(t);
  h.append({ producerId: 7, producerEpoch: 7, baseSequence: 0, count: 1 });
  const entry = h.log.producerState.producer(toProducerId(7))!;
  assert.equal(entry.producerEpoch, 7);
  // Equal numbers, yet an epoch where the id goes does not compile: the build of this file fails if the brands go.
  // @ts-expect-error a producer epoch where the producer id goes
  assert.equal(h.log.producerState.producer(entry.producerEpoch), entry);
  // @ts-expect-error a plain number where the producer id goes
  assert.equal(h.log.producerState.producer(7), entry);
});

test("KIP-890's verification guard: a marker written while a remote coordinator answers ends it; the transaction's first batch joins", (t) => {
  const h = openHarness(t);
  const state = h.log.producerState;
  const pid = toProducerId(PID);
  // A verification starts; concurrent ones of the same producer share its guard.
  const guard = state.startVerification(pid);
  assert.equal(state.startVerification(pid), guard);
  assert.equal(state.verifiedBy(pid, guard), true);
  // A marker for the producer (its previous transaction ended by the coordinator) lands meanwhile: the append that
  // verified before it must not open a transaction.
  h.append({ producerId: PID, producerEpoch: 0, control: { type: 0, coordinatorEpoch: 1 } });
  assert.equal(state.verifiedBy(pid, guard), false, 'a marker ends the guard');
  // A fresh verification, then the transaction's first batch: it ends the guard, and batches after it join the
  // open transaction whatever guard they carry.
  const second = state.startVerification(pid);
  assert.notEqual(second, guard);
  h.append({ producerId: PID, producerEpoch: 0, baseSequence: 0, transactional: true, count: 2 });
  assert.equal(state.verifiedBy(pid, second), true, 'joins the open transaction');
  assert.equal(state.verifiedBy(pid, guard), true, 'joins the open transaction');
  // The transaction ends: a verification that started before the marker is refused.
  h.append({ producerId: PID, producerEpoch: 0, control: { type: 1, coordinatorEpoch: 1 } });
  assert.equal(state.verifiedBy(pid, second), false);
  // Another producer's guard is its own.
  const other = toProducerId(PID + 1);
  const otherGuard = state.startVerification(other);
  assert.equal(state.verifiedBy(other, otherGuard), true);
  assert.equal(state.verifiedBy(pid, otherGuard), false);
});
