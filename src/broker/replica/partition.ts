// A partition replica on this broker: its log, whether it leads, the leader epoch, the replica set and ISR, and
// (as leader) each follower's log end offset, from which the high watermark follows.
//
// Ownership: the ReplicaManager creates and removes partitions; the partition owns its leader state. Every
// method runs to completion without awaiting, so appends, reads and high-watermark moves never interleave.
// A leader's appends are queued by the log (offsets assigned at once, bytes written off the event loop); the
// high watermark counts only written bytes, and moves again when the log says more were written.

import { assert } from '../../common/assert.js';
import { type Clock, systemClock } from '../../common/clock.js';
import { type BrokerId, minOffset, NO_BROKER_ID, type Offset, toLeaderEpoch } from '../../common/ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import { BATCH_HEADER_BYTES, batchHeader, LOG_OVERHEAD } from '../../protocol/records/batch-header.js';
import { validateBatch } from '../../protocol/records/validate-batch.js';
import type { AppendDone, Log } from '../../storage/log.js';
import type { TopicLogSettings } from '../config/topic-log-settings.js';
import { checkProduceVersion, prepareProducedBatches } from './leader-append.js';
import type { RecordError } from './record-errors.js';

export interface LeaderAppendResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  /** Offset of the first appended record (or of a duplicate's original), -1 on error. */
  readonly baseOffset: number;
  readonly lastOffset: number;
  /** The append time when the topic uses LogAppendTime, else -1. */
  readonly logAppendTimeMs: number;
  /**
   * Whether the append's `done` will be called: once the batches are written to the log file and readable, and
   * on disk when the log acknowledges only after fdatasync (acks=1 answers then). False when there is nothing to
   * wait for (refused, a duplicate, written inline).
   */
  readonly pending: boolean;
  /** The invalid records behind INVALID_RECORD or INVALID_TIMESTAMP, by index in their batch (KIP-467). */
  readonly recordErrors?: readonly RecordError[];
}

const failed = (
  errorCode: number,
  errorMessage: string | null = null,
  recordErrors: readonly RecordError[] = [],
): LeaderAppendResult => ({
  errorCode,
  errorMessage,
  recordErrors,
  baseOffset: -1,
  lastOffset: -1,
  logAppendTimeMs: -1,
  pending: false,
});

/**
 * What the leader knows of one follower, from its fetches. No entry means unknown (Kafka's UnknownOffset): the
 * follower has not fetched since this broker became leader, holds the high watermark at 0 while in the ISR,
 * and counts as caught up since this broker became leader if it is in the ISR (recordFollowerEnd keeps that
 * time at its first fetch), not at all otherwise.
 */
interface FollowerState {
  /** The offset of the follower's last fetch, that is its log end offset (Kafka's logEndOffsetMetadata). */
  logEndOffset: number;
  /**
   * Since when the follower is known to have been caught up (Kafka's lastCaughtUpTimeMs): the time of a fetch
   * that reached the leader's written end, or of the previous fetch when this one reached where the leader's end
   * was then; 0 when never since the follower was left out of the ISR.
   */
  lastCaughtUpMs: number;
  /** The leader's written end at the follower's previous fetch, -1 before one (lastFetchLeaderLogEndOffset). */
  lastFetchLeaderEndOffset: number;
  /** When the previous fetch came (Kafka's lastFetchTimeMs). */
  lastFetchMs: number;
  /** The follower's log start offset as its last fetch gave it, -1 before one says (Kafka's logStartOffset). */
  logStartOffset: number;
  /**
   * The follower's broker epoch as its last fetch gave it (Fetch v15's replica epoch), -1 when unknown: sent
   * with an ISR change so that the controller refuses one decided on an earlier incarnation's state (KIP-903).
   */
  brokerEpoch: number;
}

/** An in-sync follower that holds a consumer's fetch offset: a candidate to serve it (KIP-392). */
export interface ReadReplicaCandidate {
  readonly brokerId: BrokerId;
  readonly logEndOffset: number;
  /** How long since the follower was last known caught up. */
  readonly lagMs: number;
}

/**
 * What a leader's high watermark rule reads of the broker for a follower outside the ISR that is about to join
 * it (see maybeAdvanceHighWatermark).
 */
export interface FollowerRules {
  /** replica.lag.time.max.ms: how long after it last was caught up a follower counts as caught up. */
  readonly lagTimeMaxMs: number;
  /** Whether the broker is alive by this broker's metadata (Kafka's isReplicaIsrEligible in ZooKeeper mode). */
  isAlive(brokerId: BrokerId): boolean;
}

/** Kafka's default replica.lag.time.max.ms, every broker alive: for partitions built without a broker (tests). */
export const DEFAULT_FOLLOWER_RULES: FollowerRules = { lagTimeMaxMs: 30_000, isAlive: () => true };

export class Partition {
  leaderId: BrokerId = NO_BROKER_ID;
  leaderEpoch = -1;
  partitionEpoch = 0;
  replicas: readonly BrokerId[] = [];
  isr: readonly BrokerId[] = [];
  /** Followers as their fetches report them (leader only). */
  private readonly followers = new Map<BrokerId, FollowerState>();
  /**
   * An ISR change proposed to the controller and not settled yet; no other is proposed meanwhile. The controller
   * may already have committed it, and may already have made a replica it adds the leader (a reassignment
   * finishing), so until it is settled the high watermark counts the proposed ISR too (Kafka's maximal ISR).
   * Settled means accepted, refused by a controller that says it did not apply it (OPERATION_NOT_ATTEMPTED,
   * INELIGIBLE_REPLICA), or replaced by a LeaderAndIsr; an answer that leaves the outcome unknown (a lost
   * connection, a timeout, a store write whose answer was lost) keeps it (see cluster/isr-manager.ts).
   */
  private pendingIsr: readonly BrokerId[] | null = null;
  private leaderSinceMs = 0;
  /**
   * The log end offset when this broker started leading at its current leader epoch, null while it follows
   * (Kafka's leaderEpochStartOffsetOpt). Until the high watermark reaches it, the high watermark may be behind
   * what the previous leader had made visible, and ListOffsets does not answer from it (KIP-207).
   */
  private epochStartOffset: Offset | null = null;
  /** Told after queued appends were written and the high watermark had its chance to move (purgatories). */
  onWritten: ((partition: Partition) => void) | null = null;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly topicId: string,
    log: Log,
    private readonly localBrokerId: BrokerId,
    public settings: TopicLogSettings,
    /** Wall time of fetches and elections (the ISR rules' caught-up times). */
    private readonly clock: Clock = systemClock,
    /** What the high watermark rule reads of the broker (see FollowerRules). */
    private readonly followerRules: FollowerRules = DEFAULT_FOLLOWER_RULES,
  ) {
    this.currentLog = log;
    this.watch(log);
  }

  /** The replica's log; replaced only by a move between log directories (replaceLog). */
  private currentLog: Log;

  get log(): Log {
    return this.currentLog;
  }

  private watch(log: Log): void {
    log.onWritten = () => {
      this.maybeAdvanceHighWatermark();
      this.onWritten?.(this);
    };
  }

  /**
   * A move between log directories swapped in `log` (AlterReplicaLogDirs): it holds every offset of the old log,
   * so offsets, epochs and follower positions stay as they are. Runs in the synchronous step of the swap.
   */
  replaceLog(log: Log): void {
    assert(
      log.logEndOffset === this.currentLog.logEndOffset,
      `${this.key}: replacement log ends at ${log.logEndOffset}, not ${this.currentLog.logEndOffset}`,
    );
    this.currentLog.onWritten = null;
    this.currentLog = log;
    this.watch(log);
  }

  get isLeader(): boolean {
    return this.leaderId === this.localBrokerId;
  }

  get key(): string {
    return `${this.topic}-${this.partition}`;
  }

  becomeLeader(
    leaderEpoch: number,
    partitionEpoch: number,
    replicas: readonly BrokerId[],
    isr: readonly BrokerId[],
    nowMs = this.clock.nowMs(),
  ): void {
    // The replica manager refuses an older leader epoch before it gets here: epochs only rise.
    assert(
      leaderEpoch >= this.leaderEpoch,
      `${this.key}: leader epoch ${leaderEpoch} after ${this.leaderEpoch}`,
    );
    const newLeader = !this.isLeader;
    const newEpoch = newLeader || leaderEpoch !== this.leaderEpoch;
    if (!newEpoch && partitionEpoch < this.partitionEpoch) {
      // Kafka's makeLeader skips a state older than the partition epoch it has. The controller sends a leader the
      // state of its own epoch again (when it takes over, when a broker registers again) and may build that request
      // before it commits an ISR change this leader proposed; the answer, with the newer partition epoch, can come
      // first. Applying the older state took the leader back to an ISR the controller had replaced, and its next
      // proposal, with that older partition epoch, was refused (INVALID_UPDATE_VERSION) until a new leader epoch.
      return;
    }
    if (newEpoch) {
      this.leaderSinceMs = nowMs;
      this.epochStartOffset = this.log.logEndOffset;
    }
    // Kafka's makeLeader (maybeAssignEpochStartOffset, KIP-279): the new epoch starts at this log's end now, not
    // at the first record this leader writes. Without the entry, a follower whose last epoch is newer than every
    // epoch written here (it fetched records of the previous leader that this one lacks) got no end offset from
    // OffsetForLeaderEpoch and fell back to its high watermark, which may be below the committed one: an ISR member
    // then dropped acknowledged records (data-plane simulation, seed 28).
    if (leaderEpoch > this.log.epochCache.latestEpoch)
      this.log.epochCache.assign(toLeaderEpoch(leaderEpoch), this.log.logEndOffset);
    this.pendingIsr = null;
    this.leaderId = this.localBrokerId;
    this.leaderEpoch = leaderEpoch;
    this.partitionEpoch = partitionEpoch;
    this.replicas = replicas;
    this.isr = isr;
    this.assertLeaderIsr();
    this.resetFollowers(newLeader, newEpoch, nowMs);
    // Followers kept in the ISR already at the log end let the high watermark move now, not at their next fetch.
    this.maybeAdvanceHighWatermark();
  }

  /**
   * Kafka's Partition.makeLeader with Replica.resetReplicaState. A broker that becomes leader knows nothing of
   * its followers: what they told an earlier leader may not be in this log. A broker that stays leader at a new
   * epoch (the controller took a dead follower out of the ISR, a preferred-leader election chose it again) keeps
   * each follower's log end offset, learnt from fetches of this very log, so the followers still in the ISR need
   * not fetch again before the high watermark moves. Their caught-up time restarts at now, as in Kafka; a
   * follower left out of the new ISR gets 0, so that it is not proposed back into the ISR (proposedIsr) before a
   * fetch of it shows it caught up again (recordFollowerEnd). The times of the previous fetches are kept, as
   * Kafka keeps lastFetchTimeMs. Followers no longer among the replicas are forgotten, as Kafka drops their
   * Replica objects.
   */
  private resetFollowers(newLeader: boolean, newEpoch: boolean, nowMs: number): void {
    if (newLeader) {
      this.followers.clear();
      return;
    }
    for (const [id, state] of this.followers) {
      if (!this.replicas.includes(id)) this.followers.delete(id);
      else if (newEpoch) state.lastCaughtUpMs = this.isr.includes(id) ? nowMs : 0;
    }
  }

  becomeFollower(
    leaderId: BrokerId,
    leaderEpoch: number,
    partitionEpoch: number,
    replicas: readonly BrokerId[],
  ): void {
    assert(
      leaderEpoch >= this.leaderEpoch,
      `${this.key}: leader epoch ${leaderEpoch} after ${this.leaderEpoch}`,
    );
    this.leaderId = leaderId;
    this.leaderEpoch = leaderEpoch;
    this.partitionEpoch = partitionEpoch;
    this.replicas = replicas;
    this.pendingIsr = null;
    this.epochStartOffset = null;
    this.followers.clear();
  }

  /**
   * KIP-207 (Kafka's Partition.fetchOffsetForTimestamp): a leader whose high watermark is still behind the log end
   * it started its epoch at. Its high watermark moves only once the followers in the ISR fetch from it, and until
   * then may be below the offsets the previous leader gave consumers, so a consumer's latest offset, or a timestamp
   * found at or above the high watermark, is answered OFFSET_NOT_AVAILABLE (retriable) rather than an offset that
   * goes backwards or "no such record".
   */
  get highWatermarkBehindEpochStart(): boolean {
    return this.isLeader && this.epochStartOffset !== null && this.epochStartOffset > this.log.highWatermark;
  }

  /**
   * Validates a producer's records, assigns offsets and appends them; answers as a produce response would. When
   * the result is `pending`, `done` hears when the bytes are written (see Log.appendQueued), else never.
   */
  appendAsLeader(
    records: Buffer,
    requiredAcks: number,
    minInsyncReplicas: number,
    nowMs: number,
    done: AppendDone,
    produceVersion = Number.MAX_SAFE_INTEGER,
    fromClient = true,
  ): LeaderAppendResult {
    if (!this.isLeader) return failed(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    if (this.log.writeFailed) return failed(ErrorCode.KAFKA_STORAGE_ERROR, 'the log could not be written');
    const versionProblem = checkProduceVersion(records, produceVersion);
    if (versionProblem !== null && !versionProblem.ok) {
      return failed(versionProblem.errorCode, versionProblem.errorMessage);
    }
    // The minimum capped at the replicas assigned, as Kafka 3.7+'s appendRecordsToLeader reads it (effectiveMinIsr,
    // KAFKA-15583): one replica under a minimum of 2 (a single broker with a production default) takes acks=all.
    const minIsr = this.cappedMinIsr(minInsyncReplicas);
    if (requiredAcks === -1 && this.isr.length < minIsr) {
      return failed(
        ErrorCode.NOT_ENOUGH_REPLICAS,
        `ISR has ${this.isr.length} of min.insync.replicas ${minIsr}`,
      );
    }
    const prepared = prepareProducedBatches(records, this.settings, nowMs, fromClient, this.key);
    if (!prepared.ok) return failed(prepared.errorCode, prepared.errorMessage, prepared.recordErrors);
    const { records: batches, positions } = prepared.value;
    // An idempotent producer's retry of a batch already in the log is answered with the original offsets;
    // several batches of one producer in a request are checked as the sequence they form.
    const check =
      positions.length === 1
        ? this.log.checkProducerBatch(batches, 0)
        : this.log.checkProducerBatches(batches, positions);
    // Appends not from a client (markers, a coordinator's transactional offset commits) carry no sequence of their
    // own: as for Kafka's non-client append origins, only the producer epoch (and coordinator epoch) counts.
    const sequenceOnly =
      !fromClient &&
      (check.kind === 'duplicate' ||
        (check.kind === 'error' && check.errorCode === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER));
    if (check.kind === 'error' && !sequenceOnly) return failed(check.errorCode);
    if (check.kind === 'duplicate' && !sequenceOnly) {
      if (positions.length > 1) return failed(ErrorCode.DUPLICATE_SEQUENCE_NUMBER);
      return {
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        baseOffset: check.firstOffset,
        lastOffset: check.lastOffset,
        logAppendTimeMs: this.settings.messageTimestampType === 'LogAppendTime' ? check.timestampMs : -1,
        pending: false,
      };
    }
    let next: number = this.log.logEndOffset;
    for (const pos of positions) {
      batchHeader.setBaseOffset(batches, pos, next);
      batchHeader.setPartitionLeaderEpoch(batches, pos, this.leaderEpoch);
      next += batchHeader.lastOffsetDelta(batches, pos) + 1;
    }
    const info = this.log.appendQueued(batches, done);
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      baseOffset: info.firstOffset,
      lastOffset: info.lastOffset,
      logAppendTimeMs: this.settings.messageTimestampType === 'LogAppendTime' ? nowMs : -1,
      pending: info.pending,
    };
  }

  /**
   * Appends what the leader sent, offsets as the leader assigned them. Batches already in the log (a retried
   * fetch) are skipped; a batch cut short at the end of the response is left for the next fetch; a corrupt batch
   * stops the append there (the next fetch asks again from the log end). Returns the number of bytes appended.
   */
  appendAsFollower(records: Buffer, leaderHighWatermark: Offset): number {
    const log = this.log;
    let start = -1;
    let end = 0;
    for (let pos = 0; pos + LOG_OVERHEAD <= records.length; ) {
      const size = LOG_OVERHEAD + records.readInt32BE(pos + 8);
      if (size < BATCH_HEADER_BYTES || pos + size > records.length) break;
      if (validateBatch(records, pos, pos + size) !== null) break;
      if (batchHeader.lastOffset(records, pos) < log.logEndOffset) {
        pos += size;
        continue;
      }
      if (start < 0) start = pos;
      end = pos + size;
      pos += size;
    }
    if (start >= 0) log.append(records.subarray(start, end));
    // A follower's high watermark is the leader's, bounded by what the follower has.
    if (leaderHighWatermark > log.highWatermark)
      log.setHighWatermark(minOffset(leaderHighWatermark, log.logEndOffset));
    return start < 0 ? 0 : end - start;
  }

  /**
   * A follower's fetch reports its log end offset; the high watermark may move. Kafka's rule for the caught-up
   * time the ISR rules read (Replica.updateFetchStateOrThrow): a fetch from the leader's end means caught up now;
   * a fetch from at least where the leader's end was at the previous fetch means caught up as of that previous
   * fetch. Without the second half, a follower that keeps up with a leader taking writes all the time, so that
   * something new is always written between its fetches, would never count as caught up and would leave the ISR.
   */
  recordFollowerEnd(
    brokerId: BrokerId,
    logEndOffset: number,
    nowMs = this.clock.nowMs(),
    brokerEpoch = -1,
  ): boolean {
    let state = this.followers.get(brokerId);
    if (
      state !== undefined &&
      brokerEpoch >= 0 &&
      state.brokerEpoch >= 0 &&
      brokerEpoch !== state.brokerEpoch
    ) {
      // Another incarnation of the follower (it restarted, maybe without bytes it had not flushed): what the
      // earlier one fetched says nothing of this log, so it counts as not caught up until it shows it again.
      state.lastCaughtUpMs = 0;
      state.lastFetchLeaderEndOffset = -1;
    }
    if (state === undefined) {
      // Unseen since this broker became leader: caught up as of the election if in the ISR, else not at all
      // (Kafka's resetReplicaState for a new leader).
      const lastCaughtUpMs = this.isr.includes(brokerId) ? this.leaderSinceMs : 0;
      state = {
        logEndOffset,
        lastCaughtUpMs,
        lastFetchLeaderEndOffset: -1,
        lastFetchMs: 0,
        logStartOffset: -1,
        brokerEpoch,
      };
      this.followers.set(brokerId, state);
    }
    if (brokerEpoch >= 0) state.brokerEpoch = brokerEpoch;
    state.logEndOffset = logEndOffset;
    // Against what a follower can fetch: appends still being written are not readable yet.
    const leaderEnd = this.log.writtenEndOffset;
    if (logEndOffset >= leaderEnd) state.lastCaughtUpMs = Math.max(state.lastCaughtUpMs, nowMs);
    else if (state.lastFetchLeaderEndOffset >= 0 && logEndOffset >= state.lastFetchLeaderEndOffset)
      state.lastCaughtUpMs = Math.max(state.lastCaughtUpMs, state.lastFetchMs);
    state.lastFetchLeaderEndOffset = leaderEnd;
    state.lastFetchMs = nowMs;
    return this.maybeAdvanceHighWatermark(nowMs);
  }

  /** The broker epoch the follower's last fetch gave, -1 when unknown (KIP-903; see FollowerState). */
  followerBrokerEpoch(brokerId: BrokerId): number {
    return this.followers.get(brokerId)?.brokerEpoch ?? -1;
  }

  /**
   * A follower's fetch also gives its log start offset, which says whether it can serve an older offset and
   * whether a DeleteRecords waits for it. Answers whether it moved up.
   */
  recordFollowerStart(brokerId: BrokerId, logStartOffset: number): boolean {
    const state = this.followers.get(brokerId);
    if (state === undefined) return false;
    const moved = logStartOffset > state.logStartOffset;
    state.logStartOffset = logStartOffset;
    return moved;
  }

  /**
   * The lowest log start offset among this leader and the followers of its replica set that are alive and have
   * said theirs (Kafka's lowWatermarkIfLeader): a DeleteRecords is done once it reaches the deleted-to offset.
   */
  lowWatermark(isAlive: (brokerId: BrokerId) => boolean): number {
    let low: number = this.log.logStartOffset;
    for (const id of this.replicas) {
      if (id === this.localBrokerId || !isAlive(id)) continue;
      const start = this.followers.get(id)?.logStartOffset ?? -1;
      if (start >= 0) low = Math.min(low, start);
    }
    return low;
  }

  /**
   * A follower's log start follows the leader's (Kafka's follower: maybeIncrementLogStartOffset with the fetch
   * answer's log_start_offset), as far as its own high watermark goes: records a DeleteRecords or the leader's
   * retention removed must not come back when this replica leads.
   */
  followLeaderLogStart(leaderLogStart: number): void {
    const target = Math.min(leaderLogStart, this.log.highWatermark);
    if (target > this.log.logStartOffset) this.log.deleteRecordsBefore(target);
  }

  /**
   * The followers a consumer fetching `fetchOffset` could be sent to (Kafka's findPreferredReadReplica): in the
   * ISR, and holding that offset by what their last fetch said. A follower outside the ISR may lag without bound,
   * so it is never offered.
   */
  readReplicaCandidates(fetchOffset: number, nowMs: number): ReadReplicaCandidate[] {
    const out: ReadReplicaCandidate[] = [];
    if (!this.isLeader) return out;
    for (const id of this.isr) {
      const state = this.followers.get(id);
      if (id === this.localBrokerId || state === undefined) continue;
      if (state.logEndOffset < fetchOffset || state.logStartOffset > fetchOffset) continue;
      out.push({ brokerId: id, logEndOffset: state.logEndOffset, lagMs: nowMs - state.lastCaughtUpMs });
    }
    return out;
  }

  /**
   * The ISR this leader should propose, or null when it is right as it is: followers that have not caught up
   * within replica.lag.time.max.ms leave (never below the leader itself), and followers outside it that are in
   * sync (followerInSync) join.
   */
  proposedIsr(nowMs: number, lagTimeMaxMs: number): BrokerId[] | null {
    if (!this.isLeader || this.isrChangeInFlight) return null;
    const isr = new Set(this.isr);
    let changed = false;
    for (const id of this.isr) {
      if (id === this.localBrokerId) continue;
      const state = this.followers.get(id);
      const caughtUpMs = state?.lastCaughtUpMs ?? this.leaderSinceMs;
      if (nowMs - caughtUpMs > lagTimeMaxMs) {
        isr.delete(id);
        changed = true;
      }
    }
    for (const id of this.replicas) {
      if (isr.has(id) || id === this.localBrokerId) continue;
      const state = this.followers.get(id);
      if (state !== undefined && this.followerInSync(state) && nowMs - state.lastCaughtUpMs <= lagTimeMaxMs) {
        isr.add(id);
        changed = true;
      }
    }
    return changed ? this.replicas.filter((id) => isr.has(id)) : null;
  }

  /**
   * Whether a follower outside the ISR holds enough of this log to join it (Kafka's isFollowerInSync): its log end
   * has reached the high watermark and the offset this leader started its epoch at (KAFKA-7128). A new leader's
   * high watermark can be behind what the previous leader had committed until its ISR fetches from it; a follower
   * that only reached that lagging high watermark may lack committed records, and elected from the ISR it joined,
   * would lose them. Every committed record is below the epoch start, so a follower past it has them all.
   */
  private followerInSync(state: FollowerState): boolean {
    const epochStart = this.epochStartOffset;
    return (
      epochStart !== null && state.logEndOffset >= this.log.highWatermark && state.logEndOffset >= epochStart
    );
  }

  /**
   * The number of replicas in the ISR counting a change in flight (Kafka's maximal ISR): the committed ISR with
   * the replicas a pending change adds. What an acks=-1 write checks against min.insync.replicas once the high
   * watermark passes it, the same replicas the high watermark waits for.
   */
  get maximalIsrSize(): number {
    const pending = this.pendingIsr;
    if (pending === null) return this.isr.length;
    let size = this.isr.length;
    for (const id of pending) if (!this.isr.includes(id)) size++;
    return size;
  }

  /** The replicas of the maximal ISR (see maximalIsrSize): the committed ISR and those a pending change adds. */
  get maximalIsr(): readonly BrokerId[] {
    const pending = this.pendingIsr;
    if (pending === null) return this.isr;
    return [...this.isr, ...pending.filter((id) => !this.isr.includes(id))];
  }

  /**
   * min.insync.replicas as this replica applies it: never more than the replicas assigned (Kafka 3.7+'s
   * effectiveMinIsr, KAFKA-15583). A topic whose min.insync.replicas exceeds its replication factor (one replica
   * under a broker default of 2) would otherwise be under min ISR for good, and its high watermark never move.
   * Kafka reads the same capped value wherever it compares the ISR with the minimum: the acks=all check before an
   * append (appendAsLeader), the one after it (replicated-append.ts), and the UnderMinIsr / AtMinIsr metrics.
   */
  get effectiveMinIsr(): number {
    return this.cappedMinIsr(this.settings.minInsyncReplicas);
  }

  private cappedMinIsr(minInsyncReplicas: number): number {
    return Math.min(minInsyncReplicas, this.replicas.length);
  }

  /**
   * Whether this broker leads the partition with a committed ISR smaller than effectiveMinIsr (Kafka's
   * isUnderMinIsr): a change in flight that would add replicas does not count until the controller accepts it.
   */
  get underMinIsr(): boolean {
    return this.isLeader && this.isr.length < this.effectiveMinIsr;
  }

  get isrChangeInFlight(): boolean {
    return this.pendingIsr !== null;
  }

  /** The ISR change proposed and not settled yet (the same array isrChangeSent was given), or null. */
  get pendingIsrChange(): readonly BrokerId[] | null {
    return this.pendingIsr;
  }

  /** An ISR change (from proposedIsr) goes to the controller: until it is settled, no other is proposed. */
  isrChangeSent(isr: readonly BrokerId[]): void {
    this.pendingIsr = isr;
  }

  /**
   * The ISR change sent is settled (accepted, or refused by a controller that did not apply it): the committed ISR
   * alone counts again, unless a newer change (after a LeaderAndIsr) is pending by now. Never called for an answer
   * that leaves the outcome unknown: the controller may have committed the change, and a replica it adds may be
   * elected from it, so that replica must hold every acknowledged record.
   */
  isrChangeEnded(isr: readonly BrokerId[]): boolean {
    if (this.pendingIsr !== isr) return false;
    this.pendingIsr = null;
    return this.maybeAdvanceHighWatermark();
  }

  /**
   * Whether an accepted ISR change answered with these epochs applies here: not after a LeaderAndIsr gave a new
   * leader epoch or a newer partition epoch (Kafka's handleAlterPartitionUpdate).
   */
  isrAnswerCurrent(leaderEpoch: number, partitionEpoch: number): boolean {
    return this.isLeader && leaderEpoch === this.leaderEpoch && partitionEpoch >= this.partitionEpoch;
  }

  /** The controller accepted an ISR change (AlterPartition): the high watermark follows the new ISR. */
  applyIsr(isr: readonly BrokerId[], leaderEpoch: number, partitionEpoch: number): boolean {
    if (leaderEpoch !== this.leaderEpoch || partitionEpoch < this.partitionEpoch) return false;
    this.isr = isr;
    this.partitionEpoch = partitionEpoch;
    if (this.isLeader) this.assertLeaderIsr();
    return this.maybeAdvanceHighWatermark();
  }

  /** A leader's ISR holds the leader itself and only assigned replicas (the controller only ever sends such). */
  private assertLeaderIsr(): void {
    assert(this.isr.includes(this.localBrokerId), `${this.key}: leader ${this.localBrokerId} not in its ISR`);
    for (const id of this.isr)
      assert(this.replicas.includes(id), `${this.key}: ISR member ${id} not a replica`);
  }

  /**
   * The high watermark is the smallest log end offset in the ISR, the leader's own counting only written bytes;
   * it never goes back. While an ISR change is in flight, the replicas it adds count as well: the controller
   * may have committed it already and elected one of them, which must hold every acknowledged record.
   *
   * A follower outside the ISR that is caught up (it reached the leader's end within replica.lag.time.max.ms)
   * counts too, as in Kafka's maybeIncrementLeaderHW: it is about to join, and the ISR check adds a follower only
   * once its log end reaches the high watermark. Left out, the high watermark moved past it with every write, and
   * under a steady load its last fetch was nearly always behind it: it stayed out of the ISR for as long as the
   * writes went on. A follower that stops fetching stops counting once that time has passed, and one that this
   * broker's metadata does not list as alive (its registration is gone: dead, or fenced) does not count at all.
   *
   * It does not move at all while the committed ISR is smaller than min.insync.replicas (underMinIsr), as in Kafka
   * 3.7+ (KAFKA-15583, in ZooKeeper mode too), so that every record below it is on at least min.insync.replicas
   * replicas: an acks=0/1 write taken meanwhile, on fewer replicas than the topic asks for, is not given to
   * consumers, who could otherwise read a record that a lost disk or an unclean election takes back. It becomes
   * visible once the ISR grows back (applyIsr moves the high watermark then), or once min.insync.replicas is
   * lowered and the next write or follower fetch moves it (a config change alone does not, as in Kafka).
   */
  maybeAdvanceHighWatermark(nowMs = this.clock.nowMs()): boolean {
    if (!this.isLeader || this.underMinIsr) return false;
    let hw = this.log.writtenEndOffset;
    const lowest = (id: BrokerId): void => {
      if (id === this.localBrokerId) return;
      // A follower's log end offset as its fetch gave it (the fetch handler checked it against this log).
      const end = (this.followers.get(id)?.logEndOffset ?? 0) as Offset;
      if (end < hw) hw = end;
    };
    for (const id of this.isr) lowest(id);
    if (this.pendingIsr !== null) for (const id of this.pendingIsr) lowest(id);
    const rules = this.followerRules;
    for (const id of this.replicas) {
      const caughtUpMs = this.followers.get(id)?.lastCaughtUpMs;
      if (caughtUpMs !== undefined && nowMs - caughtUpMs <= rules.lagTimeMaxMs && rules.isAlive(id))
        lowest(id);
    }
    if (hw > this.log.highWatermark) {
      assert(hw <= this.log.logEndOffset, `${this.key}: high watermark ${hw} past the log end`);
      this.log.setHighWatermark(hw);
      return true;
    }
    return false;
  }
}
