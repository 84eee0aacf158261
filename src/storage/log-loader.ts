// Loading a partition's log from its directory (Kafka's LogLoader): the leftovers of interrupted operations are
// removed, every segment is opened, the segments a crash may have torn are re-read and cut at the first bad
// byte, and the producer state is rebuilt from the newest usable snapshot plus a replay of the log after it.
//
// Ownership: these functions run only while a Log opens (and, for the producer state, after a truncation);
// they change the files of one partition directory and the state objects they are handed, nothing else. The
// Log decides the offsets (log start, recovery point, high watermark) from what they return.

import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { LeaderEpoch, Offset } from '../common/ids.js';
import { batchHeader } from '../protocol/records/batch-header.js';
import type { EpochEntry } from './checkpoint-file.js';
import { completeSwaps } from './cleaner/swap-files.js';
import type { FileSeal } from './encryption/file-seal.js';
import { SegmentIntegrityError, type SegmentKeys } from './encryption/segment-cipher.js';
import {
  CLEANED_SUFFIX,
  DELETED_SUFFIX,
  ENC_SUFFIX,
  INDEX_SUFFIX,
  LOG_SUFFIX,
  parseOffsetFileName,
  SWAP_SUFFIX,
  TIME_INDEX_SUFFIX,
  TMP_SUFFIX,
  TXN_INDEX_SUFFIX,
} from './file-names.js';
import type { LeaderEpochCache } from './leader-epoch-cache.js';
import { type LogConfig, STORAGE_LIMITS } from './log-config.js';
import { LogSegment } from './log-segment.js';
import { deleteSnapshotFile, listSnapshotOffsets, readSnapshotFile } from './producer-snapshot.js';
import type { ProducerStateManager } from './producer-state.js';

/** What loading needs from the log being opened. */
export interface SegmentLoadContext {
  readonly dir: string;
  readonly config: LogConfig;
  readonly keys: SegmentKeys | null;
  /** The clock's wall time now: a segment's roll timer starts from it. */
  readonly nowMs: number;
  readonly epochCache: LeaderEpochCache;
  /** The roll jitter of a newly opened segment (segment.jitter.ms). */
  readonly jitter: () => number;
  readonly onBackgroundError: (err: Error) => void;
}

/** The segments found on disk, oldest first, and what recovery did to them. */
export interface LoadedSegments {
  readonly segments: LogSegment[];
  /** Segments re-read by recovery: their bytes must be flushed, their aborted transactions re-indexed. */
  readonly recovered: Set<LogSegment>;
  /** Bytes recovery cut from damaged or torn segments (for operators). */
  readonly bytesCut: number;
}

/**
 * Opens every segment of `ctx.dir`. After an unclean shutdown (`needsRecovery`), the segments from the one
 * holding `recoveryPoint` on are re-read; a segment whose indexes are wrong or whose offsets go backwards is
 * re-read too. Damage drops every later segment. May return no segment (an empty directory).
 */
export function loadSegments(
  ctx: SegmentLoadContext,
  needsRecovery: boolean,
  recoveryPoint: number,
): LoadedSegments {
  removeLeftovers(ctx.dir, ctx.keys);
  const baseOffsets = segmentFileOffsets(ctx.dir);
  const segments: LogSegment[] = [];
  // Segments from the one holding the recovery point on are re-checked after a crash.
  let recoverFrom = 0;
  for (let i = 0; i < baseOffsets.length; i++) if (baseOffsets[i]! <= recoveryPoint) recoverFrom = i;
  const recovered = new Set<LogSegment>();
  let damaged = false;
  let bytesCut = 0;
  let expectOffset = 0;
  // Offsets must increase, not follow on: compaction leaves gaps (here, or on a leader this log copied), and
  // the topic may have turned to cleanup.policy=delete since, so no config tells where gaps are legitimate.
  // Kafka's recovery asks the same (valid framing and CRC, increasing offsets). A segment that ends short of
  // the next one is therefore kept; one with damaged or torn bytes drops every later segment (below).
  for (let i = 0; i < baseOffsets.length; i++) {
    const { segment, needsIndexRebuild, integrityNote } = LogSegment.open(
      ctx.dir,
      baseOffsets[i]!,
      ctx.config,
      ctx.nowMs,
      ctx.jitter(),
      ctx.keys,
    );
    if (integrityNote !== undefined) ctx.onBackgroundError(new SegmentIntegrityError(ctx.dir, integrityNote));
    segments.push(segment);
    const mustRecover =
      needsIndexRebuild || (needsRecovery && i >= recoverFrom) || segment.baseOffset < expectOffset;
    let cut = 0;
    if (mustRecover || !segment.loadTail()) {
      cut = recoverSegment(ctx, segment, expectOffset);
      recovered.add(segment);
    }
    segment.txnIndex.load(segment.nextOffset);
    expectOffset = segment.nextOffset;
    if (cut > 0) {
      damaged = true;
      bytesCut += cut;
      // Nothing after damage can be trusted to follow on from it: drop the later segments.
      for (const later of baseOffsets.slice(i + 1)) deleteSegmentFilesAt(ctx.dir, later);
      break;
    }
  }
  // After a crash or damage, an empty active segment past a gap is dropped unless it is the only one: recovery
  // emptied it, or it was rolled while its predecessor's queued bytes were still on their way (and are lost).
  // After a clean shutdown it stays: a truncation into offsets compaction emptied put the log end there.
  while ((needsRecovery || damaged) && segments.length > 1) {
    const active = segments[segments.length - 1]!;
    const previous = segments[segments.length - 2]!;
    if (active.size !== 0 || active.baseOffset <= previous.nextOffset) break;
    segments.pop();
    // Gone: neither flushed nor replayed for producer state.
    recovered.delete(active);
    active.deleteFiles();
  }
  return { segments, recovered, bytesCut };
}

/**
 * Rebuilds producer state: the latest usable snapshot at or below the first recovered segment (and the log
 * end), then every batch after it. Snapshots above the log end are deleted. Aborted transactions found in
 * `recovered` segments go back into their transaction index. Returns the offset of the snapshot loaded, or
 * null when none was usable (the state is then the replay of the whole log).
 */
export function rebuildProducerState(
  log: {
    readonly dir: string;
    readonly segments: readonly LogSegment[];
    readonly producerState: ProducerStateManager;
    readonly seal: FileSeal | null;
    readonly logStartOffset: number;
    readonly logEndOffset: number;
  },
  recovered: ReadonlySet<LogSegment>,
): number | null {
  let limit = log.logEndOffset;
  for (const s of recovered) limit = Math.min(limit, s.baseOffset);
  const offsets = listSnapshotOffsets(log.dir);
  for (const o of offsets) if (o > log.logEndOffset) deleteSnapshotFile(log.dir, o);
  let from = log.logStartOffset;
  let loaded: number | null = null;
  log.producerState.clear(from);
  for (let i = offsets.length - 1; i >= 0; i--) {
    const offset = offsets[i]!;
    if (offset > limit || offset < log.logStartOffset) continue;
    const entries = readSnapshotFile(log.dir, offset, log.seal);
    if (entries === null) continue;
    log.producerState.loadSnapshot(offset, entries);
    from = offset;
    loaded = offset;
    break;
  }
  replayProducerState(log.segments, log.producerState, from, recovered);
  return loaded;
}

/**
 * The leader epochs of the log's batches, each with the offset of the first batch written in it (the entries a
 * leader-epoch-checkpoint holds, but for an epoch that has no batch yet). Reads every batch header.
 */
export function epochsFromLog(segments: readonly LogSegment[]): EpochEntry[] {
  const entries: EpochEntry[] = [];
  for (const segment of segments) {
    segment.scan(0, (info) => {
      const epoch = info.partitionLeaderEpoch;
      const latest = entries[entries.length - 1];
      if (epoch >= 0 && (latest === undefined || epoch > latest.epoch))
        entries.push({ epoch: epoch as LeaderEpoch, startOffset: info.baseOffset as Offset });
      return true;
    });
  }
  return entries;
}

/** A transaction marker batch holds one small record; anything larger is not read whole. */
const CONTROL_BATCH_BYTES_MAX = 64 * 1024;

function replayProducerState(
  segments: readonly LogSegment[],
  producerState: ProducerStateManager,
  from: number,
  reindex: ReadonlySet<LogSegment>,
): void {
  for (const segment of segments) {
    if (segment.nextOffset <= from) continue;
    const start = segment.baseOffset >= from ? null : segment.translateOffset(from);
    segment.scan(start?.position ?? 0, (info, header, headerPos) => {
      if (batchHeader.producerId(header, headerPos) < 0) {
        producerState.apply(header, headerPos);
        return true;
      }
      // Transaction markers are read whole (they are tiny: a larger one is damage and read as a header only);
      // other batches only by their header.
      const isControl =
        batchHeader.isControl(header, headerPos) && info.sizeInBytes <= CONTROL_BATCH_BYTES_MAX;
      const buf = isControl ? segment.readBytes(info.position, info.sizeInBytes) : header;
      const completed = producerState.apply(buf, isControl ? 0 : headerPos);
      if (completed?.isAborted === true && reindex.has(segment)) segment.txnIndex.append(completed);
      return true;
    });
  }
}

/** Re-reads a segment (framing, CRC32C, increasing offsets from `minOffset`); returns the bytes it cut. */
function recoverSegment(ctx: SegmentLoadContext, segment: LogSegment, minOffset: number): number {
  // Not max.message.bytes alone: it may have been lowered after larger batches were written.
  const batchBytesMax = Math.max(STORAGE_LIMITS.batchBytesMax, ctx.config.maxMessageBytes);
  return segment.recover(
    minOffset,
    batchBytesMax,
    (_buf, _pos, info) => {
      const epoch = info.partitionLeaderEpoch;
      if (epoch >= 0 && epoch > ctx.epochCache.latestEpoch)
        ctx.epochCache.assign(epoch as LeaderEpoch, info.baseOffset as Offset);
    },
    (note) => ctx.onBackgroundError(new SegmentIntegrityError(ctx.dir, note)),
  );
}

/**
 * Removes files that only exist half-way through an operation: temp files, deleted segments, cleaner output
 * that was never swapped in. A cleaned segment that was being swapped in is completed first (see
 * cleaner/swap-files.ts).
 */
function removeLeftovers(dir: string, keys: SegmentKeys | null): void {
  completeSwaps(dir, keys);
  finishHalfDeletedEncrypted(dir);
  for (const name of readdirSync(dir)) {
    if (
      name.endsWith(TMP_SUFFIX) ||
      name.endsWith(DELETED_SUFFIX) ||
      name.endsWith(CLEANED_SUFFIX) ||
      name.endsWith(SWAP_SUFFIX)
    ) {
      unlinkIfPresent(join(dir, name));
    }
  }
}

/** Removes a file that may already be gone (a leftover another writer's rename or cleanup took first). */
function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Brook versions before this one renamed an encrypted segment's `.enc` to `.deleted` before its .log: a crash
 * between the two left the ciphertext .log without its key file, to be loaded as a plaintext segment. Such a
 * .log (its `.enc.deleted` there, no `.enc`, no `.log.deleted`) was being deleted: its deletion is finished.
 */
function finishHalfDeletedEncrypted(dir: string): void {
  const names = new Set(readdirSync(dir));
  const encDeleted = ENC_SUFFIX + DELETED_SUFFIX;
  for (const name of names) {
    if (!name.endsWith(encDeleted)) continue;
    const stem = name.slice(0, -encDeleted.length);
    if (!names.has(stem + LOG_SUFFIX) || names.has(stem + ENC_SUFFIX)) continue;
    if (names.has(stem + LOG_SUFFIX + DELETED_SUFFIX)) continue;
    unlinkSync(join(dir, stem + LOG_SUFFIX));
  }
}

/** Base offsets that have a .log file; index files without one are removed. */
function segmentFileOffsets(dir: string): number[] {
  const logs = new Set<number>();
  const others: { offset: number; name: string }[] = [];
  for (const name of readdirSync(dir)) {
    const parsed = parseOffsetFileName(name);
    if (parsed === null) continue;
    if (parsed.suffix === LOG_SUFFIX) logs.add(parsed.offset);
    else if ([INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, ENC_SUFFIX].includes(parsed.suffix)) {
      others.push({ offset: parsed.offset, name });
    }
  }
  for (const o of others) if (!logs.has(o.offset)) unlinkSync(join(dir, o.name));
  return [...logs].sort((a, b) => a - b);
}

function deleteSegmentFilesAt(dir: string, baseOffset: number): void {
  for (const suffix of [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, ENC_SUFFIX])
    unlinkIfPresent(join(dir, String(baseOffset).padStart(20, '0') + suffix));
}
