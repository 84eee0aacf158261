// InlineReads: whether a fetch's file read may run on the event loop instead of the thread pool, and what became
// of those that did.
//
// A consumer keeps one fetch in flight, so a consumer catching up one partition is a chain of round trips, one per
// max.partition.fetch.bytes (1 MiB): every hop on that chain is paid once per MiB. A read handed to the thread
// pool costs two wake-ups (a pool thread's, then the event loop's when the read is done) besides the copy, about
// as much again as copying 1 MiB from the page cache on the loop (50-85 us here). Read on the loop, such a
// catch-up moved 14-23 % more in three alternated pairs of four (bench/README.md, "Backlog catch-up of one
// partition: reads on the event loop").
// The loop waits for the copy meanwhile, so a fetch reads at most one file range inline, the first of at most
// `maxBytes` (brook.log.read.inline.max.bytes) it comes to. A fetch of several partitions whose only file read is
// one partition's (one partition behind, the others caught up or served from the tail cache) is the same chain
// as a fetch of that partition alone. Where several partitions read their files, the inline read waits until the
// fetch has started the others in the thread pool (FetchInlineRead), so the loop copies beside the pool's
// threads rather than before them: run first, it made an evenly spread sixteen-partition catch-up slower.
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

/** What a file read asks before it runs on the event loop, and what runs it there (see LogSegment.startRead). */
export interface InlineReadGate {
  /** Whether a read of `bytes` may run on the event loop. */
  allows(bytes: number): boolean;
  /**
   * Runs `read` (a synchronous file read answering the bytes it read) on the event loop, timed, and answers
   * `answer` of its bytes: at once, or (a fetch's share) once the fetch has started its other reads. Called only
   * after `allows` said yes, in the same turn.
   */
  readInline<T>(read: () => number, answer: (bytes: number) => T): Promise<T>;
}

export class InlineReads implements InlineReadGate {
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

  readInline<T>(read: () => number, answer: (bytes: number) => T): Promise<T> {
    try {
      return Promise.resolve(answer(this.run(read)));
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

/**
 * One fetch's share of the broker's inline reads, for a fetch of several partitions: the first read the broker's
 * gate allows runs on the loop, but only when the fetch calls `start` after starting all its reads (the others in
 * the thread pool, at once); every later read of the fetch goes to the thread pool. The fetch must call `start`
 * in the turn it planned its reads, or the inline read's answer never comes.
 */
export class FetchInlineRead implements InlineReadGate {
  private used = false;
  private pending: (() => void) | null = null;

  constructor(private readonly reads: InlineReads) {}

  allows(bytes: number): boolean {
    return !this.used && this.reads.allows(bytes);
  }

  readInline<T>(read: () => number, answer: (bytes: number) => T): Promise<T> {
    assert(!this.used, 'a fetch reads one range inline at most');
    this.used = true;
    // The broker's own readInline runs, times and answers it (a failure rejects); this only decides when.
    return new Promise<T>((resolve) => {
      this.pending = () => resolve(this.reads.readInline(read, answer));
    });
  }

  /** Runs the inline read, if one waits: the fetch has started its other reads. */
  start(): void {
    const pending = this.pending;
    this.pending = null;
    pending?.();
  }
}
