// Validation of one v2 record batch from its framing and header, as the leader does on produce and a follower
// on fetch, before the bytes are appended unchanged. Records are not decoded unless `deep` is asked for.
//
// Checks, in order (the first failure is returned):
//   1. the header fits and the batch length is at least a header and fits in the input   (CORRUPT_MESSAGE)
//   2. magic is 2                                                                          (CORRUPT_MESSAGE,
//      or INVALID_RECORD for a legacy magic 0/1, as Kafka answers produce v3+ carrying one)
//   3. CRC32C over bytes 21..end matches                                                   (CORRUPT_MESSAGE)
//   4. the compression id is known                                            (UNSUPPORTED_COMPRESSION_TYPE)
//   5. recordsCount within 0..limits.recordsPerBatchMax, and for an uncompressed batch no more records than
//      its bytes can hold (7 bytes each)                                                   (INVALID_RECORD)
//   6. lastOffsetDelta >= recordsCount - 1 (compaction may leave gaps, never the reverse) (INVALID_RECORD)
//   7. from a client: at least one record, lastOffsetDelta = recordsCount - 1, no control batch, a
//      transactional batch has a producer id, an idempotent batch has a sequence          (INVALID_RECORD)
//   8. with `deep`: decompress (bounded) and walk every record (validateRecordsSection); counts and offset
//      deltas must agree with the header (CORRUPT_MESSAGE, INVALID_RECORD or MESSAGE_TOO_LARGE; a malformed
//      record in a client's batch is INVALID_RECORD, as Kafka's InvalidRecordException: its CRC matched, so the
//      client encoded it so, and sending it again cannot help)
//
// The leader on produce checks 1-7 here and then step 8 itself with validateRecordsSection, on the records
// section it decompresses once for everything else it does with the records (recompression, record rules).

import { limits } from '../../common/limits.js';
import { isCompressionType } from '../compression/compression-type.js';
import { isBatchCrcValid } from './batch-crc.js';
import { type BatchFault, BatchFaultError, batchFault, RecordErrorCode } from './batch-fault.js';
import {
  Attribute,
  BATCH_HEADER_BYTES,
  batchHeader,
  CompressionType,
  CURRENT_MAGIC,
  LOG_OVERHEAD,
  MAGIC,
} from './batch-header.js';
import { batchRecordsSection, walkRecords } from './batch-records.js';
import { RECORD_BYTES_MIN } from './record.js';

export interface ValidateBatchOptions {
  /** The batch comes from a producer (not from the log or a leader): apply the producer-only rules. */
  fromClient?: boolean;
  /** Also decompress and walk the records. */
  deep?: boolean;
  /** Bound on decompression for `deep`; defaults to limits.decompressedBatchBytesMax. */
  maxDecompressedBytes?: number;
}

const NO_OPTIONS: ValidateBatchOptions = {};

/** Checks the batch at pos, which must end by `end`. Returns null when it is valid. */
export function validateBatch(
  buf: Buffer,
  pos = 0,
  end = buf.length,
  options: ValidateBatchOptions = NO_OPTIONS,
): BatchFault | null {
  const available = end - pos;
  if (available < MAGIC + 1)
    return batchFault('truncated', `${available} bytes cannot hold a batch header`, pos);
  const magic = batchHeader.magic(buf, pos);
  if (magic !== CURRENT_MAGIC) {
    const legacy = magic === 0 || magic === 1;
    return batchFault(
      'bad-magic',
      `magic ${magic} where a v2 batch is required`,
      pos,
      legacy ? RecordErrorCode.INVALID_RECORD : RecordErrorCode.CORRUPT_MESSAGE,
    );
  }
  const length = batchHeader.batchLength(buf, pos);
  if (length < BATCH_HEADER_BYTES - LOG_OVERHEAD) {
    return batchFault('length-too-small', `batch length ${length} is smaller than a header`, pos);
  }
  if (length > available - LOG_OVERHEAD) {
    return batchFault('truncated', `batch of ${length + LOG_OVERHEAD} bytes, ${available} available`, pos);
  }
  if (!isBatchCrcValid(buf, pos)) return batchFault('crc-mismatch', 'CRC32C does not match', pos);
  const headerFault = checkHeader(buf, pos, length, options);
  if (headerFault !== null) return headerFault;
  return options.deep === true ? checkRecords(buf, pos, options) : null;
}

function checkHeader(
  buf: Buffer,
  pos: number,
  length: number,
  options: ValidateBatchOptions,
): BatchFault | null {
  const attributes = batchHeader.attributes(buf, pos);
  const codec = attributes & Attribute.CompressionMask;
  if (!isCompressionType(codec)) return batchFault('unsupported-compression', `compression id ${codec}`, pos);
  const count = batchHeader.recordsCount(buf, pos);
  const recordsBytes = length + LOG_OVERHEAD - BATCH_HEADER_BYTES;
  if (count < 0 || count > limits.recordsPerBatchMax) {
    return batchFault('records-count', `records count ${count}`, pos);
  }
  if (codec === CompressionType.None && count * RECORD_BYTES_MIN > recordsBytes) {
    return batchFault('records-count', `${count} records cannot fit in ${recordsBytes} bytes`, pos);
  }
  const lastOffsetDelta = batchHeader.lastOffsetDelta(buf, pos);
  if (lastOffsetDelta < count - 1 || lastOffsetDelta < 0) {
    return batchFault('offset-range', `lastOffsetDelta ${lastOffsetDelta} with ${count} records`, pos);
  }
  if (!options.fromClient) return null;
  if (count === 0) return batchFault('records-count', 'a producer batch must hold records', pos);
  if (lastOffsetDelta !== count - 1) {
    return batchFault('offset-range', `lastOffsetDelta ${lastOffsetDelta} with ${count} records`, pos);
  }
  if ((attributes & Attribute.Control) !== 0) {
    return batchFault('control-from-client', 'clients may not write control batches', pos);
  }
  const hasProducerId = batchHeader.hasProducerId(buf, pos);
  if ((attributes & Attribute.Transactional) !== 0 && !hasProducerId) {
    return batchFault('producer-fields', 'transactional batch without a producer id', pos);
  }
  if (hasProducerId && batchHeader.baseSequence(buf, pos) < 0) {
    return batchFault('producer-fields', 'idempotent batch without a base sequence', pos);
  }
  return null;
}

function checkRecords(buf: Buffer, pos: number, options: ValidateBatchOptions): BatchFault | null {
  let section: Buffer;
  try {
    section = batchRecordsSection(buf, pos, options);
  } catch (err) {
    if (!(err instanceof BatchFaultError)) throw err;
    return err.fault;
  }
  return validateRecordsSection(buf, pos, section, options.fromClient === true);
}

/** What validateRecordsSection learnt of a valid section beyond its verdict, for callers that pass one. */
export interface SectionFacts {
  /** The largest record timestampDelta (-Infinity for no records): the true max timestamp less the base one. */
  maxTimestampDelta: number;
}

/**
 * Step 8 on a records section already read (batchRecordsSection: a view when uncompressed, else decompressed) of
 * a batch that passed steps 1-7: walks every record's framing without allocating, and compares the records with
 * the header's count and offset deltas. Null when they agree, and then `facts`, when given, is filled in.
 */
export function validateRecordsSection(
  buf: Buffer,
  pos: number,
  section: Buffer,
  fromClient: boolean,
  facts?: SectionFacts,
): BatchFault | null {
  const count = batchHeader.recordsCount(buf, pos);
  try {
    const walk = walkRecords(section, count, pos);
    if (walk.count !== count) {
      return batchFault('records-count', `header says ${count} records, found ${walk.count}`, pos);
    }
    const lastOffsetDelta = batchHeader.lastOffsetDelta(buf, pos);
    const offsetsOk = fromClient
      ? walk.sequentialOffsets
      : walk.increasingOffsets && walk.lastOffsetDelta <= lastOffsetDelta;
    if (!offsetsOk || (fromClient && count > 0 && walk.lastOffsetDelta !== lastOffsetDelta)) {
      return batchFault('offset-range', 'record offset deltas disagree with the header', pos);
    }
    if (facts !== undefined) facts.maxTimestampDelta = walk.maxTimestampDelta;
    return null;
  } catch (err) {
    if (!(err instanceof BatchFaultError)) throw err;
    const fault = err.fault;
    return fromClient && fault.kind === 'records-framing'
      ? batchFault(fault.kind, fault.message, fault.position, RecordErrorCode.INVALID_RECORD)
      : fault;
  }
}
