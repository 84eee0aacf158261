// The log directories of one broker (JBOD, Kafka's `log.dirs`): one LogManager per directory, one place that
// says where a partition's log lives, where a new one goes, and which directories have failed.
//
// Placement: a new partition goes to the online directory holding the fewest partition logs, as Kafka's
// LogManager.nextLogDirs does; among directories with equally few, the one with the most usable bytes wins
// (the issue asked for placement by free space: counting first keeps a nearly empty large disk from taking every
// new partition, which is the balance Kafka operators expect, and free space still breaks ties).
//
// Failure: `markOffline(dir)` takes one directory out of service (Kafka's LogDirFailureChannel and
// LogManager.handleLogDirFailure): its logs are no longer found, nothing more is written to it (not even the
// clean-shutdown marker, so the next start recovers it), and new partitions go elsewhere. The broker decides what
// an offline directory means for its partitions and for the controller (see src/broker/broker.ts).
//
// Moves (AlterReplicaLogDirs): a partition being moved has a future log in the destination directory
// (`<topic>-<partition>.<uuid>-future`), filled by the broker's mover (src/broker/replica/log-dir-mover.ts).
// `replaceCurrentWithFuture` swaps it in with two renames: the current directory to `-delete` first, then the
// future one to `<topic>-<partition>`. A crash between them leaves only the future log of the partition, which
// `open` promotes (it was complete: the swap starts once it holds everything the current log held); a crash
// before the first leaves both, and the move resumes from what the future log holds.
//
// Ownership: the broker owns the LogDirs; each LogManager owns its directory's files. Everything here is
// synchronous and runs on the event loop.

import { readdirSync, statfsSync } from 'node:fs';
import { resolve } from 'node:path';
import { assert } from '../common/assert.js';
import type { FramePool } from '../common/frame-pool.js';
import type { LogCleanerConfig } from './cleaner/log-cleaner.js';
import type { SegmentKeys } from './encryption/segment-cipher.js';
import {
  isDeleteDirName,
  parseFutureDirName,
  parsePartitionDirName,
  type TopicPartition,
} from './file-names.js';
import { InlineReads } from './inline-reads.js';
import type { Log } from './log.js';
import { DEFAULT_LOG_MANAGER_CONFIG, type LogConfig } from './log-config.js';
import { LogManager, type LogManagerOptions } from './log-manager.js';
import { TailCacheBudget } from './tail-cache.js';

export interface LogDirsOptions
  extends Omit<LogManagerOptions, 'dir' | 'onBackgroundError' | 'tailCache' | 'keys'> {
  readonly dirs: readonly string[];
  /** Each directory's key store (encryption at rest: `encryption.keys` lives in each directory). */
  readonly keysFor?: (dir: string) => SegmentKeys | null;
  /** A background I/O error in `dir` (the broker checks whether the directory has failed). */
  readonly onBackgroundError?: (dir: string, err: Error) => void;
  /** Usable bytes of a directory (placement tie-break); statfs by default. */
  readonly usableBytes?: (dir: string) => number;
  readonly framePool?: FramePool;
}

/**
 * The topics with a partition log (current or future) in any of `dirs`, from the directory names alone: the broker
 * reads their config overrides before LogDirs.open loads the logs, so each is opened with them. A directory that
 * cannot be listed (not created yet, or failed: LogDirs.open reports it) names none.
 */
export function topicsOnDisk(dirs: readonly string[]): Set<string> {
  const topics = new Set<string>();
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (isDeleteDirName(name)) continue;
      const tp = parseFutureDirName(name) ?? parsePartitionDirName(name);
      if (tp !== null) topics.add(tp.topic);
    }
  }
  return topics;
}

/** A partition asked for lives in (or would go to) a directory that is offline: Kafka's KAFKA_STORAGE_ERROR. */
export class LogDirOfflineError extends Error {
  constructor(readonly dir: string) {
    super(`log directory ${dir} is offline`);
    this.name = 'LogDirOfflineError';
  }
}

export class LogDirs {
  /** Every configured directory's manager, in `log.dirs` order. */
  readonly managers: readonly LogManager[];
  private readonly offline = new Set<string>();
  /**
   * Where a partition not hosted yet must be created (AlterReplicaLogDirs before the replica exists, as Kafka's
   * LogManager.maybeUpdatePreferredLogDir): used and forgotten when its log is created.
   */
  private readonly preferredDirs = new Map<string, string>();
  private readonly usableBytes: (dir: string) => number;
  /** Whether a fetch's file read may run on the event loop (one for the broker, shared by every directory). */
  readonly inlineReads: InlineReads;

  private constructor(
    managers: LogManager[],
    usableBytes: (dir: string) => number,
    inlineReads: InlineReads,
  ) {
    this.managers = managers;
    this.usableBytes = usableBytes;
    this.inlineReads = inlineReads;
  }

  /**
   * Opens (and recovers) every directory. A partition found in two directories stops the start, as Kafka refuses
   * duplicate log directories: which copy is right cannot be told.
   */
  static open(options: LogDirsOptions): LogDirs {
    const { dirs, onBackgroundError, usableBytes, keysFor, ...common } = options;
    if (dirs.length === 0) throw new Error('log.dirs names no directory');
    const config = { ...DEFAULT_LOG_MANAGER_CONFIG, ...common.managerConfig };
    const tailCache = new TailCacheBudget(config.tailCacheBytes, options.framePool ?? null);
    const managers: LogManager[] = [];
    const seen = new Map<string, string>();
    for (const dir of dirs) {
      const manager = LogManager.open({
        ...common,
        dir,
        tailCache,
        keys: keysFor?.(dir) ?? null,
        onBackgroundError: (err) => onBackgroundError?.(dir, err),
      });
      for (const log of manager.allLogs()) {
        const name = `${log.topicPartition.topic}-${log.topicPartition.partition}`;
        const other = seen.get(name);
        if (other !== undefined) {
          for (const m of [...managers, manager]) m.shutdown();
          throw new Error(`duplicate log directories for ${name} are found in both ${other} and ${dir}`);
        }
        seen.set(name, dir);
      }
      managers.push(manager);
    }
    // Future logs: one whose partition has no current log any more was being swapped in when the broker stopped.
    const futures = new Set<string>();
    for (const manager of managers) {
      // A directory that failed at load is left as found: its future logs are neither dropped nor promoted.
      if (manager.loadFailure !== null) continue;
      for (const future of [...manager.allFutureLogs()]) {
        const tp = future.topicPartition;
        const name = `${tp.topic}-${tp.partition}`;
        if (futures.has(name)) {
          manager.deleteFutureLog(tp);
          continue;
        }
        futures.add(name);
        if (!seen.has(name)) manager.promoteFutureLog(tp);
        // A move in progress: the current log's directory does not compact it meanwhile (log-cleaner.ts).
        else managers.find((m) => m.getLog(tp) !== undefined)?.cleaner.pause(tp);
      }
    }
    const logDirs = new LogDirs(
      managers,
      usableBytes ?? statfsUsableBytes,
      new InlineReads(config.readInlineMaxBytes),
    );
    // A damaged checkpoint (LogManager.loadFailure): offline from the start, as Kafka's failed checkpoint read.
    for (const manager of managers) if (manager.loadFailure !== null) logDirs.markOffline(manager.dir);
    return logDirs;
  }

  /** The directories that failed at load, with the damage found (the caller logs it). */
  get loadFailures(): { readonly dir: string; readonly error: Error }[] {
    return this.managers.flatMap((m) =>
      m.loadFailure === null ? [] : [{ dir: m.dir, error: m.loadFailure }],
    );
  }

  get dirs(): string[] {
    return this.managers.map((m) => m.dir);
  }

  get hadCleanShutdown(): boolean {
    return this.managers.every((m) => m.hadCleanShutdown);
  }

  isOnline(dir: string): boolean {
    return !this.offline.has(dir);
  }

  get offlineDirs(): string[] {
    return this.dirs.filter((d) => this.offline.has(d));
  }

  get onlineManagers(): LogManager[] {
    return this.managers.filter((m) => !this.offline.has(m.dir));
  }

  /** The directory holding `log`'s partition directory, or undefined. */
  dirOfLog(log: Log): string | undefined {
    const path = resolve(log.dir);
    return this.managers.find((m) => resolve(m.dir) === resolve(path, '..'))?.dir;
  }

  /** The online directory holding the partition, or undefined. */
  dirOf(tp: TopicPartition): string | undefined {
    return this.onlineManagers.find((m) => m.getLog(tp) !== undefined)?.dir;
  }

  getLog(tp: TopicPartition): Log | undefined {
    for (const m of this.onlineManagers) {
      const log = m.getLog(tp);
      if (log !== undefined) return log;
    }
    return undefined;
  }

  *allLogs(): Generator<Log> {
    for (const m of this.onlineManagers) yield* m.allLogs();
  }

  /**
   * The partition's log, created when absent on the directory `nextDir` picks (or on `dir` when given). A log
   * in an offline directory is not replaced by a new one elsewhere: LogDirOfflineError, as Kafka answers
   * KAFKA_STORAGE_ERROR for it until the controller moves the replica.
   */
  getOrCreateLog(tp: TopicPartition, topicId?: string, dir?: string): Log {
    for (const m of this.managers) {
      if (m.getLog(tp) === undefined) continue;
      if (this.offline.has(m.dir)) throw new LogDirOfflineError(m.dir);
      return m.getOrCreateLog(tp, topicId);
    }
    const name = `${tp.topic}-${tp.partition}`;
    const preferred = this.preferredDirs.get(name);
    const target = dir ?? (preferred !== undefined && this.isOnline(preferred) ? preferred : this.nextDir());
    if (this.offline.has(target)) throw new LogDirOfflineError(target);
    const manager = this.managerOf(target);
    const log = manager.getOrCreateLog(tp, topicId);
    this.preferredDirs.delete(name);
    return log;
  }

  /**
   * Resolves once the files of every log created so far are durable (see LogManager.whenCreatedDurable); a
   * directory that failed meanwhile is left out, as it is offline (the broker was told through its error handler).
   */
  async whenCreatedDurable(): Promise<void> {
    await Promise.all(this.onlineManagers.map((m) => m.whenCreatedDurable().catch(() => {})));
  }

  private managerOf(dir: string): LogManager {
    const manager = this.managers.find((m) => m.dir === dir);
    if (manager === undefined) throw new Error(`${dir} is not one of log.dirs`);
    return manager;
  }

  /** The configured directory equal to `dir` once normalized (Kafka compares absolute paths), or undefined. */
  configuredDir(dir: string): string | undefined {
    const wanted = resolve(dir);
    return this.dirs.find((d) => resolve(d) === wanted);
  }

  /** Records where the partition goes when its log is created here later (see preferredDirs). */
  setPreferredDir(tp: TopicPartition, dir: string): void {
    this.preferredDirs.set(`${tp.topic}-${tp.partition}`, dir);
  }

  /** The partition's future log in an online directory, or undefined. */
  getFutureLog(tp: TopicPartition): Log | undefined {
    for (const m of this.onlineManagers) {
      const log = m.getFutureLog(tp);
      if (log !== undefined) return log;
    }
    return undefined;
  }

  /** The online directory holding the partition's future log, or undefined. */
  futureDirOf(tp: TopicPartition): string | undefined {
    return this.onlineManagers.find((m) => m.getFutureLog(tp) !== undefined)?.dir;
  }

  *allFutureLogs(): Generator<Log> {
    for (const m of this.onlineManagers) yield* m.allFutureLogs();
  }

  /** An empty future log of the partition in `dir`, which must be online and not hold its current log. */
  createFutureLog(tp: TopicPartition, dir: string, topicId?: string): Log {
    if (this.offline.has(dir)) throw new LogDirOfflineError(dir);
    const future = this.managerOf(dir).createFutureLog(tp, topicId);
    // Kafka's abortAndPauseCleaning: the current log is not compacted while it is copied (log-cleaner.ts).
    this.onlineManagers.find((m) => m.getLog(tp) !== undefined)?.cleaner.pause(tp);
    return future;
  }

  deleteFutureLog(tp: TopicPartition): boolean {
    let deleted = false;
    for (const m of this.onlineManagers) deleted = m.deleteFutureLog(tp) || deleted;
    // The move is off: the current log is compacted again.
    for (const m of this.managers) if (m.getLog(tp) !== undefined) m.cleaner.resume(tp);
    return deleted;
  }

  /**
   * The future log replaces the partition's current log (the caller made sure it holds everything the current
   * log holds, and that nothing is appended meanwhile: this runs in one synchronous step). The current log is
   * closed and renamed `-delete` first, then the future one is renamed into place and opened again: see the file
   * header for what a crash in between leaves. Returns the partition's log, now in the future log's directory.
   */
  replaceCurrentWithFuture(tp: TopicPartition): Log {
    const source = this.onlineManagers.find((m) => m.getLog(tp) !== undefined);
    const target = this.onlineManagers.find((m) => m.getFutureLog(tp) !== undefined);
    if (source === undefined || target === undefined) {
      throw new Error(`${tp.topic}-${tp.partition}: no current and future log to swap`);
    }
    assert(source !== target, 'a future log in the directory of the current one');
    const cleanedTo = source.cleaner.checkpointOf(tp);
    source.deleteLog(tp);
    const log = target.promoteFutureLog(tp);
    // Kafka's alterCheckpointDir: what was cleaned in the old directory is clean in the new one.
    if (cleanedTo !== undefined && cleanedTo <= log.logEndOffset)
      target.cleaner.adoptCheckpoint(tp, cleanedTo);
    return log;
  }

  /** Where a new partition goes: fewest partition logs, then most usable bytes, then `log.dirs` order. */
  nextDir(): string {
    const online = this.onlineManagers;
    if (online.length === 0) throw new LogDirOfflineError(this.dirs.join(','));
    const ranked = online.map((m, i) => ({ m, i, count: m.logCount, free: this.freeOf(m.dir) }));
    ranked.sort((a, b) => a.count - b.count || b.free - a.free || a.i - b.i);
    return ranked[0]!.m.dir;
  }

  private freeOf(dir: string): number {
    try {
      return this.usableBytes(dir);
    } catch {
      return 0;
    }
  }

  /** Deletes the partition's log and any future log of it (StopReplica with delete). */
  deleteLog(tp: TopicPartition): boolean {
    this.deleteFutureLog(tp);
    this.preferredDirs.delete(`${tp.topic}-${tp.partition}`);
    for (const m of this.onlineManagers) if (m.deleteLog(tp)) return true;
    return false;
  }

  updateConfig(topic: string, config: LogConfig): void {
    for (const m of this.onlineManagers) m.updateConfig(topic, config);
  }

  setProducerIdExpirationMs(ms: number): void {
    for (const m of this.onlineManagers) m.setProducerIdExpirationMs(ms);
  }

  reconfigureCleaner(config: LogCleanerConfig): void {
    for (const m of this.onlineManagers) m.cleaner.reconfigure(config);
  }

  /**
   * Takes `dir` out of service; answers false when it was offline already. The caller then tells the controller
   * and halts the broker when no directory is left (Kafka's rule).
   */
  markOffline(dir: string): boolean {
    if (this.offline.has(dir)) return false;
    const manager = this.managers.find((m) => m.dir === dir);
    if (manager === undefined) return false;
    // Moves into the failed directory are over: their current logs are compacted again where they are.
    const moving = [...manager.allFutureLogs()].map((f) => f.topicPartition);
    this.offline.add(dir);
    void manager.abandon();
    for (const tp of moving)
      for (const m of this.onlineManagers) if (m.getLog(tp) !== undefined) m.cleaner.resume(tp);
    return true;
  }

  startScheduler(): void {
    for (const m of this.onlineManagers) m.startScheduler();
  }

  /** Closes the online directories cleanly; offline ones keep no marker, so they are recovered at the next start. */
  shutdown(): void {
    let first: unknown = null;
    for (const m of this.onlineManagers) {
      try {
        m.shutdown();
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== null) throw first;
  }
}

function statfsUsableBytes(dir: string): number {
  const fs = statfsSync(dir);
  return fs.bavail * fs.bsize;
}
