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
// Ownership: the broker owns the LogDirs; each LogManager owns its directory's files. Everything here is
// synchronous and runs on the event loop.

import { statfsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FramePool } from '../common/frame-pool.js';
import type { LogCleanerConfig } from './cleaner/log-cleaner.js';
import type { SegmentKeys } from './encryption/segment-cipher.js';
import type { TopicPartition } from './file-names.js';
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
  private readonly usableBytes: (dir: string) => number;

  private constructor(managers: LogManager[], usableBytes: (dir: string) => number) {
    this.managers = managers;
    this.usableBytes = usableBytes;
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
    return new LogDirs(managers, usableBytes ?? statfsUsableBytes);
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
    const target = dir ?? this.nextDir();
    if (this.offline.has(target)) throw new LogDirOfflineError(target);
    const manager = this.managers.find((m) => m.dir === target);
    if (manager === undefined) throw new Error(`${target} is not one of log.dirs`);
    return manager.getOrCreateLog(tp, topicId);
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

  deleteLog(tp: TopicPartition): boolean {
    for (const m of this.onlineManagers) if (m.deleteLog(tp)) return true;
    return false;
  }

  updateConfig(topic: string, config: LogConfig): void {
    for (const m of this.onlineManagers) m.updateConfig(topic, config);
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
    this.offline.add(dir);
    manager.abandon();
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
