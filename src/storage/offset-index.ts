// .index: a sparse map from offset to file position in the segment's .log.
//
//   entry (8 bytes): relativeOffset int32 (offset - segment base offset), position int32 (byte in .log)
//
// An entry is added when more than index.interval.bytes of log were written since the previous one; it names
// the last offset of a batch and the position where that batch starts (as Kafka does). Relative offsets and
// positions strictly increase, and no entry ever points at position 0 (the first batch is never indexed).
// Entries are verified by the segment when used: an entry is only a hint, the log is the truth.

import type { IndexCrypt } from './encryption/segment-cipher.js';
import { IndexFile } from './index-file.js';

export const OFFSET_INDEX_ENTRY_BYTES = 8;

const relativeOffsetKey = (buf: Buffer, pos: number): number => buf.readInt32BE(pos);

export interface OffsetPosition {
  readonly offset: number;
  readonly position: number;
}

export class OffsetIndex {
  private readonly entryBuf = Buffer.allocUnsafe(OFFSET_INDEX_ENTRY_BYTES);

  private constructor(
    readonly file: IndexFile,
    readonly baseOffset: number,
  ) {}

  static create(
    path: string,
    baseOffset: number,
    maxIndexBytes: number,
    crypt: IndexCrypt | null = null,
  ): OffsetIndex {
    return new OffsetIndex(
      IndexFile.create(path, OFFSET_INDEX_ENTRY_BYTES, maxIndexBytes, crypt),
      baseOffset,
    );
  }

  /**
   * Opens an existing index and checks what can be checked cheaply: whole entries, and a last entry inside the
   * segment (below `logBytes`, offset at least the base). Returns null when it must be rebuilt.
   */
  static open(
    path: string,
    baseOffset: number,
    maxIndexBytes: number,
    logBytes: number,
    crypt: IndexCrypt | null = null,
  ): OffsetIndex | null {
    const file = IndexFile.open(path, OFFSET_INDEX_ENTRY_BYTES, maxIndexBytes, crypt);
    if (file === null) return null;
    const index = new OffsetIndex(file, baseOffset);
    if (!index.tailIsSane(logBytes)) {
      file.close();
      return null;
    }
    return index;
  }

  private tailIsSane(logBytes: number): boolean {
    let previousRelative = -1;
    let previousPosition = 0;
    const first = Math.max(0, this.file.entries - 64);
    for (let i = first; i < this.file.entries; i++) {
      const { buf, pos } = this.file.entry(i);
      const relative = buf.readInt32BE(pos);
      const position = buf.readInt32BE(pos + 4);
      if (relative <= previousRelative || position <= previousPosition || position >= logBytes) return false;
      previousRelative = relative;
      previousPosition = position;
    }
    return true;
  }

  get entries(): number {
    return this.file.entries;
  }

  get isFull(): boolean {
    return this.file.isFull;
  }

  get lastOffset(): number {
    if (this.file.entries === 0) return this.baseOffset;
    const { buf, pos } = this.file.entry(this.file.entries - 1);
    return this.baseOffset + buf.readInt32BE(pos);
  }

  append(offset: number, position: number): void {
    this.entryBuf.writeInt32BE(offset - this.baseOffset, 0);
    this.entryBuf.writeInt32BE(position, 4);
    this.file.append(this.entryBuf);
  }

  /** The entry with the largest offset <= target, or null when target precedes every entry. */
  lookup(target: number): (OffsetPosition & { slot: number }) | null {
    const relative = target - this.baseOffset;
    if (relative < 0) return null;
    const slot = this.file.floor(relativeOffsetKey, Math.min(relative, 0x7fffffff));
    if (slot < 0) return null;
    const { buf, pos } = this.file.entry(slot);
    return { offset: this.baseOffset + buf.readInt32BE(pos), position: buf.readInt32BE(pos + 4), slot };
  }

  /** Removes every entry for an offset >= `offset` (truncation). */
  truncateTo(offset: number): void {
    const slot = this.file.floor(relativeOffsetKey, offset - this.baseOffset - 1);
    this.file.truncateToEntries(slot + 1);
  }

  reset(): void {
    this.file.truncateToEntries(0);
  }
}
