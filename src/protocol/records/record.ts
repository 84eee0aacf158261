// One record inside a v2 batch (after decompression):
//
//   length          varint   bytes that follow
//   attributes      int8     unused, written as 0
//   timestampDelta  varlong  record timestamp - batch baseTimestamp
//   offsetDelta     varint   record offset - batch baseOffset
//   keyLength       varint   -1 for a null key
//   key             bytes
//   valueLength     varint   -1 for a null value
//   value           bytes
//   headersCount    varint
//   headers         headerKeyLength varint, headerKey utf8, headerValueLength varint (-1 = null), headerValue
//
// Decoded keys and values are views of the input, not copies; header keys are strings. A record must end exactly
// where its length says, which is how corruption inside a record is caught even without a CRC of its own.

import { assert } from '../../common/assert.js';
import { DecodeError } from '../primitives/decode-error.js';
import { readVarint, readVarlong, varintEnd, varintSize, writeVarint } from './varint.js';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface Record {
  attributes: number;
  timestampDelta: number;
  offsetDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** The fewest bytes a record can take: length, attributes, three zero varints, null key and value. */
export const RECORD_BYTES_MIN = 7;
/** The largest |timestampDelta| the encoder accepts: zigzag doubles it, and it must stay exact. */
const TIMESTAMP_DELTA_MAX = 2 ** 52;

/** Position after the last record read; a module-level slot avoids allocating a result pair per record. */
export let recordEnd = 0;

/** timestampDelta of the last record skipRecord walked (a slot, as recordEnd). */
export let skippedTimestampDelta = 0;

/** Position after the last byte field read by bytesField. */
let fieldEnd = 0;

function bytesField(buf: Buffer, pos: number, end: number, what: string): Buffer | null {
  const length = readVarint(buf, pos, end);
  const start = varintEnd;
  if (length === -1) {
    fieldEnd = start;
    return null;
  }
  if (length < -1) throw new DecodeError('negative-length', `${what} length ${length}`, pos);
  if (length > end - start)
    throw new DecodeError('length-exceeds-input', `${what} runs past the record`, pos);
  fieldEnd = start + length;
  return buf.subarray(start, fieldEnd);
}

/** Decodes the record at pos (which must end by `end`); the next position is left in `recordEnd`. */
export function decodeRecord(buf: Buffer, pos: number, end: number): Record {
  const length = readVarint(buf, pos, end);
  const bodyStart = varintEnd;
  if (length < RECORD_BYTES_MIN - 1 || length > end - bodyStart) {
    throw new DecodeError('length-exceeds-input', `record length ${length} does not fit`, pos);
  }
  const bodyEnd = bodyStart + length;
  const attributes = buf[bodyStart]!;
  const timestampDelta = readVarlong(buf, bodyStart + 1, bodyEnd);
  const offsetDelta = readVarint(buf, varintEnd, bodyEnd);
  const key = bytesField(buf, varintEnd, bodyEnd, 'key');
  const value = bytesField(buf, fieldEnd, bodyEnd, 'value');
  const headersAt = fieldEnd;
  const headersCount = readVarint(buf, headersAt, bodyEnd);
  let at = varintEnd;
  // A header takes at least two bytes, so a count that cannot fit is refused before allocating for it.
  if (headersCount < 0 || headersCount > (bodyEnd - at) / 2) {
    throw new DecodeError('bad-value', `header count ${headersCount}`, headersAt);
  }
  const headers: RecordHeader[] = new Array(headersCount);
  for (let i = 0; i < headersCount; i++) {
    const keyLength = readVarint(buf, at, bodyEnd);
    const keyStart = varintEnd;
    if (keyLength < 0 || keyLength > bodyEnd - keyStart) {
      throw new DecodeError('bad-value', `header key length ${keyLength}`, at);
    }
    const headerKey = buf.toString('utf8', keyStart, keyStart + keyLength);
    const headerValue = bytesField(buf, keyStart + keyLength, bodyEnd, 'header value');
    headers[i] = { key: headerKey, value: headerValue };
    at = fieldEnd;
  }
  if (at !== bodyEnd) {
    throw new DecodeError(
      'trailing-bytes',
      `record declares ${length} bytes but uses ${at - bodyStart}`,
      pos,
    );
  }
  recordEnd = bodyEnd;
  return { attributes, timestampDelta, offsetDelta, key, value, headers };
}

/**
 * Walks the record at pos checking only its framing (the same checks as decodeRecord, no allocation);
 * returns its offsetDelta and leaves the next position in `recordEnd`, its timestampDelta in
 * `skippedTimestampDelta`.
 */
export function skipRecord(buf: Buffer, pos: number, end: number): number {
  const length = readVarint(buf, pos, end);
  const bodyStart = varintEnd;
  if (length < RECORD_BYTES_MIN - 1 || length > end - bodyStart) {
    throw new DecodeError('length-exceeds-input', `record length ${length} does not fit`, pos);
  }
  const bodyEnd = bodyStart + length;
  const timestampDelta = readVarlong(buf, bodyStart + 1, bodyEnd);
  const offsetDelta = readVarint(buf, varintEnd, bodyEnd);
  let at = skipBytes(buf, varintEnd, bodyEnd, false);
  at = skipBytes(buf, at, bodyEnd, false);
  const headersCount = readVarint(buf, at, bodyEnd);
  if (headersCount < 0 || headersCount > (bodyEnd - varintEnd) / 2) {
    throw new DecodeError('bad-value', `header count ${headersCount}`, at);
  }
  at = varintEnd;
  for (let i = 0; i < headersCount; i++) {
    at = skipBytes(buf, at, bodyEnd, true);
    at = skipBytes(buf, at, bodyEnd, false);
  }
  if (at !== bodyEnd) {
    throw new DecodeError(
      'trailing-bytes',
      `record declares ${length} bytes but uses ${at - bodyStart}`,
      pos,
    );
  }
  recordEnd = bodyEnd;
  skippedTimestampDelta = timestampDelta;
  return offsetDelta;
}

function skipBytes(buf: Buffer, pos: number, end: number, notNull: boolean): number {
  const length = readVarint(buf, pos, end);
  if (length === -1 && !notNull) return varintEnd;
  if (length < 0 || length > end - varintEnd)
    throw new DecodeError('bad-value', `field length ${length}`, pos);
  return varintEnd + length;
}

/** A record ready to be written: byte fields already as bytes, so sizing and writing agree. */
export interface RecordToWrite {
  timestampDelta: number;
  offsetDelta: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: ReadonlyArray<{ key: Uint8Array; value: Uint8Array | null }>;
}

function nullableSize(bytes: Uint8Array | null): number {
  return bytes === null ? 1 : varintSize(bytes.length) + bytes.length;
}

/** Bytes of the record after its length prefix. */
export function recordBodySize(r: RecordToWrite): number {
  let size = 1 + varintSize(r.timestampDelta) + varintSize(r.offsetDelta);
  size += nullableSize(r.key) + nullableSize(r.value) + varintSize(r.headers.length);
  for (const h of r.headers) size += varintSize(h.key.length) + h.key.length + nullableSize(h.value);
  return size;
}

/** Bytes the whole record takes. */
export function recordSize(r: RecordToWrite): number {
  const body = recordBodySize(r);
  return varintSize(body) + body;
}

function writeNullable(buf: Uint8Array, pos: number, bytes: Uint8Array | null): number {
  if (bytes === null) return writeVarint(buf, pos, -1);
  pos = writeVarint(buf, pos, bytes.length);
  buf.set(bytes, pos);
  return pos + bytes.length;
}

/** Writes the record at pos (the caller sized the buffer with recordSize); returns the next position. */
export function writeRecord(
  buf: Uint8Array,
  pos: number,
  r: RecordToWrite,
  bodySize = recordBodySize(r),
): number {
  assert(Math.abs(r.timestampDelta) <= TIMESTAMP_DELTA_MAX, `timestamp delta ${r.timestampDelta} too large`);
  pos = writeVarint(buf, pos, bodySize);
  buf[pos++] = 0;
  pos = writeVarint(buf, pos, r.timestampDelta);
  pos = writeVarint(buf, pos, r.offsetDelta);
  pos = writeNullable(buf, pos, r.key);
  pos = writeNullable(buf, pos, r.value);
  pos = writeVarint(buf, pos, r.headers.length);
  for (const h of r.headers) {
    pos = writeVarint(buf, pos, h.key.length);
    buf.set(h.key, pos);
    pos += h.key.length;
    pos = writeNullable(buf, pos, h.value);
  }
  return pos;
}
