// Splitting a batch that the broker refused as MESSAGE_TOO_LARGE (larger than the topic's max.message.bytes) into
// smaller ones that take its place, as Kafka's ProducerBatch.split and RecordAccumulator.splitAndReenqueue do. A
// Brook batch grows past batch.size while its partition waits for an in-flight slot (record-accumulator.ts), so a
// backlog meets this whenever a topic's max.message.bytes lies between batch.size and max.request.size.
//
// The parts keep what makes the records' outcome the same as the big batch's would have been: its creation time
// (delivery.timeout.ms counts from there), its producer id and epoch, and its sequences, handed out in record order
// from its base sequence, so that the partition's later batches keep theirs and none is written twice. They start
// with no attempt counted, as in Kafka. The buffer.memory bytes and the records' outcomes move to the parts; the big
// batch is left empty, and its buffer goes back to the pool.
//
// Ownership: called by the sender (sender.ts) once the refusing request has settled, so no socket holds the big
// batch's bytes any more.

import assert from 'node:assert/strict';
import { CompressionType } from '../protocol/records/batch-header.js';
import { readRecords } from '../protocol/records/batch-records.js';
import { BatchWriter, type EncodedHeader } from './batch-writer.js';
import type { BufferPool } from './buffer-pool.js';
import { type Batch, SEQUENCE_MAX } from './partition-queue.js';
import { recordBytesBound } from './producer-record.js';

/**
 * The parts of `big`, in record order, each of at most `batchSize` bytes unless one record alone is larger. A batch
 * already within batch.size (the topic's max.message.bytes is below it) is cut in two halves by bytes instead: Kafka
 * would split it into the same batch again and send it again until delivery.timeout.ms; halving makes progress, down
 * to single records, which then fail with MESSAGE_TOO_LARGE as Kafka's do. `big` must hold more than one record.
 */
export function splitBatch(big: Batch, batchSize: number, pool: BufferPool | null): Batch[] {
  const count = big.onSuccess.length;
  assert.ok(count > 1, 'a batch of one record cannot be split');
  // Halves are cut by the bytes buffer.memory counted (a bound per record), as the encoded sizes are known only
  // once appended: the first half takes records until the next would pass half the batch's count.
  const halves = big.writer.sizeInBytes <= batchSize;
  const halfBytes = Math.ceil(big.bytes / 2);
  // An uncompressed view of the records as appended, whatever the codec the batch was sent with.
  const encoded = big.writer.finish({
    compression: CompressionType.None,
    compressionLevel: undefined,
    producerId: -1,
    producerEpoch: -1,
    baseSequence: -1,
  });
  const records = readRecords(encoded);
  assert.equal(records.length, count, 'the batch holds one record per outcome');

  const parts: Batch[] = [];
  let part: Batch | null = null;
  let movedBytes = 0;
  for (let i = 0; i < count; i++) {
    const r = records[i]!;
    const headers: EncodedHeader[] | undefined =
      r.headers.length === 0
        ? undefined
        : r.headers.map((h) => ({ key: Buffer.from(h.key, 'utf8'), value: h.value }));
    const bytes = recordBytesBound(r.key, r.value, headers);
    const full =
      part !== null &&
      part.onSuccess.length > 0 &&
      (halves ? part.bytes + bytes > halfBytes : part.writer.sizeInBytes + bytes > batchSize);
    if (part === null || full) {
      part = newPart(big, Math.max(batchSize, bytes), pool);
      parts.push(part);
    }
    part.writer.append(r.key, r.value, headers, big.timestamps[i]!);
    part.onSuccess.push(big.onSuccess[i]!);
    part.onFailure.push(big.onFailure[i]!);
    part.timestamps.push(big.timestamps[i]!);
    part.bytes += bytes;
    movedBytes += bytes;
  }
  // The same bound as send() counted for each record, so buffer.memory stays exact.
  assert.equal(movedBytes, big.bytes, 'the parts hold the bytes buffer.memory counted for the batch');
  if (big.baseSequence >= 0) {
    let sequence = big.baseSequence;
    for (const p of parts) {
      p.baseSequence = sequence;
      sequence = (sequence + p.onSuccess.length) % (SEQUENCE_MAX + 1);
    }
  }
  big.onSuccess = [];
  big.onFailure = [];
  big.timestamps = [];
  big.bytes = 0;
  big.built = null;
  big.writer.release();
  return parts;
}

/** An empty part of `big`: its partition, creation time, producer id and epoch; closed, never sent. */
function newPart(big: Batch, capacityBytes: number, pool: BufferPool | null): Batch {
  return {
    pq: big.pq,
    writer: new BatchWriter(capacityBytes, capacityBytes, pool),
    onSuccess: [],
    onFailure: [],
    timestamps: [],
    bytes: 0,
    createdMs: big.createdMs,
    built: null,
    producerId: big.producerId,
    producerEpoch: big.producerEpoch,
    baseSequence: -1,
    attempts: 0,
    sequenceMoved: false,
    retryAtMs: 0,
    lingerTimer: null,
    lingered: true,
    flushGeneration: big.flushGeneration,
    abortedInFlight: false,
  };
}
