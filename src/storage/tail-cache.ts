// Recently written batches kept in memory, so that a fetch at the tail of a log is answered without reading
// the file. Node has no sendfile: a file read means a thread-pool round trip into a fresh buffer (allocation,
// copy, garbage) for bytes that the produce request that wrote them still holds. The cache keeps those append
// buffers by reference, exactly the bytes written to the file (offsets and LogAppendTime were patched in before
// the write, and nothing changes them afterwards).
//
// Each log's TailCache holds a contiguous run of its newest written appends, [first cached offset, written
// end): every append made visible is added, so a read that starts inside the run finds every batch after it.
// Anything that changes the file under the run (truncation, compaction swap, a synchronous append that is not
// cached) clears it; retention and DeleteRecords drop what fell below the log start offset. One
// TailCacheBudget per broker bounds the memory of all caches together (brook.log.tail.cache.bytes): it counts
// the memory that cached buffers keep alive (their whole backing ArrayBuffer, once however many cached views
// share it) and evicts the oldest append of any log first. Eviction only ever takes a log's oldest entry, so
// each run stays contiguous.
//
// Append buffers may be request frames from the broker's FramePool (common/frame-pool.ts): the cache holds a pool
// reference for each cached append, so a frame is not reused while cached. A read that returns a view of such a
// frame either hands the caller a reference with it (`pins`: a fetch response keeps it until the socket has taken
// the bytes) or, for a caller that cannot say when it is done, returns a copy.
//
// Owned by the Log (TailCache) and the LogManager (budget); event loop only, no I/O.

import type { FramePool } from '../common/frame-pool.js';
import { BATCH_HEADER_BYTES, batchHeader } from '../protocol/records/batch-header.js';

/** One cached append: whole batches with offsets [firstOffset, lastOffset]. */
interface CachedAppend {
  buf: Buffer;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly cache: TailCache;
  /** The budget's eviction order (oldest first), across all logs. */
  older: CachedAppend | null;
  newer: CachedAppend | null;
}

/** Whole batches read from the cache, as LogSegment reads return them. */
export interface CachedRead {
  readonly records: Buffer;
  readonly firstOffset: number;
  /** One past the last offset in `records` (firstOffset when empty). */
  readonly nextOffset: number;
  /** Bytes the read takes (records.length). */
  readonly bytes: number;
}

const EMPTY = Buffer.alloc(0);
/** Removed entries at the head of a log's array before it is compacted. */
const COMPACT_HEAD_MIN = 64;

/** The byte bound shared by every log's tail cache, and the eviction order across them. */
export class TailCacheBudget {
  private bytes = 0;
  private oldest: CachedAppend | null = null;
  private newest: CachedAppend | null = null;
  /** Cached views per backing ArrayBuffer: its memory is counted once, while any view is cached. */
  private readonly backing = new Map<ArrayBufferLike, number>();

  constructor(
    readonly maxBytes: number,
    /** The pool cached frames may come from; its references follow cached entries. */
    readonly pool: FramePool | null = null,
  ) {
    // What the cache does not hold of its budget may be held idle in the pool instead: frames of a cache that
    // emptied at once are then reused to fill it again, not dropped and allocated anew (frame-pool.ts).
    pool?.lendIdleBytes(() => this.maxBytes - this.bytes);
  }

  /** Memory kept alive by cached buffers now. */
  get usedBytes(): number {
    return this.bytes;
  }

  /** Buffers whose memory is counted now (for tests and metrics). */
  get bufferCount(): number {
    return this.backing.size;
  }

  /** Charges `entry` and makes it the newest; then evicts oldest entries (of any log) until within bounds. */
  admit(entry: CachedAppend): void {
    const store = entry.buf.buffer;
    this.pool?.retain(entry.buf);
    const refs = this.backing.get(store) ?? 0;
    if (refs === 0) this.bytes += store.byteLength;
    this.backing.set(store, refs + 1);
    entry.older = this.newest;
    if (this.newest !== null) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
    while (this.bytes > this.maxBytes && this.oldest !== null) this.oldest.cache.evictOldest(this.oldest);
  }

  /** Unlinks `entry` and stops counting its memory (when it was the last view of its ArrayBuffer). */
  release(entry: CachedAppend): void {
    const store = entry.buf.buffer;
    const refs = this.backing.get(store)!;
    if (refs === 1) {
      this.backing.delete(store);
      this.bytes -= store.byteLength;
    } else {
      this.backing.set(store, refs - 1);
    }
    if (entry.older !== null) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer !== null) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = null;
    entry.newer = null;
    this.pool?.release(entry.buf);
    entry.buf = EMPTY;
  }
}

/** One log's newest written appends, oldest first, contiguous up to the log's written end. */
export class TailCache {
  /** Entries [head, length) are live; those before head were evicted or dropped. */
  private entries: CachedAppend[] = [];
  private head = 0;

  constructor(private readonly budget: TailCacheBudget) {}

  /** The broker's frame pool, which pinned reads of the log also take their buffers from. */
  get pool(): FramePool | null {
    return this.budget.pool;
  }

  /** Cached appends (for tests). */
  get size(): number {
    return this.entries.length - this.head;
  }

  /** The first offset a read can be answered from, or -1 when nothing is cached. */
  get firstOffset(): number {
    return this.head < this.entries.length ? this.entries[this.head]!.firstOffset : -1;
  }

  /**
   * Adds an append that has just become visible; `buf` must never change afterwards. An append larger than the
   * whole budget cannot be kept, and since the run must stay contiguous, the cache is emptied instead.
   */
  add(buf: Buffer, firstOffset: number, lastOffset: number): void {
    if (buf.buffer.byteLength > this.budget.maxBytes) {
      this.clear();
      return;
    }
    const entry: CachedAppend = { buf, firstOffset, lastOffset, cache: this, older: null, newer: null };
    this.entries.push(entry);
    this.budget.admit(entry);
  }

  /** Called by the budget: `entry` is this log's oldest. */
  evictOldest(entry: CachedAppend): void {
    if (this.entries[this.head] !== entry) throw new Error('tail cache evicted out of order');
    this.budget.release(entry);
    this.head++;
    this.compact();
  }

  /** Forgets everything (the file changed under the cached run, or the log closes). */
  clear(): void {
    for (let i = this.head; i < this.entries.length; i++) this.budget.release(this.entries[i]!);
    this.entries = [];
    this.head = 0;
  }

  /** Drops appends wholly below `offset` (the log start offset moved: retention, DeleteRecords). */
  dropBelow(offset: number): void {
    while (this.head < this.entries.length && this.entries[this.head]!.lastOffset < offset) {
      this.budget.release(this.entries[this.head]!);
      this.head++;
    }
    this.compact();
  }

  private compact(): void {
    if (this.head === this.entries.length) {
      this.entries = [];
      this.head = 0;
    } else if (this.head >= COMPACT_HEAD_MIN && this.head * 2 >= this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * Reads as LogSegment.read does: whole batches from the first one holding an offset >= startOffset, at most
   * maxBytes of them (the first batch whole even when larger, if minOneBatch), never a batch reaching
   * maxOffset. Null when the cache does not cover startOffset (the caller reads the file). A view of a pooled
   * frame is returned only with `pins`: a pool reference is taken for it and the view pushed there, for the
   * caller to release; without `pins`, such bytes are copied.
   */
  read(
    startOffset: number,
    maxBytes: number,
    maxOffset: number,
    minOneBatch: boolean,
    pins: Buffer[] | null = null,
  ): CachedRead | null {
    if (!this.locate(startOffset, maxBytes, maxOffset, minOneBatch)) return null;
    const span = this.span;
    const firstOffset = span.firstOffset;
    if (span.bytes === 0) return { records: EMPTY, firstOffset, nextOffset: firstOffset, bytes: 0 };
    const entries = this.entries;
    let records: Buffer;
    if (span.fromIndex === span.toIndex) {
      // The usual tail fetch: one append, sent as it is.
      records = entries[span.fromIndex]!.buf.subarray(span.fromPos, span.toPos);
      const pool = this.budget.pool;
      if (pool?.isPooled(records)) {
        if (pins !== null) {
          pool.retain(records);
          pins.push(records);
        } else {
          records = Buffer.from(records);
        }
      }
    } else {
      // Several appends are copied into one buffer; a pinning caller gets it from the pool.
      const pool = this.budget.pool;
      if (pins !== null && pool?.pools(span.bytes)) {
        records = pool.acquire(span.bytes);
        pins.push(records);
      } else {
        records = Buffer.allocUnsafe(span.bytes);
      }
      let at = entries[span.fromIndex]!.buf.copy(records, 0, span.fromPos);
      for (let i = span.fromIndex + 1; i < span.toIndex; i++) at += entries[i]!.buf.copy(records, at);
      entries[span.toIndex]!.buf.copy(records, at, 0, span.toPos);
    }
    return { records, firstOffset, nextOffset: span.nextOffset, bytes: span.bytes };
  }

  /** The bytes `read` would return, without building them; -1 when the cache does not cover startOffset. */
  readableBytes(startOffset: number, maxBytes: number, maxOffset: number, minOneBatch: boolean): number {
    return this.locate(startOffset, maxBytes, maxOffset, minOneBatch) ? this.span.bytes : -1;
  }

  /** The result of the last `locate`, reused so that a lookup allocates nothing. */
  private readonly span = {
    fromIndex: 0,
    fromPos: 0,
    toIndex: 0,
    /** End (exclusive) in the entry toIndex. */
    toPos: 0,
    bytes: 0,
    firstOffset: 0,
    nextOffset: 0,
  };

  /** Finds the batches `read` returns and puts them in `span`; false when startOffset is not covered. */
  private locate(startOffset: number, maxBytes: number, maxOffset: number, minOneBatch: boolean): boolean {
    const entries = this.entries;
    if (this.head === entries.length || startOffset < entries[this.head]!.firstOffset) return false;
    let lo = this.head;
    let hi = entries.length - 1;
    if (entries[hi]!.lastOffset < startOffset) return false;
    // The first entry whose last offset is >= startOffset.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (entries[mid]!.lastOffset < startOffset) lo = mid + 1;
      else hi = mid;
    }
    let index = lo;
    let buf = entries[index]!.buf;
    let pos = 0;
    while (batchHeader.lastOffset(buf, pos) < startOffset) pos += batchHeader.sizeInBytes(buf, pos);
    const span = this.span;
    span.firstOffset = batchHeader.baseOffset(buf, pos);
    span.nextOffset = span.firstOffset;
    span.fromIndex = index;
    span.fromPos = pos;
    span.toIndex = index;
    span.toPos = pos;
    span.bytes = 0;
    const firstSize = batchHeader.sizeInBytes(buf, pos);
    const firstLast = batchHeader.lastOffset(buf, pos);
    if (firstLast >= maxOffset || (firstSize > maxBytes && !minOneBatch)) return true;
    let end = pos + firstSize;
    let total = firstSize;
    let nextOffset = firstLast + 1;
    let endIndex = index;
    let endPos = end;
    for (;;) {
      if (end + BATCH_HEADER_BYTES > buf.length) {
        if (index + 1 >= entries.length) break;
        index++;
        buf = entries[index]!.buf;
        end = 0;
        continue;
      }
      const size = batchHeader.sizeInBytes(buf, end);
      const last = batchHeader.lastOffset(buf, end);
      if (total + size > maxBytes || last >= maxOffset) break;
      end += size;
      total += size;
      nextOffset = last + 1;
      endIndex = index;
      endPos = end;
    }
    span.toIndex = endIndex;
    span.toPos = endPos;
    span.bytes = total;
    span.nextOffset = nextOffset;
    return true;
  }
}
