// Legacy message sets (magic 0 and 1), which old producers send and old fetch versions expect:
//
//   offset      int64   (absolute; inside a v1 compressed wrapper, relative to the wrapper's first message)
//   size        int32   bytes that follow
//   crc         uint32  CRC32 (IEEE) of magic..end
//   magic       int8    0 or 1
//   attributes  int8    bits 0-2 codec, bit 3 LogAppendTime (v1 only)
//   timestamp   int64   v1 only
//   key         int32 length (-1 = null), bytes
//   value       int32 length (-1 = null), bytes
//
// A compressed message ("wrapper") has a null key and a value that decompresses to an inner message set of
// the same magic with uncompressed messages. A v1 wrapper carries the offset of its last inner message and inner
// offsets relative to the first, so absolute = wrapperOffset - lastInnerOffset + innerOffset; a v0 wrapper's
// inner offsets are absolute. A v1 wrapper marked LogAppendTime gives every inner message its timestamp.
// decodeMessageSet flattens wrappers into their inner messages, as a consumer sees them.

import { crc32 } from '@node-rs/crc32';
import { limits } from '../../common/limits.js';
import { compress, decompress } from '../compression/codecs.js';
import { CompressionError } from '../compression/compression-error.js';
import { CompressionType, isCompressionType } from '../compression/compression-type.js';
import { type BatchFault, BatchFaultError, batchFault } from './batch-fault.js';
import { Attribute, LOG_OVERHEAD, NO_TIMESTAMP, TimestampType } from './batch-header.js';
import { compressionFault } from './batch-records.js';
import { RecordsCursor } from './records-cursor.js';

export const LEGACY_CRC = 12;
export const LEGACY_MAGIC = 16;
export const LEGACY_ATTRIBUTES = 17;
export const LEGACY_TIMESTAMP = 18;
/** offset, size, crc, magic, attributes, key length, value length: the smallest v0 message. */
export const LEGACY_V0_BYTES_MIN = LOG_OVERHEAD + 14;

export type LegacyMagic = 0 | 1;

export interface LegacyMessage {
  offset: number;
  magic: LegacyMagic;
  /** The message's own attributes; for an inner message, those of the inner message. */
  attributes: number;
  /** NO_TIMESTAMP (-1) for magic 0. */
  timestamp: number;
  timestampType: TimestampType;
  key: Buffer | null;
  value: Buffer | null;
  /** The codec of the wrapper this message came out of, or None. */
  compression: CompressionType;
}

export interface DecodeMessageSetOptions {
  /** Total bytes all wrappers together may decompress into; defaults to limits.decompressedBatchBytesMax. */
  maxDecompressedBytes?: number;
}

export interface MessageSet {
  messages: LegacyMessage[];
  /** Bytes of an incomplete message at the end of the input (ignored, as clients do). */
  partialBytes: number;
}

function int64AsNumber(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * 0x1_0000_0000 + buf.readUInt32BE(pos + 4);
}

function fail(kind: Parameters<typeof batchFault>[0], message: string, position: number): BatchFaultError {
  return new BatchFaultError(batchFault(kind, message, position));
}

function bytesAt(buf: Buffer, at: number, end: number, position: number): Buffer | null {
  if (end - at < 4) throw fail('records-framing', 'message ends inside a length field', position);
  const length = buf.readInt32BE(at);
  if (length === -1) return null;
  if (length < 0 || length > end - at - 4) {
    throw fail('records-framing', `field length ${length} does not fit the message`, position);
  }
  return buf.subarray(at + 4, at + 4 + length);
}

/** Decodes the one message of `size` bytes at pos (whose framing the cursor checked), verifying its CRC. */
export function decodeLegacyMessage(buf: Buffer, pos: number, size: number): LegacyMessage {
  const end = pos + size;
  const magic = buf[pos + LEGACY_MAGIC] as LegacyMagic;
  if (crc32(buf.subarray(pos + LEGACY_MAGIC, end)) >>> 0 !== buf.readUInt32BE(pos + LEGACY_CRC)) {
    throw fail('crc-mismatch', 'CRC32 of the message does not match', pos);
  }
  const attributes = buf[pos + LEGACY_ATTRIBUTES]!;
  let at = LEGACY_TIMESTAMP + pos;
  let timestamp = NO_TIMESTAMP;
  let timestampType: TimestampType = TimestampType.CreateTime;
  if (magic === 1) {
    timestamp = int64AsNumber(buf, at);
    at += 8;
    if ((attributes & Attribute.TimestampTypeLogAppend) !== 0) timestampType = TimestampType.LogAppendTime;
  }
  const key = bytesAt(buf, at, end, pos);
  at += 4 + (key?.length ?? 0);
  const value = bytesAt(buf, at, end, pos);
  at += 4 + (value?.length ?? 0);
  if (at !== end) throw fail('records-framing', `${end - at} bytes left inside the message`, pos);
  const offset = int64AsNumber(buf, pos);
  // Offsets and timestamps are numbers inside Brook; one that is not exact is refused, not rounded.
  if (!Number.isSafeInteger(offset)) throw fail('offset-out-of-range', `offset ${offset}`, pos);
  if (!Number.isSafeInteger(timestamp)) throw fail('timestamp-out-of-range', `timestamp ${timestamp}`, pos);
  return {
    offset,
    magic,
    attributes,
    timestamp,
    timestampType,
    key,
    value,
    compression: CompressionType.None,
  };
}

interface Budget {
  bytesLeft: number;
}

function expandWrapper(wrapper: LegacyMessage, position: number, budget: Budget, out: LegacyMessage[]): void {
  const codec = wrapper.attributes & Attribute.CompressionMask;
  if (!isCompressionType(codec) || codec === CompressionType.Zstd) {
    throw fail(
      'unsupported-compression',
      `compression id ${codec} in a magic ${wrapper.magic} message`,
      position,
    );
  }
  if (wrapper.value === null) throw fail('records-framing', 'compressed message with a null value', position);
  let inner: Buffer;
  try {
    inner = decompress(codec, wrapper.value, budget.bytesLeft, { magic: wrapper.magic });
  } catch (err) {
    if (err instanceof CompressionError) throw compressionFault(err, position);
    throw err;
  }
  budget.bytesLeft -= inner.length;
  const cursor = new RecordsCursor(inner);
  const first = out.length;
  while (cursor.next()) {
    if (cursor.magic !== wrapper.magic) {
      throw fail(
        'bad-inner-message',
        `inner magic ${cursor.magic} in a magic ${wrapper.magic} wrapper`,
        position,
      );
    }
    const message = decodeLegacyMessage(inner, cursor.position, cursor.sizeInBytes);
    if ((message.attributes & Attribute.CompressionMask) !== 0) {
      throw fail('bad-inner-message', 'compressed message inside a compressed message', position);
    }
    message.compression = codec;
    out.push(message);
  }
  if (cursor.fault !== null || cursor.partialBytes > 0 || out.length === first) {
    throw fail('bad-inner-message', 'the inner message set is malformed or empty', position);
  }
  if (wrapper.magic === 1) {
    const shift = wrapper.offset - out[out.length - 1]!.offset;
    const logAppend = wrapper.timestampType === TimestampType.LogAppendTime;
    for (let i = first; i < out.length; i++) {
      const m = out[i]!;
      m.offset += shift;
      if (!Number.isSafeInteger(m.offset))
        throw fail('offset-out-of-range', `inner offset ${m.offset}`, position);
      if (logAppend) {
        m.timestamp = wrapper.timestamp;
        m.timestampType = TimestampType.LogAppendTime;
      }
    }
  }
}

/**
 * Decodes a legacy message set, flattening compressed wrappers. Throws BatchFaultError on a bad message; a
 * partial message at the end is reported in partialBytes.
 */
export function decodeMessageSet(
  buf: Buffer,
  start = 0,
  end = buf.length,
  options: DecodeMessageSetOptions = {},
): MessageSet {
  const budget = { bytesLeft: options.maxDecompressedBytes ?? limits.decompressedBatchBytesMax };
  const messages: LegacyMessage[] = [];
  const cursor = new RecordsCursor(buf, start, end);
  while (cursor.next()) {
    if (cursor.magic > 1) throw fail('bad-magic', 'a v2 batch inside a legacy message set', cursor.position);
    const message = decodeLegacyMessage(buf, cursor.position, cursor.sizeInBytes);
    if ((message.attributes & Attribute.CompressionMask) === 0) messages.push(message);
    else expandWrapper(message, cursor.position, budget, messages);
  }
  if (cursor.fault !== null) throw new BatchFaultError(cursor.fault);
  return { messages, partialBytes: cursor.partialBytes };
}

/** Checks a legacy message set completely (CRCs, framing, wrappers); null when valid. */
export function validateMessageSet(
  buf: Buffer,
  start = 0,
  end = buf.length,
  options: DecodeMessageSetOptions = {},
): BatchFault | null {
  try {
    const set = decodeMessageSet(buf, start, end, options);
    if (set.partialBytes > 0)
      return batchFault('truncated', 'message set ends inside a message', end - set.partialBytes);
    return null;
  } catch (err) {
    if (err instanceof BatchFaultError) return err.fault;
    throw err;
  }
}

export interface LegacyMessageInput {
  offset: number;
  /** Ignored for magic 0. */
  timestamp?: number;
  key?: Uint8Array | null;
  value?: Uint8Array | null;
}

export interface BuildMessageSetOptions {
  magic: LegacyMagic;
  compression?: number;
  compressionLevel?: number;
  /** v1 only: mark the messages (or the wrapper) LogAppendTime with this timestamp. */
  logAppendTimeMs?: number;
}

function messageSize(magic: LegacyMagic, key: Uint8Array | null, value: Uint8Array | null): number {
  return LEGACY_V0_BYTES_MIN + (magic === 1 ? 8 : 0) + (key?.length ?? 0) + (value?.length ?? 0);
}

function writeNullableBytes(buf: Buffer, at: number, bytes: Uint8Array | null): number {
  if (bytes === null) return buf.writeInt32BE(-1, at);
  at = buf.writeInt32BE(bytes.length, at);
  buf.set(bytes, at);
  return at + bytes.length;
}

/** Writes one message at pos; returns the next position. */
function writeMessage(
  buf: Buffer,
  pos: number,
  magic: LegacyMagic,
  attributes: number,
  m: LegacyMessageInput,
): number {
  const key = m.key ?? null;
  const value = m.value ?? null;
  const size = messageSize(magic, key, value);
  buf.writeBigInt64BE(BigInt(m.offset), pos);
  buf.writeInt32BE(size - LOG_OVERHEAD, pos + 8);
  buf.writeInt8(magic, pos + LEGACY_MAGIC);
  buf.writeInt8(attributes, pos + LEGACY_ATTRIBUTES);
  let at = pos + LEGACY_TIMESTAMP;
  if (magic === 1) at = buf.writeBigInt64BE(BigInt(m.timestamp ?? NO_TIMESTAMP), at);
  at = writeNullableBytes(buf, at, key);
  at = writeNullableBytes(buf, at, value);
  buf.writeUInt32BE(crc32(buf.subarray(pos + LEGACY_MAGIC, at)) >>> 0, pos + LEGACY_CRC);
  return at;
}

function writePlain(messages: readonly LegacyMessageInput[], magic: LegacyMagic, attributes: number): Buffer {
  let size = 0;
  for (const m of messages) size += messageSize(magic, m.key ?? null, m.value ?? null);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const m of messages) at = writeMessage(out, at, magic, attributes, m);
  return out;
}

/** Builds a message set; with a codec, one wrapper holding all messages, as Kafka writes it. */
export function buildMessageSet(
  messages: readonly LegacyMessageInput[],
  options: BuildMessageSetOptions,
): Buffer {
  const { magic } = options;
  const codec = options.compression ?? CompressionType.None;
  const logAppend = magic === 1 && options.logAppendTimeMs !== undefined;
  const timestampBit = logAppend ? Attribute.TimestampTypeLogAppend : 0;
  if (codec === CompressionType.None || messages.length === 0) {
    const stamped = logAppend
      ? messages.map((m) => ({ ...m, timestamp: options.logAppendTimeMs }))
      : messages;
    return writePlain(stamped, magic, timestampBit);
  }
  if (!isCompressionType(codec) || codec === CompressionType.Zstd) {
    throw fail('unsupported-compression', `compression id ${codec} cannot be written in magic ${magic}`, 0);
  }
  const firstOffset = messages[0]!.offset;
  const lastOffset = messages[messages.length - 1]!.offset;
  const inner = magic === 1 ? messages.map((m) => ({ ...m, offset: m.offset - firstOffset })) : messages;
  const packed = compress(codec, writePlain(inner, magic, 0), { level: options.compressionLevel, magic });
  let maxTimestamp = NO_TIMESTAMP;
  for (const m of messages) maxTimestamp = Math.max(maxTimestamp, m.timestamp ?? NO_TIMESTAMP);
  const wrapper: LegacyMessageInput = {
    offset: lastOffset,
    timestamp: logAppend ? options.logAppendTimeMs : maxTimestamp,
    key: null,
    value: packed,
  };
  const out = Buffer.allocUnsafe(messageSize(magic, null, packed));
  writeMessage(out, 0, magic, codec | timestampBit, wrapper);
  return out;
}
