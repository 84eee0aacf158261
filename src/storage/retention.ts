// Retention under cleanup.policy=delete: which of a log's oldest segments may go.
//
// Three reasons, checked in Kafka's order: the log start offset moved past a whole segment (DeleteRecords),
// the segment's newest timestamp is older than retention.ms, the log is larger than retention.bytes. Only a
// prefix of the segments is ever deleted, and never a segment holding offsets at or above the high watermark.
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
  readonly reason: RetentionReason | null;
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
  // Never the active segment: the log start offset can reach the log end, but the segment holding it stays.
  const byStart = prefix(view, (_, next) => next !== undefined && next.baseOffset <= view.logStartOffset);
  if (byStart > 0) return { count: byStart, reason: 'log-start-offset' };
  if (!config.cleanupPolicy.includes('delete')) return { count: 0, reason: null };
  if (config.retentionMs >= 0) {
    const byTime = prefix(
      view,
      // A segment that compaction emptied holds nothing to keep.
      (s) => s.size === 0 || nowMs - s.largestTimestampMs > config.retentionMs,
    );
    if (byTime > 0) return { count: byTime, reason: 'retention-ms' };
  }
  if (config.retentionBytes >= 0) {
    let excess = view.segments.reduce((sum, s) => sum + s.size, 0) - config.retentionBytes;
    const bySize = prefix(view, (s) => {
      if (excess - s.size < 0) return false;
      excess -= s.size;
      return true;
    });
    if (bySize > 0) return { count: bySize, reason: 'retention-bytes' };
  }
  return { count: 0, reason: null };
}
