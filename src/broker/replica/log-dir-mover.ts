// Moves replicas between this broker's log directories (AlterReplicaLogDirs), as Kafka's
// ReplicaAlterLogDirsThread does: every future log (`<topic>-<partition>.<uuid>-future`, see
// src/storage/log-dirs.ts) is filled from the partition's current log, which keeps taking writes meanwhile, and
// once it holds everything the current log holds it replaces it in one synchronous step.
//
// The copy follows the current log as a follower follows its leader: batches are read up to the current log's
// written end and appended unchanged (offsets, epochs, producer state follow); a current log that was truncated
// (this broker is a follower whose leader changed) is matched by truncating the future log at the end offset the
// current log gives for the future log's latest epoch (Kafka's OffsetForLeaderEpoch between the two), and a log
// start offset that moved (retention, DeleteRecords) is followed too.
//
// The swap: when the future log has caught up with what is written, the current log's queued appends are written
// synchronously, the rest copied, the leader epochs the current log knows without batches (a new leader's epoch)
// carried over, and LogDirs.replaceCurrentWithFuture renames the directories; the partition then serves the new
// log. Nothing runs between these steps, so no append is lost or served twice.
//
// Work is bounded: at most MOVE_CHUNK_BYTES per partition per step, and the event loop is yielded between steps.
// replica.alter.log.dirs.io.max.bytes.per.second (a dynamic broker config, as in Kafka) bounds the copy rate,
// measured as Kafka's replication quotas are; the final copy of the swap step is not held back by it.
// Ownership: the broker owns the mover; the LogDirs own the future logs (a future log that exists is a move in
// progress, so moves survive restarts: the mover resumes whatever future logs it finds).

import { minOffset, type Offset } from '../../common/ids.js';
import type { Logger } from '../../common/logger.js';
import { ErrorCode } from '../../protocol/errors.js';
import { BATCH_HEADER_BYTES, batchHeader, LOG_OVERHEAD } from '../../protocol/records/batch-header.js';
import { futureDirName } from '../../storage/file-names.js';
import type { Log } from '../../storage/log.js';
import type { LogDirs } from '../../storage/log-dirs.js';
import { type RateWindow, WindowedRate } from '../quota/rate.js';
import type { Partition } from './partition.js';

/** Bytes copied per partition and step. */
const MOVE_CHUNK_BYTES = 1 << 20;
/** Pause between steps when nothing was copied, and between checks when no move is in progress. */
const IDLE_STEP_MS = 50;
const NO_MOVE_CHECK_MS = 500;

export interface LogDirMoverDeps {
  readonly logs: LogDirs;
  readonly replicas: { get(topic: string, partition: number): Partition | undefined };
  readonly logger: Logger;
  /** An I/O error in `dir` (the broker checks whether the directory has failed). */
  readonly onError: (dir: string, err: Error) => void;
  /** replica.alter.log.dirs.io.max.bytes.per.second now (Infinity: unbounded). */
  readonly maxBytesPerSecond: () => number;
  readonly rateWindow: RateWindow;
  readonly nowMs?: () => number;
}

export class LogDirMover {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly rate: WindowedRate;
  private readonly nowMs: () => number;

  constructor(private readonly deps: LogDirMoverDeps) {
    this.rate = new WindowedRate(deps.rateWindow);
    this.nowMs = deps.nowMs ?? Date.now;
  }

  start(): void {
    this.schedule(0);
  }

  /** A move was asked for: start copying now rather than at the next idle check. */
  wake(): void {
    if (this.stopped) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.runStep(), delayMs);
    this.timer.unref();
  }

  private runStep(): void {
    this.timer = null;
    let moves = 0;
    let progressed = false;
    for (const future of [...this.deps.logs.allFutureLogs()]) {
      moves++;
      try {
        progressed = this.step(future) || progressed;
      } catch (err) {
        this.failed(future, err as Error);
      }
    }
    this.schedule(moves === 0 ? NO_MOVE_CHECK_MS : progressed ? 0 : IDLE_STEP_MS);
  }

  /** One step of one move; answers whether it copied or swapped anything. */
  step(future: Log): boolean {
    const { topic, partition: index } = future.topicPartition;
    const partition = this.deps.replicas.get(topic, index);
    // Not hosted (yet, or offline): the future log waits; StopReplica with delete removes it.
    if (partition === undefined) return false;
    const current = partition.log;
    if (current.writeFailed || future.writeFailed) return false;
    this.followTruncation(current, future);
    this.followLogStart(current, future);
    const bound = this.deps.maxBytesPerSecond();
    let copied = 0;
    if (this.rate.measure(this.nowMs()) < bound) {
      // A small rate is spent in small pieces, so one step does not overshoot it by much.
      const chunk = Math.max(4096, Math.min(MOVE_CHUNK_BYTES, Math.floor(bound / 8)));
      copied = this.copy(current, future, current.writtenEndOffset, chunk);
      this.rate.record(copied, this.nowMs());
    }
    future.setHighWatermark(minOffset(current.highWatermark, future.logEndOffset));
    if (future.logEndOffset < current.writtenEndOffset) return copied > 0;
    // Caught up with everything written: the swap, in one synchronous step. What is still queued is at most
    // STORAGE_LIMITS.queuedAppendBytesMax, so the copy here is bounded.
    current.completeQueuedAppends();
    while (future.logEndOffset < current.logEndOffset) {
      const n = this.copy(current, future, current.logEndOffset, MOVE_CHUNK_BYTES);
      if (n === 0) break;
      copied += n;
    }
    if (future.logEndOffset !== current.logEndOffset) return copied > 0;
    this.swap(partition, current, future);
    return true;
  }

  /** The current log was truncated below what the future log holds: the future log follows (see header). */
  private followTruncation(current: Log, future: Log): void {
    if (future.logEndOffset > current.logEndOffset) future.truncateTo(current.logEndOffset);
    const epoch = future.epochCache.latestEpoch;
    if (epoch < 0 || future.logEndOffset === future.logStartOffset) return;
    const end = current.endOffsetForEpoch(epoch);
    if (end.endOffset < 0) {
      // The current log knows no epoch this old: nothing of the future log can be trusted.
      future.truncateFullyAndStartAt(current.logStartOffset);
    } else if (end.endOffset < future.logEndOffset) {
      future.truncateTo(Math.max(end.endOffset, future.logStartOffset) as Offset);
    }
  }

  private followLogStart(current: Log, future: Log): void {
    const start = current.logStartOffset;
    if (future.logStartOffset >= start) return;
    if (future.logEndOffset <= start) future.truncateFullyAndStartAt(start);
    else {
      future.setHighWatermark(minOffset(current.highWatermark, future.logEndOffset));
      if (start <= future.highWatermark) future.deleteRecordsBefore(start);
    }
  }

  /** Copies whole batches from the future log's end up to `upTo`; answers the bytes appended. */
  private copy(current: Log, future: Log, upTo: Offset, maxBytes: number): number {
    const from = future.logEndOffset;
    if (from >= upTo) return 0;
    const read = current.read(from, maxBytes, upTo, true);
    if (read.errorCode !== 0 || !('records' in read) || read.records.length === 0) return 0;
    const records = read.records;
    let start = -1;
    let end = 0;
    for (let pos = 0; pos + LOG_OVERHEAD <= records.length; ) {
      const size = LOG_OVERHEAD + records.readInt32BE(pos + 8);
      if (size < BATCH_HEADER_BYTES || pos + size > records.length) break;
      const base = batchHeader.baseOffset(records, pos);
      if (batchHeader.lastOffset(records, pos) < future.logEndOffset) {
        pos += size;
        continue;
      }
      if (start < 0 && base < future.logEndOffset) {
        // A log start inside a batch (DeleteRecords): an empty future log starts at the batch, as a follower does.
        if (future.sizeInBytes > 0) break;
        future.truncateFullyAndStartAt(base as Offset);
      }
      if (start < 0) start = pos;
      end = pos + size;
      pos += size;
    }
    if (start < 0) return 0;
    future.append(records.subarray(start, end));
    return end - start;
  }

  private swap(partition: Partition, current: Log, future: Log): void {
    const { logs, logger } = this.deps;
    const tp = future.topicPartition;
    // Epochs a new leader assigned at its log end have no batch yet: the future log learns them here.
    for (const entry of current.epochCache.epochEntries) {
      if (entry.epoch > future.epochCache.latestEpoch)
        future.epochCache.assign(entry.epoch, entry.startOffset);
    }
    const highWatermark = current.highWatermark;
    const from = logs.dirOfLog(current);
    const log = logs.replaceCurrentWithFuture(tp);
    log.setHighWatermark(minOffset(highWatermark, log.logEndOffset));
    partition.replaceLog(log);
    logger.info(
      `${partition.key}: moved from log directory ${from} to ${logs.dirOfLog(log)} (log end ${log.logEndOffset})`,
    );
  }

  private failed(future: Log, err: Error): void {
    const { logs, logger } = this.deps;
    const tp = future.topicPartition;
    logger.error(`moving ${tp.topic}-${tp.partition} between log directories failed: ${err.message}`);
    const dir = logs.dirOfLog(future);
    if (dir !== undefined) this.deps.onError(dir, err);
    const partition = this.deps.replicas.get(tp.topic, tp.partition);
    const currentDir = partition === undefined ? undefined : logs.dirOfLog(partition.log);
    if (currentDir !== undefined && currentDir !== dir) this.deps.onError(currentDir, err);
  }
}

/** What an AlterReplicaLogDirs request for one partition needs of the broker. */
export interface AlterLogDirDeps {
  readonly logs: LogDirs;
  readonly replicas: {
    get(topic: string, partition: number): Partition | undefined;
    isOffline(topic: string, partition: number): boolean;
  };
  readonly mover: LogDirMover;
}

/**
 * Kafka's ReplicaManager.alterReplicaLogDirs for one partition: the replica moves to `path` (through a future log),
 * or stays when already there (a move elsewhere in progress is cancelled). LOG_DIR_NOT_FOUND for a path not in
 * log.dirs, KAFKA_STORAGE_ERROR when it or the partition is offline (or any directory is: a future log is never
 * created then, so that one partition never has future logs in two directories), REPLICA_NOT_AVAILABLE when the
 * replica is not hosted here yet; its log is then created in `path` when it comes (preferred directory).
 */
export function alterReplicaLogDir(
  deps: AlterLogDirDeps,
  topic: string,
  index: number,
  path: string,
): number {
  const { logs, replicas, mover } = deps;
  const tp = { topic, partition: index };
  if (futureDirName(tp).length > 255) return ErrorCode.INVALID_TOPIC_EXCEPTION;
  const dir = logs.configuredDir(path);
  if (dir === undefined) return ErrorCode.LOG_DIR_NOT_FOUND;
  if (!logs.isOnline(dir) || replicas.isOffline(topic, index)) return ErrorCode.KAFKA_STORAGE_ERROR;
  const movingTo = logs.futureDirOf(tp);
  if (movingTo !== undefined && movingTo !== dir) logs.deleteFutureLog(tp);
  const partition = replicas.get(topic, index);
  if (partition === undefined) {
    logs.setPreferredDir(tp, dir);
    return ErrorCode.REPLICA_NOT_AVAILABLE;
  }
  if (logs.dirOfLog(partition.log) === dir || movingTo === dir) return ErrorCode.NONE;
  if (logs.offlineDirs.length > 0) return ErrorCode.KAFKA_STORAGE_ERROR;
  logs.createFutureLog(tp, dir, partition.topicId);
  mover.wake();
  return ErrorCode.NONE;
}
