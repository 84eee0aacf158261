// Conversion between legacy message sets and v2 batches.
//
// Up (old producers): the messages of a v0/v1 set become the records of one v2 batch, as Kafka's broker does
// when it converts a produce request. v0 messages have no timestamp and get NO_TIMESTAMP (-1); a LogAppendTime
// v1 set keeps its type. There are no headers or producer fields to carry.
//
// Down (old fetch versions): each v2 batch becomes a message set of the requested magic. Headers and producer
// fields are dropped and control batches are skipped, as Kafka does; a compressed batch becomes one wrapper
// with the same codec, except zstd, which magic 0/1 cannot carry (UNSUPPORTED_COMPRESSION_TYPE, as Kafka
// answers fetch versions before 10); an uncompressed one loses its records below the fetch offset. Entries
// already at or below the requested magic pass through unchanged.

import { CompressionType } from '../compression/compression-type.js';
import { type BatchOptions, buildBatch, type RecordInput } from './batch-builder.js';
import { BatchFaultError, batchFault } from './batch-fault.js';
import { batchHeader, NO_TIMESTAMP, TimestampType } from './batch-header.js';
import { iterateRecords, type ReadRecordsOptions } from './batch-records.js';
import {
  buildMessageSet,
  type DecodeMessageSetOptions,
  decodeMessageSet,
  type LegacyMagic,
  type LegacyMessage,
  type LegacyMessageInput,
} from './legacy-message.js';
import { RecordsCursor } from './records-cursor.js';

export interface UpConvertOptions {
  /** Codec of the new batch; defaults to the codec the messages arrived with. */
  compression?: number;
  compressionLevel?: number;
  /** baseOffset of the new batch; defaults to the first message's offset. */
  baseOffset?: number;
  /**
   * `preserve` keeps the messages' offsets as deltas from the first (they must increase); `sequential` numbers
   * the records 0..n-1, which is what a broker does before assigning offsets to a producer's set.
   */
  offsets?: 'preserve' | 'sequential';
  partitionLeaderEpoch?: number;
}

/** A v2 batch holds offset deltas as int32 and timestamp deltas that must stay exact as numbers. */
const OFFSET_DELTA_MAX = 0x7fff_ffff;
const TIMESTAMP_DELTA_MAX = 2 ** 52;

function checkConvertible(messages: readonly LegacyMessage[], sequential: boolean): void {
  const fault = (kind: 'offset-range' | 'timestamp-out-of-range', message: string) =>
    new BatchFaultError(batchFault(kind, message, 0));
  if (messages.length > OFFSET_DELTA_MAX) throw fault('offset-range', 'too many messages for one batch');
  const first = messages[0]!;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (!sequential) {
      if (i > 0 && m.offset <= messages[i - 1]!.offset) {
        throw fault('offset-range', 'message offsets do not increase; convert with sequential offsets');
      }
      if (m.offset - first.offset > OFFSET_DELTA_MAX)
        throw fault('offset-range', 'offsets span more than int32');
    }
    if (Math.abs(m.timestamp - first.timestamp) > TIMESTAMP_DELTA_MAX) {
      throw fault('timestamp-out-of-range', 'timestamps too far apart for one batch');
    }
  }
}

/**
 * One v2 batch holding the given legacy messages (which must not be empty). A producer's message set carries
 * placeholder offsets (kafka-python writes a v1 wrapper at offset 0, so its inner messages read as negative
 * offsets), so the broker converts produce requests with `offsets: 'sequential'` and assigns offsets after.
 */
export function legacyToBatch(messages: readonly LegacyMessage[], options: UpConvertOptions = {}): Buffer {
  const first = messages[0];
  if (first === undefined) throw new RangeError('no messages to convert');
  const sequential = options.offsets === 'sequential';
  checkConvertible(messages, sequential);
  const records: RecordInput[] = messages.map((m, i) => ({
    key: m.key,
    value: m.value,
    timestamp: m.magic === 0 ? NO_TIMESTAMP : m.timestamp,
    offsetDelta: sequential ? i : m.offset - first.offset,
  }));
  let logAppend = false;
  let maxTimestamp = NO_TIMESTAMP;
  for (const m of messages) {
    if (m.timestampType === TimestampType.LogAppendTime) logAppend = true;
    if (m.timestamp > maxTimestamp) maxTimestamp = m.timestamp;
  }
  const batchOptions: BatchOptions = {
    baseOffset: options.baseOffset ?? (sequential ? 0 : first.offset),
    partitionLeaderEpoch: options.partitionLeaderEpoch,
    compression: options.compression ?? first.compression,
    compressionLevel: options.compressionLevel,
    logAppendTimeMs: logAppend ? maxTimestamp : undefined,
  };
  return buildBatch(records, batchOptions);
}

/** Decodes a legacy message set and converts it into one v2 batch; null when the set holds no message. */
export function messageSetToBatch(
  buf: Buffer,
  start = 0,
  end = buf.length,
  options: UpConvertOptions & DecodeMessageSetOptions = {},
): Buffer | null {
  const set = decodeMessageSet(buf, start, end, options);
  if (set.partialBytes > 0) {
    throw new BatchFaultError(
      batchFault('truncated', 'message set ends inside a message', end - set.partialBytes),
    );
  }
  return set.messages.length === 0 ? null : legacyToBatch(set.messages, options);
}

export interface DownConvertOptions extends ReadRecordsOptions {
  compressionLevel?: number;
  /**
   * The fetch offset. Uncompressed magic 0/1 messages stand one per entry, so Kafka leaves out those of an
   * uncompressed v2 batch below it (some librdkafka versions count on that); a compressed wrapper stays whole.
   */
  firstOffset?: number;
}

/** The v2 batch at pos as a message set of `magic` (empty for a control batch or when nothing is left). */
export function batchToMessageSet(
  buf: Buffer,
  pos: number,
  magic: LegacyMagic,
  options: DownConvertOptions = {},
): Buffer {
  if (batchHeader.isControl(buf, pos)) return Buffer.alloc(0);
  const codec = batchHeader.compression(buf, pos);
  if (codec === CompressionType.Zstd) {
    throw new BatchFaultError(
      batchFault('unsupported-compression', `zstd cannot be sent as magic ${magic}`, pos),
    );
  }
  const messages: LegacyMessageInput[] = [];
  const firstOffset = codec === CompressionType.None ? (options.firstOffset ?? 0) : 0;
  for (const r of iterateRecords(buf, pos, options)) {
    if (r.offset < firstOffset) continue;
    messages.push({ offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value });
  }
  if (messages.length === 0) return Buffer.alloc(0);
  const logAppend = batchHeader.timestampType(buf, pos) === TimestampType.LogAppendTime;
  return buildMessageSet(messages, {
    magic,
    compression: codec,
    compressionLevel: options.compressionLevel,
    logAppendTimeMs: logAppend ? batchHeader.maxTimestamp(buf, pos) : undefined,
  });
}

/** Re-encodes one legacy entry (a message or a wrapper) at a lower magic. */
function legacyEntryDown(
  buf: Buffer,
  pos: number,
  size: number,
  magic: LegacyMagic,
  options: DownConvertOptions,
): Buffer {
  const { messages } = decodeMessageSet(buf, pos, pos + size, options);
  return buildMessageSet(
    messages.map((m) => ({ offset: m.offset, timestamp: m.timestamp, key: m.key, value: m.value })),
    {
      magic,
      compression: messages[0]?.compression ?? CompressionType.None,
      compressionLevel: options.compressionLevel,
    },
  );
}

export interface DownConverted {
  records: Buffer;
  /** Bytes of a partial entry at the end of the input, dropped as clients would drop it. */
  partialBytes: number;
}

/** Converts a records blob (v2 batches or legacy messages) to `magic` for an old fetch version. */
export function downConvertRecords(
  buf: Buffer,
  magic: LegacyMagic,
  start = 0,
  end = buf.length,
  options: DownConvertOptions = {},
): DownConverted {
  const parts: Buffer[] = [];
  const cursor = new RecordsCursor(buf, start, end);
  while (cursor.next()) {
    if (cursor.magic <= magic) parts.push(cursor.bytes());
    else if (cursor.magic === 2) parts.push(batchToMessageSet(buf, cursor.position, magic, options));
    else parts.push(legacyEntryDown(buf, cursor.position, cursor.sizeInBytes, magic, options));
  }
  if (cursor.fault !== null) throw new BatchFaultError(cursor.fault);
  return { records: Buffer.concat(parts), partialBytes: cursor.partialBytes };
}

/** Converts every legacy entry of a produce blob into v2 batches (one per entry run), keeping v2 batches. */
export function upConvertRecords(
  buf: Buffer,
  start = 0,
  end = buf.length,
  options: UpConvertOptions & DecodeMessageSetOptions = {},
): Buffer {
  const parts: Buffer[] = [];
  const cursor = new RecordsCursor(buf, start, end);
  let legacyStart = -1;
  const flush = (until: number): void => {
    if (legacyStart < 0) return;
    const batch = messageSetToBatch(buf, legacyStart, until, options);
    if (batch !== null) parts.push(batch);
    legacyStart = -1;
  };
  while (cursor.next()) {
    if (cursor.magic === 2) {
      flush(cursor.position);
      parts.push(cursor.bytes());
    } else if (legacyStart < 0) {
      legacyStart = cursor.position;
    }
  }
  if (cursor.fault !== null) throw new BatchFaultError(cursor.fault);
  if (cursor.partialBytes > 0) {
    throw new BatchFaultError(
      batchFault('truncated', 'records end inside a batch', end - cursor.partialBytes),
    );
  }
  flush(end);
  return Buffer.concat(parts);
}
