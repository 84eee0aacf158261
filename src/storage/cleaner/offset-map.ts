// The cleaner's map from a record key to the offset of its latest record: Kafka's SkimpyOffsetMap.
//
// Keys are not stored, only a 16-byte MD5 digest of each, next to the offset (24 bytes a slot), in one buffer
// of a fixed size (log.cleaner.dedupe.buffer.size). Open addressing with linear probing; an all-zero digest
// marks an empty slot (a key whose digest is all zeros is as likely as any other collision, which Kafka also
// accepts: two keys with the same digest would be treated as one). The map never grows: the cleaner stops
// adding keys once `isFull`, and cleans only up to `latestOffset`, the last offset whose batch went in whole.
//
// Owned by one cleaning at a time; synchronous.

import { createHash } from 'node:crypto';
import { assert } from '../../common/assert.js';

const HASH_BYTES = 16;
const SLOT_BYTES = HASH_BYTES + 8;

export class OffsetMap {
  private readonly table: Buffer;
  readonly slots: number;
  /** Entries allowed before the map counts as full (log.cleaner.io.buffer.load.factor of the slots). */
  readonly capacity: number;
  private entries = 0;
  /** The last offset of the last batch that went into the map whole; -1 when none did. */
  latestOffset = -1;

  constructor(memoryBytes: number, loadFactor = 0.9) {
    this.slots = Math.floor(memoryBytes / SLOT_BYTES);
    assert(this.slots >= 2, `a dedupe buffer of ${memoryBytes} bytes holds no keys`);
    // Buffer.alloc zero-fills (an empty map); the pages are only touched as slots are used.
    this.table = Buffer.alloc(this.slots * SLOT_BYTES);
    this.capacity = Math.max(1, Math.min(this.slots - 1, Math.floor(this.slots * loadFactor)));
  }

  get size(): number {
    return this.entries;
  }

  get isFull(): boolean {
    return this.entries >= this.capacity;
  }

  /** Records `offset` as the latest for `key` (a later put for the same key wins). */
  put(key: Uint8Array, offset: number): void {
    const digest = hashKey(key);
    const slot = this.find(digest);
    const at = slot * SLOT_BYTES;
    if (isEmptySlot(this.table, at)) {
      assert(this.entries < this.slots - 1, 'offset map overfilled');
      digest.copy(this.table, at);
      this.entries++;
    }
    writeOffset(this.table, at + HASH_BYTES, offset);
  }

  /** The latest offset recorded for `key`, or -1. */
  get(key: Uint8Array): number {
    const digest = hashKey(key);
    const at = this.find(digest) * SLOT_BYTES;
    return isEmptySlot(this.table, at) ? -1 : readOffset(this.table, at + HASH_BYTES);
  }

  /** The slot holding `digest`, or the empty slot where it would go. */
  private find(digest: Buffer): number {
    let slot = digest.readUInt32BE(0) % this.slots;
    for (;;) {
      const at = slot * SLOT_BYTES;
      if (
        isEmptySlot(this.table, at) ||
        this.table.compare(digest, 0, HASH_BYTES, at, at + HASH_BYTES) === 0
      ) {
        return slot;
      }
      slot = slot + 1 === this.slots ? 0 : slot + 1;
    }
  }
}

export function hashKey(key: Uint8Array): Buffer {
  return createHash('md5').update(key).digest();
}

function isEmptySlot(table: Buffer, at: number): boolean {
  return table.readBigUInt64BE(at) === 0n && table.readBigUInt64BE(at + 8) === 0n;
}

function writeOffset(buf: Buffer, at: number, offset: number): void {
  const high = Math.floor(offset / 0x1_0000_0000);
  buf.writeUInt32BE(high, at);
  buf.writeUInt32BE(offset - high * 0x1_0000_0000, at + 4);
}

function readOffset(buf: Buffer, at: number): number {
  return buf.readUInt32BE(at) * 0x1_0000_0000 + buf.readUInt32BE(at + 4);
}
