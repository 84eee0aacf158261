// The segment half of a log's truncation (Kafka's LocalLog.truncateTo and truncateFullyAndStartAt): which of a
// log's segments a truncation removes, cuts or replaces, and their files. A follower truncates to the leader's
// epoch end offset, or starts over when it is too far behind or after an unclean leader change.
//
// Ownership: functions over the Log's segment list, called by the Log after it completed its queued appends (so
// the files hold what the offsets say). They change segments and files only: the Log decides when to truncate,
// and moves its offsets, leader epoch cache, producer state and high watermark afterwards (Log.afterTruncation),
// so the log's invariants stay in one place.

import type { LogSegment } from './log-segment.js';

/** Makes a new, empty segment based at `baseOffset` with the log's config and keys. */
export type NewSegment = (baseOffset: number) => LogSegment;

/**
 * Removes every batch with an offset >= `offset` from `segments` (changed in place; `offset` lies above the log
 * start and below the log end): segments based at or above it go with their files, and the one holding it is
 * cut, a batch holding `offset` going whole. The log end is carried by the active segment's next offset (also
 * across a restart), so when the cut leaves it below `offset`, a new, empty active segment based at `offset`
 * holds it; an emptied active segment is replaced rather than kept. Returns false when the cut left a single,
 * empty segment: the log then restarts at `offset` (truncateAll), as a log with no batch at all must (the log
 * start is never below the first segment's base).
 */
export function truncateSegmentsTo(segments: LogSegment[], offset: number, newSegment: NewSegment): boolean {
  while (segments.length > 1 && segments[segments.length - 1]!.baseOffset >= offset) {
    segments.pop()!.deleteFiles();
  }
  let active = segments[segments.length - 1]!;
  active.truncateTo(offset);
  if (active.nextOffset < offset) {
    // The log start stays, as in Kafka, even when nothing readable is left between it and `offset`.
    if (active.size === 0 && segments.length === 1) return false;
    if (active.size === 0) {
      segments.pop();
      active.deleteFiles();
    } else {
      active.onRoll();
    }
    active = newSegment(offset);
    segments.push(active);
  }
  active.offsetIndex.file.preallocate();
  active.timeIndex.file.preallocate();
  return true;
}

/** Deletes the files of every segment at once and returns the single empty segment the log restarts with. */
export function truncateAll(
  segments: readonly LogSegment[],
  offset: number,
  newSegment: NewSegment,
): LogSegment[] {
  for (const s of segments) s.deleteFiles();
  return [newSegment(offset)];
}
