// The wait of an acks=-1 leader append for its replication: one rule for every writer that appends as leader and
// answers once the records are committed: produce with acks=all (awaitReplication, many partitions at once), the
// group and transaction coordinators' writes and the transaction markers (appendAsLeaderAndWait).
// It is Kafka's DelayedProduce with Partition.checkEnoughReplicasReachOffset:
// - a write waits until the high watermark passes its last offset (every replica of the ISR has it);
// - then it succeeds only if the ISR at that moment still has min.insync.replicas members (counting a change in
//   flight, as the high watermark does; the minimum capped at the replicas assigned, Kafka 3.7+'s
//   effectiveMinIsr). With fewer, the records are in the log but on fewer replicas than the topic asks for:
//   NOT_ENOUGH_REPLICAS_AFTER_APPEND. Kafka keeps the check, but since its 3.7 (KAFKA-15583) the
//   high watermark no longer moves while the ISR is below min.insync.replicas (Partition.maybeAdvanceHighWatermark),
//   so a write whose ISR shrinks below it after the append waits: for the ISR to grow back, or until its timeout;
// - it ends with NOT_LEADER_OR_FOLLOWER as soon as this broker stops leading the partition (made a follower, or
//   its replica removed): the high watermark would not move again here. A new leader epoch alone does not end
//   it: a leader that stays leader when the controller takes a dead follower out of the ISR still holds the write;
// - and with REQUEST_TIMED_OUT at its deadline.
//
// Ownership: the caller owns the waits and reads their outcome once `done` is called; the produce purgatory owns
// the timer and the watch. One delayed operation covers all the partitions of one request, so a produce request
// adds no promise or timer per partition.

import type { ProducerId } from '../../common/ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { DelayedOperation, Purgatory } from '../purgatory.js';
import type { Partition } from './partition.js';

/** One partition's append waiting for replication. */
export interface ReplicationWait {
  readonly partition: Partition;
  /** The last offset of the appended records: the high watermark must pass it. */
  readonly lastOffset: number;
  /** null while waiting; then the outcome, set once. */
  outcome: number | null;
}

/** What the wait needs of the broker: the hosted partitions and the produce purgatory. */
export interface ReplicationDeps {
  readonly replicas: { get(topic: string, partition: number): Partition | undefined };
  readonly producePurgatory: Purgatory;
}

/**
 * Kafka's checkEnoughReplicasReachOffset with DelayedProduce's leadership check: null while the write waits, else
 * its outcome. A partition object the replica manager no longer holds (StopReplica, or recreated) counts as not led.
 * That lookup (a key string) is made only for a write still waiting: every change that moves the high watermark
 * or the leadership is followed at once by this check, so a high watermark past the write was reached while this
 * broker led the partition.
 */
export function replicationOutcome(
  deps: ReplicationDeps,
  partition: Partition,
  lastOffset: number,
): number | null {
  if (!partition.isLeader) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
  if (partition.log.highWatermark <= lastOffset) {
    const hosted = deps.replicas.get(partition.topic, partition.partition) === partition;
    return hosted ? null : ErrorCode.NOT_LEADER_OR_FOLLOWER;
  }
  return partition.maximalIsrSize >= partition.effectiveMinIsr
    ? ErrorCode.NONE
    : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
}

/**
 * Parks `waits` in the produce purgatory until each has an outcome or `timeoutMs` passes (those still waiting get
 * REQUEST_TIMED_OUT); then calls `done`, exactly once. Each partition's outcome is fixed when first known: a write
 * acknowledged stays acknowledged if another partition of the request is still waiting.
 */
export function awaitReplication(
  deps: ReplicationDeps,
  waits: readonly ReplicationWait[],
  timeoutMs: number,
  done: () => void,
): void {
  const operation: DelayedOperation = {
    tryComplete: () => {
      let waiting = false;
      for (const w of waits) {
        if (w.outcome !== null) continue;
        w.outcome = replicationOutcome(deps, w.partition, w.lastOffset);
        if (w.outcome === null) waiting = true;
      }
      return !waiting;
    },
    onComplete: () => {
      for (const w of waits) w.outcome ??= ErrorCode.REQUEST_TIMED_OUT;
      done();
    },
  };
  deps.producePurgatory.tryCompleteElseWatch(
    operation,
    waits.map((w) => w.partition.key),
    timeoutMs,
  );
}

export interface LeaderAppendOptions {
  readonly nowMs: number;
  /** How long the wait for replication may take (offsets.commit.timeout.ms, a marker's timeout). */
  readonly timeoutMs: number;
  /**
   * false for batches the broker builds itself (coordinator records, transaction markers): client produce checks
   * are skipped, and of a producer's batch only the epoch is checked, not sequences.
   */
  readonly fromClient: boolean;
  /** Called at once when the leader has taken the records (in its log, not yet replicated), with the first offset. */
  readonly onAppended?: (baseOffset: number) => void;
}

/**
 * The broker's own acks=-1 writes (group and transaction coordinators, transaction markers): appends `records` to
 * `partition` as its leader and resolves with one error code: the append's refusal (NOT_LEADER_OR_FOLLOWER,
 * NOT_ENOUGH_REPLICAS, ...), KAFKA_STORAGE_ERROR when the bytes could not be written or synced, else the outcome
 * of the wait for replication above. Produce uses the same pieces for many partitions at once.
 */
export async function appendAsLeaderAndWait(
  deps: ReplicationDeps,
  partition: Partition,
  records: Buffer,
  options: LeaderAppendOptions,
): Promise<number> {
  // `done` is never called before appendAsLeader returns, so `settle` is set by then whenever it is needed.
  let settle: ((err: Error | null) => void) | null = null;
  const result = partition.appendAsLeader(
    records,
    -1,
    partition.settings.minInsyncReplicas,
    options.nowMs,
    (err) => settle!(err),
    Number.MAX_SAFE_INTEGER,
    options.fromClient,
  );
  if (result.errorCode !== ErrorCode.NONE) return result.errorCode;
  const written = result.pending
    ? new Promise<Error | null>((resolve) => {
        settle = resolve;
      })
    : null;
  options.onAppended?.(result.baseOffset);
  if (written !== null && (await written) !== null) return ErrorCode.KAFKA_STORAGE_ERROR;
  const wait: ReplicationWait = { partition, lastOffset: result.lastOffset, outcome: null };
  return new Promise((resolve) => {
    awaitReplication(deps, [wait], options.timeoutMs, () =>
      resolve(wait.outcome ?? ErrorCode.REQUEST_TIMED_OUT),
    );
  });
}

/**
 * appendAsLeaderAndWait for the partitions of one internal topic by index, as the coordinators' storage calls it
 * (not as a client's append): a partition not hosted here is NOT_LEADER_OR_FOLLOWER.
 */
export function internalTopicAppender(
  deps: ReplicationDeps,
  topic: string,
  nowMs: () => number,
): (
  index: number,
  records: Buffer,
  timeoutMs: number,
  onAppended?: (baseOffset: number) => void,
  verificationGuard?: { readonly producerId: number; readonly guard: object },
) => Promise<number> {
  return (index, records, timeoutMs, onAppended, verificationGuard) => {
    const partition = deps.replicas.get(topic, index);
    if (partition === undefined) return Promise.resolve(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    // Checked in the same step as the append: a marker written since the verification ended the transaction
    // (Kafka's UnifiedLog refuses it: "Record was not part of an ongoing transaction").
    if (
      verificationGuard !== undefined &&
      !partition.log.producerState.verifiedBy(
        verificationGuard.producerId as ProducerId,
        verificationGuard.guard,
      )
    ) {
      return Promise.resolve(ErrorCode.INVALID_TXN_STATE);
    }
    return appendAsLeaderAndWait(deps, partition, records, {
      nowMs: nowMs(),
      timeoutMs,
      fromClient: false,
      ...(onAppended === undefined ? {} : { onAppended }),
    });
  };
}
