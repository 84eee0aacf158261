// InlineReads: whether a fetch's file read may run on the event loop instead of the thread pool, and what became
// of those that did.
//
// A consumer keeps one fetch in flight, so a consumer catching up one partition is a chain of round trips, one per
// max.partition.fetch.bytes (1 MiB): every hop on that chain is paid once per MiB. A read handed to the thread
// pool costs two wake-ups (a pool thread's, then the event loop's when the read is done) besides the copy, about
// as much again as copying 1 MiB from the page cache on the loop (50-85 us here). Read on the loop, such a
// catch-up moved 14-23 % more in three alternated pairs of four (bench/README.md, "Backlog catch-up of one
// partition: reads on the event loop").
// The loop waits for the copy meanwhile, so only a fetch of a single partition (nothing to read in parallel)
// reads inline, and only reads of at most `maxBytes` (brook.log.read.inline.max.bytes).
//
// Node cannot ask whether the bytes are in the page cache (no mincore, no RWF_NOWAIT). A read that has to wait
// for the disk holds up every connection, so each inline read is timed: one slower than INLINE_READ_SLOW_MS turns
// inline reads off for INLINE_READ_PAUSE_MS, broker-wide, and they go to the thread pool as before. A backlog
// read from the disk then holds up the loop at most once a second. On a busy machine a read from memory can look
// slow too (the thread preempted during it); that costs a second of thread-pool reads, nothing more.
//
// Event loop only; one per broker (LogDirs), handed to each read that may use it.

import { assert } from '../common/assert.js';

/** An inline read that took longer than this was (probably) waiting for the disk, not copying from memory. */
export const INLINE_READ_SLOW_MS = 1;
/** How long inline reads stay off after a slow one. */
export const INLINE_READ_PAUSE_MS = 1000;

export interface InlineReadStats {
  /** Reads run on the event loop. */
  reads: number;
  /** Their bytes. */
  bytes: number;
  /** Reads among them slower than INLINE_READ_SLOW_MS (each turned inline reads off for a while). */
  slow: number;
}

export class InlineReads {
  readonly stats: InlineReadStats = { reads: 0, bytes: 0, slow: 0 };
  /** Inline reads are off until this time (this.now()'s clock). */
  private pausedUntilMs = Number.NEGATIVE_INFINITY;

  constructor(
    /** The largest read run inline; 0 runs none. */
    readonly maxBytes: number,
    /** A monotonic clock in milliseconds; injected by tests. */
    private readonly now: () => number = () => performance.now(),
  ) {
    assert(Number.isInteger(maxBytes) && maxBytes >= 0, `inline read bound ${maxBytes}`);
  }

  /** Whether a read of `bytes` may run on the event loop now. */
  allows(bytes: number): boolean {
    return bytes > 0 && bytes <= this.maxBytes && this.now() >= this.pausedUntilMs;
  }

  /** Runs `read` (a synchronous file read returning the bytes it read), timing it. */
  run(read: () => number): number {
    const start = this.now();
    let got = 0;
    try {
      got = read();
      return got;
    } finally {
      const took = this.now() - start;
      this.stats.reads++;
      this.stats.bytes += got;
      if (took > INLINE_READ_SLOW_MS) {
        this.stats.slow++;
        this.pausedUntilMs = start + took + INLINE_READ_PAUSE_MS;
      }
    }
  }
}
