// Retention under cleanup.policy=delete: which of a log's oldest segments may go.
//
// Three reasons, applied one after the other in one check, in Kafka 3.x's order (UnifiedLog.deleteOldSegments):
// the log start offset moved past a whole segment (DeleteRecords), the log is larger than retention.bytes, the
// segment's newest timestamp is older than retention.ms. Each reason looks at the segments the previous ones
// left, so one check deletes what all of them together would. Only a prefix of the segments is ever deleted, and
// never a segment holding offsets at or above the high watermark.
// As in Kafka's UnifiedLog.deletableSegments, the active (last) segment is part of that prefix when all of it is
// below the high watermark and it breaches retention.ms or retention.bytes, unless it is empty: Log then rolls a
// new empty active segment at the log end before deleting it, so an idle partition's records expire too. Pure
// functions over a small view of the log, so they can be tested alone; Log.deleteOldSegments applies the result.
// Compaction (cleanup.policy=compact) is the separate cleaner/ module: it rewrites segments rather than deleting
// them.

import type { LogConfig } from './log-config.js';

export interface SegmentView {
  readonly baseOffset: number;
  readonly size: number;
  /**
   * Kafka's LogSegment.largestTimestamp: the largest batch timestamp, or, when no batch carries one (records
   * stored without timestamps), the time the segment's file was last modified.
   */
  readonly largestTimestampMs: number;
}

export interface RetentionView {
  /** Oldest first; the last one is the active segment. */
  readonly segments: readonly SegmentView[];
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  readonly highWatermark: number;
}

export type RetentionReason = 'log-start-offset' | 'retention-ms' | 'retention-bytes';

export interface RetentionDecision {
  /** How many of the oldest segments to delete (0: none); all of them means the active one too. */
  readonly count: number;
  /** The reasons that deleted segments, in the order they were applied (empty: none). */
  readonly reasons: readonly RetentionReason[];
}

/**
 * Deletes the longest prefix whose segments satisfy `eligible` (given the segment and the one after it, none for
 * the active segment), stopping at the high watermark and at an empty active segment.
 */
function prefix(
  view: RetentionView,
  eligible: (segment: SegmentView, next: SegmentView | undefined) => boolean,
): number {
  let count = 0;
  for (let i = 0; i < view.segments.length; i++) {
    const segment = view.segments[i]!;
    const next = view.segments[i + 1];
    // An empty active segment holds nothing to delete, and the log always keeps one segment.
    if (next === undefined && segment.size === 0) break;
    // Every offset of the segment is below the next one's base (the active one's below the log end); all of
    // them must be below the high watermark, so that the log start offset never passes it.
    if ((next?.baseOffset ?? view.logEndOffset) > view.highWatermark) break;
    if (!eligible(segment, next)) break;
    count++;
  }
  return count;
}

export function retentionDecision(view: RetentionView, config: LogConfig, nowMs: number): RetentionDecision {
  let count = 0;
  const reasons: RetentionReason[] = [];
  /** Deletes, for `reason`, the prefix of the segments left by the reasons before it that `eligible` allows. */
  const apply = (
    reason: RetentionReason,
    eligible: (
      left: readonly SegmentView[],
    ) => (segment: SegmentView, next: SegmentView | undefined) => boolean,
  ): void => {
    const left = view.segments.slice(count);
    const deleted = prefix({ ...view, segments: left }, eligible(left));
    if (deleted === 0) return;
    count += deleted;
    reasons.push(reason);
  };
  // Never the active segment: the log start offset can reach the log end, but the segment holding it stays.
  apply('log-start-offset', () => (_, next) => next !== undefined && next.baseOffset <= view.logStartOffset);
  if (config.cleanupPolicy.includes('delete')) {
    if (config.retentionBytes >= 0) {
      apply('retention-bytes', (left) => {
        // As Kafka: delete while what stays is still at least retention.bytes.
        let excess = left.reduce((sum, s) => sum + s.size, 0) - config.retentionBytes;
        return (s) => {
          if (excess - s.size < 0) return false;
          excess -= s.size;
          return true;
        };
      });
    }
    if (config.retentionMs >= 0) {
      // A segment that compaction emptied holds nothing to keep.
      apply('retention-ms', () => (s) => s.size === 0 || nowMs - s.largestTimestampMs > config.retentionMs);
    }
  }
  return { count, reasons };
}
