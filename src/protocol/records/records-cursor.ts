// Iteration over a `records` blob: the concatenated batches (v2) or messages (v0/v1) of one partition in a
// produce request, a fetch response or a log segment. Only the framing is read: offset, length and magic.
//
// A fetch response may end with a partial batch (the broker cuts at the byte limit, and clients skip the
// tail), so a tail shorter than its declared size is reported in `partialBytes`, not returned, and is not an
// error. A length that no batch or message of that magic can have, or an unknown magic, stops the walk with a
// `fault`: past that point the framing cannot be trusted.
//
// The cursor is one reusable object, so walking a blob allocates nothing per batch.

import { type BatchFault, batchFault } from './batch-fault.js';
import { BATCH_HEADER_BYTES, BATCH_LENGTH, LOG_OVERHEAD, MAGIC } from './batch-header.js';

/** Smallest length field (bytes after offset and length) of a message of magic 0, 1 and a batch of magic 2. */
export const ENTRY_LENGTH_MIN = [14, 22, BATCH_HEADER_BYTES - LOG_OVERHEAD] as const;

export class RecordsCursor {
  /** Start of the current batch or message, valid after next() returned true. */
  position = -1;
  /** Size of the current entry, offset and length fields included. */
  sizeInBytes = 0;
  magic = -1;
  /** Bytes of an incomplete entry at the end, once next() has returned false. */
  partialBytes = 0;
  /** Set when next() stopped at framing that cannot be valid. */
  fault: BatchFault | null = null;
  private at: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.at = start;
  }

  /** Moves to the next complete entry; false at the end, at a partial tail, or at a fault. */
  next(): boolean {
    const { buf, at, end } = this;
    const remaining = end - at;
    if (remaining <= 0 || this.fault !== null) return false;
    if (remaining < MAGIC + 1) return this.stopPartial(remaining);
    const length = buf.readInt32BE(at + BATCH_LENGTH);
    const magic = buf.readInt8(at + MAGIC);
    if (magic < 0 || magic > 2) {
      this.fault = batchFault('bad-magic', `unknown magic ${magic}`, at);
      return false;
    }
    if (length < ENTRY_LENGTH_MIN[magic]!) {
      this.fault = batchFault('length-too-small', `length ${length} for magic ${magic}`, at);
      return false;
    }
    const size = length + LOG_OVERHEAD;
    if (size > remaining) return this.stopPartial(remaining);
    this.position = at;
    this.sizeInBytes = size;
    this.magic = magic;
    this.at = at + size;
    return true;
  }

  /** The current entry as a view of the input. */
  bytes(): Buffer {
    return this.buf.subarray(this.position, this.position + this.sizeInBytes);
  }

  private stopPartial(remaining: number): boolean {
    this.partialBytes = remaining;
    this.at = this.end;
    return false;
  }
}

export interface RecordsEntry {
  position: number;
  sizeInBytes: number;
  magic: number;
}

/** Convenience: the complete entries of a blob, with the partial tail and fault of the walk. */
export function listEntries(
  buf: Buffer,
  start = 0,
  end = buf.length,
): { entries: RecordsEntry[]; partialBytes: number; fault: BatchFault | null } {
  const cursor = new RecordsCursor(buf, start, end);
  const entries: RecordsEntry[] = [];
  while (cursor.next()) {
    entries.push({ position: cursor.position, sizeInBytes: cursor.sizeInBytes, magic: cursor.magic });
  }
  return { entries, partialBytes: cursor.partialBytes, fault: cursor.fault };
}
