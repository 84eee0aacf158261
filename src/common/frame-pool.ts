// FramePool: reuses the memory of large request frames (a produce request's record batches) once nothing refers
// to them any more. Every fresh ArrayBuffer counts as external memory for V8, which starts a full mark-compact
// about every 64 MB of it; a broker gathering each 128 KiB produce frame into a new buffer spent 10-17 % of its
// main thread in those collections. Reused frames take that allocation off the hot path.
//
// Ownership is counted per backing ArrayBuffer. acquire() hands out a frame with one reference (the request's).
// Whoever keeps a view of it past the request takes a reference with retain() and gives it back with release():
// the tail cache for each cached append, a fetch response for each cached view it sends until the socket has
// taken the bytes. When the count reaches zero the buffer goes back to the idle list, bounded by maxIdleBytes plus
// what a lender (the tail cache, see lendIdleBytes) is not using of its own bound.
// A holder that cannot say when it is done (a queued write that a truncation may leave running) calls forget():
// the buffer then leaves the pool for good, later retain/release calls on it do nothing, and the garbage
// collector frees it as any other buffer. Counts are kept in a WeakMap, so a reference never given back only
// keeps a buffer out of the pool, it never leaks memory. Buffers that did not come from a pool are ignored by
// retain/release/forget, so callers need not know where a buffer came from.
//
// With `poison`, a buffer is overwritten with 0xa5 when it becomes idle: any view used after its release then
// reads garbage (a CRC failure, a wrong record) instead of bytes that happen to still be right. The broker turns
// it on with BROOK_DEBUG_POISON_FRAMES=1, which the test helpers set for every broker they start.
//
// Event loop only; one pool per broker.

import assert from 'node:assert/strict';

/** Frames smaller than this are not pooled: their allocation costs little, and they often fit one socket chunk. */
export const POOLED_FRAME_BYTES_MIN = 16 * 1024;
/**
 * The largest size class; larger frames are allocated each time. It is well above a 1 MiB produce frame or fetch
 * read because a follower's fetch answers are larger: one for sixteen busy partitions carries about 2 MB, and with
 * a 1 MiB bound each was a fresh buffer, most of the follower's replicated bytes passing through new external
 * memory (bench/README.md, "Replication against L_replicate"). replica.fetch.response.max.bytes (10 MiB) bounds
 * them; answers near it come only while a follower catches up.
 */
export const POOLED_FRAME_BYTES_MAX = 8 * 1024 * 1024;
const POISON = 0xa5;

interface Holding {
  refs: number;
}

/** The idle buffers of one size class, and when the class was last used (acquired from or released to). */
interface IdleClass {
  buffers: ArrayBuffer[];
  touched: number;
}

export interface FramePoolStats {
  /** Buffers allocated because no idle one of the size class was there. */
  allocated: number;
  /** Frames handed out from the idle list. */
  reused: number;
  /** Buffers that became idle again. */
  recycled: number;
  /**
   * Buffers dropped by forget(), or because the idle list was full: the released buffer itself, or idle buffers
   * of the classes used longest ago, evicted to make room for it.
   */
  dropped: number;
}

export class FramePool {
  /** Idle buffers by size class (see sizeClass). */
  private readonly idle = new Map<number, IdleClass>();
  private idleBytes = 0;
  /** Counts acquires and releases: the clock of IdleClass.touched. */
  private clock = 0;
  private readonly holdings = new WeakMap<ArrayBufferLike, Holding>();
  /** What the lender does not use of its own bound now (lendIdleBytes); null without a lender. */
  private unusedLentBytes: (() => number) | null = null;
  readonly stats: FramePoolStats = { allocated: 0, reused: 0, recycled: 0, dropped: 0 };

  constructor(
    /** Bound of the memory kept idle; 0 turns pooling off (acquire allocates, nothing is kept). */
    readonly maxIdleBytes: number,
    private readonly poison = false,
  ) {}

  /** Whether frames of `size` bytes come from the pool. */
  pools(size: number): boolean {
    return this.maxIdleBytes > 0 && size >= POOLED_FRAME_BYTES_MIN && size <= POOLED_FRAME_BYTES_MAX;
  }

  /** Memory of the idle buffers now. */
  get idleByteCount(): number {
    return this.idleBytes;
  }

  /**
   * Lets the idle list also keep what `unusedBytes()` says another holder of this pool's frames may hold but does
   * not now: the tail cache's budget less its cached memory. The tail cache keeps produce frames for seconds; when it
   * empties at once (its topic deleted, its partition no longer led here, a truncation) its frames come back
   * together, and with maxIdleBytes alone all but 16 MiB of them went to the garbage collector while the next
   * appends allocated fresh ones to fill the cache again: tens of MB of new external memory, which V8 answers
   * with full mark-compacts (pauses of 5-28 ms, in the latency tail; bench/README.md, "Frames of an emptied tail
   * cache"). The bound is applied as each buffer becomes idle: idle memory never grows past maxIdleBytes plus what
   * the lender leaves unused, so idle and cached memory together stay within maxIdleBytes plus the lender's bound
   * as before, except that buffers kept while the cache was empty stay idle until later releases need their room
   * (when the cache fills again with frames of other sizes). One lender per pool.
   */
  lendIdleBytes(unusedBytes: () => number): void {
    assert(this.unusedLentBytes === null, 'a frame pool takes one lender of idle memory');
    this.unusedLentBytes = unusedBytes;
  }

  /** What the idle list may hold now. */
  private idleBound(): number {
    return this.maxIdleBytes + Math.max(0, this.unusedLentBytes?.() ?? 0);
  }

  /** A buffer of exactly `size` bytes (contents undefined), held once by the caller. */
  acquire(size: number): Buffer {
    if (!this.pools(size)) return Buffer.allocUnsafeSlow(size);
    const classBytes = sizeClass(size);
    let store = this.takeIdle(classBytes);
    if (store !== undefined) {
      this.stats.reused++;
    } else {
      // Not `new ArrayBuffer`, which fills the memory with zeros first.
      store = Buffer.allocUnsafeSlow(classBytes).buffer as ArrayBuffer;
      this.stats.allocated++;
    }
    this.holdings.set(store, { refs: 1 });
    return Buffer.from(store, 0, size);
  }

  /**
   * An idle buffer of `classBytes`, or else the smallest idle one of a larger class up to twice that size. Produce
   * frames vary in size (linger, partly filled batches, several partitions per request), so the buffers the tail
   * cache gives back are often of a neighbouring class; taking them costs at most half their memory, where a miss
   * costs a fresh ArrayBuffer (external memory, which V8 answers with full collections). A buffer taken this way
   * goes back to its own class (release() files a buffer by its byteLength).
   */
  private takeIdle(classBytes: number): ArrayBuffer | undefined {
    let chosen = this.idle.get(classBytes);
    if (chosen === undefined || chosen.buffers.length === 0) {
      chosen = undefined;
      let chosenBytes = 0;
      for (const [bytes, candidate] of this.idle) {
        if (candidate.buffers.length === 0 || bytes < classBytes || bytes > 2 * classBytes) continue;
        if (chosen === undefined || bytes < chosenBytes) {
          chosen = candidate;
          chosenBytes = bytes;
        }
      }
      if (chosen === undefined) return undefined;
    }
    const store = chosen.buffers.pop()!;
    this.idleBytes -= store.byteLength;
    chosen.touched = ++this.clock;
    return store;
  }

  /** Takes one more reference to the pooled buffer behind `view`; nothing for other buffers. */
  retain(view: Uint8Array): void {
    const holding = this.holdings.get(view.buffer);
    if (holding !== undefined) holding.refs++;
  }

  /** Whether `view` lies in a buffer this pool may reuse (one whose references are still counted). */
  isPooled(view: Uint8Array): boolean {
    return this.holdings.has(view.buffer);
  }

  /** Gives back one reference; the last one makes the buffer idle (reusable by acquire). */
  release(view: Uint8Array): void {
    const store = view.buffer;
    const holding = this.holdings.get(store);
    if (holding === undefined) return;
    if (--holding.refs > 0) return;
    this.holdings.delete(store);
    const classBytes = store.byteLength;
    const bound = this.idleBound();
    if (this.idleBytes + classBytes > bound) this.evictOtherClasses(classBytes, bound);
    if (this.idleBytes + classBytes > bound) {
      this.stats.dropped++;
      return;
    }
    if (this.poison) new Uint8Array(store).fill(POISON);
    let idle = this.idle.get(classBytes);
    if (idle === undefined) {
      idle = { buffers: [], touched: 0 };
      this.idle.set(classBytes, idle);
    }
    idle.buffers.push(store as ArrayBuffer);
    idle.touched = ++this.clock;
    this.idleBytes += classBytes;
    this.stats.recycled++;
  }

  /**
   * Makes room for a released buffer of `classBytes` by dropping idle buffers of the other classes, those used
   * longest ago first. Without it the idle list keeps whatever filled it first: after a produce burst, 16 MiB of
   * 128 KiB frames that nothing asks for while a consumer catches up, and each of its 1 MiB fetch reads is a fresh
   * buffer (external memory, which V8 answers with full collections). Buffers of the released one's own class
   * are not dropped for it: that class is at its share already.
   */
  private evictOtherClasses(classBytes: number, bound: number): void {
    while (this.idleBytes + classBytes > bound) {
      let oldest: IdleClass | undefined;
      for (const [bytes, idle] of this.idle) {
        if (bytes === classBytes || idle.buffers.length === 0) continue;
        if (oldest === undefined || idle.touched < oldest.touched) oldest = idle;
      }
      if (oldest === undefined) return;
      const evicted = oldest.buffers.pop()!;
      this.idleBytes -= evicted.byteLength;
      this.stats.dropped++;
    }
  }

  /** Takes the buffer behind `view` out of the pool for good: it is never reused, whoever still holds it. */
  forget(view: Uint8Array): void {
    if (this.holdings.delete(view.buffer)) this.stats.dropped++;
  }
}

/**
 * The size class of a frame: `size` rounded up to an eighth of its power of two (128 KiB + 100 bytes -> 144 KiB),
 * so a class wastes at most an eighth. Plain powers of two would nearly double the memory of the common frame
 * just above one (a full 128 KiB batch and its request header).
 */
export function sizeClass(size: number): number {
  const step = 2 ** Math.max(0, Math.floor(Math.log2(size)) - 3);
  return Math.ceil(size / step) * step;
}
