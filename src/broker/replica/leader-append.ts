// The leader's validation of a producer's records before they reach the log, done on bytes: each batch is
// checked by its framing, header and CRC (never by decoding records, unless the topic asks for recompression
// or the records are in the legacy format), offsets and the leader epoch are written into the header, and the
// log appends the bytes unchanged. Work on records is the exception: legacy magic 0/1 input is converted to v2,
// a topic whose compression.type differs from the producer's gets its batches recompressed,
// LogAppendTime rewrites the max timestamp (and so the CRC), and so does CreateTime for a header whose max
// timestamp cannot be right.

import { ErrorCode } from '../../protocol/errors.js';
import { writeBatchCrc } from '../../protocol/records/batch-crc.js';
import { BatchFaultError } from '../../protocol/records/batch-fault.js';
import {
  ATTRIBUTES,
  Attribute,
  BATCH_HEADER_BYTES,
  batchHeader,
  LOG_OVERHEAD,
  MAGIC,
  MAX_TIMESTAMP,
  NO_TIMESTAMP,
} from '../../protocol/records/batch-header.js';
import { iterateRecords } from '../../protocol/records/batch-records.js';
import { upConvertRecords } from '../../protocol/records/legacy-convert.js';
import { recompressBatch } from '../../protocol/records/recompress.js';
import { validateBatch } from '../../protocol/records/validate-batch.js';
import type { TopicLogSettings } from '../config/topic-log-settings.js';
import { checkRecords, type RecordError } from './record-errors.js';

/** compression.type values and the codec ids they mean; 'producer' keeps whatever the producer sent. */
const CODEC_OF: Readonly<Record<string, number>> = { uncompressed: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

export interface PreparedBatches {
  /** Valid v2 batches, ready for offsets. May be the request's own bytes (a view) when nothing was rewritten. */
  readonly records: Buffer;
  /** Start of each batch in `records`. */
  readonly positions: readonly number[];
}

export type PrepareResult =
  | { readonly ok: true; readonly value: PreparedBatches }
  | {
      readonly ok: false;
      readonly errorCode: number;
      readonly errorMessage: string;
      /** The records of the failing batch that caused the error, by index in their batch (KIP-467). */
      readonly recordErrors: readonly RecordError[];
    };

const fail = (
  errorCode: number,
  errorMessage: string,
  recordErrors: readonly RecordError[] = [],
): PrepareResult => ({
  ok: false,
  errorCode,
  errorMessage,
  recordErrors,
});

/**
 * Validates and normalises a produce request's records for one partition. `nowMs` is the log append time;
 * `topicPartition` ("name-index") names the partition in record errors.
 */
export function prepareProducedBatches(
  records: Buffer,
  settings: TopicLogSettings,
  nowMs: number,
  fromClient = true,
  topicPartition = '',
): PrepareResult {
  if (records.length < LOG_OVERHEAD + MAGIC + 1)
    return fail(ErrorCode.CORRUPT_MESSAGE, 'records are too short');
  let input = records;
  try {
    if (hasLegacyEntries(records))
      input = upConvertRecords(records, 0, records.length, { offsets: 'sequential' });
  } catch (err) {
    if (err instanceof BatchFaultError) return fail(err.fault.errorCode, err.fault.message);
    throw err;
  }
  const codec = CODEC_OF[settings.compressionType];
  const parts: Buffer[] = [];
  let rewritten = input !== records;
  for (let pos = 0; pos < input.length; ) {
    // A client's uncompressed records are walked (cheap: no decompression, no allocation) so that one encoded
    // wrongly is refused, as Kafka's LogValidator does, instead of stopping every consumer of the partition.
    // Compressed batches are walked only when a record rule needs it (checkRecords): decompressing every produced
    // batch would cost what Kafka pays and Brook does not (see src/protocol/records/README.md).
    const fault = validateBatch(input, pos, input.length, { fromClient, walkUncompressed: fromClient });
    if (fault !== null) return fail(fault.errorCode, fault.message);
    const size = batchHeader.sizeInBytes(input, pos);
    if (size > settings.maxMessageBytes) {
      return fail(ErrorCode.MESSAGE_TOO_LARGE, `batch of ${size} bytes exceeds max.message.bytes`);
    }
    let batch = input.subarray(pos, pos + size);
    // Transaction markers (fromClient false) are never compressed, whatever the topic's compression.type.
    if (fromClient && codec !== undefined && batchHeader.compression(batch, 0) !== codec) {
      try {
        batch = recompressBatch(batch, 0, codec);
      } catch (err) {
        if (err instanceof BatchFaultError) return fail(err.fault.errorCode, err.fault.message);
        throw err;
      }
      rewritten = true;
    }
    if (settings.messageTimestampType === 'CreateTime') {
      try {
        repairMaxTimestamp(batch);
      } catch (err) {
        if (err instanceof BatchFaultError) return fail(err.fault.errorCode, err.fault.message);
        throw err;
      }
    }
    const recordProblem = checkRecords(batch, settings, nowMs, topicPartition, fromClient);
    if (recordProblem !== null) {
      return fail(recordProblem.errorCode, recordProblem.errorMessage, recordProblem.recordErrors);
    }
    parts.push(batch);
    pos += size;
  }
  const out = rewritten ? Buffer.concat(parts) : input;
  const positions: number[] = [];
  for (let pos = 0; pos < out.length; pos += batchHeader.sizeInBytes(out, pos)) positions.push(pos);
  if (settings.messageTimestampType === 'LogAppendTime') {
    for (const pos of positions) setLogAppendTime(out, pos, nowMs);
  }
  return { ok: true, value: { records: out, positions } };
}

/**
 * What a produce request's version allows, checked as Kafka does before any append: from v3 only v2 batches
 * (magic 2), and zstd only from v7 (older clients cannot read it back).
 */
export function checkProduceVersion(records: Buffer, apiVersion: number): PrepareResult | null {
  if (apiVersion >= 3 && hasLegacyEntries(records)) {
    return fail(ErrorCode.INVALID_RECORD, `Produce v${apiVersion} takes only record batches with magic 2`);
  }
  if (apiVersion < 7) {
    for (let pos = 0; pos + BATCH_HEADER_BYTES <= records.length; ) {
      if (records[pos + MAGIC] === 2 && batchHeader.compression(records, pos) === CODEC_OF.zstd) {
        return fail(
          ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
          `zstd needs Produce v7 or later, not v${apiVersion}`,
        );
      }
      const size = batchHeader.sizeInBytes(records, pos);
      if (size < BATCH_HEADER_BYTES) break;
      pos += size;
    }
  }
  return null;
}

function hasLegacyEntries(records: Buffer): boolean {
  for (let pos = 0; pos + MAGIC < records.length; ) {
    if (records[pos + MAGIC] !== 2) return true;
    const size = LOG_OVERHEAD + records.readInt32BE(pos + 8);
    if (size < BATCH_HEADER_BYTES) return false;
    pos += size;
  }
  return false;
}

/**
 * The time index and ListOffsets go by the header's max timestamp, which Kafka's LogValidator sets to the
 * largest record timestamp in every batch it appends. Producers nearly always write it right, so only a header
 * that cannot be right is corrected here, keeping the common path on bytes: a max below the base timestamp (the
 * first record's). Sarama 1.22 sends -1 there, and its records would otherwise never be found by time.
 */
function repairMaxTimestamp(batch: Buffer): void {
  if (batchHeader.maxTimestamp(batch, 0) >= batchHeader.baseTimestamp(batch, 0)) return;
  let max = NO_TIMESTAMP;
  for (const record of iterateRecords(batch, 0)) max = Math.max(max, record.timestamp);
  batch.writeBigInt64BE(BigInt(max), MAX_TIMESTAMP);
  writeBatchCrc(batch, 0);
}

/** LogAppendTime: the max timestamp becomes the append time and the timestamp-type bit is set; the CRC follows. */
function setLogAppendTime(buf: Buffer, pos: number, nowMs: number): void {
  buf.writeBigInt64BE(BigInt(nowMs), pos + MAX_TIMESTAMP);
  buf.writeInt16BE(batchHeader.attributes(buf, pos) | Attribute.TimestampTypeLogAppend, pos + ATTRIBUTES);
  writeBatchCrc(buf, pos);
}
