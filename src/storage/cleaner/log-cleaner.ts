// The log cleaner of one log directory: Kafka's LogCleaner and LogCleanerManager in one small class.
//
// It keeps `cleaner-offset-checkpoint` (per partition, the offset up to which the log has been cleaned: the
// first dirty offset), picks the compacted log that needs cleaning most, cleans it (clean-log.ts) and moves
// its checkpoint. As Kafka's LogCleanerManager.grabFilthiestCompactedLog, a log is a candidate when its dirty share
// (dirty bytes over clean plus dirty bytes, counting only cleanable segments) exceeds min.cleanable.dirty.ratio, or
// when it has cleanable bytes and a dirty segment older than max.compaction.lag.ms; of the candidates, the one
// with the highest dirty share is cleaned, whatever made it a candidate. A passed delete horizon alone does not
// make a candidate (Kafka 3.9 has no such path): expired tombstones and markers go with the next pass the log
// gets for its dirty share or its lag.
//
// Lifecycle: owned by the LogManager. `start` runs passes on a timer (log.cleaner.backoff.ms between idle
// checks; a pass that cleaned something is followed at once by the next check); `stop` waits for the pass in
// flight. One cleaning runs at a time, as an async task on the event loop, with the whole dedupe buffer (Kafka
// splits it between log.cleaner.threads threads; here 0 threads disables the cleaner and any other count runs
// one), its reads and writes throttled to log.cleaner.io.max.bytes.per.second (throttler.ts). The log.cleaner.*
// settings Kafka makes dynamic change through `reconfigure`. Tests call `runOnce` under a ManualClock instead.
//
// Moves between log directories (AlterReplicaLogDirs): while a partition's future log is being filled, the
// cleaner of the directory holding its current log leaves it alone (`pause`, Kafka's abortAndPauseCleaning,
// which ReplicaManager calls when a future log is created or found at start): compaction would rewrite the
// segments the copy follows, and the work would be thrown away at the swap anyway. A pass already running on it
// finishes (it swaps its segments in one synchronous step; the copy reads whole batches on either side of it).
// At the swap the checkpoint goes to the destination directory's cleaner (`adoptCheckpoint`, Kafka's
// alterCheckpointDir), so what was cleaned stays clean there; a cancelled move `resume`s the partition.

import { join } from 'node:path';
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import { BATCH_HEADER_BYTES, batchHeader } from '../../protocol/records/batch-header.js';
import { StorageFormatError } from '../atomic-file.js';
import { readOffsetCheckpoint, writeOffsetCheckpoint } from '../checkpoint-file.js';
import { CLEANER_CHECKPOINT_FILE, partitionDirName, type TopicPartition } from '../file-names.js';
import type { Log } from '../log.js';
import { type LogManagerConfig, NEVER } from '../log-config.js';
import { type CleanResult, cleanableRange, cleanLog } from './clean-log.js';
import { Throttler } from './throttler.js';

export type LogCleanerConfig = Pick<
  LogManagerConfig,
  | 'cleanerEnable'
  | 'cleanerThreads'
  | 'cleanerDedupeBufferBytes'
  | 'cleanerIoBufferBytes'
  | 'cleanerIoBufferLoadFactor'
  | 'cleanerBackoffMs'
  | 'cleanerIoMaxBytesPerSecond'
>;

export interface LogCleanerOptions {
  readonly dir: string;
  readonly clock: Clock;
  readonly config: LogCleanerConfig;
  /** The directory's open logs. */
  readonly logs: () => Iterable<Log>;
  readonly onError?: (err: Error) => void;
  /** Where the cleaner's warnings go (Kafka's kafka.log.LogCleaner logger); none: not written. */
  readonly logger?: Logger;
}

/** Why a log was picked, and how dirty it was (for tests and operators). */
export interface CleaningCandidate {
  readonly log: Log;
  readonly firstDirtyOffset: number;
  readonly dirtyRatio: number;
  readonly reason: 'dirty-ratio' | 'max-compaction-lag';
}

export interface CleanerPass extends CleanResult {
  readonly topicPartition: TopicPartition;
  readonly reason: CleaningCandidate['reason'];
}

export class LogCleaner {
  private readonly checkpoints = new Map<string, number>();
  private readonly inProgress = new Set<string>();
  /** Partitions being moved to another directory: not picked until resumed (see the file header). */
  private readonly paused = new Set<string>();
  /** Logs whose cleaning failed (damaged batch, map too small): skipped until restart, as Kafka does. */
  private readonly uncleanable = new Set<string>();
  private readonly passes = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | null = null;
  /** Between start and stop (with log.cleaner.enable): passes are scheduled while log.cleaner.threads > 0. */
  private started = false;
  private stopped = false;
  private readonly onError: (err: Error) => void;
  private passCount = 0;
  private configValue: LogCleanerConfig;
  /** log.cleaner.io.max.bytes.per.second, shared by every pass; a new rate applies from its next check. */
  readonly throttler: Throttler;

  constructor(private readonly options: LogCleanerOptions) {
    this.configValue = { ...options.config };
    this.throttler = new Throttler({ bytesPerSecond: options.config.cleanerIoMaxBytesPerSecond });
    this.onError = options.onError ?? (() => {});
    try {
      for (const e of readOffsetCheckpoint(this.checkpointPath))
        this.checkpoints.set(partitionDirName(e), e.offset);
    } catch (err) {
      // A damaged checkpoint costs a full cleaning, not data.
      if (!(err instanceof StorageFormatError)) throw err;
    }
  }

  private get checkpointPath(): string {
    return join(this.options.dir, CLEANER_CHECKPOINT_FILE);
  }

  /** Passes completed so far. */
  get completedPasses(): number {
    return this.passCount;
  }

  /** Where the dirty section of `log` starts: the checkpoint, unless the log moved past it. */
  firstDirtyOffset(log: Log): number {
    const checkpoint = this.checkpoints.get(partitionDirName(log.topicPartition));
    if (checkpoint === undefined || checkpoint < log.logStartOffset || checkpoint > log.logEndOffset) {
      return log.logStartOffset;
    }
    return checkpoint;
  }

  /**
   * A truncation (follower, unclean leader change) may replace cleaned offsets with new data: the checkpoint
   * comes down to the new log end at once, and is written, as Kafka's maybeTruncateCheckpoint does.
   */
  onTruncated(tp: TopicPartition, logEndOffset: number): void {
    const key = partitionDirName(tp);
    const checkpoint = this.checkpoints.get(key);
    if (checkpoint === undefined || checkpoint <= logEndOffset) return;
    this.checkpoints.set(key, logEndOffset);
    this.writeCheckpoint();
  }

  /**
   * A checkpoint the log no longer holds (below its start after records were deleted, above its end after a damaged
   * tail was cut) goes back to the log start, in memory and in the file at once, as Kafka's
   * grabFilthiestCompactedLog writes cleanableOffsets' forceUpdateCheckpoint. Answers whether it was reset.
   *
   * The reset is logged as Kafka's cleanableOffsets logs it: a warning, except below the log start of a log that is
   * compacted and deleted too, where retention moving the start past the checkpoint is the normal course.
   */
  private resetCheckpointOutside(log: Log): boolean {
    const key = partitionDirName(log.topicPartition);
    const checkpoint = this.checkpoints.get(key);
    if (checkpoint === undefined) return false;
    if (checkpoint >= log.logStartOffset && checkpoint <= log.logEndOffset) return false;
    const fields = {
      partition: key,
      checkpointOffset: checkpoint,
      logStartOffset: log.logStartOffset,
      logEndOffset: log.logEndOffset,
    };
    if (checkpoint > log.logEndOffset) {
      this.options.logger?.warn(
        `Resetting first dirty offset of ${key} to log start offset ${log.logStartOffset}: the checkpointed offset ` +
          `${checkpoint} is past the log end offset ${log.logEndOffset}`,
        fields,
      );
    } else if (!log.config.cleanupPolicy.includes('delete')) {
      this.options.logger?.warn(
        `Resetting first dirty offset of ${key} to log start offset ${log.logStartOffset}: the checkpointed offset ` +
          `${checkpoint} is below it`,
        fields,
      );
    }
    this.checkpoints.set(key, log.logStartOffset);
    return true;
  }

  /**
   * The log that needs cleaning most, or null: of the logs past min.cleanable.dirty.ratio or past
   * max.compaction.lag.ms with cleanable bytes, the one with the highest dirty share (Kafka's
   * grabFilthiestCompactedLog takes `cleanableLogs.max`, ordered by cleanableRatio only; on a tie the first found).
   */
  pickLog(): CleaningCandidate | null {
    const nowMs = this.options.clock.nowMs();
    let best: CleaningCandidate | null = null;
    let checkpointsReset = false;
    for (const log of this.options.logs()) {
      const key = partitionDirName(log.topicPartition);
      if (log.isClosed || !log.config.cleanupPolicy.includes('compact')) continue;
      if (this.inProgress.has(key) || this.uncleanable.has(key) || this.paused.has(key)) continue;
      if (this.resetCheckpointOutside(log)) checkpointsReset = true;
      const firstDirtyOffset = this.firstDirtyOffset(log);
      const range = cleanableRange(log, firstDirtyOffset, nowMs);
      const total = range.cleanBytes + range.dirtyBytes;
      const dirtyRatio = total === 0 ? 0 : range.dirtyBytes / total;
      let reason: CleaningCandidate['reason'] | null = null;
      if (range.dirtyBytes > 0 && this.pastMaxCompactionLag(log, range.firstDirtyOffset, nowMs)) {
        reason = 'max-compaction-lag';
      } else if (range.dirtyBytes > 0 && dirtyRatio > log.config.minCleanableDirtyRatio) {
        // Strictly greater, as Kafka's LogCleanerManager: min.cleanable.dirty.ratio=1.0 never cleans by ratio.
        reason = 'dirty-ratio';
      }
      if (reason === null) continue;
      if (best === null || dirtyRatio > best.dirtyRatio) {
        best = { log, firstDirtyOffset: range.firstDirtyOffset, dirtyRatio, reason };
      }
    }
    if (checkpointsReset) this.writeCheckpoint();
    return best;
  }

  /**
   * max.compaction.lag.ms: whether the first batch of a dirty inactive segment is older than the lag. As Kafka's
   * LogCleanerManager.maxCompactionDelay, every such segment counts, also those from the first uncleanable offset on
   * (after an open transaction or within min.compaction.lag.ms): the pass then cleans what it can below the cut.
   * Timestamps of 0 or less (none) do not count. Reads one batch header per dirty segment, only for logs that set
   * the lag.
   */
  private pastMaxCompactionLag(log: Log, firstDirty: number, nowMs: number): boolean {
    if (log.config.maxCompactionLagMs >= NEVER) return false;
    const segments = log.segmentList();
    for (const segment of segments.slice(0, segments.length - 1)) {
      if (segment.nextOffset <= firstDirty || segment.size < BATCH_HEADER_BYTES) continue;
      const first = batchHeader.maxTimestamp(segment.readBytes(0, BATCH_HEADER_BYTES), 0);
      if (first > 0 && first < nowMs - log.config.maxCompactionLagMs) return true;
    }
    return false;
  }

  /** Cleans the log that needs it most, if any; resolves with what the pass did (null: nothing). */
  async runOnce(): Promise<CleanerPass | null> {
    const candidate = this.pickLog();
    if (candidate === null) return null;
    const { log } = candidate;
    const key = partitionDirName(log.topicPartition);
    this.inProgress.add(key);
    const truncationsBefore = log.truncationCount;
    const run = cleanLog(log, {
      firstDirtyOffset: candidate.firstDirtyOffset,
      dedupeBufferBytes: this.configValue.cleanerDedupeBufferBytes,
      loadFactor: this.configValue.cleanerIoBufferLoadFactor,
      // Half for reading, half for writing, as Kafka splits it.
      ioBufferBytes: Math.max(64 * 1024, Math.floor(this.configValue.cleanerIoBufferBytes / 2)),
      nowMs: this.options.clock.nowMs(),
      throttler: this.throttler,
    });
    this.passes.add(run);
    try {
      const result = await run.catch((err: unknown) => {
        this.uncleanable.add(key);
        throw err;
      });
      if (result === null || log.isClosed || log.truncationCount !== truncationsBefore) return null;
      // Never back: Kafka lowers a checkpoint only on truncation (onTruncated). A log is picked only with cleanable
      // bytes past its checkpoint, so a pass ends above it; the max keeps that true whatever a pass returns.
      this.checkpoints.set(key, Math.max(this.firstDirtyOffset(log), result.endOffset));
      this.writeCheckpoint();
      this.passCount++;
      return { ...result, topicPartition: log.topicPartition, reason: candidate.reason };
    } finally {
      this.passes.delete(run);
      this.inProgress.delete(key);
    }
  }

  /** Writes cleaner-offset-checkpoint (deleted logs left out: `forget` drops them). */
  writeCheckpoint(): void {
    const entries = [...this.checkpoints].map(([key, offset]) => {
      const dash = key.lastIndexOf('-');
      return { topic: key.slice(0, dash), partition: Number(key.slice(dash + 1)), offset };
    });
    writeOffsetCheckpoint(this.checkpointPath, entries);
  }

  /** Partitions whose cleaning failed and that are no longer picked (Kafka's uncleanable partitions). */
  uncleanablePartitions(): string[] {
    return [...this.uncleanable];
  }

  /** The partition is not cleaned until `resume` (its replica is moving to another directory). */
  pause(tp: TopicPartition): void {
    this.paused.add(partitionDirName(tp));
  }

  resume(tp: TopicPartition): void {
    this.paused.delete(partitionDirName(tp));
  }

  isPaused(tp: TopicPartition): boolean {
    return this.paused.has(partitionDirName(tp));
  }

  /** Where cleaning of the partition got to (cleaner-offset-checkpoint), if it was ever cleaned here. */
  checkpointOf(tp: TopicPartition): number | undefined {
    return this.checkpoints.get(partitionDirName(tp));
  }

  /** The partition's log arrived from another directory whose cleaner had cleaned it up to `offset`. */
  adoptCheckpoint(tp: TopicPartition, offset: number): void {
    this.checkpoints.set(partitionDirName(tp), offset);
    this.writeCheckpoint();
  }

  /** A deleted log's state is dropped. */
  forget(tp: TopicPartition): void {
    const key = partitionDirName(tp);
    this.uncleanable.delete(key);
    this.paused.delete(key);
    // Written at once: a topic created again under the same name must not inherit the checkpoint.
    if (this.checkpoints.delete(key)) this.writeCheckpoint();
  }

  get config(): LogCleanerConfig {
    return this.configValue;
  }

  /**
   * A dynamic broker config change (Kafka's LogCleaner.reconfigure): the throttle rate applies from its next
   * check, even inside the pass running; the buffers and load factor from the next pass; the backoff from the
   * next wait (an idle wait in progress restarts with it); log.cleaner.threads 0 stops scheduling passes (the
   * one running finishes) and a count above 0 resumes them. log.cleaner.enable is read-only, as in Kafka.
   */
  reconfigure(config: LogCleanerConfig): void {
    const before = this.configValue;
    this.configValue = { ...config, cleanerEnable: before.cleanerEnable };
    this.throttler.bytesPerSecond = config.cleanerIoMaxBytesPerSecond;
    if (!this.started) return;
    if (config.cleanerThreads <= 0) {
      this.clearTimer();
    } else if (before.cleanerThreads <= 0 || before.cleanerBackoffMs !== config.cleanerBackoffMs) {
      // Restart an idle wait (none while a pass runs: it schedules the next check when it ends).
      if (this.timer !== null || this.passes.size === 0) {
        this.clearTimer();
        this.schedule(config.cleanerBackoffMs);
      }
    }
  }

  start(): void {
    if (this.started || !this.configValue.cleanerEnable) return;
    this.started = true;
    this.stopped = false;
    if (this.configValue.cleanerThreads <= 0) return;
    this.schedule(this.configValue.cleanerBackoffMs);
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.configValue.cleanerThreads <= 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.runOnce().then(
        (pass) => this.schedule(pass === null ? this.configValue.cleanerBackoffMs : 0),
        (err: Error) => {
          this.onError(err);
          this.schedule(this.configValue.cleanerBackoffMs);
        },
      );
    }, delayMs);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Stops the timer and waits for the pass in flight (which abandons its swap once its log is closed). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.started = false;
    this.clearTimer();
    await Promise.allSettled([...this.passes]);
  }
}
