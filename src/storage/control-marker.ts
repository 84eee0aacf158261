// Reads the one record of a control batch (a transaction marker) without a general record decoder.
//
//   record:  length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
//            keyLength varint, key, valueLength varint, value, headerCount varint
//   key:     version int16, type int16 (0 = ABORT, 1 = COMMIT)
//   value:   version int16, coordinatorEpoch int32
//
// Control batches are never compressed, so the record follows the batch header directly. Storage needs the
// marker type for the transaction index and the coordinator epoch for producer state; it is the only record
// storage looks into. Malformed input gives null, never an exception.

import { BATCH_HEADER_BYTES, batchHeader } from '../protocol/records/batch-header.js';

export const ControlType = { Abort: 0, Commit: 1 } as const;
export type ControlType = (typeof ControlType)[keyof typeof ControlType];

export interface EndTxnMarker {
  readonly type: ControlType;
  readonly coordinatorEpoch: number;
}

/** Reads a zigzag varint of up to `maxBytes` bytes at cursor.pos; null when malformed or cut. */
function readVarint(buf: Buffer, cursor: { pos: number }, end: number, maxBytes: number): number | null {
  let result = 0;
  let multiplier = 1;
  for (let i = 0; i < maxBytes; i++) {
    if (cursor.pos >= end) return null;
    const byte = buf[cursor.pos++]!;
    result += (byte & 0x7f) * multiplier;
    if ((byte & 0x80) === 0) {
      // Only small values matter here (lengths, deltas); a huge one is treated as malformed by the caller.
      return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
    }
    multiplier *= 128;
  }
  return null;
}

/** The marker in the control batch at `pos` of `buf` (the whole batch must be present), or null. */
export function readEndTxnMarker(buf: Buffer, pos: number): EndTxnMarker | null {
  if (!batchHeader.isControl(buf, pos) || batchHeader.compression(buf, pos) !== 0) return null;
  const end = pos + batchHeader.sizeInBytes(buf, pos);
  if (end > buf.length) return null;
  const cursor = { pos: pos + BATCH_HEADER_BYTES };
  if (readVarint(buf, cursor, end, 5) === null) return null; // record length
  cursor.pos += 1; // attributes
  if (readVarint(buf, cursor, end, 10) === null) return null; // timestampDelta
  if (readVarint(buf, cursor, end, 5) === null) return null; // offsetDelta
  const keyLength = readVarint(buf, cursor, end, 5);
  if (keyLength === null || keyLength < 4 || cursor.pos + keyLength > end) return null;
  const type = buf.readInt16BE(cursor.pos + 2);
  cursor.pos += keyLength;
  if (type !== ControlType.Abort && type !== ControlType.Commit) return null;
  const valueLength = readVarint(buf, cursor, end, 5);
  if (valueLength === null || valueLength < 6 || cursor.pos + valueLength > end) return null;
  return { type: type as ControlType, coordinatorEpoch: buf.readInt32BE(cursor.pos + 2) };
}
