// What the cleaner keeps of one record batch: Kafka's LogCleaner record filter and MemoryRecords.filterTo.
//
// A batch is dropped, written back unchanged, rebuilt with only the records it keeps, or reduced to an empty
// header (the last batch of a live producer, so that its sequence numbers survive a restart, and the last batch
// of the pass's cleanable range, so that the batches reach the offset where it ends). A record is kept
// when it is the latest for its key according to the offset map (or lies past what the map covers), and, for a
// tombstone (null value), while its batch's delete horizon has not passed. The first pass that keeps a
// tombstone or a removable transaction marker stamps the batch with a horizon of now + delete.retention.ms
// (KIP-534: the delete-horizon attribute bit, the horizon in baseTimestamp). Rebuilt batches keep their base
// offset, last offset delta (so the producer's last sequence stays right), producer fields, leader epoch,
// timestamp type and codec; records keep their offsets and timestamps.

import { buildBatch, type RecordInput } from '../../protocol/records/batch-builder.js';
import { writeBatchCrc } from '../../protocol/records/batch-crc.js';
import {
  ATTRIBUTES,
  Attribute,
  BASE_TIMESTAMP,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH,
  batchHeader,
  LAST_OFFSET_DELTA,
  LOG_OVERHEAD,
  MAX_TIMESTAMP,
  RECORDS_COUNT,
  TimestampType,
} from '../../protocol/records/batch-header.js';
import { iterateRecords } from '../../protocol/records/batch-records.js';
import type { CleanedTransactions } from './cleaned-transactions.js';
import type { OffsetMap } from './offset-map.js';

/** The last batch a producer still has in its state: its last data offset (-1 when none) and epoch. */
export interface ProducerTail {
  readonly lastDataOffset: number;
  readonly epoch: number;
}

export interface FilterContext {
  readonly map: OffsetMap;
  readonly txns: CleanedTransactions;
  readonly nowMs: number;
  readonly deleteRetentionMs: number;
  readonly producerTails: ReadonlyMap<number, ProducerTail>;
  /** The pass's first uncleanable offset: the batch that ends just below it is kept, emptied if need be. */
  readonly roundEndOffset: number;
}

export interface FilterStats {
  recordsRead: number;
  recordsKept: number;
  /** Records without a key: invalid on a compacted topic, removed as Kafka does. */
  recordsWithoutKey: number;
}

export function emptyStats(): FilterStats {
  return { recordsRead: 0, recordsKept: 0, recordsWithoutKey: 0 };
}

/**
 * The bytes to write for the whole batch at `pos` of `buf` (a view of it when unchanged), or null to drop it.
 * Throws BatchFaultError when the records cannot be read (a damaged batch stops the cleaning of this log).
 */
export function filterBatch(buf: Buffer, pos: number, ctx: FilterContext, stats: FilterStats): Buffer | null {
  const size = batchHeader.sizeInBytes(buf, pos);
  const isControl = batchHeader.isControl(buf, pos);
  const canDiscard = isControl ? ctx.txns.onControlBatch(buf, pos) : ctx.txns.onDataBatch(buf, pos);
  const horizon = batchHeader.deleteHorizonMs(buf, pos);
  const hasHorizon = batchHeader.hasDeleteHorizon(buf, pos);
  const discardRecords = isControl ? canDiscard && hasHorizon && horizon <= ctx.nowMs : canDiscard;
  const producerId = batchHeader.producerId(buf, pos);
  const tail = producerId >= 0 ? ctx.producerTails.get(producerId) : undefined;
  const lastOfProducer =
    tail !== undefined &&
    (tail.lastDataOffset >= 0
      ? batchHeader.lastOffset(buf, pos) === tail.lastDataOffset
      : isControl && batchHeader.producerEpoch(buf, pos) === tail.epoch);
  // Kafka's RETAIN_EMPTY: the last batch of a live producer, and the batch that ends the round (KAFKA-17076), so
  // that the batches of the cleaned range still reach its end: a replica copying them learns the offsets handed out.
  const retainEmpty = lastOfProducer || batchHeader.lastOffset(buf, pos) + 1 === ctx.roundEndOffset;
  if (discardRecords && !retainEmpty) return null;

  const kept: RecordInput[] = [];
  let changed = false;
  let hasTombstone = false;
  const count = batchHeader.recordsCount(buf, pos);
  stats.recordsRead += count;
  if (!discardRecords) {
    const base = batchHeader.baseOffset(buf, pos);
    for (const record of iterateRecords(buf, pos)) {
      if (
        !isControl &&
        !keepRecord(record.offset, record.key, record.value, hasHorizon, horizon, ctx, stats)
      ) {
        changed = true;
        continue;
      }
      if (record.value === null) hasTombstone = true;
      kept.push({
        key: record.key,
        value: record.value,
        headers: record.headers,
        timestamp: record.timestamp,
        offsetDelta: record.offset - base,
      });
    }
  } else {
    changed = count > 0;
  }
  stats.recordsKept += kept.length;
  const needsHorizon = (hasTombstone || (isControl && canDiscard)) && !hasHorizon;
  if (kept.length === 0) {
    if (!retainEmpty) return null;
    return count === 0 && !needsHorizon ? buf.subarray(pos, pos + size) : emptyBatch(buf, pos);
  }
  if (!changed && !needsHorizon) return buf.subarray(pos, pos + size);
  return rebuild(
    buf,
    pos,
    kept,
    needsHorizon ? ctx.nowMs + ctx.deleteRetentionMs : hasHorizon ? horizon : undefined,
  );
}

function keepRecord(
  offset: number,
  key: Buffer | null,
  value: Buffer | null,
  hasHorizon: boolean,
  horizon: number,
  ctx: FilterContext,
  stats: FilterStats,
): boolean {
  if (offset > ctx.map.latestOffset) return true;
  if (key === null) {
    stats.recordsWithoutKey++;
    return false;
  }
  if (offset < ctx.map.get(key)) return false;
  return value !== null || !hasHorizon || ctx.nowMs < horizon;
}

function rebuild(
  buf: Buffer,
  pos: number,
  records: RecordInput[],
  deleteHorizonMs: number | undefined,
): Buffer {
  const logAppendTime = batchHeader.timestampType(buf, pos) === TimestampType.LogAppendTime;
  const out = buildBatch(records, {
    baseOffset: batchHeader.baseOffset(buf, pos),
    partitionLeaderEpoch: batchHeader.partitionLeaderEpoch(buf, pos),
    compression: batchHeader.compression(buf, pos),
    logAppendTimeMs: logAppendTime ? batchHeader.maxTimestamp(buf, pos) : undefined,
    producerId: batchHeader.producerId(buf, pos),
    producerEpoch: batchHeader.producerEpoch(buf, pos),
    baseSequence: batchHeader.baseSequence(buf, pos),
    transactional: batchHeader.isTransactional(buf, pos),
    control: batchHeader.isControl(buf, pos),
    deleteHorizonMs,
  });
  // As Kafka's filterTo: the last offset of the original batch stays, so its last sequence does too.
  out.writeInt32BE(batchHeader.lastOffsetDelta(buf, pos), LAST_OFFSET_DELTA);
  writeBatchCrc(out, 0);
  return out;
}

/** Kafka's writeEmptyHeader: the header alone, no records, uncompressed, both timestamps the max timestamp. */
function emptyBatch(buf: Buffer, pos: number): Buffer {
  const out = Buffer.allocUnsafe(BATCH_HEADER_BYTES);
  buf.copy(out, 0, pos, pos + BATCH_HEADER_BYTES);
  out.writeInt32BE(BATCH_HEADER_BYTES - LOG_OVERHEAD, BATCH_LENGTH);
  const attributes =
    batchHeader.attributes(buf, pos) & ~(Attribute.CompressionMask | Attribute.DeleteHorizon);
  out.writeInt16BE(attributes, ATTRIBUTES);
  buf.copy(out, BASE_TIMESTAMP, pos + MAX_TIMESTAMP, pos + MAX_TIMESTAMP + 8);
  out.writeInt32BE(0, RECORDS_COUNT);
  writeBatchCrc(out, 0);
  return out;
}
