// A partition's record buffer in the producer (franz-go's recBuf): its open batch, its closed batches waiting to
// be sent, how many are in flight, and the producer id, epoch and sequences its batches are numbered under.
// The accumulator (record-accumulator.ts) fills these queues; the sender (sender.ts) drains them into Produce
// requests and feeds the answers back.
//
// Ownership: one PartitionQueue per topic-partition the producer has sent to, owned by the producer and changed
// only on the event loop between awaits. The functions here decide from a queue's own fields and the producer's
// current id and epoch; they never start I/O.

import assert from 'node:assert/strict';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID, type ProducerEpoch, type ProducerId } from '../common/ids.js';
import { ErrorCode } from '../protocol/errors.js';
import type { BatchWriter } from './batch-writer.js';
import type { OnFailure, OnSuccess } from './send-outcome.js';

/** A batch of one partition, from its first record to its outcome. */
export interface Batch {
  pq: PartitionQueue;
  /** The records, encoded as they were appended. */
  writer: BatchWriter;
  /** Per record, in order: who learns its outcome, and its timestamp. */
  onSuccess: OnSuccess[];
  onFailure: OnFailure[];
  timestamps: number[];
  /** Bytes counted against buffer.memory (an upper bound of the records' encoded size). */
  bytes: number;
  createdMs: number;
  built: Buffer | null;
  /** The producer id, epoch and first sequence it was numbered with; -1 until its first send. */
  producerId: ProducerId;
  producerEpoch: ProducerEpoch;
  baseSequence: number;
  attempts: number;
  /**
   * An earlier batch of its partition was refused and this one's sequences moved down to follow the last written
   * (adjustSequencesAfterFailedBatch) since it was last sent: an OUT_OF_ORDER_SEQUENCE_NUMBER answer to that send is
   * expected and retried (Kafka's ProducerBatch.sequenceHasBeenReset). Cleared when it is sent again.
   */
  sequenceMoved: boolean;
  /** After a retriable failure: not sent again before this time (retry.backoff.ms, growing per attempt). */
  retryAtMs: number;
  lingerTimer: NodeJS.Timeout | NodeJS.Immediate | null;
  /** linger.ms has passed: the batch leaves with the partition's next free in-flight slot, full or not. */
  lingered: boolean;
  /**
   * The flush generation of its oldest record (RecordAccumulator): a flush() waits for the batches and held records
   * of the generations before it began.
   */
  flushGeneration: number;
  /**
   * Failed while in flight by a fatal error (Kafka's RecordAccumulator.abortBatches): its records have their
   * outcome, and the answer its request still gets changes nothing; its buffer goes back to the pool then, once
   * no socket holds its bytes.
   */
  abortedInFlight: boolean;
}

/** One partition's batches and sequence state. */
export interface PartitionQueue {
  topic: string;
  partition: number;
  open: Batch | null;
  ready: Batch[];
  /** The batches sent and not answered yet; their count is held to max.in.flight.requests.per.connection. */
  inFlight: Set<Batch>;
  /**
   * The producer id and epoch this partition's sequences run under (-1 before its first batch). Behind the
   * producer's own after an epoch bump until the partition has nothing of the old epoch in flight (drain).
   * Branded types: an id and an epoch are both small integers passed side by side, and a swap would compile.
   */
  producerId: ProducerId;
  producerEpoch: ProducerEpoch;
  nextSequence: number;
  /** The last sequence acknowledged under the partition's id and epoch (-1: none yet). */
  lastAckedSequence: number;
  /** The broker refused an old-epoch retry as out of sequence: number the unsent batches again, new epoch. */
  sequenceGap: boolean;
  /** A batch failed retriably: send nothing more until the in-flight batches have come back. */
  blocked: boolean;
  /** Transactional: is the partition in the open transaction (TXN_ADDED), to be added (TXN_PENDING), or not? */
  inTxn: number;
}

export const TXN_NONE = 0;
export const TXN_PENDING = 1;
export const TXN_ADDED = 2;

/** The largest sequence (int32); the next one wraps to 0, as Kafka's do. */
export const SEQUENCE_MAX = 0x7fffffff;
/** The last producer epoch (int16); past it the producer needs a new producer id. */
export const EPOCH_MAX = 0x7fff;

/** An empty queue: no batch yet, sequences not yet under any producer id. */
export function newPartitionQueue(topic: string, partition: number): PartitionQueue {
  return {
    topic,
    partition,
    open: null,
    ready: [],
    inFlight: new Set(),
    producerId: NO_PRODUCER_ID,
    producerEpoch: NO_PRODUCER_EPOCH,
    nextSequence: 0,
    lastAckedSequence: -1,
    sequenceGap: false,
    blocked: false,
    inTxn: TXN_NONE,
  };
}

/** The partition's sequences run under the producer's current id and epoch. */
export function onCurrentEpoch(
  pq: PartitionQueue,
  producerId: ProducerId,
  producerEpoch: ProducerEpoch,
): boolean {
  return pq.producerId === producerId && pq.producerEpoch === producerEpoch;
}

/**
 * May the partition send its next batch? Behind the producer's epoch, it sends a retry of an old-epoch batch
 * as it is; a new batch only once nothing of the old epoch is in flight: then its sequences start again at 0
 * under the current epoch, and its unsent batches, retries first, take them in order.
 */
export function mayMoveOn(pq: PartitionQueue, producerId: ProducerId, producerEpoch: ProducerEpoch): boolean {
  if (onCurrentEpoch(pq, producerId, producerEpoch)) return true;
  const first = pq.ready[0];
  if (first !== undefined && first.baseSequence >= 0 && !pq.sequenceGap) return true;
  if (pq.inFlight.size > 0) return false;
  pq.producerId = producerId;
  pq.producerEpoch = producerEpoch;
  pq.nextSequence = 0;
  pq.lastAckedSequence = -1;
  pq.sequenceGap = false;
  for (const b of pq.ready) b.baseSequence = -1;
  return true;
}

/**
 * Puts a batch that failed retriably back into its queue, in sequence order: numbered batches come first, and
 * the ones numbered again under a new epoch get their sequences as they go. The parts of a split batch go back
 * together (`batches`: consecutive sequences, in order, or all unnumbered).
 */
export function requeueInSequenceOrder(pq: PartitionQueue, ...batches: Batch[]): void {
  const first = batches[0]!.baseSequence;
  let i = 0;
  while (i < pq.ready.length && pq.ready[i]!.baseSequence >= 0 && pq.ready[i]!.baseSequence < first) i++;
  pq.ready.splice(i, 0, ...batches);
}

/**
 * Numbers a batch for its first send, or after its partition started its sequences again: the next sequences
 * under the partition's id and epoch (the producer's current ones: drain sends an unnumbered batch only then).
 * A numbered batch keeps its id, epoch and sequence on retries, so a retry of a batch that landed is answered as
 * a duplicate. Returns whether the batch was (re)numbered, so its built bytes are stale.
 */
export function numberBatch(b: Batch): boolean {
  if (b.baseSequence >= 0) return false;
  const pq = b.pq;
  b.producerId = pq.producerId;
  b.producerEpoch = pq.producerEpoch;
  b.baseSequence = pq.nextSequence;
  pq.nextSequence = (pq.nextSequence + b.onSuccess.length) % (SEQUENCE_MAX + 1);
  return true;
}

/** The broker acknowledged `b`: its last sequence is the partition's last acknowledged, if still of its epoch. */
export function acknowledge(b: Batch): void {
  const pq = b.pq;
  if (b.baseSequence >= 0 && b.producerId === pq.producerId && b.producerEpoch === pq.producerEpoch) {
    pq.lastAckedSequence = (b.baseSequence + b.onSuccess.length - 1) % (SEQUENCE_MAX + 1);
  }
}

/**
 * Lost producer state (UNKNOWN_PRODUCER_ID), or OUT_OF_ORDER_SEQUENCE_NUMBER for the batch right after the last
 * acknowledged sequence of the current epoch: every earlier sequence landed, so the broker lost records and no
 * retry under this epoch can fill the gap (Kafka's TransactionManager.canRetry).
 */
export function isSequenceGap(
  b: Batch,
  code: number,
  producerId: ProducerId,
  producerEpoch: ProducerEpoch,
): boolean {
  const pq = b.pq;
  return (
    code === ErrorCode.UNKNOWN_PRODUCER_ID ||
    (onCurrentEpoch(pq, producerId, producerEpoch) &&
      b.baseSequence === (pq.lastAckedSequence + 1) % (SEQUENCE_MAX + 1))
  );
}

/**
 * A transactional batch of `records` records was refused by the broker (not written): gives its sequences back to
 * its partition and moves the partition's later numbered batches, in flight or waiting, down by as many, as Kafka's
 * TxnPartitionEntry.adjustSequencesDueToFailedBatch does, so that they follow the last batch written and the
 * transaction can end without an epoch bump. A batch in flight comes back OUT_OF_ORDER_SEQUENCE_NUMBER and goes
 * again with its new sequence (sequenceMoved). Only for a batch under the partition's id and epoch (after an epoch
 * change the partition starts again at 0 anyway). Returns whether the sequences were given back.
 */
export function adjustSequencesAfterFailedBatch(b: Batch, records: number): boolean {
  const pq = b.pq;
  if (b.baseSequence < 0 || b.producerId !== pq.producerId || b.producerEpoch !== pq.producerEpoch)
    return false;
  const modulus = SEQUENCE_MAX + 1;
  // Distances from the failed batch's first sequence, so that a wrap past SEQUENCE_MAX orders them right.
  const distance = (sequence: number): number => (sequence - b.baseSequence + modulus) % modulus;
  const toNext = distance(pq.nextSequence);
  assert.ok(toNext >= records, "the failed batch lies before the partition's next sequence");
  pq.nextSequence = (pq.nextSequence - records + modulus) % modulus;
  for (const later of [...pq.inFlight, ...pq.ready]) {
    if (
      later.baseSequence < 0 ||
      later.producerId !== pq.producerId ||
      later.producerEpoch !== pq.producerEpoch
    )
      continue;
    const d = distance(later.baseSequence);
    if (d === 0 || d >= toNext) continue;
    later.baseSequence = (later.baseSequence - records + modulus) % modulus;
    later.built = null;
    later.sequenceMoved = true;
  }
  return true;
}
