// ListOffsets against one log: the earliest or latest offset, the offset of the largest timestamp (KIP-734), or
// the first offset whose record reaches a timestamp, found through the segments' time indexes; for v0, the
// offsets of the segments modified before a time.
//
// Ownership: pure lookups over the log's segments at the moment of the call; nothing here changes a file or an
// offset. The Log calls them with its own state (see Log.offsetForTimestamp).

import type { LeaderEpochCache } from './leader-epoch-cache.js';
import type { LogSegment } from './log-segment.js';

/** Where a ListOffsets answer was found: the offset, the timestamp that matched and the epoch of the offset. */
export interface OffsetAndTimestamp {
  readonly offset: number;
  readonly timestampMs: number;
  readonly leaderEpoch: number;
}

/** ListOffsets' special timestamps. */
export const ListOffsetsTimestamp = {
  Latest: -1,
  Earliest: -2,
  MaxTimestamp: -3,
  EarliestLocal: -4,
  /** KIP-1005: the last offset in tiered storage; without it, none (-1). */
  LatestTiered: -5,
} as const;

/** The first record of a batch whose timestamp reaches a target: its offset and its own timestamp. */
export interface LocatedRecord {
  readonly offset: number;
  readonly timestampMs: number;
}

/**
 * Finds the first record at or after `minOffset` (the log start offset) with a timestamp >= target inside a batch
 * (storage never decodes records itself); null when the batch has none, and the search goes on with the next batch,
 * as Kafka's FileRecords.searchForTimestamp does (only the batch holding the log start offset can have a max
 * timestamp reaching the target and no such record). Without a locator, the answer is the batch's first offset and
 * its max timestamp, which is where a consumer has to start reading anyway; the broker passes a decoder-backed one
 * to answer ListOffsets with the exact record and that record's timestamp, as Kafka does.
 */
export type RecordTimestampLocator = (
  batch: Buffer,
  targetMs: number,
  minOffset: number,
) => LocatedRecord | null;

/** What a timestamp lookup reads of the log. */
export interface TimestampLookupView {
  readonly segments: readonly LogSegment[];
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  readonly epochCache: LeaderEpochCache;
}

/**
 * ListOffsets v0, Kafka's UnifiedLog.legacyFetchOffsetsBefore: the old API went by segment files, not record
 * timestamps. Each segment is an entry, its base offset (not below the log start) at its file's last modification
 * time, and a non-empty active segment adds the log end offset at `nowMs`. The answer is the last entry for
 * Latest, the first for Earliest, else the last entry modified at or before `timestampMs`, with the entries
 * before it, newest first, at most `maxNumOffsets` of them: empty when every segment changed after the timestamp.
 */
export function legacyOffsetsBefore(
  log: Omit<TimestampLookupView, 'epochCache'>,
  timestampMs: number,
  maxNumOffsets: number,
  nowMs: number,
): number[] {
  const entries = log.segments.map((s) => ({
    offset: Math.max(s.baseOffset, log.logStartOffset),
    modifiedMs: s.lastModifiedMs,
  }));
  const active = log.segments[log.segments.length - 1];
  if (active !== undefined && active.size > 0) entries.push({ offset: log.logEndOffset, modifiedMs: nowMs });
  let from = entries.length - 1;
  if (timestampMs === ListOffsetsTimestamp.Earliest) from = Math.min(0, from);
  else if (timestampMs !== ListOffsetsTimestamp.Latest) {
    while (from >= 0 && entries[from]!.modifiedMs > timestampMs) from--;
  }
  const offsets: number[] = [];
  for (let i = from; i >= 0 && offsets.length < maxNumOffsets; i--) offsets.push(entries[i]!.offset);
  return offsets.sort((a, b) => b - a);
}

/**
 * ListOffsets: the earliest or latest offset, the offset of the largest timestamp, or the first offset whose
 * batch reaches `timestampMs`. Null when no batch has a timestamp that large. Latest is the log end offset:
 * the partition clamps it to the high watermark or last stable offset for consumers.
 */
export function offsetForTimestamp(
  log: TimestampLookupView,
  timestampMs: number,
  locate?: RecordTimestampLocator,
): OffsetAndTimestamp | null {
  if (timestampMs === ListOffsetsTimestamp.Earliest || timestampMs === ListOffsetsTimestamp.EarliestLocal) {
    const offset = log.logStartOffset;
    return { offset, timestampMs: -1, leaderEpoch: log.epochCache.epochForOffset(offset) };
  }
  if (timestampMs === ListOffsetsTimestamp.Latest) {
    const offset = log.logEndOffset;
    return { offset, timestampMs: -1, leaderEpoch: log.epochCache.latestEpoch };
  }
  if (timestampMs === ListOffsetsTimestamp.MaxTimestamp) {
    let best: LogSegment | null = null;
    for (const s of log.segments)
      if (s.size > 0 && (best === null || s.maxTimestampMs > best.maxTimestampMs)) best = s;
    if (best === null || best.maxTimestampMs < 0) return null;
    // KIP-734: the record holding the largest timestamp, found in the first batch whose max it is (as
    // Kafka's RecordBatch.offsetOfMaxTimestamp); the segment only knows that batch's last offset.
    const found = locateInSegment(log, best, best.maxTimestampMs, locate, 0);
    if (found !== null) return found;
    const offset = Math.max(best.offsetOfMaxTimestampMs, log.logStartOffset);
    return {
      offset,
      timestampMs: best.maxTimestampMs,
      leaderEpoch: log.epochCache.epochForOffset(offset),
    };
  }
  if (timestampMs < 0) return null;
  for (const segment of log.segments) {
    if (segment.maxTimestampMs < timestampMs || segment.nextOffset <= log.logStartOffset) continue;
    const found = locateInSegment(log, segment, timestampMs, locate, log.logStartOffset);
    if (found !== null) return found;
  }
  return null;
}

/**
 * The first record of `segment` at or after `minOffset` whose timestamp reaches `timestampMs`, or the batch holding
 * it; the answer is never below the log start offset.
 */
function locateInSegment(
  log: TimestampLookupView,
  segment: LogSegment,
  timestampMs: number,
  locate: RecordTimestampLocator | undefined,
  minOffset: number,
): OffsetAndTimestamp | null {
  for (let from = Math.max(minOffset, log.logStartOffset); ; ) {
    const batch = segment.findByTimestamp(timestampMs, from);
    if (batch === null) return null;
    let offset = batch.baseOffset;
    let foundTimestampMs = batch.maxTimestamp;
    // A batch length that runs past the segment is damage: it must not size a read.
    const wholeInSegment = batch.sizeInBytes <= segment.size - batch.position;
    if (locate !== undefined && wholeInSegment) {
      const record = locate(segment.readBytes(batch.position, batch.sizeInBytes), timestampMs, minOffset);
      if (record === null) {
        from = batch.lastOffset + 1;
        continue;
      }
      offset = record.offset;
      foundTimestampMs = record.timestampMs;
    }
    offset = Math.max(offset, log.logStartOffset);
    return { offset, timestampMs: foundTimestampMs, leaderEpoch: log.epochCache.epochForOffset(offset) };
  }
}
