// Deleting a log's old segments once they left the log (retention, DeleteRecords, compaction's swap), as Kafka's
// LocalLog.deleteSegmentFiles: the files are renamed `.deleted` at once, so a restart never loads them, and
// removed file.delete.delay.ms later, so reads already holding the segment finish first. Also the producer
// snapshots a retention leaves behind.
//
// Ownership: one PendingDeletes per Log, driven by it on the event loop (the log's retention, its close and its
// abandonment). Which segments go is retention.ts's decision and the Log's to apply: the Log moves its log start
// offset and epoch cache before it hands segments here.

import type { LogSegment } from './log-segment.js';
import { deleteSnapshotFile, listSnapshotOffsets } from './producer-snapshot.js';

interface PendingDelete {
  readonly segment: LogSegment;
  readonly dueMs: number;
}

/** Segments marked deleted whose files wait out file.delete.delay.ms. */
export class PendingDeletes {
  private readonly pending: PendingDelete[] = [];

  /** Renames the segment's files `.deleted` now and removes them once `dueMs` has passed (runDue). */
  schedule(segment: LogSegment, dueMs: number): void {
    segment.markDeleted();
    this.pending.push({ segment, dueMs });
  }

  /** Removes the files of deleted segments whose delay has passed. */
  runDue(nowMs: number): void {
    for (let i = 0; i < this.pending.length; ) {
      const pending = this.pending[i]!;
      if (pending.dueMs <= nowMs) {
        pending.segment.deleteFiles();
        this.pending.splice(i, 1);
      } else {
        i++;
      }
    }
  }

  /** Removes every pending segment's files now (the log closes or is deleted). */
  deleteAllNow(): void {
    for (const p of this.pending) p.segment.deleteFiles();
    this.pending.length = 0;
  }

  /** Releases the pending segments' descriptors and leaves their files, as a crash would (tests). */
  abandonAll(): void {
    for (const p of this.pending) p.segment.abandon();
  }
}

/**
 * Snapshots below the log's first remaining segment describe data that is gone: deletes them but the newest,
 * which recovery may still start from.
 */
export function deleteSnapshotsBelow(dir: string, firstBaseOffset: number): void {
  const snapshots = listSnapshotOffsets(dir).filter((o) => o < firstBaseOffset);
  for (const o of snapshots.slice(0, -1)) deleteSnapshotFile(dir, o);
}
