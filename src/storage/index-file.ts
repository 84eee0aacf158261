// A file of fixed-width index entries (the shared part of .index and .timeindex).
//
// Like Kafka, a new index file is preallocated to segment.index.bytes (a sparse file, so it costs no disk) and
// trimmed to its entries when the segment rolls or closes. Kafka memory-maps the file; Node cannot, so this
// class keeps only the warm tail (the last STORAGE_LIMITS.indexWarmBytes of entries) in memory and reads older
// entries with pread. Lookups look in the warm tail first: consumers at the tail and appends then never touch
// the disk, and a process with thousands of partitions holds a few KiB per index, not whole files. New
// entries reach the file in groups, and the file is open only during the event-loop turn that uses it, so an
// index holds no descriptor between uses; except that the few indexes most recently read for a lookup keep theirs
// (see LOOKUP_DESCRIPTORS_MAX).
//
// An encrypted segment's index files are encrypted too (`crypt`, see IndexCrypt in encryption/segment-cipher.ts):
// entries are plaintext in memory and ciphertext in the file. Since a keystream must never encrypt two entries at
// one position, the first append after an open or a truncation moves to a new keystream and rewrites the entries
// kept (at most segment.index.bytes; rare: once per open of an appended segment, and after truncations).
//
// Ownership: one LogSegment owns each index. Every method is synchronous, so an append that adds an entry
// never interleaves with a lookup.

import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { AssertionError, assert } from '../common/assert.js';
import { fsyncInBackground } from './atomic-file.js';
import type { IndexCrypt } from './encryption/segment-cipher.js';
import { STORAGE_LIMITS } from './log-config.js';

const EMPTY = Buffer.alloc(0);

/** Cold entries a lookup reads at once when its search has narrowed to them (see floor). */
const COLD_PAGE_BYTES = 4096;
/** One page for those reads: lookups are synchronous, so all indexes share it. */
const coldPageBuffer = Buffer.allocUnsafe(COLD_PAGE_BYTES);

/** Pages of cold entries an index keeping its lookup descriptor keeps (see coldEntries): 16 KiB at most. */
const PAGES_KEPT_MAX = 4;

/** Cold entries of an encrypted index kept decrypted (the top of its binary search tree: 31 slots). */
const PROBES_KEPT_MAX = 32;

/** Entries held in memory before they are written to the file together. */
const PENDING_ENTRIES_MAX = 64;

/**
 * Index descriptors held until the event loop turns, at most: past it the oldest is closed at once. A broker
 * opening thousands of partitions in one synchronous pass (startup, a large CreateTopics) touches three files
 * of each; without a bound it would need three descriptors per partition at the same time.
 */
const HELD_DESCRIPTORS_MAX = 256;
const heldDescriptors = new Set<IndexFile>();

/**
 * Indexes whose descriptor stays open after a lookup read their file, least recently used first, at most
 * LOOKUP_DESCRIPTORS_MAX: consumers reading older parts of a log look up in the same few cold segments fetch
 * after fetch, and an open and a close per lookup cost more than the reads (Kafka keeps every index mmapped).
 * Bounded, and small, because a partition otherwise holds one descriptor (its active segment) and a broker at scale
 * spends nearly all of its descriptor limit on partitions and connections (bench/README.md, Scale).
 */
const LOOKUP_DESCRIPTORS_MAX = 64;
const lookupDescriptors = new Set<IndexFile>();

/** Reads the sort key of the entry at `pos` of `buf`; entries are sorted by it. */
export type EntryKey = (buf: Buffer, pos: number) => number;

export class IndexFile {
  private fd: number;
  private entryCount: number;
  /** Entries [warmFirst, entryCount) live in warm[0 .. (entryCount - warmFirst) * entryBytes). */
  private warm: Buffer;
  private warmFirst: number;
  private readonly warmEntriesMax: number;
  private readonly coldPage = coldPageBuffer;
  /** Slot whose plaintext `scratch` holds (-1: none); cold entries never change short of a truncation. */
  private scratchSlot = -1;
  /** Cold entries searches probed (decrypted), at most PROBES_KEPT_MAX; see entry(). */
  private probes: Map<number, Buffer> | null = null;
  /** Pages of cold entries searches ended in, by range (see coldEntries). */
  private pages: Map<string, Buffer> | null = null;
  /** One entry read from the cold part; reused because lookups are synchronous. */
  private readonly scratch: Buffer;
  private preallocatedBytes = 0;
  /** Entries [0, writtenCount) are in the file; later ones wait in the warm buffer (see writePending). */
  private writtenCount: number;
  private closed = false;
  /** Encrypted: a position may already have been written under the current keystream (see the file header). */
  private rekeyDue: boolean;

  private constructor(
    public path: string,
    readonly entryBytes: number,
    readonly maxEntries: number,
    fd: number,
    entryCount: number,
    private readonly crypt: IndexCrypt | null,
  ) {
    this.fd = fd;
    this.rekeyDue = crypt !== null && !crypt.fresh;
    setImmediate(() => this.dropFd());
    if (fd >= 0) this.hold();
    this.entryCount = entryCount;
    this.writtenCount = entryCount;
    this.warmEntriesMax = Math.max(1, Math.floor(STORAGE_LIMITS.indexWarmBytes / entryBytes));
    this.warm = EMPTY;
    this.scratch = Buffer.allocUnsafe(entryBytes);
    this.warmFirst = Math.max(0, entryCount - this.warmEntriesMax);
    this.loadWarm();
  }

  /** Creates (or empties) the index file and preallocates it. */
  static create(
    path: string,
    entryBytes: number,
    maxIndexBytes: number,
    crypt: IndexCrypt | null = null,
  ): IndexFile {
    const fd = openSync(path, 'w+');
    const index = new IndexFile(path, entryBytes, Math.floor(maxIndexBytes / entryBytes), fd, 0, crypt);
    index.preallocate();
    // Not held until the loop turns: opening or creating thousands of partitions in one synchronous pass (a
    // broker's startup, a large CreateTopics) would otherwise need three descriptors per partition at once.
    index.dropFd();
    return index;
  }

  /**
   * Opens an existing file and takes its length as the entry count. Returns null when the length cannot be
   * right (not a whole number of entries, or more than the maximum): such an index must be rebuilt.
   */
  static open(
    path: string,
    entryBytes: number,
    maxIndexBytes: number,
    crypt: IndexCrypt | null = null,
  ): IndexFile | null {
    const fd = openSync(path, 'r+');
    const size = fstatSync(fd).size;
    const maxEntries = Math.floor(maxIndexBytes / entryBytes);
    if (size % entryBytes !== 0 || size / entryBytes > maxEntries) {
      closeSync(fd);
      return null;
    }
    const index = new IndexFile(path, entryBytes, maxEntries, fd, size / entryBytes, crypt);
    index.dropFd();
    return index;
  }

  get entries(): number {
    return this.entryCount;
  }

  get isFull(): boolean {
    return this.entryCount >= this.maxEntries;
  }

  get sizeInBytes(): number {
    return this.entryCount * this.entryBytes;
  }

  /**
   * Grows the warm buffer to hold `bytes` (doubling, up to twice the warm size): an index that never grows,
   * like an inactive segment's, holds only what it has, so thousands of partitions cost little memory.
   */
  private ensureWarmCapacity(bytes: number): void {
    if (bytes <= this.warm.length) return;
    const cap = 2 * this.warmEntriesMax * this.entryBytes;
    const size = Math.min(cap, Math.max(bytes, 16 * this.entryBytes, this.warm.length * 2));
    const next = Buffer.allocUnsafe(size);
    this.warm.copy(
      next,
      0,
      0,
      Math.min(this.warm.length, (this.entryCount - this.warmFirst) * this.entryBytes),
    );
    this.warm = next;
  }

  private loadWarm(): void {
    const bytes = (this.entryCount - this.warmFirst) * this.entryBytes;
    this.ensureWarmCapacity(bytes);
    let done = 0;
    while (done < bytes) {
      const n = readSync(
        this.useFd(),
        this.warm,
        done,
        bytes - done,
        this.warmFirst * this.entryBytes + done,
      );
      if (n <= 0) throw new AssertionError(`${this.path}: shorter than its entries`);
      done += n;
    }
    if (this.crypt !== null && bytes > 0) {
      this.crypt.apply(this.warm, 0, bytes, this.warmFirst * this.entryBytes).copy(this.warm, 0);
    }
  }

  /** Sets the file to its maximum size so that appends never extend it (Kafka preallocates the same way). */
  preallocate(): void {
    const bytes = this.maxEntries * this.entryBytes;
    if (this.preallocatedBytes === bytes) return;
    ftruncateSync(this.useFd(), bytes);
    this.preallocatedBytes = bytes;
  }

  /** Cuts the file to its entries, as on roll and close, so a reopened file's length is its entry count. */
  trimToValidSize(): void {
    this.writePending();
    ftruncateSync(this.useFd(), this.sizeInBytes);
    this.preallocatedBytes = 0;
    // A trimmed index takes no more appends: keep only the warm entries it has.
    const warmBytes = (this.entryCount - this.warmFirst) * this.entryBytes;
    if (warmBytes < this.warm.length) this.warm = Buffer.from(this.warm.subarray(0, warmBytes));
  }

  /**
   * Appends one entry already encoded in `entry` (entryBytes long). Entries reach the file in groups of
   * PENDING_ENTRIES_MAX (and on roll, flush and close) rather than one write each: an index that lost its last
   * entries in a crash is still correct, only sparser, and recovery rebuilds it anyway.
   */
  append(entry: Buffer): void {
    // Messages are built only on failure: these checks run on every append and lookup.
    if (this.isFull) throw new AssertionError(`${this.path}: index is full`);
    if (this.rekeyDue) this.rekey();
    let warmCount = this.entryCount - this.warmFirst;
    if (warmCount === 2 * this.warmEntriesMax) {
      // Keep the newest half: the buffer never grows past twice the warm size. What leaves it is written first.
      this.writePending();
      const keep = this.warmEntriesMax;
      this.warm.copy(this.warm, 0, (warmCount - keep) * this.entryBytes, warmCount * this.entryBytes);
      this.warmFirst += warmCount - keep;
      warmCount = keep;
    }
    this.ensureWarmCapacity((warmCount + 1) * this.entryBytes);
    entry.copy(this.warm, warmCount * this.entryBytes, 0, this.entryBytes);
    this.entryCount++;
    if (this.entryCount - this.writtenCount >= PENDING_ENTRIES_MAX) this.writePending();
  }

  /** Writes the entries still only in memory. */
  writePending(): void {
    if (this.writtenCount >= this.entryCount) return;
    const fd = this.useFd();
    const from = (this.writtenCount - this.warmFirst) * this.entryBytes;
    const to = (this.entryCount - this.warmFirst) * this.entryBytes;
    const at = this.writtenCount * this.entryBytes;
    const bytes = this.crypt === null ? this.warm : this.crypt.apply(this.warm, from, to - from, at);
    const start = this.crypt === null ? from : 0;
    let done = 0;
    while (done < to - from) done += writeSync(fd, bytes, start + done, to - from - done, at + done);
    this.writtenCount = this.entryCount;
  }

  /**
   * A new keystream for an encrypted index, and every entry it keeps rewritten under it (read in order, so the
   * cold ones are decrypted under the old one first).
   */
  private rekey(): void {
    const crypt = this.crypt!;
    const plain = Buffer.allocUnsafe(this.entryCount * this.entryBytes);
    for (let i = 0; i < this.warmFirst; i++) {
      const { buf, pos } = this.entry(i);
      buf.copy(plain, i * this.entryBytes, pos, pos + this.entryBytes);
    }
    this.warm.copy(
      plain,
      this.warmFirst * this.entryBytes,
      0,
      (this.entryCount - this.warmFirst) * this.entryBytes,
    );
    crypt.rekey();
    this.rekeyDue = false;
    const bytes = crypt.apply(plain, 0, plain.length, 0);
    const fd = this.useFd();
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, done);
    this.writtenCount = this.entryCount;
  }

  /** The buffer and position holding entry `i`; the buffer is only valid until the next call. */
  entry(i: number): { buf: Buffer; pos: number } {
    if (i < 0 || i >= this.entryCount)
      throw new AssertionError(`${this.path}: entry ${i} of ${this.entryCount}`);
    if (i >= this.warmFirst) return { buf: this.warm, pos: (i - this.warmFirst) * this.entryBytes };
    if (i === this.scratchSlot) return { buf: this.scratch, pos: 0 };
    const probed = this.probes?.get(i);
    if (probed !== undefined) return { buf: probed, pos: 0 };
    const n = readSync(this.useLookupFd(), this.scratch, 0, this.entryBytes, i * this.entryBytes);
    if (n !== this.entryBytes) throw new AssertionError(`${this.path}: short read of entry ${i}`);
    this.scratchSlot = i;
    if (this.crypt !== null)
      this.crypt.apply(this.scratch, 0, this.entryBytes, i * this.entryBytes).copy(this.scratch, 0);
    // The first probes of a cold search are the same slots every time: keep them (decrypted; bounded), those of
    // a plain index only while it keeps its lookup descriptor, so at most LOOKUP_DESCRIPTORS_MAX indexes hold some.
    if (this.crypt !== null || lookupDescriptors.has(this)) {
      this.probes ??= new Map();
      if (this.probes.size >= PROBES_KEPT_MAX) this.probes.clear();
      this.probes.set(i, Buffer.from(this.scratch));
    }
    return { buf: this.scratch, pos: 0 };
  }

  /**
   * Index of the last entry whose key is <= target, or -1. Searches the warm tail when the target is in it, and
   * only then the cold part with pread, so a tail lookup costs no system call.
   */
  floor(key: EntryKey, target: number): number {
    if (this.entryCount === 0) return -1;
    const warmCount = this.entryCount - this.warmFirst;
    if (key(this.warm, 0) <= target) {
      return this.warmFirst + this.searchBuffer(key, target, warmCount);
    }
    let lo = 0;
    let hi = this.warmFirst - 1;
    let found = -1;
    while (lo <= hi) {
      // The last few probes fall within a page: read it once (one system call, and one keystream when the
      // index is encrypted) rather than an entry per probe.
      if ((hi - lo + 1) * this.entryBytes <= COLD_PAGE_BYTES)
        return this.floorInRange(key, target, lo, hi, found);
      const mid = (lo + hi) >>> 1;
      const { buf, pos } = this.entry(mid);
      if (key(buf, pos) <= target) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** `floor` within cold entries [lo, hi], read at once; `found` is the answer when none of them is <= target. */
  private floorInRange(key: EntryKey, target: number, lo: number, hi: number, found: number): number {
    const entries = this.coldEntries(lo, hi);
    this.scratchSlot = -1;
    let result = found;
    let l = 0;
    let h = hi - lo;
    while (l <= h) {
      const mid = (l + h) >>> 1;
      if (key(entries, mid * this.entryBytes) <= target) {
        result = lo + mid;
        l = mid + 1;
      } else {
        h = mid - 1;
      }
    }
    // The caller reads the entry found next: keep it (one read fewer, and one keystream fewer if encrypted).
    if (result >= lo) {
      entries.copy(this.scratch, 0, (result - lo) * this.entryBytes, (result - lo + 1) * this.entryBytes);
      this.scratchSlot = result;
    }
    return result;
  }

  /**
   * Cold entries [lo, hi] (plaintext), at most a page. A consumer's next lookups end their searches in the same
   * range: an index that keeps its lookup descriptor keeps its last PAGES_KEPT_MAX ranges (one per consumer
   * reading there, say), dropped with the descriptor.
   */
  private coldEntries(lo: number, hi: number): Buffer {
    const rangeKey = `${lo}:${hi}`;
    const kept = this.pages?.get(rangeKey);
    if (kept !== undefined) return kept;
    const length = (hi - lo + 1) * this.entryBytes;
    const page = this.coldPage.subarray(0, length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.useLookupFd(), page, done, length - done, lo * this.entryBytes + done);
      if (n <= 0) throw new AssertionError(`${this.path}: short read of entries ${lo}..${hi}`);
      done += n;
    }
    const entries = this.crypt === null ? page : this.crypt.apply(page, 0, length, lo * this.entryBytes);
    if (lookupDescriptors.has(this)) {
      this.pages ??= new Map();
      if (this.pages.size >= PAGES_KEPT_MAX) this.pages.delete(this.pages.keys().next().value!);
      this.pages.set(rangeKey, Buffer.from(entries));
    }
    return entries;
  }

  private searchBuffer(key: EntryKey, target: number, count: number): number {
    let lo = 0;
    let hi = count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (key(this.warm, mid * this.entryBytes) <= target) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Drops entries from `count` on. */
  truncateToEntries(count: number): void {
    assert(count >= 0 && count <= this.entryCount, 'truncate beyond the index');
    this.entryCount = count;
    this.writtenCount = Math.min(this.writtenCount, count);
    this.scratchSlot = -1;
    this.probes = null;
    this.pages = null;
    if (this.crypt !== null) this.rekeyDue = true;
    // Cutting the file zeroes the dropped entries, so that a crash cannot resurrect them as valid-looking ones.
    ftruncateSync(this.useFd(), count * this.entryBytes);
    if (this.preallocatedBytes > 0) ftruncateSync(this.useFd(), this.preallocatedBytes);
    if (count <= this.warmFirst) {
      this.warmFirst = Math.max(0, count - this.warmEntriesMax);
      this.loadWarm();
    }
  }

  flush(): void {
    this.writePending();
    fsyncSync(this.useFd());
  }

  /**
   * flush() with the fsync in the thread pool: pending entries are written now, then a descriptor of the
   * fsync's own (not the one dropped when the turn ends) is synced and closed off the event loop, so the index
   * may be released, closed or deleted while it runs. Entries appended after this call are not covered.
   */
  flushInBackground(): Promise<void> {
    try {
      this.writePending();
    } catch (err) {
      return Promise.reject(err);
    }
    return fsyncInBackground(this.path);
  }

  renameTo(path: string): void {
    this.dropFd();
    renameSync(this.path, path);
    this.path = path;
  }

  /** Writes what is pending and gives back the descriptor now rather than at the end of the turn. */
  release(): void {
    this.writePending();
    this.dropFd();
  }

  close(): void {
    this.release();
    this.closed = true;
  }

  /**
   * Gives back the descriptor and writes nothing, not even the entries waiting in memory: the file stays as a
   * kill -9 would leave it (recovery rebuilds the index of a segment it replays). Idempotent, like close.
   */
  abandon(): void {
    this.dropFd();
    this.closed = true;
  }

  /**
   * A descriptor for this event-loop turn, closed by a setImmediate. Indexes are touched in bursts (a lookup,
   * a group of entries written every PENDING_ENTRIES_MAX appends, a roll), so holding a descriptor between
   * them would only cost one per index per partition: with this, a partition holds one descriptor per
   * segment (its .log), as Kafka does with its memory-mapped indexes.
   */
  private useFd(): number {
    if (this.closed) throw new AssertionError(`${this.path}: index used after close`);
    if (this.fd < 0) {
      this.fd = openSync(this.path, 'r+');
      setImmediate(() => {
        if (!lookupDescriptors.has(this)) this.dropFd();
      });
      this.hold();
    }
    return this.fd;
  }

  /**
   * useFd for a lookup's read of cold entries: the descriptor stays open past the turn, among the
   * LOOKUP_DESCRIPTORS_MAX most recently looked-up indexes (the least recent one past the bound is closed).
   */
  private useLookupFd(): number {
    const fd = this.useFd();
    lookupDescriptors.delete(this);
    lookupDescriptors.add(this);
    // Kept ones are no longer among the turn's held ones: that bound is for bursts of opens in one turn.
    heldDescriptors.delete(this);
    if (lookupDescriptors.size > LOOKUP_DESCRIPTORS_MAX) {
      for (const oldest of lookupDescriptors) {
        oldest.dropFd();
        break;
      }
    }
    return fd;
  }

  /** Counts this descriptor among the held ones, closing the oldest other one past the bound. */
  private hold(): void {
    heldDescriptors.add(this);
    if (heldDescriptors.size <= HELD_DESCRIPTORS_MAX) return;
    for (const oldest of heldDescriptors) {
      if (oldest === this) continue;
      oldest.dropFd();
      return;
    }
  }

  private dropFd(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    heldDescriptors.delete(this);
    lookupDescriptors.delete(this);
    if (this.crypt === null) this.probes = null;
    this.pages = null;
  }

  closeAndDelete(): void {
    this.close();
    try {
      unlinkSync(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}
