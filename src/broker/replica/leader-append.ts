// The leader's validation of a producer's records before they reach the log: each batch is checked by its
// framing, header and CRC, and its records are walked (framing only, no allocation) after one decompression when
// the batch is compressed, as Kafka's LogValidator reads every batch a client sends; offsets and the leader epoch
// are written into the header, and the log appends the bytes unchanged. Rewriting a batch is the exception: legacy
// magic 0/1 input is converted to v2, a topic whose compression.type differs from the producer's gets its batches
// recompressed (from the records section already decompressed), LogAppendTime rewrites the max timestamp (and
// so the CRC), and so does CreateTime for a header whose max timestamp is not its records' largest.

import { ErrorCode } from '../../protocol/errors.js';
import { writeBatchCrc } from '../../protocol/records/batch-crc.js';
import { type BatchFault, BatchFaultError } from '../../protocol/records/batch-fault.js';
import {
  ATTRIBUTES,
  Attribute,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH,
  batchHeader,
  CURRENT_MAGIC,
  LOG_OVERHEAD,
  MAGIC,
  MAX_TIMESTAMP,
  NO_TIMESTAMP,
} from '../../protocol/records/batch-header.js';
import { batchRecordsSection, iterateRecords } from '../../protocol/records/batch-records.js';
import { upConvertRecords } from '../../protocol/records/legacy-convert.js';
import { recompressBatch } from '../../protocol/records/recompress.js';
import { validateBatch, validateRecordsSection } from '../../protocol/records/validate-batch.js';
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
  // The magic byte sits at MAGIC in a v2 batch and in a magic 0/1 message alike (both start with offset and size):
  // a magic 0 message with a value of one byte takes 27 bytes, and librdkafka sends such a message alone.
  if (records.length < MAGIC + 1) return fail(ErrorCode.CORRUPT_MESSAGE, 'records are too short');
  const shapeProblem = fromClient ? checkOneClientBatch(records) : null;
  if (shapeProblem !== null) return shapeProblem;
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
    const fault = validateBatch(input, pos, input.length, { fromClient });
    if (fault !== null) return fail(fault.errorCode, fault.message);
    // Kafka's UnifiedLog refuses a client's v2 batch whose base offset is not 0 (the broker assigns offsets; a
    // producer writing something else has its offsets wrong). Batches converted here from magic 0/1 are exempt,
    // as Kafka checks only v2 batches.
    if (fromClient && input === records && batchHeader.baseOffset(input, pos) !== 0) {
      return fail(
        ErrorCode.INVALID_RECORD,
        `The baseOffset of the record batch in the append to ${topicPartition} should be 0, but it is ${batchHeader.baseOffset(input, pos)}`,
      );
    }
    const size = batchHeader.sizeInBytes(input, pos);
    if (size > settings.maxMessageBytes) {
      return fail(ErrorCode.MESSAGE_TOO_LARGE, `batch of ${size} bytes exceeds max.message.bytes`);
    }
    let batch = input.subarray(pos, pos + size);
    // A client's records, decompressed at most once for all that follows. Batches the broker builds itself
    // (markers, coordinator records) are read only when a rule below needs them, as Kafka validates only clients.
    let section: Buffer | undefined;
    let maxTimestampDelta: number | undefined;
    if (fromClient) {
      const read = clientRecords(batch);
      if ('kind' in read) return fail(read.errorCode, read.message);
      section = read.section;
      maxTimestampDelta = read.maxTimestampDelta;
    }
    // Transaction markers (fromClient false) are never compressed, whatever the topic's compression.type.
    if (fromClient && codec !== undefined && batchHeader.compression(batch, 0) !== codec) {
      try {
        batch = recompressBatch(batch, 0, codec, { section });
      } catch (err) {
        if (err instanceof BatchFaultError) return fail(err.fault.errorCode, err.fault.message);
        throw err;
      }
      rewritten = true;
    }
    if (settings.messageTimestampType === 'CreateTime') {
      try {
        if (maxTimestampDelta !== undefined) setMaxTimestampFromRecords(batch, maxTimestampDelta);
        else repairMaxTimestamp(batch);
      } catch (err) {
        if (err instanceof BatchFaultError) return fail(err.fault.errorCode, err.fault.message);
        throw err;
      }
    }
    const recordProblem = checkRecords(batch, settings, nowMs, topicPartition, fromClient, section);
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

/**
 * The records section of a client's (header-validated) batch, with every record walked: a view of the batch when
 * it is uncompressed, else its records decompressed (bounded). Kafka's LogValidator reads the records of every
 * batch a client sends, compressed or not, so one a client encoded wrongly behind a valid CRC (a record's framing,
 * a count the records do not fill) is refused INVALID_RECORD rather than reaching the log, where it would stop
 * every consumer of the partition. Where Kafka rebuilds a compressed batch whose offset deltas do not run 0, 1, 2
 * (its "inPlaceAssignment" fallback, kept for magic 1 clients), Brook refuses it, as it refuses such an
 * uncompressed batch: no client writing v2 batches is known to do it, and the log keeps producers' bytes as sent.
 */
function clientRecords(batch: Buffer): { section: Buffer; maxTimestampDelta: number } | BatchFault {
  let section: Buffer;
  try {
    // Transient: the section serves this batch's checks, recompression and record rules, all synchronous, and
    // nothing of it is kept (a recompressed batch is a copy), so the codec may decode into a buffer it reuses.
    section = batchRecordsSection(batch, 0, { transient: true });
  } catch (err) {
    if (err instanceof BatchFaultError) return err.fault;
    throw err;
  }
  const facts = { maxTimestampDelta: Number.NEGATIVE_INFINITY };
  return validateRecordsSection(batch, 0, section, true, facts) ?? { section, ...facts };
}

/**
 * How many entries a client may send for one partition, as Kafka's LogValidator (and, for Produce v3+, its
 * ProduceRequest.validateRecords) allows: one v2 batch, or one compressed magic 0/1 wrapper; only uncompressed
 * magic 0/1 messages, one record each, may come several, all of one magic. Anything else is INVALID_RECORD and
 * appends nothing. A partial entry at the end is not counted: validateBatch reports it.
 */
function checkOneClientBatch(records: Buffer): PrepareResult | null {
  let entries = 0;
  let firstMagic = -1;
  let oneMagic = true;
  let compressed = false;
  for (let pos = 0; pos + MAGIC < records.length; ) {
    const magic = records[pos + MAGIC]!;
    const size = LOG_OVERHEAD + records.readInt32BE(pos + BATCH_LENGTH);
    const sizeMin = magic === CURRENT_MAGIC ? BATCH_HEADER_BYTES : MAGIC + 2;
    if (size < sizeMin || pos + size > records.length) break;
    if (entries === 0) firstMagic = magic;
    else if (magic !== firstMagic) oneMagic = false;
    // The codec is in the low bits of the attributes: v2's int16 at ATTRIBUTES, magic 0/1's byte after the magic.
    const codecByte = magic === CURRENT_MAGIC ? records[pos + ATTRIBUTES + 1]! : records[pos + MAGIC + 1]!;
    if ((codecByte & Attribute.CompressionMask) !== 0) compressed = true;
    entries++;
    pos += size;
  }
  if (entries <= 1 || (firstMagic !== CURRENT_MAGIC && oneMagic && !compressed)) return null;
  return fail(
    ErrorCode.INVALID_RECORD,
    `${entries} record batches for one partition: a producer may send one per partition in a request`,
  );
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
 * The time index, ListOffsets by time and retention.ms go by the header's max timestamp, which Kafka's LogValidator
 * sets to the largest record timestamp of every client batch it appends (CreateTime), rewriting the CRC when the
 * producer wrote another. The records were walked already (clientRecords), so this costs a comparison, and a
 * rewrite only for a producer that got it wrong: Sarama 1.22 writes -1, and a max beyond the records would keep a
 * segment past retention.ms, one below them would hide records from ListOffsets by time. A sum beyond the exact
 * integers (no real timestamp) leaves the header as it is.
 */
function setMaxTimestampFromRecords(batch: Buffer, maxTimestampDelta: number): void {
  const max = batchHeader.baseTimestamp(batch, 0) + maxTimestampDelta;
  if (!Number.isSafeInteger(max) || max === batchHeader.maxTimestamp(batch, 0)) return;
  batch.writeBigInt64BE(BigInt(max), MAX_TIMESTAMP);
  writeBatchCrc(batch, 0);
}

/**
 * For batches the broker builds itself (not walked): only a max that cannot be right, below the base timestamp
 * (the first record's), is corrected from the records.
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
