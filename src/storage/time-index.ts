// .timeindex: a sparse map from timestamp to offset, for ListOffsets by time and time-based retention.
//
//   entry (12 bytes): timestamp int64 (ms), relativeOffset int32
//
// Each entry is (the largest batch maxTimestamp seen so far in the segment, the last offset of that batch).
// Entries are appended only when the timestamp grows, so both columns are non-decreasing and a binary search
// by timestamp works. When a segment rolls or closes, a last entry records its final maximum (Kafka does the
// same), so an inactive segment's largest timestamp is its last entry.

import type { IndexCrypt } from './encryption/segment-cipher.js';
import { IndexFile } from './index-file.js';

export const TIME_INDEX_ENTRY_BYTES = 12;

function readTimestamp(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * 0x1_0000_0000 + buf.readUInt32BE(pos + 4);
}

const timestampKey = (buf: Buffer, pos: number): number => readTimestamp(buf, pos);
const relativeOffsetKey = (buf: Buffer, pos: number): number => buf.readInt32BE(pos + 8);

export interface TimestampOffset {
  readonly timestamp: number;
  readonly offset: number;
}

export class TimeIndex {
  private readonly entryBuf = Buffer.allocUnsafe(TIME_INDEX_ENTRY_BYTES);
  private last: TimestampOffset | null = null;

  private constructor(
    readonly file: IndexFile,
    readonly baseOffset: number,
  ) {
    if (file.entries > 0) this.last = this.entryAt(file.entries - 1);
  }

  static create(
    path: string,
    baseOffset: number,
    maxIndexBytes: number,
    crypt: IndexCrypt | null = null,
  ): TimeIndex {
    return new TimeIndex(IndexFile.create(path, TIME_INDEX_ENTRY_BYTES, maxIndexBytes, crypt), baseOffset);
  }

  /** Opens an existing index; null when its length or its tail shows it must be rebuilt. */
  static open(
    path: string,
    baseOffset: number,
    maxIndexBytes: number,
    crypt: IndexCrypt | null = null,
  ): TimeIndex | null {
    const file = IndexFile.open(path, TIME_INDEX_ENTRY_BYTES, maxIndexBytes, crypt);
    if (file === null) return null;
    const index = new TimeIndex(file, baseOffset);
    if (!index.tailIsSane()) {
      file.close();
      return null;
    }
    return index;
  }

  private tailIsSane(): boolean {
    let previous: TimestampOffset | null = null;
    for (let i = Math.max(0, this.file.entries - 64); i < this.file.entries; i++) {
      const entry = this.entryAt(i);
      if (entry.offset < this.baseOffset || entry.timestamp < -1) return false;
      if (previous !== null && (entry.timestamp <= previous.timestamp || entry.offset < previous.offset)) {
        return false;
      }
      previous = entry;
    }
    return true;
  }

  private entryAt(i: number): TimestampOffset {
    const { buf, pos } = this.file.entry(i);
    return { timestamp: readTimestamp(buf, pos), offset: this.baseOffset + buf.readInt32BE(pos + 8) };
  }

  get entries(): number {
    return this.file.entries;
  }

  /** One slot stays free for the entry written at roll (Kafka reserves it the same way). */
  get isFull(): boolean {
    return this.file.entries >= this.file.maxEntries - 1;
  }

  get lastEntry(): TimestampOffset | null {
    return this.last;
  }

  /** Appends (timestamp, offset) if the timestamp is larger than the last entry's; `force` ignores fullness. */
  maybeAppend(timestamp: number, offset: number, force = false): void {
    if (this.last !== null && timestamp <= this.last.timestamp) return;
    if (this.file.isFull || (this.isFull && !force)) return;
    this.entryBuf.writeBigInt64BE(BigInt(timestamp), 0);
    this.entryBuf.writeInt32BE(offset - this.baseOffset, 8);
    this.file.append(this.entryBuf);
    this.last = { timestamp, offset };
  }

  /** The entry with the largest timestamp <= target, or null. */
  lookup(target: number): TimestampOffset | null {
    const slot = this.file.floor(timestampKey, target);
    return slot < 0 ? null : this.entryAt(slot);
  }

  /** Removes entries for offsets >= `offset`; offsets are non-decreasing, so a binary search finds the cut. */
  truncateTo(offset: number): void {
    const keep = this.file.floor(relativeOffsetKey, offset - this.baseOffset - 1) + 1;
    this.file.truncateToEntries(keep);
    this.last = keep > 0 ? this.entryAt(keep - 1) : null;
  }

  reset(): void {
    this.file.truncateToEntries(0);
    this.last = null;
  }
}
