// The write queue of one log: appends whose offsets are already assigned, waiting for their bytes to reach the
// file. One writev runs at a time per log (the oldest queued appends of one segment gathered into it, in order);
// when it ends its appends are committed (made visible) through the log. Operations that need the file to match
// the offsets drain the queue first: every queued append is written synchronously, on the event loop.
//
// Ownership: one AppendQueue per Log, driven by it on the event loop; only the writes run in the libuv thread
// pool. The queue never moves offsets: the log does, at append time and in `commit` (see log.ts's header).

import { assert } from '../common/assert.js';
import type { FramePool } from '../common/frame-pool.js';
import { STORAGE_LIMITS } from './log-config.js';
import type { LogSegment } from './log-segment.js';

/**
 * How the caller of a queued append hears its outcome: null once the append is written (and fdatasync'ed, when
 * its log acknowledges after fsync), else the error that lost it. Called once, never before the append call
 * returns, from inside the log's bookkeeping: it records the outcome and must not call back into the log. A
 * callback instead of a promise per append: the broker's produce path makes one per partition and request, where
 * a promise, its resolvers, its rejection guard and the `then` that waited on it were five objects that a write
 * backed up in the thread pool kept alive past a scavenge (bench/README.md).
 */
export type AppendDone = (err: Error | null) => void;

/** An append whose offsets are assigned and whose bytes are not yet in the file. */
export interface QueuedAppend {
  readonly segment: LogSegment;
  readonly buf: Buffer;
  readonly position: number;
  readonly lastOffset: number;
  /** Queue order, set by `enqueue` (the caller passes 0). */
  seq: number;
  /** Set once committed, or given up (failed write, closed log). */
  settled: boolean;
  readonly done: AppendDone;
  /** The log acknowledges after fsync: `done` waits for the group sync the log joins at commit. */
  readonly awaitsSync: boolean;
}

/** What the queue needs from its log. */
export interface AppendQueueHost {
  /** The frame pool queued buffers may come from: the queue holds a reference while the file lacks them. */
  readonly pool: FramePool | null;
  /**
   * The append's bytes are in the file: the log makes them visible (indexes, tail cache, written end) and, when
   * the append awaits a sync, joins the group sync that will call its `done`.
   */
  commit(a: QueuedAppend): void;
  /** Queued appends became visible (not re-entrantly: after a drain, from a microtask). */
  written(): void;
  /**
   * Writes failed, or making written bytes visible did: appends were given up (`lost`, or the file is no longer
   * trusted), and the log must refuse more.
   */
  failed(err: Error, lost: boolean): void;
  /** A closed log hears of nothing more. */
  isClosed(): boolean;
}

interface AfterWrites {
  readonly seq: number;
  readonly run: () => void;
}

/** The queue of appends not yet written, and the write in progress. */
export class AppendQueue {
  private queued: QueuedAppend[] = [];
  /** The appends of the writev running in the thread pool, if any. */
  private writing: QueuedAppend[] | null = null;
  /** The generation of the segment being written when the write started (see LogSegment.generation). */
  private writingGeneration = 0;
  private queuedBytesValue = 0;
  /**
   * Appends are numbered in queue order: `settledSeq` is the last one committed or given up, so "every append
   * queued so far is written" is a comparison, whatever drained or failed in between.
   */
  private appendSeq = 0;
  private settledSeq = 0;
  private afterWrites: AfterWrites[] = [];

  constructor(private readonly host: AppendQueueHost) {}

  /** True while queued appends are not yet written. */
  get hasPending(): boolean {
    return this.settledSeq < this.appendSeq;
  }

  /** True when nothing is queued or being written: an append may be written inline without overtaking one. */
  get isIdle(): boolean {
    return this.writing === null && this.queued.length === 0;
  }

  /** Bytes queued and not yet written (bounded by STORAGE_LIMITS.queuedAppendBytesMax, which the log checks). */
  get queuedBytes(): number {
    return this.queuedBytesValue;
  }

  /**
   * Queues an append (not yet settled) and numbers it. The caller's object is queued itself, not a copy: it
   * lives until the write ends, long enough to be promoted out of the young generation when writes back up, so
   * each append makes as few such objects as it can.
   */
  enqueue(append: QueuedAppend): void {
    assert(!append.settled, 'enqueue of a settled append');
    // The buffer may be a pooled request frame: held until the file has it (see releaseQueued).
    this.host.pool?.retain(append.buf);
    append.seq = ++this.appendSeq;
    this.queued.push(append);
    this.queuedBytesValue += append.buf.length;
  }

  /** Hands the oldest queued appends of one segment to the file system, unless a write is running. */
  startWrite(): void {
    if (this.writing !== null || this.queued.length === 0) return;
    const first = this.queued[0]!;
    let count = 1;
    while (
      count < this.queued.length &&
      count < STORAGE_LIMITS.appendsPerWriteMax &&
      this.queued[count]!.segment === first.segment
    ) {
      count++;
    }
    const batch = this.queued.splice(0, count);
    const buffers: Buffer[] = [];
    for (const a of batch) buffers.push(a.buf);
    this.writing = batch;
    this.writingGeneration = first.segment.generation;
    first.segment.writeAt(buffers, first.position, (err) => this.writeDone(batch, err));
  }

  private writeDone(batch: QueuedAppend[], err: Error | null): void {
    this.writing = null;
    const segment = batch[0]!.segment;
    if (err !== null) {
      this.fail(err, batch);
      this.releaseQueued(batch);
      return;
    }
    let committed = false;
    try {
      // Appends completed meanwhile by drain were written again synchronously; if the segment was also
      // truncated since, this late write put stale bytes past its end.
      if (segment.generation !== this.writingGeneration) segment.cutPastSize();
      for (const a of batch) {
        if (a.settled) continue;
        this.commit(a);
        committed = true;
      }
    } catch (e) {
      // Making written bytes visible failed (an index write or a truncation on a failing disk): the log fails as
      // for a failed write. Thrown from here it would end the process, from the thread pool's callback.
      this.fail(e as Error, batch);
      this.releaseQueued(batch);
      return;
    }
    // The thread pool no longer reads these buffers (after commit: the tail cache has taken its own reference).
    this.releaseQueued(batch);
    this.runAfterWrites();
    this.startWrite();
    if (committed) this.host.written();
  }

  /** Makes a written append visible and tells whoever waits for it (after the sync, when it awaits one). */
  private commit(a: QueuedAppend): void {
    this.host.commit(a);
    a.settled = true;
    this.queuedBytesValue -= a.buf.length;
    this.settledSeq = a.seq;
    if (!a.awaitsSync) a.done(null);
  }

  /**
   * Completes every queued append now, on the event loop, in order: a write still running for some of them
   * writes the same bytes at the same place again, which is harmless. Afterwards the file matches the offsets.
   * Throws when a write fails, after giving up every pending append.
   */
  drain(): void {
    if (!this.hasPending) return;
    const unwritten = this.queued;
    const pending = [...(this.writing ?? []).filter((a) => !a.settled), ...unwritten];
    this.queued = [];
    try {
      for (const a of pending) {
        a.segment.writeSyncAt(a.buf, 0, a.buf.length, a.position);
        this.commit(a);
      }
    } catch (err) {
      this.fail(err as Error, pending);
      throw err;
    } finally {
      // Those never handed to a write are done with; the running write's own are released when it ends.
      this.releaseQueued(unwritten);
    }
    this.runAfterWrites();
    // The owner hears of it once the current state change is over (it may be a truncation, or a close).
    queueMicrotask(() => {
      if (!this.host.isClosed()) this.host.written();
    });
  }

  /**
   * Gives up every append not yet written: their waiters are rejected, their reserved bytes forgotten. After a
   * failed write the log refuses appends (Kafka takes the log directory offline).
   */
  fail(err: Error, also: readonly QueuedAppend[] = []): void {
    const pending = [...also, ...(this.writing ?? []), ...this.queued].filter((a) => !a.settled);
    this.releaseQueued(this.queued);
    this.queued = [];
    this.queuedBytesValue = 0;
    this.settledSeq = this.appendSeq;
    const segments = new Set<LogSegment>();
    for (const a of pending) {
      a.settled = true;
      segments.add(a.segment);
      a.done(err);
    }
    // The file keeps only whole committed batches; with no write running, nothing else touches it now.
    if (this.writing === null) for (const s of segments) if (!s.isDeleted) s.dropReservedAfterWriteFailure();
    this.runAfterWrites();
    this.host.failed(err, pending.length > 0);
  }

  /** Runs `run` once every append queued so far is written (or given up); at once when none is queued. */
  whenWritten(run: () => void): void {
    if (!this.hasPending) run();
    else this.afterWrites.push({ seq: this.appendSeq, run });
  }

  private runAfterWrites(): void {
    let i = 0;
    while (i < this.afterWrites.length && this.afterWrites[i]!.seq <= this.settledSeq) i++;
    if (i === 0) return;
    const due = this.afterWrites.splice(0, i);
    for (const a of due) {
      try {
        a.run();
      } catch (e) {
        // A rolled segment's last index work on a failing disk, say: the log fails, the process does not.
        this.host.failed(e as Error, true);
      }
    }
  }

  /**
   * Gives back the frame-pool references queued appends took (enqueue): called once per append, when no write
   * of the thread pool reads its buffer any more.
   */
  private releaseQueued(appends: readonly QueuedAppend[]): void {
    const pool = this.host.pool;
    if (pool == null) return;
    for (const a of appends) pool.release(a.buf);
  }
}
