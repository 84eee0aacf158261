// Making a log's written bytes durable: the fsync of a segment with its indexes (the flush that moves the
// recovery point) and group commit (ackAfterFsync: the appends of one event loop turn, or of groupCommitMaxDelayMs,
// share one fdatasync).
//
// Ownership: one GroupSync per Log, driven by it on the event loop; the syncs themselves run in the libuv
// thread pool. It never changes the log's offsets: it only resolves or rejects the promises appends wait on.

import { fdatasync, fsync } from 'node:fs';
import type { LogSegment } from './log-segment.js';

/** Whoever waits for bytes to be written or synced. */
export interface DurableWaiter {
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
}

/** Group commit: all appends made before a sync starts share one fdatasync of their segments. */
export class GroupSync {
  private readonly dirtySegments = new Set<LogSegment>();
  private waiters: DurableWaiter[] = [];
  private inFlight = false;
  private scheduled = false;
  private started = 0;

  /**
   * `onError` hears of a failed fdatasync (the owner takes the directory offline). `maxDelayMs` is read for each
   * sync (brook.log.flush.group.commit.max.delay.ms, dynamic): how long a sync waits to gather more appends.
   */
  constructor(
    private readonly onError: (err: Error) => void,
    private readonly maxDelayMs: () => number = () => 0,
  ) {}

  /** Group-commit fdatasyncs started so far. */
  get syncCount(): number {
    return this.started;
  }

  /** `waiter` is told when a group fdatasync that includes `segment` is done. */
  join(segment: LogSegment, waiter: DurableWaiter): void {
    this.dirtySegments.add(segment);
    this.waiters.push(waiter);
    this.schedule();
  }

  /** A segment deleted (retention, compaction) needs no sync any more. */
  forget(segment: LogSegment): void {
    this.dirtySegments.delete(segment);
  }

  /** Rejects every waiter not yet synced (the log closes). */
  rejectWaiting(err: Error): void {
    for (const w of this.waiters) w.reject(err);
    this.waiters = [];
  }

  /** Forgets every waiter without telling it (the log is abandoned as a crash would leave it). */
  dropWaiting(): void {
    this.waiters = [];
  }

  private schedule(): void {
    if (this.inFlight || this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.start();
    };
    // setImmediate lets every append of the current event loop turn (one produce request touching many
    // partitions, or many requests read together) join the same sync; a max delay gathers the appends of that
    // long too, fewer fsyncs for a longer wait.
    const delayMs = this.maxDelayMs();
    if (delayMs > 0) setTimeout(run, delayMs);
    else setImmediate(run);
  }

  private start(): void {
    if (this.waiters.length === 0) return;
    this.inFlight = true;
    this.started++;
    const waiters = this.waiters;
    this.waiters = [];
    const segments = [...this.dirtySegments];
    this.dirtySegments.clear();
    Promise.all(segments.map((s) => syncLogFile(s, fdatasync)))
      .then(
        () => {
          for (const w of waiters) w.resolve();
        },
        (err: Error) => {
          for (const w of waiters) w.reject(err);
          this.onError(err);
        },
      )
      .finally(() => {
        this.inFlight = false;
        if (this.waiters.length > 0) this.schedule();
      });
  }
}

/** fsyncs a segment's log file and its three indexes, off the event loop; a segment deleted meanwhile is fine. */
export function fsyncSegment(segment: LogSegment): Promise<void> {
  if (segment.isDeleted) return Promise.resolve();
  // Every fsync runs in the thread pool, the indexes' too: small as they are, on ext4 (data=ordered) an fsync
  // of any file waits for a journal commit that writes out every dirty byte of the disk first. Their pending
  // entries are written now; each index fsync uses a descriptor of its own (see IndexFile.flushInBackground).
  const syncs = [
    segment.offsetIndex.file.flushInBackground(),
    segment.timeIndex.file.flushInBackground(),
    segment.txnIndex.flushInBackground(),
    syncLogFile(segment, fsync),
  ];
  return Promise.all(syncs).then(
    () => {},
    (err: Error) => {
      // A segment deleted while its fsyncs ran no longer matters.
      if (!segment.isDeleted) throw err;
    },
  );
}

function syncLogFile(segment: LogSegment, sync: typeof fsync): Promise<void> {
  return new Promise((resolve, reject) =>
    segment.syncLog(sync, (err) => (err === null ? resolve() : reject(err))),
  );
}
