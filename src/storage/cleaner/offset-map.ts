// The cleaner's map from a record key to the offset of its latest record: Kafka's SkimpyOffsetMap.
//
// Keys are not stored, only a 16-byte MD5 digest of each, next to the offset (24 bytes a slot), with open
// addressing and linear probing; an all-zero digest marks an empty slot (a key whose digest is all zeros is as
// likely as any other collision, which Kafka also accepts: two keys with the same digest count as one). The
// table starts small and doubles (rehashing the stored digests) up to `memoryBytes`
// (log.cleaner.dedupe.buffer.size), so a small dirty section never touches the whole budget. Once it cannot
// grow and holds `loadFactor` of its slots it is full: the cleaner stops adding keys and cleans only up to
// `latestOffset`, the last offset the map covers (its last record, or the end of the last batch or segment read).
//
// Owned by one cleaning at a time; synchronous.

import { hash } from 'node:crypto';
import { assert } from '../../common/assert.js';

/** Digest words (4 x 32 bits) and offset (one float64, exact below 2^53) per slot. */
const WORDS = 4;
const SLOT_BYTES = WORDS * 4 + 8;
const INITIAL_SLOTS = 1 << 14;

export class OffsetMap {
  private digests: Int32Array;
  private offsets: Float64Array;
  private slotCount: number;
  private readonly maxSlots: number;
  private entries = 0;
  /** The last offset the map covers (Kafka's latestOffset): set by the cleaner as it reads; -1 when none. */
  latestOffset = -1;

  constructor(
    memoryBytes: number,
    private readonly loadFactor = 0.9,
  ) {
    this.maxSlots = Math.floor(memoryBytes / SLOT_BYTES);
    assert(this.maxSlots >= 2, `a dedupe buffer of ${memoryBytes} bytes holds no keys`);
    this.slotCount = Math.min(this.maxSlots, INITIAL_SLOTS);
    this.digests = new Int32Array(this.slotCount * WORDS);
    this.offsets = new Float64Array(this.slotCount);
  }

  get size(): number {
    return this.entries;
  }

  /** Slots the map may use at most. */
  get slots(): number {
    return this.maxSlots;
  }

  private limit(slots: number): number {
    return Math.max(1, Math.min(slots - 1, Math.floor(slots * this.loadFactor)));
  }

  /** No room for another key: the table is as large as allowed and holds loadFactor of its slots. */
  get isFull(): boolean {
    return this.slotCount === this.maxSlots && this.entries >= this.limit(this.slotCount);
  }

  /** Records `offset` as the latest for `key` (a later put for the same key wins). */
  put(key: Uint8Array, offset: number): void {
    const d = digestWords(key);
    let slot = this.find(d);
    if (this.isEmpty(slot)) {
      if (this.entries >= this.limit(this.slotCount)) {
        assert(this.slotCount < this.maxSlots, 'offset map overfilled');
        this.grow();
        slot = this.find(d);
      }
      this.digests.set(d, slot * WORDS);
      this.entries++;
    }
    this.offsets[slot] = offset;
  }

  /** The latest offset recorded for `key`, or -1. */
  get(key: Uint8Array): number {
    const slot = this.find(digestWords(key));
    return this.isEmpty(slot) ? -1 : this.offsets[slot]!;
  }

  private isEmpty(slot: number): boolean {
    const at = slot * WORDS;
    const d = this.digests;
    return (d[at]! | d[at + 1]! | d[at + 2]! | d[at + 3]!) === 0;
  }

  /** The slot holding digest `d`, or the empty slot where it would go. */
  private find(d: Int32Array): number {
    const table = this.digests;
    let slot = (d[0]! >>> 0) % this.slotCount;
    for (;;) {
      const at = slot * WORDS;
      const w0 = table[at]!;
      const w1 = table[at + 1]!;
      const w2 = table[at + 2]!;
      const w3 = table[at + 3]!;
      if ((w0 | w1 | w2 | w3) === 0 || (w0 === d[0] && w1 === d[1] && w2 === d[2] && w3 === d[3]))
        return slot;
      slot = slot + 1 === this.slotCount ? 0 : slot + 1;
    }
  }

  /** Doubles the table (up to the bound) and re-inserts every digest. */
  private grow(): void {
    const oldDigests = this.digests;
    const oldOffsets = this.offsets;
    const oldSlots = this.slotCount;
    this.slotCount = Math.min(this.maxSlots, oldSlots * 2);
    this.digests = new Int32Array(this.slotCount * WORDS);
    this.offsets = new Float64Array(this.slotCount);
    for (let s = 0; s < oldSlots; s++) {
      const d = oldDigests.subarray(s * WORDS, s * WORDS + WORDS);
      if ((d[0]! | d[1]! | d[2]! | d[3]!) === 0) continue;
      const slot = this.find(d);
      this.digests.set(d, slot * WORDS);
      this.offsets[slot] = oldOffsets[s]!;
    }
  }
}

/** The MD5 digest of a key as four int32 words (the one-shot crypto.hash avoids a Hash object per key). */
function digestWords(key: Uint8Array): Int32Array {
  const digest = hash('md5', key, 'buffer') as Buffer;
  return Int32Array.of(
    digest.readInt32LE(0),
    digest.readInt32LE(4),
    digest.readInt32LE(8),
    digest.readInt32LE(12),
  );
}
