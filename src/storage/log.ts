// The log of one partition: an ordered list of segments in `<topic>-<partition>/`, with the bookkeeping the
// broker reads (log start offset, log end offset, high watermark, recovery point, last stable offset), the
// leader epoch cache, producer state, flushing, truncation, DeleteRecords and retention. Opening and recovery
// are log-loader.ts's (Kafka's LogLoader), the write queue append-queue.ts's, the fsyncs and group commit
// log-sync.ts's, the read path log-read.ts's, the segment half of truncation log-truncation.ts's, retention's
// decision retention.ts's and the delayed removal of deleted segments segment-deletion.ts's: this file decides
// the offsets from what they report, and keeps their invariants in one place.
//
// Ownership and concurrency: one Log per partition, owned by the LogManager; the partition (broker) is its only
// caller. Every state change (append, roll, truncate, delete) is synchronous and completes before returning.
// Batches arrive validated, with offsets and leader epoch already patched in: the log writes them byte for byte
// and looks only at their headers (and at transaction markers).
//
// Queued appends (`appendQueued`): offsets, producer state, the epoch cache and roll decisions change at once,
// and the log end offset moves; the bytes are written off the event loop, one writev at a time per log (queued
// appends of the same segment gathered into it), in order. An append becomes visible to readers only when its
// bytes are written: then the segment's indexes and size move, `writtenEndOffset` follows, the append's `done`
// callback is called and `onWritten` is. So reads, the high watermark and followers never reach bytes not in the file.
// With `writeInlineWhenIdle` (the default of a Log opened alone; the broker sets it from
// brook.log.append.inline.enable, off by default), an append that finds nothing queued or being written is
// written at once instead, on the event loop, and is visible on return (`pending` is false): a copy of a produce
// request's bytes (about 0.06 ms for 128 KiB on an idle machine) costs less than the round trip through the
// libuv thread pool (median 2.4 ms, p90 23 ms measured for the same write on a busy 2-core machine, where the
// pool thread waits for a core). But the copy holds up every other connection of the event loop, and under
// sustained writes it slows several times once the kernel's writeback starts: a consumer of one busy partition
// then fell seconds behind (bench/README.md), which is why the broker does not write inline by default.
// `inlineWriteSlowRun` inline writes in a row slower than `inlineWriteSlowMs` (dirty pages throttled, a slow
// disk) send appends through the queue for `inlineWritePauseMs`, so a slow disk does not stall the event loop
// on every request.
// Operations that need the file as the offsets say (a synchronous append, truncation, retention, close)
// first complete every queued append synchronously (AppendQueue.drain, append-queue.ts). Only writes and fsyncs run in the
// background; they change state only to make written appends visible, to move the recovery point forward and
// to tell the appends' callers.

import { join } from 'node:path';
import { assert } from '../common/assert.js';
import type { Clock } from '../common/clock.js';
import type { LeaderEpoch, Offset } from '../common/ids.js';
import { batchHeader } from '../protocol/records/batch-header.js';
import { type AppendDone, AppendQueue, type QueuedAppend } from './append-queue.js';
import { type AppendScan, type AppendSummary, scanAppend } from './append-scan.js';
import { FileSeal } from './encryption/file-seal.js';
import { SegmentIntegrityError, type SegmentKeys } from './encryption/segment-cipher.js';
import { StorageErrorCode } from './error-codes.js';
import { LEADER_EPOCH_CHECKPOINT_FILE, type TopicPartition } from './file-names.js';
import type { InlineReadGate } from './inline-reads.js';
import { type EpochEndOffset, LeaderEpochCache } from './leader-epoch-cache.js';
import { type LogConfig, STORAGE_LIMITS } from './log-config.js';
import { epochsFromLog, loadSegments, rebuildProducerState } from './log-loader.js';
import { floorSegmentIndex, LogReader, type ReadResult } from './log-read.js';
import { LogSegment } from './log-segment.js';
import { type DurableWaiter, fsyncSegment, GroupSync } from './log-sync.js';
import { truncateAll, truncateSegmentsTo } from './log-truncation.js';
import {
  ListOffsetsTimestamp,
  type LocatedRecord,
  legacyOffsetsBefore,
  type OffsetAndTimestamp,
  offsetForTimestamp,
  type RecordTimestampLocator,
} from './offset-for-timestamp.js';
import {
  deleteSnapshotFile,
  listSnapshotOffsets,
  readSnapshotFile,
  syncSnapshotFile,
  syncSnapshotFileNow,
  writeSnapshotFile,
  writeSnapshotFileUnsynced,
} from './producer-snapshot.js';
import { type ProducerCheck, ProducerStateManager } from './producer-state.js';
import { type RetentionDecision, retentionDecision } from './retention.js';
import { deleteSnapshotsBelow, PendingDeletes } from './segment-deletion.js';
import { TailCache, type TailCacheBudget } from './tail-cache.js';
import type { AbortedTxn } from './txn-index.js';

export interface LogOptions {
  readonly dir: string;
  readonly topicPartition: TopicPartition;
  readonly config: LogConfig;
  readonly clock: Clock;
  /** From recovery-point-offset-checkpoint: segments from the one holding it are re-checked after a crash. */
  readonly recoveryPoint?: number;
  /** From log-start-offset-checkpoint. */
  readonly logStartOffset?: number;
  /** From replication-offset-checkpoint. */
  readonly highWatermark?: number;
  /** True when the log directory had Kafka's clean-shutdown marker: no recovery needed. */
  readonly hadCleanShutdown?: boolean;
  /** Randomness for segment.jitter.ms; injected for the simulation. */
  readonly random?: () => number;
  /** Called with errors of background fsyncs (the broker marks the directory offline). */
  readonly onBackgroundError?: (err: Error) => void;
  /**
   * Called at the end of every truncation with the new log end offset, once the offsets moved (the cleaner lowers
   * its checkpoint to it; the log manager rewrites a recovery-point checkpoint that is above it).
   */
  readonly onTruncated?: (logEndOffset: number) => void;
  /** The broker-wide bound of tail caches (see tail-cache.ts); without one, every read goes to the file. */
  readonly tailCache?: TailCacheBudget;
  /** Whether an append that finds the queue idle is written at once on the event loop (default true). */
  readonly writeInlineWhenIdle?: boolean;
  /** The log directory's key store: opens encrypted segments, and encrypts new ones when config.encrypt. */
  readonly keys?: SegmentKeys | null;
}

/** A synchronous append's offsets, timestamps and counts, and when its bytes are durable. */
export interface AppendInfo extends AppendSummary {
  /** With ackAfterFsync, resolves once the appended bytes are fdatasync'ed; otherwise null. */
  readonly durable: Promise<void> | null;
}

/** A queued append's offsets, timestamps and counts (see Log.appendQueued). */
export interface QueuedAppendInfo extends AppendSummary {
  /** Whether `done` will be called; false when the append was written inline and has no sync to wait for. */
  readonly pending: boolean;
}

export type { AppendDone, ReadResult };
export { ListOffsetsTimestamp, type LocatedRecord, type OffsetAndTimestamp, type RecordTimestampLocator };

export class Log {
  readonly dir: string;
  readonly topicPartition: TopicPartition;
  private configValue: LogConfig;
  readonly epochCache: LeaderEpochCache;
  readonly producerState: ProducerStateManager;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly onBackgroundError: (err: Error) => void;
  private readonly onTruncated: (logEndOffset: number) => void;
  /** The newest written appends, so that tail reads skip the file (null: no cache). */
  private readonly tailCache: TailCache | null;
  /** The read path (log-read.ts): reads this log's segments and bounds at each call. */
  private readonly reader: LogReader;
  private segments: LogSegment[] = [];
  private logStartOffsetValue = 0;
  private logEndOffsetValue = 0;
  private highWatermarkValue = 0;
  private recoveryPointValue = 0;
  private unflushedRecords = 0;
  private lastFlushMs: number;
  /** Segments gone from the log whose files wait out file.delete.delay.ms (segment-deletion.ts). */
  private readonly pendingDeletes = new PendingDeletes();
  private readonly groupSync: GroupSync;
  private closed = false;
  /** The first read that failed with an I/O error (see storageFailed). */
  private readFailure: Error | null = null;
  /** Bumped by every truncation, so a flush that started before one does not vouch for bytes written after. */
  private truncations = 0;
  /**
   * Producer snapshots written at a roll and not yet fsync'ed, by offset. A flush fsyncs those at or below its
   * target before it moves the recovery point (see roll); `sync` is the fsync running, shared by every flush
   * that needs it. An entry leaves once its fsync is done, unless a newer snapshot at the offset replaced it.
   */
  private readonly unsyncedSnapshots = new Map<number, { sync: Promise<void> | null }>();
  /**
   * The offset up to which a snapshot file holds the producer state (Kafka's lastSnapOffset): the snapshot
   * loaded or last written, or the log start offset when the state is the replay of the whole log. close writes
   * one only when the log end has moved past it, as Kafka's takeSnapshot does, so an empty or unchanged log
   * writes and fsyncs nothing at a clean shutdown.
   */
  private snapshotEndOffset = 0;
  /** The flush running (see flush), and the highest target asked of flushes waiting for it. */
  private flushRunning: Promise<void> | null = null;
  private flushWantedUpTo = 0;
  private recoveredBytesCutValue = 0;
  /** Appends whose bytes are on their way to the file (see append-queue.ts). */
  private readonly appendQueue: AppendQueue;
  /** Until when (monotonic ms) appends go through the queue after a slow inline write; 0 when they need not. */
  private inlineWritesPausedUntilMs = 0;
  /** Inline writes in a row slower than STORAGE_LIMITS.inlineWriteSlowMs. */
  private slowInlineWrites = 0;
  /**
   * Whether an append that finds nothing queued or being written is written at once, on the event loop (see
   * the file header; brook.log.append.inline.enable).
   */
  writeInlineWhenIdle: boolean;
  private writtenEndValue = 0;
  /** Set when a queued write failed: the file no longer matches the offsets, so appends are refused. */
  private writeFailure: Error | null = null;
  /** Called (not re-entrantly) after queued appends became visible: the owner moves its high watermark. */
  onWritten: (() => void) | null = null;

  /** See LogOptions.keys; null when the broker has no key provider. */
  readonly keys: SegmentKeys | null;
  /** Encrypts producer snapshots and the leader epoch checkpoint (see encryption/file-seal.ts). */
  private readonly seal: FileSeal | null;

  private constructor(options: LogOptions) {
    this.dir = options.dir;
    this.topicPartition = options.topicPartition;
    this.configValue = options.config;
    this.clock = options.clock;
    this.random = options.random ?? Math.random;
    this.onBackgroundError = options.onBackgroundError ?? (() => {});
    this.onTruncated = options.onTruncated ?? (() => {});
    this.tailCache = options.tailCache === undefined ? null : new TailCache(options.tailCache);
    this.writeInlineWhenIdle = options.writeInlineWhenIdle ?? true;
    this.keys = options.keys ?? null;
    // Snapshots and the epoch checkpoint are encrypted while the topic's new segments are.
    this.seal =
      this.keys === null
        ? null
        : new FileSeal(this.keys, () => this.configValue.encrypt, this.topicPartition);
    this.epochCache = LeaderEpochCache.load(
      join(this.dir, LEADER_EPOCH_CHECKPOINT_FILE),
      (err) => this.onBackgroundError(err),
      this.seal,
    );
    this.producerState = new ProducerStateManager();
    this.groupSync = new GroupSync(
      (err) => this.onBackgroundError(err),
      () => this.configValue.groupCommitMaxDelayMs,
    );
    this.appendQueue = new AppendQueue({
      pool: this.tailCache?.pool ?? null,
      commit: (a) => this.commitWritten(a),
      written: () => this.onWritten?.(),
      failed: (err, lost) => {
        if (this.closed) return;
        this.writeFailure = err;
        if (lost) this.onBackgroundError(err);
      },
      isClosed: () => this.closed,
    });
    this.reader = new LogReader(this, this.tailCache, (err) => this.readFailed(err));
    this.lastFlushMs = this.clock.monotonicMs();
  }

  /** Opens the log in `options.dir` (which must exist), recovering it when the shutdown was not clean. */
  static open(options: LogOptions): Log {
    const log = new Log(options);
    log.load(options);
    return log;
  }

  get config(): LogConfig {
    return this.configValue;
  }

  /** A topic config change: every segment sees it from its next append, roll check or lookup. */
  set config(config: LogConfig) {
    const optsIn = !this.configValue.encrypt && config.encrypt;
    this.configValue = config;
    for (const s of this.segments) s.config = config;
    if (optsIn && this.seal !== null && !this.closed) this.resealFiles();
  }

  /**
   * The topic opted in to encryption: its producer snapshots and epoch checkpoint, plaintext until now, are
   * rewritten sealed (off the event loop's fsyncs). Left unsealed, they would not be trusted while the topic
   * encrypts (encryption/file-seal.ts): a truncation would replay the producer state from further back, and a
   * restart rebuild the epochs from every batch header. A crash before they are durable leaves a damaged snapshot,
   * which is skipped as an untrusted one is.
   */
  private resealFiles(): void {
    for (const offset of listSnapshotOffsets(this.dir)) {
      // Without a seal only plaintext opens (a sealed or damaged snapshot answers null and stays as it is).
      const entries = readSnapshotFile(this.dir, offset);
      if (entries === null) continue;
      writeSnapshotFileUnsynced(this.dir, offset, entries, this.seal);
      syncSnapshotFile(this.dir, offset).catch((err: unknown) => this.onBackgroundError(err as Error));
    }
    this.epochCache.rewrite();
  }

  /** A file of this log found damaged at load (the leader-epoch-checkpoint): its directory must go offline. */
  get loadFailure(): Error | null {
    return this.epochCache.loadFailure;
  }

  /** Bytes that recovery cut from damaged or torn segments when this log was opened (for operators). */
  get recoveredBytesCut(): number {
    return this.recoveredBytesCutValue;
  }

  get logStartOffset(): Offset {
    return this.logStartOffsetValue as Offset;
  }

  /** One past the last offset appended, written or still queued: where the next append starts. */
  get logEndOffset(): Offset {
    return this.logEndOffsetValue as Offset;
  }

  /** One past the last offset whose bytes are in the file: what readers and the high watermark can reach. */
  get writtenEndOffset(): Offset {
    return this.writtenEndValue as Offset;
  }

  /** True once a queued write failed: the log refuses appends (Kafka would take the directory offline). */
  get writeFailed(): boolean {
    return this.writeFailure !== null;
  }

  /**
   * True once a write or a read of this log failed with an I/O error (Kafka's LogDirFailureChannel: any
   * IOException takes the directory offline). The owner was told through onBackgroundError.
   */
  get storageFailed(): boolean {
    return this.writeFailure !== null || this.readFailure !== null;
  }

  /** True while queued appends are not yet written. */
  get hasQueuedAppends(): boolean {
    return this.appendQueue.hasPending;
  }

  /** True while a flush (segment, index and producer snapshot fsyncs, then the recovery point) is running. */
  get hasFlushRunning(): boolean {
    return this.flushRunning !== null;
  }

  /**
   * The offsets of the producer snapshots written at rolls whose fsync has not completed: a power loss may leave
   * them missing, empty or torn (tests and the simulation, which model that loss).
   */
  unsyncedSnapshotOffsets(): number[] {
    return [...this.unsyncedSnapshots.keys()];
  }

  get highWatermark(): Offset {
    return this.highWatermarkValue as Offset;
  }

  get recoveryPoint(): Offset {
    return this.recoveryPointValue as Offset;
  }

  /**
   * Offsets below this are committed or aborted, and the high watermark has passed the markers that decided them:
   * min(first transaction still open or whose marker is not below the high watermark, high watermark).
   */
  get lastStableOffset(): Offset {
    const unstable = this.producerState.firstUnstableOffset(this.highWatermarkValue);
    return (
      unstable === null ? this.highWatermarkValue : Math.min(unstable, this.highWatermarkValue)
    ) as Offset;
  }

  get sizeInBytes(): number {
    let total = 0;
    for (const s of this.segments) total += s.size;
    return total;
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  get activeSegment(): LogSegment {
    return this.segments[this.segments.length - 1]!;
  }

  /** Base offsets of the segments, oldest first. */
  segmentBaseOffsets(): number[] {
    return this.segments.map((s) => s.baseOffset);
  }

  // ---------------------------------------------------------------- loading and recovery

  private load(options: LogOptions): void {
    this.epochCache.holdWrites();
    const nowMs = this.clock.nowMs();
    const needsRecovery = options.hadCleanShutdown !== true;
    const recoveryPoint = options.recoveryPoint ?? 0;
    const loaded = loadSegments(
      {
        dir: this.dir,
        config: this.config,
        keys: this.keys,
        nowMs,
        epochCache: this.epochCache,
        jitter: () => this.jitter(),
        onBackgroundError: this.onBackgroundError,
      },
      needsRecovery,
      recoveryPoint,
    );
    this.segments = loaded.segments;
    this.recoveredBytesCutValue = loaded.bytesCut;
    const recovered = loaded.recovered;
    const checkpointStart = options.logStartOffset ?? 0;
    if (this.segments.length === 0) {
      this.segments.push(
        LogSegment.create(
          this.dir,
          checkpointStart,
          this.config,
          nowMs,
          this.jitter(),
          this.newSegmentKeys(),
        ),
      );
    }
    this.logEndOffsetValue = this.activeSegment.nextOffset;
    this.logStartOffsetValue = Math.max(checkpointStart, this.segments[0]!.baseOffset);
    if (this.logStartOffsetValue > this.logEndOffsetValue) {
      this.truncateFullyAndStartAt(this.logStartOffset);
    }
    // Inactive segments get what a roll gives them: final time index entry, trimmed indexes, no descriptors.
    for (const s of this.segments) if (s !== this.activeSegment) s.onRoll();
    this.activeSegment.offsetIndex.file.preallocate();
    this.activeSegment.timeIndex.file.preallocate();
    const untrusted = this.epochCache.untrusted;
    if (untrusted !== null) {
      // Not sealed for this partition while it encrypts (encryption/file-seal.ts): the batches say the epochs.
      this.epochCache.rebuilt(epochsFromLog(this.segments));
      this.onBackgroundError(new Error(`${untrusted.message}; its leader epochs were rebuilt from the log`));
    }
    this.epochCache.truncateFromEnd(this.logEndOffsetValue);
    this.epochCache.truncateFromStart(this.logStartOffsetValue);
    this.rebuildProducerState(recovered);
    if (recovered.size > 0) {
      // Recovered bytes were read back, not necessarily from the disk itself: make them durable before the
      // recovery point moves past them.
      for (const s of recovered) s.flushAll();
      this.recoveryPointValue = this.logEndOffsetValue;
    } else {
      this.recoveryPointValue = Math.min(
        Math.max(recoveryPoint, this.logStartOffsetValue),
        this.logEndOffsetValue,
      );
      if (options.hadCleanShutdown === true) this.recoveryPointValue = this.logEndOffsetValue;
    }
    const hw = options.highWatermark ?? 0;
    this.highWatermarkValue = Math.min(Math.max(hw, this.logStartOffsetValue), this.logEndOffsetValue);
    this.producerState.onHighWatermarkUpdated(this.highWatermarkValue);
    this.writtenEndValue = this.logEndOffsetValue;
    // The recovery point may now be past epochs that recovery found: their checkpoint must not lag behind.
    this.epochCache.persistNow();
  }

  /** The keys a new segment is encrypted with, or null for a plaintext one (config.encrypt). */
  /** A new, empty segment based at `baseOffset`, with the log's config, segment.jitter.ms and keys. */
  private createSegment(baseOffset: number): LogSegment {
    return LogSegment.create(
      this.dir,
      baseOffset,
      this.config,
      this.clock.nowMs(),
      this.jitter(),
      this.newSegmentKeys(),
    );
  }

  private newSegmentKeys(): SegmentKeys | null {
    if (!this.config.encrypt) return null;
    // Never plaintext where encryption was asked for: the broker refuses such a config before it gets here.
    assert(this.keys !== null, `${this.dir}: encryption enabled without a key store`);
    return this.keys;
  }

  /**
   * A new segment's roll jitter, below min(segment.jitter.ms, segment.ms) as Kafka draws it: a jitter past
   * segment.ms would make the segment's time limit negative, and every append to it would roll.
   */
  private jitter(): number {
    const bound = Math.min(this.config.segmentJitterMs, this.config.segmentMs);
    return bound > 0 ? Math.floor(this.random() * bound) : 0;
  }

  /** See rebuildProducerState (log-loader.ts): also after a truncation, which moves the log end. */
  private rebuildProducerState(recovered: ReadonlySet<LogSegment>): void {
    const loaded = rebuildProducerState(
      {
        dir: this.dir,
        segments: this.segments,
        producerState: this.producerState,
        seal: this.seal,
        logStartOffset: this.logStartOffsetValue,
        logEndOffset: this.logEndOffsetValue,
      },
      recovered,
    );
    // A state without a snapshot is what replaying the log from its start gives: a restart rebuilds it.
    this.snapshotEndOffset = loaded ?? this.logStartOffsetValue;
  }

  // ---------------------------------------------------------------- append

  /** Checks a producer's batch before offsets are assigned; see ProducerStateManager.check. */
  checkProducerBatch(buf: Buffer, pos = 0): ProducerCheck {
    return this.producerState.check(buf, pos);
  }

  /** Checks all the batches of one request together; see ProducerStateManager.checkBatches. */
  checkProducerBatches(buf: Buffer, positions: readonly number[]): ProducerCheck {
    return this.producerState.checkBatches(buf, positions);
  }

  /**
   * Appends whole, validated batches whose offsets were assigned by the caller: the first base offset is at
   * least the log end offset and offsets increase. The bytes are written unchanged.
   */
  append(batches: Buffer): AppendInfo {
    this.appendQueue.drain();
    // Synchronous appends (followers) are not cached, and the cached run must reach the written end.
    this.tailCache?.clear();
    const scan = this.scanAppend(batches);
    let segment: LogSegment;
    try {
      this.maybeRoll(batches.length, scan.firstOffset, scan.lastOffset, scan.maxTimestampMs);
      segment = this.activeSegment;
      segment.append(batches, 0, batches.length);
    } catch (err) {
      // A follower's (or the mover's) write failed: the log refuses appends from now on and the owner hears of
      // it after this step (it takes the directory offline), as for a failed queued write.
      if (isIoError(err) && !this.closed && this.writeFailure === null) {
        this.writeFailure = err;
        queueMicrotask(() => this.onBackgroundError(err));
      }
      throw err;
    }
    this.afterAppend(batches, segment, scan);
    this.writtenEndValue = this.logEndOffsetValue;
    return { ...scan, durable: this.durableAfterGroupSync(segment) };
  }

  /**
   * `append` with the bytes written off the event loop: offsets, producer state and the log end offset move
   * now, the bytes become readable once written (see the file header), and `done` hears of it then (after a group
   * fdatasync that started once they were written, with ackAfterFsync; with the error, if the write failed or
   * the log closed first). When nothing is queued or being written the bytes may be written at once instead, as
   * for `append`: then `pending` is false and `done` is never called, unless the log still has to sync them.
   * The log keeps `batches` by reference, also after the write (the tail cache answers fetches from it): the
   * caller must never change or reuse that memory afterwards, except through the broker's FramePool: the log
   * holds a pool reference while a queued append waits or is being written (a drain may complete an append
   * whose write still runs in the thread pool), and the tail cache one per cached append.
   */
  appendQueued(batches: Buffer, done: AppendDone): QueuedAppendInfo {
    if (this.writeFailure !== null) throw this.writeFailure;
    const scan = this.scanAppend(batches);
    if (this.appendQueue.queuedBytes + batches.length > STORAGE_LIMITS.queuedAppendBytesMax) {
      this.appendQueue.drain();
    }
    this.maybeRoll(batches.length, scan.firstOffset, scan.lastOffset, scan.maxTimestampMs);
    const segment = this.activeSegment;
    const position = segment.reserve(batches.length, batchHeader.maxTimestamp(batches, 0));
    if (this.mayWriteInline(batches.length)) return this.appendInline(batches, segment, position, scan, done);
    this.appendQueue.enqueue({
      segment,
      buf: batches,
      position,
      lastOffset: scan.lastOffset,
      seq: 0,
      settled: false,
      done,
      awaitsSync: this.config.ackAfterFsync,
    });
    // After the append is queued, so that a flush it triggers waits for its bytes.
    this.afterAppend(batches, segment, scan);
    this.appendQueue.startWrite();
    return { ...scan, pending: true };
  }

  /** Whether an append of `bytes` may be written now, on the event loop (see the file header). */
  private mayWriteInline(bytes: number): boolean {
    return (
      this.writeInlineWhenIdle &&
      this.appendQueue.isIdle &&
      bytes <= STORAGE_LIMITS.inlineWriteBytesMax &&
      (this.inlineWritesPausedUntilMs === 0 || this.clock.monotonicMs() >= this.inlineWritesPausedUntilMs)
    );
  }

  /**
   * The rest of `appendQueued` when nothing is queued or being written: the bytes are written and committed
   * before returning, so no earlier append can be overtaken. A failed write fails the log as a failed queued
   * write does, and the append is answered with the error through `written`.
   */
  private appendInline(
    batches: Buffer,
    segment: LogSegment,
    position: number,
    scan: AppendScan,
    done: AppendDone,
  ): QueuedAppendInfo {
    const startedMs = this.clock.monotonicMs();
    try {
      segment.writeSyncAt(batches, 0, batches.length, position);
    } catch (err) {
      return this.inlineWriteFailed(err as Error, segment, scan, done);
    }
    // One slow write in a row is usually the thread losing its core on a busy machine, which the queue would
    // not avoid; several are the disk or the kernel's dirty-page throttling.
    if (this.clock.monotonicMs() - startedMs <= STORAGE_LIMITS.inlineWriteSlowMs) {
      this.slowInlineWrites = 0;
    } else if (++this.slowInlineWrites >= STORAGE_LIMITS.inlineWriteSlowRun) {
      this.slowInlineWrites = 0;
      this.inlineWritesPausedUntilMs = this.clock.monotonicMs() + STORAGE_LIMITS.inlineWritePauseMs;
    }
    segment.commitAppend(batches, 0, batches.length, position);
    this.tailCache?.add(batches, scan.firstOffset, scan.lastOffset);
    if (this.config.ackAfterFsync) this.groupSync.join(segment, waiterOf(done));
    this.afterAppend(batches, segment, scan);
    this.writtenEndValue = this.logEndOffsetValue;
    // The owner hears of it once the caller's state change is over, as after a queued write.
    queueMicrotask(this.notifyWritten);
    return { ...scan, pending: this.config.ackAfterFsync };
  }

  private inlineWriteFailed(
    err: Error,
    segment: LogSegment,
    scan: AppendScan,
    done: AppendDone,
  ): QueuedAppendInfo {
    if (!this.closed) this.writeFailure = err;
    segment.dropReservedAfterWriteFailure();
    if (!this.closed) this.onBackgroundError(err);
    // Never before the append call returns (see AppendDone).
    queueMicrotask(() => done(err));
    return { ...scan, pending: true };
  }

  private readonly notifyWritten = (): void => {
    if (!this.closed) this.onWritten?.();
  };

  /** Checks the framing and offsets of batches to append (see append-scan.ts). */
  private scanAppend(batches: Buffer): AppendScan {
    assert(!this.closed, 'append to a closed log');
    return scanAppend(batches, this.logEndOffsetValue, this.epochCache.latestEpoch);
  }

  /** The state an append changes at once, written or not: producer state, epoch cache, log end, flushing. */
  private afterAppend(batches: Buffer, segment: LogSegment, scan: AppendScan): void {
    if (scan.stateWalk) this.applyBatchState(batches, segment);
    else this.producerState.advanceMapEnd(scan.lastOffset + 1);
    this.logEndOffsetValue = scan.lastOffset + 1;
    this.unflushedRecords += scan.recordCount;
    if (this.unflushedRecords >= this.config.flushMessages) this.flushInBackground();
  }

  // ---------------------------------------------------------------- queued writes

  /** A queued append's bytes are in the file: they become visible to reads, the high watermark and followers. */
  private commitWritten(a: QueuedAppend): void {
    a.segment.commitAppend(a.buf, 0, a.buf.length, a.position);
    this.tailCache?.add(a.buf, batchHeader.baseOffset(a.buf, 0), a.lastOffset);
    this.writtenEndValue = a.lastOffset + 1;
    if (a.awaitsSync) this.groupSync.join(a.segment, waiterOf(a.done));
  }

  /**
   * Writes every queued append now, synchronously (a move between log directories copies up to the log end in
   * one step). Throws when a write fails, as the drain before a truncation does.
   */
  completeQueuedAppends(): void {
    this.appendQueue.drain();
  }

  /** Epoch cache and producer state follow the appended batches; aborted transactions get indexed. */
  private applyBatchState(batches: Buffer, segment: LogSegment): void {
    for (let pos = 0; pos < batches.length; pos += batchHeader.sizeInBytes(batches, pos)) {
      const epoch = batchHeader.partitionLeaderEpoch(batches, pos);
      if (epoch >= 0 && epoch > this.epochCache.latestEpoch) {
        // The batch header's epoch (checked >= 0 above) and base offset, as the log accepted them.
        this.epochCache.assign(epoch as LeaderEpoch, batchHeader.baseOffset(batches, pos) as Offset);
      }
      const completed = this.producerState.apply(batches, pos);
      if (completed?.isAborted === true) segment.txnIndex.append(completed);
    }
  }

  private maybeRoll(bytes: number, firstOffset: number, lastOffset: number, maxTimestampMs: number): void {
    const active = this.activeSegment;
    if (
      active.shouldRoll(bytes, lastOffset, maxTimestampMs, this.clock.nowMs()) ||
      firstOffset - active.baseOffset > 0x7fffffff ||
      !this.encryptedAsConfigured(active)
    ) {
      this.roll(firstOffset);
    }
  }

  /**
   * Whether a segment is encrypted as the topic's brook.encryption.enable now asks. A topic that opts in (or out)
   * rolls its active segment at the next append, so records appended after the change are stored as it asks,
   * not only those of later segments.
   */
  private encryptedAsConfigured(segment: LogSegment): boolean {
    return (segment.cipher !== null) === this.config.encrypt;
  }

  /**
   * Starts a new active segment at `baseOffset` (default: the log end offset). The old one gets its final
   * time index entry and trimmed indexes, a producer snapshot is written at the new base, and the old segment
   * is flushed in the background, after which the recovery point moves to the new base.
   */
  roll(baseOffset = this.logEndOffsetValue): LogSegment {
    assert(baseOffset >= this.logEndOffsetValue, 'roll below the log end offset');
    const old = this.activeSegment;
    if (old.reservedSize === 0) {
      // A sealed one (recovery cut bytes no tag covered) takes no more bytes, and one encrypted otherwise than the
      // topic now asks would store the next records so: either is replaced even at the same base.
      if (old.baseOffset === baseOffset && !old.isSealed && this.encryptedAsConfigured(old)) return old;
      // An empty active segment is replaced rather than kept: segments never overlap and never hold nothing.
      this.segments.pop();
      old.deleteFiles();
    } else {
      // Its final index entries wait for its queued bytes.
      this.appendQueue.whenWritten(() => {
        if (!old.isDeleted) old.onRoll();
      });
    }
    // The snapshot is written whole now (tmp, rename) but fsync'ed by the background flush below, before that
    // flush moves the recovery point to the new base, as Kafka defers it to the rolled segment's flush. An
    // fsync here would wait, on ext4, for a journal commit of every dirty byte of the disk (0.2-0.3 s with
    // gigabytes dirty), stalling the event loop. Crash safety stays as it was: recovery reads a snapshot only at
    // or below the first segment above the recovery point, and the recovery point cannot pass this offset before
    // the snapshot and its directory entry are durable. Until then a crash may leave it missing, empty or torn:
    // the CRC check makes readSnapshotFile return null and recovery takes an older snapshot and replays from it
    // (it would not reach this one anyway, as the rolled segment is then above the recovery point).
    const snapshotOffset = this.logEndOffsetValue;
    if (snapshotOffset > this.recoveryPointValue) {
      writeSnapshotFileUnsynced(this.dir, snapshotOffset, this.producerState.toSnapshot(), this.seal);
      this.unsyncedSnapshots.set(snapshotOffset, { sync: null });
    } else {
      // Nothing was appended since a flush reached the log end: the recovery point already covers this offset,
      // so the snapshot must be durable before roll returns, as it always was.
      writeSnapshotFile(this.dir, snapshotOffset, this.producerState.toSnapshot(), this.seal);
      this.unsyncedSnapshots.delete(snapshotOffset);
    }
    this.snapshotEndOffset = snapshotOffset;
    const segment = this.createSegment(baseOffset);
    this.segments.push(segment);
    if (old.reservedSize > 0) this.flushInBackground(baseOffset);
    return segment;
  }

  // ---------------------------------------------------------------- read (log-read.ts)

  /**
   * Reads whole batches from the one holding `startOffset`, up to `maxBytes` (the first batch is returned whole
   * even when larger, if `minOneBatch`), and never a batch reaching `maxOffset` (exclusive: the high watermark for
   * consumers, the last stable offset for read_committed, the log end offset for followers).
   * OFFSET_OUT_OF_RANGE when startOffset is below the log start or above the log end.
   */
  read(
    startOffset: Offset,
    maxBytes: number,
    maxOffset: Offset = this.logEndOffset,
    minOneBatch = true,
  ): ReadResult {
    return this.reader.read(startOffset, maxBytes, maxOffset, minOneBatch);
  }

  /**
   * A read that met bytes failing authentication: reported once per read, answered as a storage error. A read
   * that failed in a system call (EIO from a failing disk, a file gone under it) is a storage failure of the
   * log, reported to the owner (who takes the directory offline) after the current step, and answered the same.
   */
  private readFailed(err: unknown): ReadResult {
    if (isIoError(err)) {
      const first = this.readFailure === null;
      this.readFailure ??= err;
      if (first && !this.closed) queueMicrotask(() => this.onBackgroundError(err));
      return { errorCode: StorageErrorCode.KafkaStorageError, reason: err.message };
    }
    if (!(err instanceof SegmentIntegrityError)) throw err;
    this.onBackgroundError(new SegmentIntegrityError(this.dir, `read refused: ${err.message}`));
    return { errorCode: StorageErrorCode.KafkaStorageError, reason: err.message };
  }

  /** `read` with the file bytes read off the event loop (see LogSegment.readAsync); same answers. */
  readAsync(
    startOffset: Offset,
    maxBytes: number,
    maxOffset: Offset = this.logEndOffset,
    minOneBatch = true,
  ): Promise<ReadResult> {
    return this.reader.startRead(startOffset, maxBytes, maxOffset, minOneBatch, null).result;
  }

  /**
   * `readAsync`, also saying at once how many bytes the read takes (at most); with `inline`, a file read it allows
   * runs on the event loop: see LogReader.startRead.
   */
  startRead(
    startOffset: Offset,
    maxBytes: number,
    maxOffset: Offset = this.logEndOffset,
    minOneBatch = true,
    pins: Buffer[] | null = null,
    inline: InlineReadGate | null = null,
  ): { readonly bytes: number; readonly result: Promise<ReadResult> } {
    return this.reader.startRead(startOffset, maxBytes, maxOffset, minOneBatch, pins, inline);
  }

  /** Bytes a read would take now (at most), without reading them: a waiting fetch checks fetch.min.bytes. */
  readableBytes(
    startOffset: Offset,
    maxBytes: number,
    maxOffset: Offset = this.logEndOffset,
    minOneBatch = true,
  ): number {
    return this.reader.readableBytes(startOffset, maxBytes, maxOffset, minOneBatch);
  }

  /**
   * ListOffsets: the earliest or latest offset, the offset of the largest timestamp, or the first offset whose
   * batch reaches `timestampMs` (see offset-for-timestamp.ts).
   */
  offsetForTimestamp(timestampMs: number, locate?: RecordTimestampLocator): OffsetAndTimestamp | null {
    return offsetForTimestamp(
      {
        segments: this.segments,
        logStartOffset: this.logStartOffsetValue,
        logEndOffset: this.logEndOffsetValue,
        epochCache: this.epochCache,
      },
      timestampMs,
      locate,
    );
  }

  /** ListOffsets v0: segment offsets by file modification time (see legacyOffsetsBefore). */
  legacyOffsetsBefore(timestampMs: number, maxNumOffsets: number): number[] {
    return legacyOffsetsBefore(
      {
        segments: this.segments,
        logStartOffset: this.logStartOffsetValue,
        logEndOffset: this.logEndOffsetValue,
      },
      timestampMs,
      maxNumOffsets,
      this.clock.nowMs(),
    );
  }

  /** OffsetForLeaderEpoch for this log: see LeaderEpochCache.endOffsetFor. */
  endOffsetForEpoch(leaderEpoch: LeaderEpoch): EpochEndOffset {
    return this.epochCache.endOffsetFor(leaderEpoch, this.logEndOffset);
  }

  /** Aborted transactions overlapping [fetchOffset, upperBoundOffset), for read_committed fetches (log-read.ts). */
  collectAbortedTxns(fetchOffset: number, upperBoundOffset: number): AbortedTxn[] {
    return this.reader.collectAbortedTxns(fetchOffset, upperBoundOffset);
  }

  // ---------------------------------------------------------------- offsets moved by the caller

  /** The partition sets the high watermark; it stays within [log start, log end]. */
  setHighWatermark(offset: Offset): void {
    this.highWatermarkValue = Math.min(Math.max(offset, this.logStartOffsetValue), this.writtenEndValue);
    this.producerState.onHighWatermarkUpdated(this.highWatermarkValue);
  }

  /**
   * DeleteRecords: moves the log start offset to `offset` (never back, never above the high watermark) and
   * deletes segments that are now wholly below it. Returns the new low watermark or OFFSET_OUT_OF_RANGE.
   */
  deleteRecordsBefore(offset: number): { errorCode: StorageErrorCode; lowWatermark: number } {
    if (offset > this.highWatermarkValue || offset < 0) {
      return { errorCode: StorageErrorCode.OffsetOutOfRange, lowWatermark: this.logStartOffsetValue };
    }
    if (offset > this.logStartOffsetValue) {
      this.logStartOffsetValue = offset;
      this.epochCache.truncateFromStart(offset);
      this.tailCache?.dropBelow(offset);
      this.deleteOldSegments(this.clock.nowMs(), true);
    }
    return { errorCode: StorageErrorCode.None, lowWatermark: this.logStartOffsetValue };
  }

  /**
   * Follower truncation: removes every batch with an offset >= `offset` (a batch holding it goes whole), and
   * the log end becomes `offset`, as in Kafka, even when the offsets just below it hold no batch (compaction
   * emptied them). The leader epoch cache, producer state, high watermark and recovery point follow.
   * At or past the log end nothing is removed but epoch entries starting at the log end: this broker may have
   * recorded the start of its own epoch when it was elected and written nothing in it before another leader took
   * over (Kafka's UnifiedLog.truncateTo does the same); kept, that empty epoch would be the follower's last
   * fetched epoch, which the new leader cannot place.
   */
  truncateTo(offset: Offset): void {
    if (offset >= this.logEndOffsetValue) {
      this.epochCache.truncateFromEnd(this.logEndOffsetValue);
      return;
    }
    this.appendQueue.drain();
    if (offset <= this.logStartOffsetValue) {
      this.truncateFullyAndStartAt(Math.max(offset, 0) as Offset);
      return;
    }
    if (!truncateSegmentsTo(this.segments, offset, (base) => this.createSegment(base))) {
      this.truncateFullyAndStartAt(offset);
      return;
    }
    this.afterTruncation();
  }

  /** Empties the log and restarts it at `offset` (a follower too far behind, or an unclean leader change). */
  truncateFullyAndStartAt(offset: Offset): void {
    this.appendQueue.drain();
    this.segments = truncateAll(this.segments, offset, (base) => this.createSegment(base));
    this.logStartOffsetValue = offset;
    this.epochCache.clear();
    for (const o of listSnapshotOffsets(this.dir)) deleteSnapshotFile(this.dir, o);
    this.unsyncedSnapshots.clear();
    this.afterTruncation();
    this.producerState.clear(offset);
  }

  private afterTruncation(): void {
    this.truncations++;
    this.tailCache?.clear();
    this.logEndOffsetValue = this.activeSegment.nextOffset;
    this.writtenEndValue = this.logEndOffsetValue;
    this.highWatermarkValue = Math.min(this.highWatermarkValue, this.logEndOffsetValue);
    this.highWatermarkValue = Math.max(this.highWatermarkValue, this.logStartOffsetValue);
    this.recoveryPointValue = Math.min(this.recoveryPointValue, this.logEndOffsetValue);
    this.flushWantedUpTo = Math.min(this.flushWantedUpTo, this.logEndOffsetValue);
    this.epochCache.truncateFromEnd(this.logEndOffsetValue);
    this.rebuildProducerState(new Set());
    this.producerState.onHighWatermarkUpdated(this.highWatermarkValue);
    // rebuildProducerState deleted the snapshots above the new log end: nothing left to fsync for them.
    for (const offset of this.unsyncedSnapshots.keys()) {
      if (offset > this.logEndOffsetValue) this.unsyncedSnapshots.delete(offset);
    }
    // Last, so that the owner sees the lowered recovery point (it may checkpoint it at once).
    this.onTruncated(this.logEndOffsetValue);
  }

  /**
   * Whether `offset` lies in an older segment than `endOffset` (Kafka's LogOffsetMetadata.onOlderSegment, the
   * segment of an end offset being the last one starting at or below it): a fetch from there has the rest of its
   * segment and more to read, and Kafka's DelayedFetch answers it without counting bytes.
   */
  onOlderSegment(offset: Offset, endOffset: Offset): boolean {
    if (offset >= endOffset) return false;
    return floorSegmentIndex(this.segments, offset) < floorSegmentIndex(this.segments, endOffset);
  }

  // ---------------------------------------------------------------- compaction

  /** The segments, oldest first (the last is the active one), for the cleaner to read; never to change. */
  segmentList(): readonly LogSegment[] {
    return this.segments;
  }

  /**
   * Compaction's swap, in one synchronous step: replaces the run of inactive segments `old` by the segment the
   * cleaner wrote (see cleaner/swap-files.ts for the file steps: `toSwap` before the old files are renamed
   * `.deleted`, `install` after, returning the opened segment). Returns false, doing nothing, when the run is
   * no longer in the log as the cleaner found it (truncated, deleted by retention, log closed).
   */
  replaceSegments(
    old: readonly LogSegment[],
    sizes: readonly number[],
    steps: { toSwap(): void; install(): LogSegment },
  ): boolean {
    if (this.closed || old.length === 0) return false;
    const first = this.segments.indexOf(old[0]!);
    if (first < 0 || first + old.length >= this.segments.length) return false;
    for (let i = 0; i < old.length; i++) {
      const s = old[i]!;
      if (this.segments[first + i] !== s || s.isDeleted || s.size !== sizes[i]) return false;
      // Only written segments are cleanable (below the last stable offset); a queued append must never land in
      // a segment being replaced.
      if (s.reservedSize !== s.size) return false;
    }
    const nowMs = this.clock.nowMs();
    steps.toSwap();
    for (const segment of old) {
      this.groupSync.forget(segment);
      this.pendingDeletes.schedule(segment, nowMs + this.config.fileDeleteDelayMs);
    }
    this.segments.splice(first, old.length, steps.install());
    // Cached bytes of the replaced segments are no longer what the files hold.
    this.tailCache?.clear();
    return true;
  }

  /** Bumped by every truncation: the cleaner's checkpoint cannot be trusted past a truncation. */
  get truncationCount(): number {
    return this.truncations;
  }

  // ---------------------------------------------------------------- retention

  /**
   * Applies retention (see retention.ts): deletes the oldest segments that are past the log start offset,
   * retention.ms or retention.bytes, moving the log start offset to the first remaining segment (a new empty
   * active segment at the log end when the active one went too). With `startOffsetOnly` only the log start
   * offset rule applies (DeleteRecords). Returns how many segments went, and for which reasons.
   */
  deleteOldSegments(nowMs = this.clock.nowMs(), startOffsetOnly = false): RetentionDecision {
    const view = {
      segments: this.segments.map((s) => ({
        baseOffset: s.baseOffset,
        size: s.size,
        // Read only for the segments retention.ms looks at: without batch timestamps it costs an fstat.
        get largestTimestampMs() {
          return s.largestTimestampMs;
        },
      })),
      logStartOffset: this.logStartOffsetValue,
      logEndOffset: this.logEndOffsetValue,
      highWatermark: this.highWatermarkValue,
    };
    const config = startOffsetOnly ? { ...this.config, retentionMs: -1, retentionBytes: -1 } : this.config;
    const decision = retentionDecision(view, config, nowMs);
    if (decision.count > 0) this.deleteOldestSegments(decision.count, nowMs);
    return decision;
  }

  private deleteOldestSegments(count: number, nowMs: number): void {
    assert(count <= this.segments.length, 'retention deletes existing segments');
    // A rolled segment may still have queued bytes: they go to the file before it is renamed.
    this.appendQueue.drain();
    // The active segment goes too (retention.ts decided all of it is below the high watermark, so at the log
    // end): as Kafka's deleteSegments, a new empty active segment starts at the log end first, since a log
    // always has one, and the log start offset moves to it.
    if (count === this.segments.length) this.roll();
    const gone = this.segments.splice(0, count);
    const first = this.segments[0]!;
    this.logStartOffsetValue = Math.max(this.logStartOffsetValue, first.baseOffset);
    this.epochCache.truncateFromStart(this.logStartOffsetValue);
    this.tailCache?.dropBelow(this.logStartOffsetValue);
    for (const segment of gone) {
      this.groupSync.forget(segment);
      this.pendingDeletes.schedule(segment, nowMs + this.config.fileDeleteDelayMs);
    }
    deleteSnapshotsBelow(this.dir, first.baseOffset);
    this.runDueDeletes(nowMs);
  }

  /** Removes the files of deleted segments whose file.delete.delay.ms has passed. */
  runDueDeletes(nowMs = this.clock.nowMs()): void {
    this.pendingDeletes.runDue(nowMs);
  }

  /** Forgets idle producers (producer.id.expiration.ms). */
  removeExpiredProducers(nowMs: number, expirationMs: number): number {
    return this.producerState.removeExpired(nowMs, expirationMs);
  }

  // ---------------------------------------------------------------- flushing

  /** flush.ms: flushes when the oldest unflushed append is older than the setting. */
  flushIfDue(): void {
    if (this.unflushedRecords > 0 && this.clock.monotonicMs() - this.lastFlushMs >= this.config.flushMs) {
      this.flushInBackground();
    }
  }

  private flushInBackground(upTo = this.logEndOffsetValue): void {
    this.flush(upTo).catch((err: Error) => this.onBackgroundError(err));
  }

  /**
   * fsyncs every segment holding offsets in [recovery point, upTo) with its indexes, then moves the recovery
   * point to upTo. The fsyncs run off the event loop; the state changes are made after they finish.
   */
  async flush(upTo = this.logEndOffsetValue): Promise<void> {
    if (upTo <= this.recoveryPointValue) return;
    if (upTo >= this.logEndOffsetValue) this.unflushedRecords = 0;
    this.lastFlushMs = this.clock.monotonicMs();
    // One flush at a time, the next one covering every target asked for meanwhile. The recovery point moves
    // only when a flush ends, so flushes running side by side (a burst of rolls) would each fsync every segment
    // from it, the oldest once per flush, each index with a descriptor of its own.
    while (this.flushRunning !== null) {
      this.flushWantedUpTo = Math.max(this.flushWantedUpTo, upTo);
      await this.flushRunning.catch(ignore);
      if (this.closed || upTo <= this.recoveryPointValue) return;
    }
    upTo = Math.max(upTo, Math.min(this.flushWantedUpTo, this.logEndOffsetValue));
    const running = this.flushNow(upTo);
    this.flushRunning = running;
    try {
      await running;
    } finally {
      if (this.flushRunning === running) this.flushRunning = null;
    }
  }

  private async flushNow(upTo: number): Promise<void> {
    const truncationsBefore = this.truncations;
    // An fsync vouches only for bytes already written: wait for the queued appends below upTo.
    if (this.hasQueuedAppends) {
      await new Promise<void>((resolve) => this.appendQueue.whenWritten(resolve));
      if (this.closed || this.truncations !== truncationsBefore) return;
      upTo = Math.min(upTo, this.writtenEndValue);
    }
    const segments = this.segments.filter(
      (s) => s.baseOffset < upTo && s.nextOffset > this.recoveryPointValue,
    );
    // Recovery does not look below the recovery point, so the epochs of those offsets must be in the file, and
    // it trusts the snapshots up to it, so those written at rolls must be durable too. The snapshot's directory
    // fsync also makes the rolled-to segment's new files durable names (created after the snapshot).
    await Promise.all([
      ...segments.map((s) => fsyncSegment(s)),
      ...this.syncSnapshotsUpTo(upTo),
      this.epochCache.whenPersisted(),
    ]);
    if (this.closed || this.truncations !== truncationsBefore) return;
    this.recoveryPointValue = Math.max(this.recoveryPointValue, Math.min(upTo, this.logEndOffsetValue));
  }

  /** The fsyncs of the unsynced snapshots at or below `upTo`, started if not running yet. */
  private syncSnapshotsUpTo(upTo: number): Promise<void>[] {
    const syncs: Promise<void>[] = [];
    for (const [offset, entry] of this.unsyncedSnapshots) {
      if (offset > upTo) continue;
      entry.sync ??= syncSnapshotFile(this.dir, offset).then(
        () => {
          if (this.unsyncedSnapshots.get(offset) === entry) this.unsyncedSnapshots.delete(offset);
        },
        (err: Error) => {
          // The next flush tries again; this one fails (and the directory goes offline through its caller).
          entry.sync = null;
          throw err;
        },
      );
      syncs.push(entry.sync);
    }
    return syncs;
  }

  /**
   * With ackAfterFsync, the promise of the group fdatasync that will cover `segment`'s bytes, written by now
   * (nobody may be waiting for it: a rejection must not become an unhandled one); null without.
   */
  private durableAfterGroupSync(segment: LogSegment): Promise<void> | null {
    if (!this.config.ackAfterFsync) return null;
    const durable = new Promise<void>((resolve, reject) => this.groupSync.join(segment, { resolve, reject }));
    durable.catch(ignore);
    return durable;
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Closes the log cleanly: unflushed segments are fsync'ed (the recovery point becomes the log end), the
   * active segment's indexes are trimmed, a producer snapshot is written at the log end unless one already
   * holds the state there (Kafka's rule, see snapshotEndOffset), and pending deletions
   * run now. The caller writes the checkpoints and the clean-shutdown marker.
   */
  close(): void {
    if (this.closed) return;
    this.appendQueue.drain();
    this.closed = true;
    this.tailCache?.clear();
    this.epochCache.persistNow();
    // Snapshots of rolls whose flush has not run are made durable too: after a clean shutdown every file is.
    for (const offset of this.unsyncedSnapshots.keys()) syncSnapshotFileNow(this.dir, offset);
    this.unsyncedSnapshots.clear();
    // Kafka's rule (ProducerStateManager.takeSnapshot): no new snapshot unless the log end moved past the last
    // one. Below it, the snapshot at snapshotEndOffset (made durable just above if a roll wrote it) plus the
    // replay of nothing describe this state, or there is no producer state to lose (an empty log, or one whose
    // state is the replay of the log from its start). Producer expiry alone changes no offset and is not saved,
    // as in Kafka: expired producers come back from the snapshot and expire again.
    if (this.logEndOffsetValue > this.snapshotEndOffset) {
      writeSnapshotFile(this.dir, this.logEndOffsetValue, this.producerState.toSnapshot(), this.seal);
      this.snapshotEndOffset = this.logEndOffsetValue;
    }
    // As Kafka does on a clean shutdown, everything is made durable, so the checkpointed recovery point is the
    // log end offset.
    for (const s of this.segments) {
      if (s.nextOffset > this.recoveryPointValue && s.size > 0) s.flushAll();
    }
    this.recoveryPointValue = this.logEndOffsetValue;
    for (const s of this.segments) s.close();
    this.pendingDeletes.deleteAllNow();
    this.groupSync.rejectWaiting(new Error('log closed before the append was synced'));
  }

  /**
   * Releases file descriptors and writes nothing: the files stay as a crash would leave them (tests). Resolves
   * once a leader-epoch-checkpoint write already running has been dropped, so that a test restarting on the same
   * files, as after a kill -9, meets no late write of this log.
   */
  abandon(): Promise<void> {
    this.closed = true;
    this.tailCache?.clear();
    const epochFileClosed = this.epochCache.close();
    this.appendQueue.fail(new Error('log abandoned before the append was written'));
    for (const s of this.segments) s.abandon();
    this.pendingDeletes.abandonAll();
    this.groupSync.dropWaiting();
    return epochFileClosed;
  }

  /** Closes and removes every file of the log (the directory itself is the manager's). */
  deleteAllFiles(): void {
    this.closed = true;
    this.tailCache?.clear();
    void this.epochCache.close();
    this.appendQueue.fail(new Error('log deleted before the append was written'));
    for (const s of this.segments) s.deleteFiles();
    this.pendingDeletes.deleteAllNow();
    this.segments = [];
  }

  /** Group-commit fdatasyncs started so far (a metric; also proves appends share syncs). */
  get groupSyncCount(): number {
    return this.groupSync.syncCount;
  }

  /** True once close() ran; a closed log refuses appends. */
  get isClosed(): boolean {
    return this.closed;
  }
}

const ignore = (): void => {};

/** A queued append whose outcome is a promise (see appendQueuedAwaitable). */
export interface AwaitableAppend extends QueuedAppendInfo {
  /**
   * Resolves when the append's `done` would hear of success, rejects with the error that lost it; null when the
   * append was not pending (written inline, nothing to sync).
   */
  readonly acknowledged: Promise<void> | null;
}

/**
 * `log.appendQueued` for callers that await each append (tests, benchmarks). The broker's produce path passes a
 * callback of its own instead, so that it makes no promise per append.
 */
export function appendQueuedAwaitable(log: Log, batches: Buffer): AwaitableAppend {
  let settle: AppendDone | null = null;
  // `done` is never called before appendQueued returns: `settle` is set by then.
  const info = log.appendQueued(batches, (err) => settle!(err));
  if (!info.pending) return { ...info, acknowledged: null };
  const acknowledged = new Promise<void>((resolve, reject) => {
    settle = (err) => (err === null ? resolve() : reject(err));
  });
  // Nobody may be waiting: a rejection must not become an unhandled one.
  acknowledged.catch(ignore);
  return { ...info, acknowledged };
}

/** The group sync's waiter for a queued append's `done` (only logs that acknowledge after fsync make one). */
function waiterOf(done: AppendDone): DurableWaiter {
  return { resolve: () => done(null), reject: done };
}
/** An error of a failed system call (EIO, ENOSPC, EROFS, ENOENT...): Kafka's IOException. */
export function isIoError(err: unknown): err is Error {
  return (
    err instanceof Error &&
    typeof (err as { code?: unknown }).code === 'string' &&
    typeof (err as { syscall?: unknown }).syscall === 'string'
  );
}
