// One cleaning of one compacted log: Kafka's Cleaner.clean.
//
//   1. Range: the dirty section runs from the cleaner checkpoint (first dirty offset) to the first uncleanable
//      offset, the base of the first segment that is active, not wholly below the last stable offset (so below
//      the high watermark and every open transaction), or younger than min.compaction.lag.ms.
//   2. Offset map: the dirty section's keys and the offsets of their latest records (aborted transactional data
//      and markers left out). When the map fills, the pass covers the dirty section up to the last record in the
//      map, even inside a batch, as Kafka's offsetMap.latestOffset: the next pass goes on from there.
//   3. Clean: every segment from the start of the log up to that end, in groups whose total size fits
//      segment.bytes and segment.index.bytes (so small cleaned segments merge), is rewritten through
//      filterBatch into a `.cleaned` segment, and each group is swapped into the log as soon as it is written
//      (swap-files.ts; Log.replaceSegments does it in one synchronous step).
//   4. The caller moves the cleaner checkpoint to the end of the pass.
//
// Everything that touches the disk is asynchronous and chunked; the log keeps taking appends and reads. If the
// log changes under the cleaning in a way that makes its output wrong (truncation, retention, close), the swap
// refuses and the pass is abandoned, leaving the log as it was.

import { assert } from '../../common/assert.js';
import { batchHeader } from '../../protocol/records/batch-header.js';
import { iterateRecords } from '../../protocol/records/batch-records.js';
import type { Log } from '../log.js';
import { STORAGE_LIMITS } from '../log-config.js';
import { LogSegment } from '../log-segment.js';
import { CleanedTransactions } from './cleaned-transactions.js';
import {
  emptyStats,
  type FilterContext,
  type FilterStats,
  filterBatch,
  type ProducerTail,
} from './filter-batch.js';
import { OffsetMap } from './offset-map.js';
import { CleanedSegmentWriter, segmentBatches } from './segment-io.js';
import { cleanedToSwap, deleteCleaned, swapToFinal } from './swap-files.js';
import type { Throttler } from './throttler.js';

export interface CleanOptions {
  /** Where the dirty section starts (the cleaner checkpoint, clamped to the log by the caller). */
  readonly firstDirtyOffset: number;
  /** log.cleaner.dedupe.buffer.size available to this cleaning. */
  readonly dedupeBufferBytes: number;
  /** log.cleaner.io.buffer.load.factor */
  readonly loadFactor: number;
  /** log.cleaner.io.buffer.size: bytes per read and per write. */
  readonly ioBufferBytes: number;
  readonly nowMs: number;
  /** log.cleaner.io.max.bytes.per.second: told of every byte read and written (none: unthrottled). */
  readonly throttler?: Throttler;
}

export interface CleanResult {
  /** The new cleaner checkpoint: everything below it has been cleaned against the offset map. */
  readonly endOffset: number;
  readonly bytesRead: number;
  readonly bytesWritten: number;
  readonly segmentsBefore: number;
  readonly segmentsAfter: number;
  /** The smallest delete horizon a kept batch carries (tombstones or markers to remove later), or null. */
  readonly earliestDeleteHorizonMs: number | null;
  readonly stats: FilterStats;
}

export interface CleanableRange {
  readonly firstDirtyOffset: number;
  readonly firstUncleanableOffset: number;
  /**
   * Bytes of the segments with a base offset below the first dirty offset (Kafka's LogToClean.cleanBytes,
   * logSegments(-1, firstDirtyOffset)): the segment holding that offset counts here and in `dirtyBytes` both.
   */
  readonly cleanBytes: number;
  /**
   * Bytes of the segments from the one holding the first dirty offset to the first uncleanable one (Kafka's
   * calculateCleanableBytes); none when the first dirty offset is at or past the first uncleanable one.
   */
  readonly dirtyBytes: number;
}

/**
 * Step 1 (see the file header); synchronous, and cheap: it looks at segment metadata only (and the .log file's
 * modification time of a dirty segment without timestamps, when min.compaction.lag.ms is set). As Kafka's
 * LogCleanerManager.cleanableOffsets, the lag is checked on the dirty segments only, by their largest timestamp,
 * which is the file's last modification when no record carries one: such records stay for the lag too.
 */
export function cleanableRange(log: Log, firstDirtyOffset: number, nowMs: number): CleanableRange {
  const segments = log.segmentList();
  const lastStable = log.lastStableOffset;
  const lagMs = log.config.minCompactionLagMs;
  let count = 0;
  for (let i = 0; i < segments.length - 1; i++) {
    const nextBase = segments[i + 1]!.baseOffset;
    if (nextBase > lastStable) break;
    const dirty = nextBase > firstDirtyOffset;
    if (lagMs > 0 && dirty && segments[i]!.largestTimestampMs > nowMs - lagMs) break;
    count++;
  }
  const firstUncleanableOffset = segments[count]!.baseOffset;
  // As Kafka's LogToClean, whose ratio min.cleanable.dirty.ratio is compared to: a segment the first dirty offset
  // falls inside (a pass stopped by a full dedupe buffer ends there) is counted clean and dirty both.
  let cleanBytes = 0;
  let dirtyBytes = 0;
  for (const [i, segment] of segments.entries()) {
    if (segment.baseOffset < firstDirtyOffset) cleanBytes += segment.size;
    if (i < count && segments[i + 1]!.baseOffset > firstDirtyOffset) dirtyBytes += segment.size;
  }
  return {
    firstDirtyOffset: Math.min(firstDirtyOffset, firstUncleanableOffset),
    firstUncleanableOffset,
    cleanBytes,
    dirtyBytes,
  };
}

/**
 * Work between two turns of the event loop: reads already yield, but filtering a chunk of small records is
 * CPU work, and appends and fetches must not wait behind much of it.
 */
const SLICE_MS = 4;

/** Returns a function that yields to the event loop once SLICE_MS of work has passed since the last yield. */
function timeSlicer(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}

/**
 * Cleans `log` once (steps 2 and 3). Returns null when nothing could be cleaned or the log changed under the
 * pass (nothing was swapped after the change; groups swapped before it stay, and are correct on their own).
 */
export async function cleanLog(log: Log, options: CleanOptions): Promise<CleanResult | null> {
  const range = cleanableRange(log, options.firstDirtyOffset, options.nowMs);
  const batchBytesMax = Math.max(STORAGE_LIMITS.batchBytesMax, log.config.maxMessageBytes);
  const stats = emptyStats();
  let bytesRead = 0;
  // The map grows on demand up to the dedupe buffer size (see offset-map.ts).
  const map = new OffsetMap(options.dedupeBufferBytes, options.loadFactor);
  const slice = timeSlicer();
  map.latestOffset = range.firstDirtyOffset - 1;
  const truncations = log.truncationCount;

  // Step 2: the offset map over the dirty section.
  let full = false;
  const mapTxns = new CleanedTransactions(
    log.collectAbortedTxns(range.firstDirtyOffset, range.firstUncleanableOffset),
  );
  // A copy: retention or truncation may change the log's list while this pass awaits its reads.
  const mapped = [...log.segmentList()];
  for (const [i, segment] of mapped.entries()) {
    if (full || segment.baseOffset >= range.firstUncleanableOffset) break;
    if (segment.nextOffset <= range.firstDirtyOffset) continue;
    if (segment.isDeleted || log.isClosed) return null;
    for await (const { buf, pos } of segmentBatches(
      segment,
      segment.size,
      options.ioBufferBytes,
      batchBytesMax,
    )) {
      const size = batchHeader.sizeInBytes(buf, pos);
      bytesRead += size;
      const wait = options.throttler?.maybeThrottle(size);
      if (wait) await wait;
      const lastOffset = batchHeader.lastOffset(buf, pos);
      if (lastOffset < range.firstDirtyOffset) continue;
      if (batchHeader.isControl(buf, pos)) mapTxns.onControlBatch(buf, pos);
      else if (!mapTxns.onDataBatch(buf, pos)) {
        for (const record of iterateRecords(buf, pos)) {
          if (record.key === null || record.offset < range.firstDirtyOffset) continue;
          if (map.isFull) {
            full = true;
            break;
          }
          // As Kafka's map.put, the latest offset follows every record mapped: a pass that fills the map inside a
          // batch covers that batch up to its last mapped record, and the rest of the batch is kept as it is.
          map.put(record.key, record.offset);
          map.latestOffset = record.offset;
        }
      }
      if (full) break;
      map.latestOffset = Math.max(map.latestOffset, lastOffset);
      await slice();
    }
    if (full) break;
    // A segment read whole covers the offsets up to the next one (Kafka's nextSegmentStartOffset - 1), so an
    // offset gap at its end (a follower's copy of a compacted leader) is not left dirty for the next pass.
    const nextBase = Math.min(mapped[i + 1]?.baseOffset ?? Infinity, range.firstUncleanableOffset);
    map.latestOffset = Math.max(map.latestOffset, nextBase - 1);
  }
  if (!full) map.latestOffset = Math.max(map.latestOffset, range.firstUncleanableOffset - 1);
  const endOffset = map.latestOffset + 1;
  // The map takes at least one key before it is full (see OffsetMap), so every pass makes progress.
  assert(!full || endOffset > range.firstDirtyOffset, 'a full offset map covers at least one record');
  if (log.truncationCount !== truncations) return null;

  // Step 3: clean and swap, group by group.
  const all = log.segmentList();
  const toClean = all.slice(0, all.length - 1).filter((s) => s.baseOffset < endOffset);
  if (toClean.length === 0) return null;
  const producerTails = new Map<number, ProducerTail>();
  for (const p of log.producerState.allProducers()) {
    const last = p.batches[p.batches.length - 1];
    producerTails.set(p.producerId, { lastDataOffset: last?.lastOffset ?? -1, epoch: p.producerEpoch });
  }
  let writer: CleanedSegmentWriter | null = null;
  const txns = new CleanedTransactions(log.collectAbortedTxns(toClean[0]!.baseOffset, endOffset), (txn) =>
    writer?.addAbortedTxn(txn),
  );
  const ctx: FilterContext = {
    map,
    txns,
    nowMs: options.nowMs,
    deleteRetentionMs: log.config.deleteRetentionMs,
    producerTails,
    roundEndOffset: range.firstUncleanableOffset,
  };
  const groups = groupSegmentsBySize(toClean, all, log.config.segmentBytes, log.config.segmentIndexBytes);
  let bytesWritten = 0;
  let earliestHorizon: number | null = null;
  const segmentsBefore = log.segmentCount;
  for (const group of groups) {
    const sizes = group.map((s) => s.size);
    if (log.isClosed || group.some((s) => s.isDeleted)) return null;
    // Encrypted output when the topic asks for it, and whenever what it compacts was encrypted.
    const encrypt = log.keys !== null && (log.config.encrypt || group.some((s) => s.cipher !== null));
    writer = await CleanedSegmentWriter.create(
      log.dir,
      group[0]!.baseOffset,
      log.config,
      options.ioBufferBytes,
      encrypt ? log.keys : null,
    );
    let gone = false;
    try {
      for (let i = 0; i < group.length && !gone; i++) {
        // Checked in the same turn as the reader opens the file: retention may have deleted the segment while
        // this pass awaited (the swap would refuse anyway; this avoids reading a file that was renamed).
        gone = log.isClosed || group[i]!.isDeleted;
        if (gone) break;
        for await (const { buf, pos } of segmentBatches(
          group[i]!,
          sizes[i]!,
          options.ioBufferBytes,
          batchBytesMax,
        )) {
          const size = batchHeader.sizeInBytes(buf, pos);
          bytesRead += size;
          const wait = options.throttler?.maybeThrottle(size);
          if (wait) await wait;
          const kept = filterBatch(buf, pos, ctx, stats);
          if (kept === null) {
            await slice();
            continue;
          }
          if (batchHeader.hasDeleteHorizon(kept, 0)) {
            const horizon = batchHeader.deleteHorizonMs(kept, 0);
            earliestHorizon = earliestHorizon === null ? horizon : Math.min(earliestHorizon, horizon);
          }
          await writer.append(kept);
          const written = options.throttler?.maybeThrottle(kept.length);
          if (written) await written;
          await slice();
        }
      }
      if (!gone) await writer.finish();
    } catch (err) {
      await writer.abort();
      throw err;
    }
    if (gone) {
      await writer.abort();
      return null;
    }
    const done = writer;
    writer = null;
    const swapped =
      log.truncationCount === truncations &&
      log.replaceSegments(group, sizes, {
        toSwap: () => cleanedToSwap(log.dir, done.baseOffset),
        install: () => installSegment(log, done.baseOffset, options.nowMs, group[group.length - 1]!),
      });
    if (!swapped) {
      deleteCleaned(log.dir, done.baseOffset);
      return null;
    }
    bytesWritten += done.size;
  }
  return {
    endOffset,
    bytesRead,
    bytesWritten,
    segmentsBefore,
    segmentsAfter: log.segmentCount,
    earliestDeleteHorizonMs: earliestHorizon,
    stats,
  };
}

/**
 * Step 3 of the swap (swap-files.ts): final names, then the segment opened as an inactive one. It keeps the
 * modification time of `last`, the newest segment it replaces (its files renamed but still open), as Kafka's
 * cleanSegments does: retention.ms ages segments without timestamps by that time.
 */
function installSegment(log: Log, baseOffset: number, nowMs: number, last: LogSegment): LogSegment {
  swapToFinal(log.dir, baseOffset);
  const { segment, needsIndexRebuild } = LogSegment.open(log.dir, baseOffset, log.config, nowMs, 0, log.keys);
  if (needsIndexRebuild || !segment.loadTail()) segment.rebuildIndexes();
  segment.txnIndex.load(segment.nextOffset);
  segment.onRoll();
  segment.setLastModified(last.lastModifiedMs);
  return segment;
}

const INT32_MAX = 0x7fffffff;

/**
 * Kafka's groupSegmentsBySize: consecutive segments whose .log sizes add up to at most segment.bytes and whose
 * index sizes add up to at most segment.index.bytes, with every offset within 2^31 of the group's base.
 */
export function groupSegmentsBySize(
  segments: readonly LogSegment[],
  all: readonly LogSegment[],
  maxBytes: number,
  maxIndexBytes: number,
): LogSegment[][] {
  const groups: LogSegment[][] = [];
  let i = 0;
  const nextBase = (s: LogSegment): number => {
    const at = all.indexOf(s);
    assert(at >= 0 && at + 1 < all.length, 'a cleaned segment is followed by another');
    return all[at + 1]!.baseOffset;
  };
  while (i < segments.length) {
    const first = segments[i]!;
    const group = [first];
    let logBytes = first.size;
    let offsetIndexBytes = first.offsetIndex.file.sizeInBytes;
    let timeIndexBytes = first.timeIndex.file.sizeInBytes;
    i++;
    while (i < segments.length) {
      const s = segments[i]!;
      if (
        logBytes + s.size > maxBytes ||
        offsetIndexBytes + s.offsetIndex.file.sizeInBytes > maxIndexBytes ||
        timeIndexBytes + s.timeIndex.file.sizeInBytes > maxIndexBytes ||
        nextBase(s) - 1 - first.baseOffset > INT32_MAX
      ) {
        break;
      }
      group.push(s);
      logBytes += s.size;
      offsetIndexBytes += s.offsetIndex.file.sizeInBytes;
      timeIndexBytes += s.timeIndex.file.sizeInBytes;
      i++;
    }
    groups.push(group);
  }
  return groups;
}
