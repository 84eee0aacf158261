// A partition's sequence state in the producer (partition-queue.ts): when it follows the producer to a new epoch,
// how batches are numbered, what counts as a real sequence gap; and that a producer id and a producer epoch, both
// small integers passed side by side, cannot be swapped (branded types, checked when the tests compile).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  acknowledge,
  type Batch,
  isSequenceGap,
  mayMoveOn,
  newPartitionQueue,
  numberBatch,
  onCurrentEpoch,
  type PartitionQueue,
} from '../../src/client/partition-queue.js';
import { toProducerEpoch, toProducerId } from '../../src/common/ids.js';
import { ErrorCode } from '../../src/protocol/errors.js';

/** A batch of `records` records, as the accumulator makes it (only the fields the sequence state reads). */
function batchOf(pq: PartitionQueue, records: number): Batch {
  return {
    pq,
    onSuccess: new Array(records).fill(() => {}),
    producerId: pq.producerId,
    producerEpoch: pq.producerEpoch,
    baseSequence: -1,
  } as unknown as Batch;
}

test('a partition moves to the producer epoch only with nothing of the old one in flight, sequences from 0', () => {
  const id = toProducerId(7);
  const pq = newPartitionQueue('t', 0);
  assert.equal(mayMoveOn(pq, id, toProducerEpoch(0)), true);
  assert.equal(onCurrentEpoch(pq, id, toProducerEpoch(0)), true);
  const first = batchOf(pq, 3);
  assert.equal(numberBatch(first), true);
  assert.equal(first.baseSequence, 0);
  assert.equal(numberBatch(first), false, 'a numbered batch keeps its sequence on retries');
  const second = batchOf(pq, 2);
  numberBatch(second);
  assert.equal(second.baseSequence, 3);
  acknowledge(first);
  assert.equal(pq.lastAckedSequence, 2);

  // The producer bumped its epoch while `second` is in flight: the partition waits for it.
  const bumped = toProducerEpoch(1);
  pq.inFlight.add(second);
  assert.equal(mayMoveOn(pq, id, bumped), false);
  assert.equal(pq.producerEpoch, 0);
  pq.inFlight.clear();
  assert.equal(mayMoveOn(pq, id, bumped), true);
  assert.equal(pq.producerEpoch, 1);
  assert.equal(pq.nextSequence, 0);
  assert.equal(pq.lastAckedSequence, -1);
});

test('out of sequence right after the last acknowledged batch is a real gap; behind a retry it is not', () => {
  const id = toProducerId(7);
  const epoch = toProducerEpoch(0);
  const pq = newPartitionQueue('t', 0);
  mayMoveOn(pq, id, epoch);
  const a = batchOf(pq, 1);
  const b = batchOf(pq, 1);
  const c = batchOf(pq, 1);
  numberBatch(a);
  numberBatch(b);
  numberBatch(c);
  acknowledge(a);
  assert.equal(isSequenceGap(b, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, id, epoch), true);
  assert.equal(isSequenceGap(c, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, id, epoch), false);
  assert.equal(isSequenceGap(c, ErrorCode.UNKNOWN_PRODUCER_ID, id, epoch), true);
});

test('a producer id and an epoch cannot be passed in each other’s place', () => {
  const pq = newPartitionQueue('t', 0);
  const id = toProducerId(5);
  const epoch = toProducerEpoch(5);
  // Equal numbers, yet swapping them does not compile: the build of this file fails if the brands go.
  // @ts-expect-error an epoch where the producer id goes
  assert.equal(onCurrentEpoch(pq, epoch, id), false);
  // @ts-expect-error a plain number where a producer id goes
  assert.equal(mayMoveOn(pq, 5, epoch), true);
  assert.throws(() => toProducerEpoch(0x8000), /bad producer epoch/);
});
