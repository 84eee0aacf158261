// Reading the records of one v2 batch: the records section (decompressed into at most a bounded number of
// bytes when the batch is compressed), and iteration over its records with absolute offsets and timestamps.
// Everything here throws BatchFaultError on bad bytes, since its callers need records, not a verdict.
//
// Timestamps: a record's timestamp is baseTimestamp + timestampDelta, except in a LogAppendTime batch, where
// every record takes the batch's maxTimestamp (the time the broker appended it), as Kafka's readers do.

import { limits } from '../../common/limits.js';
import { decompress } from '../compression/codecs.js';
import { CompressionError } from '../compression/compression-error.js';
import { isCompressionType } from '../compression/compression-type.js';
import { DecodeError } from '../primitives/decode-error.js';
import { BatchFaultError, batchFault } from './batch-fault.js';
import { Attribute, BATCH_HEADER_BYTES, batchHeader, CompressionType } from './batch-header.js';
import { decodeRecord, type Record, recordEnd, skippedTimestampDelta, skipRecord } from './record.js';

export interface ReadRecordsOptions {
  /** Bound on the decompressed records section; defaults to limits.decompressedBatchBytesMax. */
  maxDecompressedBytes?: number;
  /**
   * The batch's records section as batchRecordsSection read it already: taken as it is, so that a caller doing
   * several things with one batch's records (the leader on produce) decompresses them once.
   */
  section?: Buffer;
  /**
   * The caller reads the decompressed section synchronously and keeps nothing of it past its next transient
   * read: the codec may decode into a buffer it reuses (codecs.ts, DecompressOptions.transient).
   */
  transient?: boolean;
}

/** Maps a codec failure to the fault a produce response reports. */
export function compressionFault(err: CompressionError, position: number): BatchFaultError {
  const kind =
    err.kind === 'too-large'
      ? 'too-large'
      : err.kind === 'unsupported'
        ? 'unsupported-compression'
        : 'decompression';
  return new BatchFaultError(batchFault(kind, err.message, position));
}

/**
 * The records section of the batch at pos: a view of the input when uncompressed, otherwise a new buffer of at
 * most maxDecompressedBytes (or `options.section` when given). The batch's framing must have been validated.
 */
export function batchRecordsSection(buf: Buffer, pos = 0, options: ReadRecordsOptions = {}): Buffer {
  if (options.section !== undefined) return options.section;
  const end = pos + batchHeader.sizeInBytes(buf, pos);
  const section = buf.subarray(pos + BATCH_HEADER_BYTES, end);
  const codec = batchHeader.compression(buf, pos);
  if (codec === CompressionType.None) return section;
  if (!isCompressionType(codec)) {
    throw new BatchFaultError(batchFault('unsupported-compression', `compression id ${codec}`, pos));
  }
  try {
    return decompress(codec, section, options.maxDecompressedBytes ?? limits.decompressedBatchBytesMax, {
      transient: options.transient,
    });
  } catch (err) {
    if (err instanceof CompressionError) throw compressionFault(err, pos);
    throw err;
  }
}

export interface BatchRecord extends Record {
  offset: number;
  timestamp: number;
}

/** Offsets and timestamps are numbers inside Brook; one that is not exact is refused, not rounded. */
function checkSafe(r: BatchRecord, position: number): void {
  if (!Number.isSafeInteger(r.offset)) {
    throw new BatchFaultError(batchFault('offset-out-of-range', `offset ${r.offset}`, position));
  }
  if (!Number.isSafeInteger(r.timestamp)) {
    throw new BatchFaultError(batchFault('timestamp-out-of-range', `timestamp ${r.timestamp}`, position));
  }
}

function framingError(err: unknown, position: number): BatchFaultError | unknown {
  if (err instanceof DecodeError)
    return new BatchFaultError(batchFault('records-framing', err.message, position));
  return err;
}

/** Iterates the records of the batch at pos; fails if the records do not match recordsCount exactly. */
export function* iterateRecords(
  buf: Buffer,
  pos = 0,
  options: ReadRecordsOptions = {},
): Generator<BatchRecord, void, undefined> {
  const section = batchRecordsSection(buf, pos, options);
  const count = batchHeader.recordsCount(buf, pos);
  const baseOffset = batchHeader.baseOffset(buf, pos);
  const baseTimestamp = batchHeader.baseTimestamp(buf, pos);
  const logAppendTime = (batchHeader.attributes(buf, pos) & Attribute.TimestampTypeLogAppend) !== 0;
  const maxTimestamp = batchHeader.maxTimestamp(buf, pos);
  let at = 0;
  for (let i = 0; i < count; i++) {
    let record: Record;
    try {
      record = decodeRecord(section, at, section.length);
    } catch (err) {
      throw framingError(err, pos);
    }
    at = recordEnd;
    const r = record as BatchRecord;
    r.offset = baseOffset + record.offsetDelta;
    r.timestamp = logAppendTime ? maxTimestamp : baseTimestamp + record.timestampDelta;
    checkSafe(r, pos);
    yield r;
  }
  if (at !== section.length) {
    throw new BatchFaultError(
      batchFault('records-count', `${section.length - at} bytes left after ${count} records`, pos),
    );
  }
}

export function readRecords(buf: Buffer, pos = 0, options: ReadRecordsOptions = {}): BatchRecord[] {
  return Array.from(iterateRecords(buf, pos, options));
}

export interface RecordsWalk {
  /** Records found. */
  count: number;
  /** offsetDelta of the last record, -1 when there is none. */
  lastOffsetDelta: number;
  /** True when every offsetDelta equals its record's index (what producers write). */
  sequentialOffsets: boolean;
  /** True when offsetDeltas strictly increase (what compaction leaves). */
  increasingOffsets: boolean;
  /** The largest timestampDelta, -Infinity when there is no record: the batch's max timestamp less its base. */
  maxTimestampDelta: number;
}

/**
 * Walks the records section checking the framing of every record, without allocating records. Stops after
 * `countMax` records so that a lying count cannot make it run long; the caller compares `count`.
 */
export function walkRecords(section: Buffer, countMax: number, position: number): RecordsWalk {
  const walk: RecordsWalk = {
    count: 0,
    lastOffsetDelta: -1,
    sequentialOffsets: true,
    increasingOffsets: true,
    maxTimestampDelta: Number.NEGATIVE_INFINITY,
  };
  let at = 0;
  try {
    while (at < section.length && walk.count <= countMax) {
      const offsetDelta = skipRecord(section, at, section.length);
      if (offsetDelta !== walk.count) walk.sequentialOffsets = false;
      if (offsetDelta <= walk.lastOffsetDelta) walk.increasingOffsets = false;
      walk.lastOffsetDelta = offsetDelta;
      if (skippedTimestampDelta > walk.maxTimestampDelta) walk.maxTimestampDelta = skippedTimestampDelta;
      walk.count++;
      at = recordEnd;
    }
  } catch (err) {
    throw framingError(err, position);
  }
  return walk;
}
