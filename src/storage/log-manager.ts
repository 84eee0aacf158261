// The log manager of one log directory: loads every partition log at start, creates and deletes them, keeps the
// directory's checkpoints, and runs the periodic work (retention, flush.ms, delayed file deletion, producer id
// expiry, checkpoints).
//
// Lifecycle: `LogManager.open` reads the clean-shutdown marker and removes it (so a crash from now on is seen
// as one), reads the checkpoints, opens every `<topic>-<partition>` directory (recovering after a crash), and
// writes fresh checkpoints. `startScheduler` runs `runPeriodicTasks` on a timer; tests and the simulation call
// it themselves with a manual clock. `shutdown` closes every log, writes the checkpoints and then the marker.
// Ownership: the manager owns the map of logs and the directory-level files; each Log owns its directory.

import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { assert } from '../common/assert.js';
import type { Clock } from '../common/clock.js';
import type { FramePool } from '../common/frame-pool.js';
import type { Logger } from '../common/logger.js';
import { AtomicFile, fsyncDirInBackground, StorageFormatError, writeFileAtomic } from './atomic-file.js';
import { encodeOffsetCheckpoint, type PartitionOffset, readOffsetCheckpoint } from './checkpoint-file.js';
import { LogCleaner } from './cleaner/log-cleaner.js';
import type { SegmentKeys } from './encryption/segment-cipher.js';
import {
  CLEAN_SHUTDOWN_FILE,
  deleteDirName,
  futureDirName,
  isDeleteDirName,
  LOG_START_OFFSET_CHECKPOINT_FILE,
  META_PROPERTIES_FILE,
  PARTITION_METADATA_FILE,
  parseFutureDirName,
  parsePartitionDirName,
  partitionDirName,
  RECOVERY_POINT_CHECKPOINT_FILE,
  REPLICATION_CHECKPOINT_FILE,
  type TopicPartition,
} from './file-names.js';
import { Log, type LogOptions } from './log.js';
import { DEFAULT_LOG_MANAGER_CONFIG, type LogConfig, type LogManagerConfig } from './log-config.js';
import { type MetaProperties, readMetaProperties, writeMetaProperties } from './meta-properties.js';
import {
  encodePartitionMetadata,
  readPartitionMetadata,
  writePartitionMetadata,
} from './partition-metadata.js';
import { TailCacheBudget } from './tail-cache.js';

export interface LogManagerOptions {
  readonly dir: string;
  readonly clock: Clock;
  /** The topic's LogConfig (broker defaults merged with topic overrides); called when a log is opened. */
  readonly configFor: (topic: string) => LogConfig;
  readonly managerConfig?: Partial<LogManagerConfig>;
  /** When given, meta.properties is written if missing and must match if present. */
  readonly meta?: MetaProperties;
  readonly random?: () => number;
  readonly onBackgroundError?: (err: Error) => void;
  /** Where the directory's warnings go (the log cleaner's, under `log-cleaner`); none: not written. */
  readonly logger?: Logger;
  /** The pool appended request frames may come from (the tail cache holds references to cached ones). */
  readonly framePool?: FramePool;
  /** The directory's key store (encryption at rest); null or absent when no key provider is configured. */
  readonly keys?: SegmentKeys | null;
  /** The tail-cache budget, shared by the managers of a broker's log directories; a new one when absent. */
  readonly tailCache?: TailCacheBudget;
}

/** A new log's partition.metadata on its way to the disk (see getOrCreateLog). */
interface MetadataWrite {
  readonly file: AtomicFile;
  readonly topicId: string;
}

interface PendingDirDelete {
  readonly path: string;
  readonly dueMs: number;
}

/** Scheduler resolution: periodic tasks are checked this often and each runs at its own interval. */
const SCHEDULER_TICK_MS = 1000;

/** Which of the three offset checkpoints a write covers. */
interface CheckpointSelection {
  readonly recovery: boolean;
  readonly start: boolean;
  readonly highWatermark: boolean;
}
const ALL_CHECKPOINTS: CheckpointSelection = { recovery: true, start: true, highWatermark: true };

function key(tp: TopicPartition): string {
  return partitionDirName(tp);
}

export class LogManager {
  readonly dir: string;
  readonly hadCleanShutdown: boolean;
  private readonly clock: Clock;
  private readonly configFor: (topic: string) => LogConfig;
  private readonly managerConfig: LogManagerConfig;
  /** producer.id.expiration.ms, dynamic in Kafka: set again by setProducerIdExpirationMs. */
  private producerIdExpirationMs: number;
  private readonly random: () => number;
  private readonly keys: SegmentKeys | null;
  private readonly onBackgroundError: (err: Error) => void;
  private readonly logs = new Map<string, Log>();
  /**
   * Future logs (AlterReplicaLogDirs): copies of partitions whose current log lives in another directory of the
   * broker, in `<topic>-<partition>.<uuid>-future`. Never in the same directory as the partition's current log, so
   * the checkpoints hold them under the partition's name. Not cleaned, not subject to retention until promoted.
   */
  private readonly futureLogs = new Map<string, Log>();
  /** The bound shared by every log's tail cache. */
  readonly tailCache: TailCacheBudget;
  private readonly pendingDirDeletes: PendingDirDelete[] = [];
  /**
   * partition.metadata files of new logs still being written off the event loop, by partition; an entry leaves
   * when its write is done. `whenCreatedDurable` waits for them (the LeaderAndIsr answer does).
   */
  private readonly metadataWrites = new Map<string, MetadataWrite>();
  /** Set when a log was created since the last `whenCreatedDurable`: the directory's entries changed. */
  private createdSinceDirSync = false;
  private timer: NodeJS.Timeout | null = null;
  /** Compacts logs whose cleanup.policy includes compact (see cleaner/log-cleaner.ts). */
  readonly cleaner: LogCleaner;
  private readonly lastRunMs = {
    retention: 0,
    flush: 0,
    recoveryCheckpoint: 0,
    startCheckpoint: 0,
    highWatermarkCheckpoint: 0,
    expiry: 0,
  };
  private stopped = false;
  private loadFailureValue: Error | null = null;
  /** The three offset checkpoints, rewritten off the event loop while running and synchronously at the ends. */
  private readonly checkpointFiles: readonly AtomicFile[];
  /**
   * By log directory, the highest recovery point that the recovery-point checkpoint on disk may hold for it: the
   * value of the last synchronous write, or the higher of it and a background write's value (that write may not
   * have landed yet). A truncation below it must rewrite the file (see onLogTruncated).
   */
  private checkpointedRecoveryPoints = new Map<string, number>();

  private constructor(options: LogManagerOptions, hadCleanShutdown: boolean) {
    this.dir = options.dir;
    this.clock = options.clock;
    this.configFor = options.configFor;
    this.managerConfig = { ...DEFAULT_LOG_MANAGER_CONFIG, ...options.managerConfig };
    this.producerIdExpirationMs = this.managerConfig.producerIdExpirationMs;
    this.random = options.random ?? Math.random;
    this.onBackgroundError = options.onBackgroundError ?? (() => {});
    this.keys = options.keys ?? null;
    this.hadCleanShutdown = hadCleanShutdown;
    this.tailCache =
      options.tailCache ?? new TailCacheBudget(this.managerConfig.tailCacheBytes, options.framePool ?? null);
    this.cleaner = new LogCleaner({
      dir: this.dir,
      clock: this.clock,
      config: this.managerConfig,
      logs: () => this.logs.values(),
      onError: this.onBackgroundError,
      logger: options.logger?.child('log-cleaner'),
    });
    this.checkpointFiles = [
      RECOVERY_POINT_CHECKPOINT_FILE,
      LOG_START_OFFSET_CHECKPOINT_FILE,
      REPLICATION_CHECKPOINT_FILE,
    ].map((name) => new AtomicFile(join(this.dir, name), (err) => this.onBackgroundError(err)));
    const now = this.clock.monotonicMs();
    for (const k of Object.keys(this.lastRunMs) as (keyof typeof this.lastRunMs)[]) this.lastRunMs[k] = now;
  }

  static open(options: LogManagerOptions): LogManager {
    mkdirSync(options.dir, { recursive: true });
    if (options.meta !== undefined) checkMetaProperties(options.dir, options.meta);
    const markerPath = join(options.dir, CLEAN_SHUTDOWN_FILE);
    const hadCleanShutdown = existsSync(markerPath);
    const manager = new LogManager(options, hadCleanShutdown);
    manager.loadLogs();
    // From here on a crash must be detected as one: the marker goes only after the logs are loaded.
    if (hadCleanShutdown) unlinkSync(markerPath);
    if (manager.loadFailure !== null) {
      // A damaged file: the directory is out of service from the start, and nothing is written to it, so the
      // file is left as found and the next start sees the same damage (Kafka's LogDirFailureChannel).
      void manager.abandon();
      return manager;
    }
    manager.writeCheckpoints();
    return manager;
  }

  /**
   * The first damaged file found while loading (an offset checkpoint of the directory, or a log's
   * leader-epoch-checkpoint), or null. Kafka's CheckpointFileWithFailureHandler turns a malformed checkpoint into a
   * storage error that takes the log directory offline: a log start offset it cannot read must not let records
   * that DeleteRecords or retention removed be served again, nor a lost high watermark or epoch be guessed. A
   * manager with a load failure is stopped (`abandon`); the owner treats its directory as offline.
   */
  get loadFailure(): Error | null {
    return this.loadFailureValue;
  }

  private noteLoadFailure(err: Error): void {
    this.loadFailureValue ??= err;
  }

  /** An offset checkpoint by partition; a damaged one is noted (see loadFailure) and read as empty. */
  private readCheckpointAtLoad(name: string): Map<string, number> {
    const path = join(this.dir, name);
    const out = new Map<string, number>();
    try {
      for (const e of readOffsetCheckpoint(path)) out.set(key(e), e.offset);
    } catch (err) {
      if (!(err instanceof StorageFormatError)) throw err;
      this.noteLoadFailure(err);
    }
    return out;
  }

  private loadLogs(): void {
    // As Kafka's LogManager.loadLogs, the logs are still loaded after a damaged offset checkpoint (with full
    // recovery, and log start offsets at their first segments); the directory is abandoned right after.
    const recoveryPoints = this.readCheckpointAtLoad(RECOVERY_POINT_CHECKPOINT_FILE);
    const startOffsets = this.readCheckpointAtLoad(LOG_START_OFFSET_CHECKPOINT_FILE);
    const highWatermarks = this.readCheckpointAtLoad(REPLICATION_CHECKPOINT_FILE);
    for (const name of readdirSync(this.dir)) {
      const path = join(this.dir, name);
      if (!statSync(path).isDirectory()) continue;
      if (isDeleteDirName(name)) {
        // A deletion the previous run did not finish.
        rmSync(path, { recursive: true, force: true });
        continue;
      }
      const future = parseFutureDirName(name);
      const tp = future ?? parsePartitionDirName(name);
      if (tp === null) continue;
      const k = key(tp);
      if (future !== null && (this.futureLogs.has(k) || this.logs.has(k))) {
        // A second copy of one partition here: a move that cannot be trusted; the current log stays.
        rmSync(path, { recursive: true, force: true });
        continue;
      }
      const log = this.openLog(tp, path, {
        recoveryPoint: recoveryPoints.get(k),
        logStartOffset: startOffsets.get(k),
        highWatermark: highWatermarks.get(k),
        hadCleanShutdown: this.hadCleanShutdown,
      });
      if (log.loadFailure !== null) this.noteLoadFailure(log.loadFailure);
      if (future !== null) {
        this.futureLogs.set(k, log);
        continue;
      }
      const stale = this.futureLogs.get(k);
      if (stale !== undefined) {
        this.futureLogs.delete(k);
        stale.close();
        rmSync(stale.dir, { recursive: true, force: true });
      }
      this.logs.set(k, log);
    }
  }

  getLog(tp: TopicPartition): Log | undefined {
    return this.logs.get(key(tp));
  }

  /** How many partition logs this directory holds (placement of new partitions, JBOD). */
  get logCount(): number {
    return this.logs.size;
  }

  allLogs(): IterableIterator<Log> {
    return this.logs.values();
  }

  /**
   * The partition's log, created empty (at offset 0) when absent. With a topic id, partition.metadata is written
   * on creation, and an existing directory holding another topic id is refused (an old topic of the same name).
   */
  getOrCreateLog(tp: TopicPartition, topicId?: string): Log {
    assert(!this.stopped, 'log manager is shut down');
    const existing = this.logs.get(key(tp));
    const dir = join(this.dir, partitionDirName(tp));
    if (existing !== undefined) {
      if (topicId !== undefined) {
        const recorded =
          this.metadataWrites.get(key(tp))?.topicId ??
          readPartitionMetadata(join(dir, PARTITION_METADATA_FILE));
        if (recorded === null) writePartitionMetadata(join(dir, PARTITION_METADATA_FILE), topicId);
        else if (recorded !== topicId)
          throw new StorageFormatError(dir, `holds topic id ${recorded}, not ${topicId}`);
      }
      return existing;
    }
    mkdirSync(dir, { recursive: true });
    const log = this.openNewLog(tp, dir);
    this.logs.set(key(tp), log);
    this.createdSinceDirSync = true;
    if (topicId !== undefined) this.writeNewPartitionMetadata(key(tp), dir, topicId);
    return log;
  }

  /**
   * A new log's partition.metadata, written as every checkpoint is (tmp, fsync, rename, fsync of the directory)
   * but off the event loop, many at once: a LeaderAndIsr creating thousands of partitions waited for two
   * synchronous fsyncs per partition, one after another (about 2 ms each here). A crash before the write ends
   * leaves no partition.metadata, or a whole one, never a torn one; a directory without it takes the topic id
   * again when the partition is next created on it (above). Whoever must know the files are durable waits
   * `whenCreatedDurable` (the LeaderAndIsr answer does, so a CreateTopics answered still means they are).
   */
  private writeNewPartitionMetadata(k: string, dir: string, topicId: string): void {
    const write: MetadataWrite = {
      file: new AtomicFile(join(dir, PARTITION_METADATA_FILE), (err) => this.onBackgroundError(err)),
      topicId,
    };
    // Started now, not on the next turn: every new partition's write is queued before the leader-epoch
    // checkpoints that making the partitions leaders asks for in the same turn, so the answer waits for these
    // only, not for those too.
    write.file.write(encodePartitionMetadata(topicId), true);
    this.metadataWrites.set(k, write);
    const done = (): void => {
      if (this.metadataWrites.get(k) === write) this.metadataWrites.delete(k);
    };
    // A failure also went to onBackgroundError, which takes the directory offline.
    write.file.whenWritten().then(done, done);
  }

  /** Stops the partition.metadata write of a log whose directory is going away or being renamed. */
  private dropMetadataWrite(k: string): void {
    void this.metadataWrites.get(k)?.file.close();
    this.metadataWrites.delete(k);
  }

  /**
   * Resolves once the partition.metadata of every log created so far is durable, and the directory entries
   * of the new partition directories with them (one fsync of this directory for all). Rejects with the first
   * write error (which onBackgroundError was also told of).
   */
  async whenCreatedDurable(): Promise<void> {
    const writes = [...this.metadataWrites.values()];
    const dirChanged = this.createdSinceDirSync;
    this.createdSinceDirSync = false;
    await Promise.all(writes.map((w) => w.file.whenWritten()));
    if (dirChanged && !this.stopped) await fsyncDirInBackground(this.dir);
  }

  getFutureLog(tp: TopicPartition): Log | undefined {
    return this.futureLogs.get(key(tp));
  }

  allFutureLogs(): IterableIterator<Log> {
    return this.futureLogs.values();
  }

  /**
   * An empty future log of a partition whose current log lives in another directory (AlterReplicaLogDirs), in a
   * fresh `-future` directory.
   */
  createFutureLog(tp: TopicPartition, topicId?: string): Log {
    assert(!this.stopped, 'log manager is shut down');
    const k = key(tp);
    assert(!this.logs.has(k) && !this.futureLogs.has(k), `${k}: a future log next to a log of the partition`);
    const dir = join(this.dir, futureDirName(tp));
    mkdirSync(dir, { recursive: true });
    if (topicId !== undefined && topicId !== '')
      writePartitionMetadata(join(dir, PARTITION_METADATA_FILE), topicId);
    const log = this.openNewLog(tp, dir);
    this.futureLogs.set(k, log);
    this.writeCheckpoints(true);
    return log;
  }

  private openNewLog(tp: TopicPartition, dir: string): Log {
    return this.openLog(tp, dir, { hadCleanShutdown: true });
  }

  /** Opens a partition's log in `dir` with this manager's wiring (config, clock, cleaner, tail cache, keys). */
  private openLog(
    tp: TopicPartition,
    dir: string,
    state: Pick<LogOptions, 'recoveryPoint' | 'logStartOffset' | 'highWatermark' | 'hadCleanShutdown'>,
  ): Log {
    return Log.open({
      ...state,
      dir,
      topicPartition: tp,
      config: this.configFor(tp.topic),
      clock: this.clock,
      random: this.random,
      onBackgroundError: this.onBackgroundError,
      onTruncated: (logEndOffset) => {
        this.cleaner.onTruncated(tp, logEndOffset);
        this.onLogTruncated(dir, logEndOffset);
      },
      tailCache: this.tailCache,
      writeInlineWhenIdle: this.managerConfig.appendInlineEnable,
      keys: this.keys,
    });
  }

  /** Drops a partition's future log (a move cancelled or superseded), as deleteLog drops a log. */
  deleteFutureLog(tp: TopicPartition): boolean {
    const log = this.futureLogs.get(key(tp));
    if (log === undefined) return false;
    this.futureLogs.delete(key(tp));
    this.retire(log);
    return true;
  }

  /**
   * The future log becomes the partition's log here: it is closed (everything written is made durable), its
   * directory renamed to `<topic>-<partition>` (one atomic rename: a crash leaves either name) and opened again.
   * The caller has removed the current log from its directory first (LogDirs.replaceCurrentWithFuture).
   */
  promoteFutureLog(tp: TopicPartition): Log {
    const k = key(tp);
    const future = this.futureLogs.get(k);
    assert(future !== undefined, `${k}: no future log to promote`);
    assert(!this.logs.has(k), `${k}: promoting a future log next to the current one`);
    future.close();
    const dir = join(this.dir, partitionDirName(tp));
    renameSync(future.dir, dir);
    this.futureLogs.delete(k);
    // Closed cleanly just now: everything is durable, the recovery point is the log end.
    const log = this.openLog(tp, dir, {
      recoveryPoint: future.recoveryPoint,
      logStartOffset: future.logStartOffset,
      highWatermark: future.highWatermark,
      hadCleanShutdown: true,
    });
    this.logs.set(k, log);
    this.writeCheckpoints(true);
    return log;
  }

  /**
   * Applies a topic's new LogConfig (a dynamic config change) to its open logs. Takes effect from the next
   * append, roll, flush or retention check; existing segments and indexes are not rewritten.
   */
  updateConfig(topic: string, config: LogConfig): void {
    for (const log of [...this.logs.values(), ...this.futureLogs.values()]) {
      if (log.topicPartition.topic === topic) log.config = config;
    }
  }

  /**
   * Deletes a partition's log: it is closed, its directory renamed `<topic>-<partition>.<uuid>-delete` at once
   * (so a restart never loads it), and removed after file.delete.delay.ms.
   */
  deleteLog(tp: TopicPartition): boolean {
    const log = this.logs.get(key(tp));
    if (log === undefined) return false;
    this.logs.delete(key(tp));
    this.dropMetadataWrite(key(tp));
    this.cleaner.forget(tp);
    this.retire(log);
    return true;
  }

  /** Closes a log no longer in the maps, renames its directory `-delete` at once and removes it later. */
  private retire(log: Log): void {
    log.close();
    const renamed = join(this.dir, deleteDirName(log.topicPartition));
    renameSync(log.dir, renamed);
    this.pendingDirDeletes.push({ path: renamed, dueMs: this.clock.nowMs() + log.config.fileDeleteDelayMs });
    this.runDueDirDeletes(this.clock.nowMs());
    this.writeCheckpoints(true);
  }

  private runDueDirDeletes(nowMs: number): void {
    for (let i = 0; i < this.pendingDirDeletes.length; ) {
      const pending = this.pendingDirDeletes[i]!;
      if (pending.dueMs <= nowMs) {
        rmSync(pending.path, { recursive: true, force: true });
        this.pendingDirDeletes.splice(i, 1);
      } else {
        i++;
      }
    }
  }

  /**
   * Writes the recovery-point, log-start-offset and replication (high watermark) checkpoints, or those of them
   * `files` names: synchronously, or with `background` off the event loop (each file's writes in order, the newest
   * content last).
   */
  writeCheckpoints(background = false, files: CheckpointSelection = ALL_CHECKPOINTS): void {
    // Only the logs written now: a deleted or moved log's entry goes.
    const logs = [...this.logs.values(), ...this.futureLogs.values()];
    if (files.recovery) {
      const onDisk = new Map<string, number>();
      for (const log of logs) {
        const before = this.checkpointedRecoveryPoints.get(log.dir) ?? 0;
        onDisk.set(log.dir, background ? Math.max(before, log.recoveryPoint) : log.recoveryPoint);
      }
      this.checkpointedRecoveryPoints = onDisk;
    }
    // Each file's entries are built only when that file is written (the high watermarks' every 5 s alone).
    const offsets: ((log: Log) => number)[] = [
      (l) => l.recoveryPoint,
      (l) => l.logStartOffset,
      (l) => l.highWatermark,
    ];
    const wanted = [files.recovery, files.start, files.highWatermark];
    this.checkpointFiles.forEach((file, i) => {
      if (!wanted[i]) return;
      const offsetOf = offsets[i]!;
      const content = encodeOffsetCheckpoint(
        logs.map((log): PartitionOffset => ({ ...log.topicPartition, offset: offsetOf(log) })),
      );
      if (background) file.write(content);
      else file.writeSync(content);
    });
  }

  /**
   * A log was truncated to `logEndOffset`. When the recovery-point checkpoint on disk may hold a higher recovery
   * point for it, the file is rewritten now, synchronously, as Kafka's LogManager.truncateTo and
   * truncateFullyAndStartAt checkpoint the recovery points right after a truncation: the offsets above the new log
   * end are written again (a follower fetches the new leader's records over them) and are not flushed, so a crash
   * before the next periodic checkpoint would otherwise skip their recovery, trusting bytes that never reached
   * the disk. Synchronous so that no append lands above the stale value first; it happens only when flushed
   * offsets are truncated (a follower that had flushed records its new leader lacks), not at every truncation.
   */
  private onLogTruncated(dir: string, logEndOffset: number): void {
    if (this.stopped) return;
    const onDisk = this.checkpointedRecoveryPoints.get(dir);
    if (onDisk !== undefined && onDisk > logEndOffset) this.writeCheckpoints();
  }

  /** Resolves once the checkpoints asked for so far are written (tests). */
  async whenCheckpointsWritten(): Promise<void> {
    await Promise.all(this.checkpointFiles.map((f) => f.whenWritten()));
  }

  /** A dynamic producer.id.expiration.ms: idle producers are forgotten by it from the next expiry check on. */
  setProducerIdExpirationMs(ms: number): void {
    this.producerIdExpirationMs = ms;
  }

  /** Runs whatever periodic work is due; the timer calls this, and so can tests with a manual clock. */
  runPeriodicTasks(): void {
    if (this.stopped) return;
    const mono = this.clock.monotonicMs();
    const now = this.clock.nowMs();
    const c = this.managerConfig;
    const due = (task: keyof typeof this.lastRunMs, intervalMs: number): boolean => {
      if (mono - this.lastRunMs[task] < intervalMs) return false;
      this.lastRunMs[task] = mono;
      return true;
    };
    if (due('retention', c.retentionCheckIntervalMs)) {
      for (const log of this.logs.values()) log.deleteOldSegments(now);
    }
    if (due('flush', Math.min(c.flushSchedulerIntervalMs, SCHEDULER_TICK_MS))) {
      for (const log of this.logs.values()) log.flushIfDue();
      for (const log of this.futureLogs.values()) log.flushIfDue();
    }
    if (due('expiry', c.producerIdExpirationCheckIntervalMs)) {
      for (const log of this.logs.values()) log.removeExpiredProducers(now, this.producerIdExpirationMs);
    }
    // Each checkpoint on its own interval, as Kafka's: high watermarks every 5 s by default (ReplicaManager), so
    // that a restart serves and lists offsets close to where the partition was; the other two every minute.
    const files: CheckpointSelection = {
      recovery: due('recoveryCheckpoint', c.flushOffsetCheckpointIntervalMs),
      start: due('startCheckpoint', c.flushStartOffsetCheckpointIntervalMs),
      highWatermark: due('highWatermarkCheckpoint', c.highWatermarkCheckpointIntervalMs),
    };
    if (files.recovery || files.start || files.highWatermark) this.writeCheckpoints(true, files);
    for (const log of this.logs.values()) log.runDueDeletes(now);
    for (const log of this.futureLogs.values()) log.runDueDeletes(now);
    this.runDueDirDeletes(now);
  }

  startScheduler(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      try {
        this.runPeriodicTasks();
      } catch (err) {
        this.onBackgroundError(err as Error);
      }
    }, SCHEDULER_TICK_MS);
    this.timer.unref();
    this.cleaner.start();
  }

  stopScheduler(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    // A cleaning in flight finds its log closed at its next swap and abandons its output.
    void this.cleaner.stop();
  }

  /**
   * The directory failed (an I/O error): nothing more is written to it, not even at shutdown, so the next start
   * recovers it (no clean-shutdown marker). The logs stay open but unused, as Kafka leaves an offline directory's
   * files alone until the broker restarts. A checkpoint or partition.metadata write already running is dropped
   * before its rename (Kafka checkpoints only the live directories); the promise resolves once those have ended.
   */
  abandon(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.stopScheduler();
    const closing = [...this.checkpointFiles, ...[...this.metadataWrites.values()].map((w) => w.file)].map(
      (f) => f.close(),
    );
    this.metadataWrites.clear();
    this.stopped = true;
    return Promise.all(closing).then(() => {});
  }

  /** Closes every log, writes the checkpoints and, last, the clean-shutdown marker. */
  shutdown(): void {
    if (this.stopped) return;
    this.stopScheduler();
    // A partition.metadata still on its way is written now: after a clean shutdown every file is durable.
    for (const write of this.metadataWrites.values())
      write.file.writeSync(encodePartitionMetadata(write.topicId));
    this.metadataWrites.clear();
    for (const log of this.logs.values()) log.close();
    for (const log of this.futureLogs.values()) log.close();
    this.writeCheckpoints();
    for (const pending of this.pendingDirDeletes) rmSync(pending.path, { recursive: true, force: true });
    this.pendingDirDeletes.length = 0;
    writeFileAtomic(join(this.dir, CLEAN_SHUTDOWN_FILE), '');
    this.stopped = true;
  }
}

function checkMetaProperties(dir: string, meta: MetaProperties): void {
  const path = join(dir, META_PROPERTIES_FILE);
  const existing = readMetaProperties(path);
  if (existing === null) {
    writeMetaProperties(path, meta);
    return;
  }
  if (existing.brokerId !== meta.brokerId || existing.clusterId !== meta.clusterId) {
    throw new StorageFormatError(
      path,
      `belongs to broker ${existing.brokerId} of cluster ${existing.clusterId}, not ${meta.brokerId} of ${meta.clusterId}`,
    );
  }
}
