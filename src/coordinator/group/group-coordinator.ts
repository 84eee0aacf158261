// The classic group coordinator: JoinGroup, SyncGroup, Heartbeat and LeaveGroup drive each group's state machine
// (see classic-group.ts); OffsetCommit, OffsetFetch, OffsetDelete, DescribeGroups, ListGroups and DeleteGroups
// read and change groups and their offsets. Groups live in the partitions of __consumer_offsets that this
// broker leads: the partition of a group is groupPartition(groupId), and the records in that partition are the
// durable copy of the state held here.
//
// Ownership and concurrency: this object owns every group of the partitions it leads. Each method runs to
// completion without awaiting; writes to the log are started after the in-memory state is consistent, and their
// completion is a new event that re-checks the state (the group may have moved on, or the partition may have a
// new leader) before it applies anything. Deadlines (rebalance, session, pending sync, initial delay, offset
// expiry) are checked by tick(), which the broker calls on a timer and tests call after moving a ManualClock.
//
// Lifecycle: onLeadershipChange(partition, true) starts loading the partition (COORDINATOR_LOAD_IN_PROGRESS
// until done); onLeadershipChange(partition, false) drops its groups and answers their waiting requests with
// NOT_COORDINATOR; shutdown() does that for every partition.

import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import { decodeSubscription } from '../../protocol/consumer-protocol/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import {
  ClassicGroup,
  type CommittedOffset,
  type GroupState,
  type JoinResult,
  Member,
  offsetKey,
  type SyncResult,
  splitOffsetKey,
} from './classic-group.js';
import {
  ASSIGNORS,
  ConsumerGroup,
  ConsumerMember,
  type ConsumerRecord,
  computeTarget,
  consumerGroupRecords,
  fromWire,
  reconcile,
  restoreConsumerGroups,
  snapshot,
  type TopicInfo,
  toWire,
} from './consumer-group.js';
import type {
  CommitRequest,
  ConsumerHeartbeatRequest,
  ConsumerHeartbeatResult,
  DescribedGroup,
  FetchedOffset,
  FetchOffsetsResult,
  JoinRequest,
  LeaveResult,
  ListedGroup,
  MemberIdentity,
  PartitionErrors,
  SyncRequest,
  TxnCommitRequest,
} from './group-api.js';
import { groupPartition } from './group-partitioner.js';
import {
  cgRecord,
  decodeGroupRecord,
  type EncodedRecord,
  type GroupRecord,
  groupRecord,
  offsetRecord,
} from './group-records.js';
import type { AppendOptions, AppendVerificationGuard, GroupStorage } from './group-storage.js';
import { PendingTxnOffsets } from './pending-txn-offsets.js';

export type * from './group-api.js';

export interface GroupCoordinatorConfig {
  readonly groupMinSessionTimeoutMs: number;
  readonly groupMaxSessionTimeoutMs: number;
  readonly groupMaxSize: number;
  readonly groupInitialRebalanceDelayMs: number;
  readonly offsetsRetentionMinutes: number;
  readonly offsetsRetentionCheckIntervalMs: number;
  readonly offsetMetadataMaxBytes: number;
  /** group.coordinator.rebalance.protocols: 'consumer' turns on ConsumerGroupHeartbeat (KIP-848). */
  readonly groupCoordinatorRebalanceProtocols?: readonly string[];
  readonly groupConsumerSessionTimeoutMs?: number;
  readonly groupConsumerHeartbeatIntervalMs?: number;
  readonly groupConsumerMaxSize?: number;
}

export interface GroupCoordinatorOptions {
  readonly config: GroupCoordinatorConfig;
  readonly clock: Clock;
  readonly storage: GroupStorage;
  readonly logger: Logger;
  /** The partition count of __consumer_offsets (the topic's, once it exists; offsets.topic.num.partitions before). */
  readonly partitionCount: () => number;
  /** A fresh unique suffix for member ids (a UUID in production, a counter in tests). */
  readonly newId?: () => string;
  /** Runs loading later (setImmediate in production; tests run it at once). */
  readonly defer?: (fn: () => void) => void;
  /** The topics among `names` that exist, with their ids and partition counts (KIP-848 assignment). */
  readonly topics?: (names: readonly string[]) => Map<string, TopicInfo>;
  /**
   * Creates __consumer_offsets through the controller (FindCoordinator does so on first use); answers the number
   * of partitions created, 0 when none were (it existed, or the creation failed).
   */
  readonly createOffsetsTopic?: () => Promise<number>;
  /**
   * Runs `run` once after `delayMs` and answers a function that cancels it (the broker's setTimeout, not keeping
   * the process alive). With it, sessions end at their deadlines; without it (tests on a ManualClock), when tick()
   * is next called.
   */
  readonly schedule?: (run: () => void, delayMs: number) => () => void;
}

type PartitionStatus = {
  state: 'loading' | 'active';
  readonly token: number;
  /** Offsets of transactions of this partition's groups that wait for their marker. */
  pendingTxn: PendingTxnOffsets;
};

type OffsetValue = import('../../protocol/internal/index.js').OffsetCommitValue;

const EMPTY = Buffer.alloc(0);
const MINUTE_MS = 60_000;

export class GroupCoordinator {
  private readonly groups = new Map<string, ClassicGroup>();
  /** KIP-848 groups; their committed offsets live in a member-less ClassicGroup of the same id. */
  private readonly consumerGroups = new Map<string, ConsumerGroup>();
  private readonly partitions = new Map<number, PartitionStatus>();
  private nextToken = 1;
  private creatingTopic: Promise<number> | null = null;
  private nextExpiryCheckMs: number;
  private readonly newId: () => string;
  private readonly defer: (fn: () => void) => void;
  /** The timer armed for the earliest session deadline, as Kafka's heartbeat purgatory expires each one. */
  private sessionTimer: { readonly atMs: number; readonly cancel: () => void } | null = null;

  constructor(private readonly options: GroupCoordinatorOptions) {
    this.newId = options.newId ?? (() => crypto.randomUUID());
    this.defer = options.defer ?? ((fn) => setImmediate(fn));
    this.nextExpiryCheckMs = options.clock.monotonicMs() + options.config.offsetsRetentionCheckIntervalMs;
  }

  private get config(): GroupCoordinatorConfig {
    return this.options.config;
  }

  private now(): number {
    return this.options.clock.monotonicMs();
  }

  private wallNow(): number {
    return this.options.clock.nowMs();
  }

  partitionFor(groupId: string): number {
    return groupPartition(groupId, this.options.partitionCount());
  }

  /**
   * Creates __consumer_offsets once; concurrent callers wait for the one creation. Answers the partitions this
   * call created (what its requester's controller_mutation_rate is charged): 0 for a caller that found the
   * creation under way, as Kafka's AutoTopicCreationManager skips a topic already in flight.
   */
  ensureOffsetsTopic(): Promise<number> {
    const create = this.options.createOffsetsTopic;
    if (create === undefined) return Promise.resolve(0);
    if (this.creatingTopic !== null) return this.creatingTopic.then(() => 0);
    this.creatingTopic = create().finally(() => {
      this.creatingTopic = null;
    });
    return this.creatingTopic;
  }

  // ------------------------------------------------------------------ leadership and loading

  /** The broker became leader (true) or stopped leading (false) partition `partition` of __consumer_offsets. */
  onLeadershipChange(partition: number, isLeader: boolean): void {
    const status = this.partitions.get(partition);
    if (isLeader) {
      // A LeaderAndIsr that only changes the ISR tells us again; the loaded state stays.
      if (status !== undefined) return;
      const token = this.nextToken++;
      this.partitions.set(partition, { state: 'loading', token, pendingTxn: new PendingTxnOffsets() });
      this.defer(() => this.load(partition, token));
    } else if (status !== undefined) {
      this.unload(partition);
    }
  }

  /** Whether every partition this broker leads has been loaded (tests wait for this). */
  get loading(): boolean {
    for (const s of this.partitions.values()) if (s.state === 'loading') return true;
    return false;
  }

  shutdown(): void {
    for (const partition of [...this.partitions.keys()]) this.unload(partition);
    this.sessionTimer?.cancel();
    this.sessionTimer = null;
  }

  private unload(partition: number): void {
    this.partitions.delete(partition);
    this.dropGroupsOf(partition);
  }

  /** Forgets the partition's groups, answering their parked requests with NOT_COORDINATOR. */
  private dropGroupsOf(partition: number): void {
    for (const g of [...this.consumerGroups.values()]) {
      if (g.partition === partition) this.consumerGroups.delete(g.groupId);
    }
    for (const group of [...this.groups.values()]) {
      if (group.partition !== partition) continue;
      this.groups.delete(group.groupId);
      for (const m of group.members.values()) {
        m.awaitingJoin?.(joinError(m.memberId, ErrorCode.NOT_COORDINATOR));
        m.awaitingJoin = null;
        m.awaitingSync?.(syncError(ErrorCode.NOT_COORDINATOR));
        m.awaitingSync = null;
      }
    }
  }

  /**
   * Reads the partition's log from its start and replays every record through replay() and every transaction
   * marker through replayMarker(), the functions live writes apply their records with, so that a loaded partition
   * holds what the coordinator that wrote the log held. KIP-848 records are gathered and restored at the end.
   */
  private load(partition: number, token: number): void {
    const status = this.partitions.get(partition);
    if (status === undefined || status.token !== token) return;
    const consumerRecords: ConsumerRecord[] = [];
    let records = 0;
    try {
      for (const stored of this.options.storage.readAll(partition)) {
        const producerId = stored.producerId ?? -1;
        if (stored.marker !== undefined) {
          this.replayMarker(status, producerId, stored.marker === 'commit');
          continue;
        }
        if (stored.key === null) continue;
        let record: GroupRecord;
        try {
          record = decodeGroupRecord(stored.key, stored.value);
        } catch (err) {
          this.options.logger.warn(`skipping a malformed record of partition ${partition}: ${String(err)}`);
          continue;
        }
        records++;
        if (record.kind.startsWith('cg-')) consumerRecords.push(record as ConsumerRecord);
        else this.replay(status, partition, record, stored.offset ?? -1, producerId);
      }
    } catch (err) {
      // The partition stays in loading, without what was read so far; a later leadership change retries.
      this.dropGroupsOf(partition);
      status.pendingTxn = new PendingTxnOffsets();
      this.options.logger.error(`loading partition ${partition} failed: ${String(err)}`);
      return;
    }
    let groups = 0;
    for (const group of [...this.groups.values()]) {
      if (group.partition !== partition) continue;
      const empty = group.members.size === 0 && group.offsets.size === 0 && group.generationId === 0;
      if (empty && !status.pendingTxn.hasGroup(group.groupId)) this.groups.delete(group.groupId);
      else groups++;
    }
    for (const g of restoreConsumerGroups(
      partition,
      consumerRecords,
      this.now(),
      this.config.groupConsumerSessionTimeoutMs ?? 45_000,
    ))
      this.consumerGroups.set(g.groupId, g);
    status.state = 'active';
    if (records > 0)
      this.options.logger.info(`loaded partition ${partition}: ${records} records, ${groups} groups`);
  }

  // ------------------------------------------------------------------ replay

  /**
   * Applies one record of the partition's log to the in-memory state (Kafka's GroupCoordinatorShard.replay):
   * loading calls it for every record, in log order; live writes call it for the offset records they write, with
   * the offsets the log gave them. Group metadata is replayed only when loading: a live group is already in the
   * state its record describes (Kafka does not replay those either).
   */
  private replay(
    status: PartitionStatus,
    partition: number,
    record: GroupRecord,
    recordOffset: number,
    producerId: number,
  ): void {
    if (record.kind === 'offset') {
      this.replayOffset(
        status,
        partition,
        record.group,
        offsetKey(record.topic, record.partition),
        record.value,
        {
          recordOffset,
          producerId,
        },
      );
    } else if (record.kind === 'group') {
      // The group as its record describes it; offsets live in the group object here and carry over.
      const previous = this.groups.get(record.group);
      const group = this.restoreGroup(record.group, partition, record.value);
      for (const [key, o] of previous?.offsets ?? []) group.offsets.set(key, o);
      this.groups.set(record.group, group);
    }
  }

  /**
   * An offset record: a plain commit is the group's offset at once; one of a transaction (a transactional batch of
   * `producerId`) waits for the transaction's marker; a tombstone removes both.
   */
  private replayOffset(
    status: PartitionStatus,
    partition: number,
    groupId: string,
    key: string,
    value: OffsetValue | null,
    at: { recordOffset: number; producerId: number },
  ): void {
    if (value === null) {
      this.groups.get(groupId)?.offsets.delete(key);
      status.pendingTxn.remove(groupId, key);
      return;
    }
    const committed: CommittedOffset = {
      offset: Number(value.offset),
      leaderEpoch: value.leaderEpoch,
      metadata: value.metadata,
      commitTimestampMs: Number(value.commitTimestamp),
      expireTimestampMs: Number(value.expireTimestamp),
      recordOffset: at.recordOffset,
    };
    let group = this.groups.get(groupId);
    if (group === undefined) {
      // Offsets without group metadata belong to a "simple" group that only stores offsets.
      group = new ClassicGroup(groupId, partition, this.wallNow());
      this.groups.set(groupId, group);
    }
    if (at.producerId >= 0) status.pendingTxn.add(at.producerId, groupId, key, committed);
    else group.offsets.set(key, committed);
  }

  /** A tombstone this coordinator writes for the group's offset: applied at once, as replaying it would. */
  private replayTombstone(status: PartitionStatus, group: ClassicGroup, key: string): void {
    this.replayOffset(status, group.partition, group.groupId, key, null, {
      recordOffset: -1,
      producerId: -1,
    });
  }

  /**
   * A transaction marker of `producerId`: on COMMIT its pending offsets become the groups' offsets, except where a
   * plain commit written later in the log already holds the partition (Kafka keeps the later record); on ABORT
   * they are dropped.
   */
  private replayMarker(status: PartitionStatus, producerId: number, commit: boolean): void {
    const groups = status.pendingTxn.take(producerId);
    if (groups === undefined || !commit) return;
    for (const [groupId, offsets] of groups) {
      const group = this.groups.get(groupId);
      if (group === undefined || group.is('Dead')) continue;
      for (const [key, o] of offsets) {
        const existing = group.offsets.get(key);
        if (existing === undefined || o.recordOffset > existing.recordOffset) group.offsets.set(key, o);
      }
    }
  }

  /**
   * The transaction coordinator's marker for `producerId` is in partition `partition`'s log and replicated: the
   * transaction's offsets of the partition's groups are committed or dropped. A partition still loading will read
   * the marker from its log.
   */
  replayEndTransactionMarker(partition: number, producerId: number, commit: boolean): void {
    const status = this.partitions.get(partition);
    if (status?.state !== 'active') return;
    this.replayMarker(status, producerId, commit);
  }

  private restoreGroup(
    groupId: string,
    partition: number,
    value: import('../../protocol/internal/index.js').GroupMetadataValue | null,
  ): ClassicGroup {
    const group = new ClassicGroup(groupId, partition, this.wallNow());
    if (value === null) return group;
    group.generationId = value.generation;
    group.protocolType = value.protocolType === '' ? null : value.protocolType;
    group.protocolName = value.protocol;
    if (value.currentStateTimestamp >= 0n)
      group.currentStateTimestampMs = Number(value.currentStateTimestamp);
    for (const m of value.members) {
      const member = new Member(
        m.memberId,
        m.groupInstanceId,
        m.clientId,
        m.clientHost,
        m.rebalanceTimeout >= 0 ? m.rebalanceTimeout : m.sessionTimeout,
        m.sessionTimeout,
        value.protocolType,
        [{ name: value.protocol ?? '', metadata: m.subscription }],
      );
      member.assignment = m.assignment;
      member.sessionDeadlineMs = this.now() + m.sessionTimeout;
      group.add(member);
    }
    group.leaderId = value.leader;
    // A loaded group with members is Stable; the members either keep heartbeating or expire.
    group.state = group.members.size > 0 ? 'Stable' : 'Empty';
    return group;
  }

  /** NONE when this broker coordinates groupId now; NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS otherwise. */
  private coordinatorError(groupId: string): number {
    const status = this.partitions.get(this.partitionFor(groupId));
    if (status === undefined) return ErrorCode.NOT_COORDINATOR;
    return status.state === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE;
  }

  private isCurrent(group: ClassicGroup): boolean {
    return this.groups.get(group.groupId) === group;
  }

  // ------------------------------------------------------------------ JoinGroup

  join(request: JoinRequest): Promise<JoinResult> {
    const fail = (errorCode: number) => Promise.resolve(joinError(request.memberId, errorCode));
    if (request.groupId === '') return fail(ErrorCode.INVALID_GROUP_ID);
    const coordinator = this.coordinatorError(request.groupId);
    if (coordinator !== ErrorCode.NONE) return fail(coordinator);
    if (
      request.sessionTimeoutMs < this.config.groupMinSessionTimeoutMs ||
      request.sessionTimeoutMs > this.config.groupMaxSessionTimeoutMs
    ) {
      return fail(ErrorCode.INVALID_SESSION_TIMEOUT);
    }
    const consumer = this.consumerGroups.get(request.groupId);
    if (consumer !== undefined && consumer.members.size > 0)
      return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    if (consumer !== undefined) {
      // An empty KIP-848 group becomes a classic one (its offsets stay, in the classic group of the same id).
      this.consumerGroups.delete(consumer.groupId);
      const tombstones = [
        cgRecord.targetEpoch(consumer.groupId, null),
        cgRecord.topics(consumer.groupId, null),
        cgRecord.epoch(consumer.groupId, null),
      ];
      void this.append(consumer.partition, tombstones).catch((err: unknown) =>
        this.options.logger.error(String(err)),
      );
    }
    let group = this.groups.get(request.groupId);
    if (group === undefined) {
      if (request.memberId !== '') return fail(ErrorCode.UNKNOWN_MEMBER_ID);
      group = new ClassicGroup(request.groupId, this.partitionFor(request.groupId), this.wallNow());
    }
    if (group.is('Dead')) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (!group.supportsProtocols(request.protocolType, request.protocols)) {
      return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    }
    this.groups.set(group.groupId, group);
    return request.memberId === ''
      ? this.joinUnknownMember(group, request)
      : this.joinKnownMember(group, request);
  }

  private isFull(group: ClassicGroup): boolean {
    return group.members.size + group.pendingMembers.size >= this.config.groupMaxSize;
  }

  private joinUnknownMember(group: ClassicGroup, request: JoinRequest): Promise<JoinResult> {
    const newMemberId = `${request.groupInstanceId ?? request.clientId}-${this.newId()}`;
    if (request.groupInstanceId !== null) {
      const existing = group.staticMembers.get(request.groupInstanceId);
      if (existing !== undefined) return this.rejoinStaticMember(group, existing, newMemberId, request);
    }
    if (this.isFull(group)) {
      return Promise.resolve(joinError('', ErrorCode.GROUP_MAX_SIZE_REACHED));
    }
    if (request.groupInstanceId === null && request.requireKnownMemberId) {
      group.pendingMembers.set(newMemberId, this.now() + request.sessionTimeoutMs);
      return Promise.resolve(joinError(newMemberId, ErrorCode.MEMBER_ID_REQUIRED));
    }
    return this.addMemberAndRebalance(group, newMemberId, request);
  }

  private joinKnownMember(group: ClassicGroup, request: JoinRequest): Promise<JoinResult> {
    const { memberId } = request;
    if (group.pendingMembers.has(memberId)) return this.addMemberAndRebalance(group, memberId, request);
    const instanceError = this.instanceIdError(group, memberId, request.groupInstanceId);
    if (instanceError !== ErrorCode.NONE) return Promise.resolve(joinError(memberId, instanceError));
    const member = group.members.get(memberId);
    if (member === undefined) return Promise.resolve(joinError(memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    switch (group.state) {
      case 'PreparingRebalance':
        return this.updateMemberAndRebalance(group, member, request);
      case 'CompletingRebalance':
        if (member.sameProtocols(request.protocols)) {
          // A retried JoinGroup after the join phase: answer with this generation again.
          return Promise.resolve(this.currentGenerationResult(group, member, false));
        }
        return this.updateMemberAndRebalance(group, member, request);
      case 'Stable':
        if (memberId === group.leaderId || !member.sameProtocols(request.protocols)) {
          // The leader rejoins to make a new assignment (for example after a metadata change it noticed).
          return this.updateMemberAndRebalance(group, member, request);
        }
        member.sessionDeadlineMs = this.now() + member.sessionTimeoutMs;
        return Promise.resolve(this.currentGenerationResult(group, member, false));
      default:
        return Promise.resolve(joinError(memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    }
  }

  /**
   * Kafka's validateCurrentMember for a request that names a group.instance.id (JoinGroup of a known member,
   * SyncGroup, Heartbeat, OffsetCommit, TxnOffsetCommit): the id must be held by the member id asking.
   * FENCED_INSTANCE_ID when another member holds it; UNKNOWN_MEMBER_ID when no member does, whatever the member id
   * (even a live member's: the instance id names another member, which is gone).
   */
  private instanceIdError(group: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId === null) return ErrorCode.NONE;
    const holder = group.staticMembers.get(groupInstanceId);
    if (holder === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    return holder === memberId ? ErrorCode.NONE : ErrorCode.FENCED_INSTANCE_ID;
  }

  private currentGenerationResult(group: ClassicGroup, member: Member, skipAssignment: boolean): JoinResult {
    const isLeader = member.memberId === group.leaderId;
    return {
      errorCode: ErrorCode.NONE,
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leader: group.leaderId ?? '',
      memberId: member.memberId,
      skipAssignment,
      members: isLeader ? group.currentMemberMetadata() : [],
    };
  }

  private addMemberAndRebalance(
    group: ClassicGroup,
    memberId: string,
    request: JoinRequest,
  ): Promise<JoinResult> {
    const member = new Member(
      memberId,
      request.groupInstanceId,
      request.clientId,
      request.clientHost,
      request.rebalanceTimeoutMs,
      request.sessionTimeoutMs,
      request.protocolType,
      request.protocols,
    );
    member.sessionDeadlineMs = this.now() + request.sessionTimeoutMs;
    return new Promise((resolve) => {
      member.awaitingJoin = resolve;
      group.add(member);
      if (group.is('PreparingRebalance') && group.initialDelayDeadlineMs >= 0) group.newMemberAdded = true;
      this.maybePrepareRebalance(group, `${memberId} joined`);
      this.tryCompleteJoin(group);
    });
  }

  private updateMemberAndRebalance(
    group: ClassicGroup,
    member: Member,
    request: JoinRequest,
  ): Promise<JoinResult> {
    member.protocols = request.protocols;
    member.rebalanceTimeoutMs = request.rebalanceTimeoutMs;
    member.sessionTimeoutMs = request.sessionTimeoutMs;
    member.clientId = request.clientId;
    member.clientHost = request.clientHost;
    member.sessionDeadlineMs = this.now() + request.sessionTimeoutMs;
    return new Promise((resolve) => {
      const earlier = member.awaitingJoin;
      member.awaitingJoin = resolve;
      // A member that sent JoinGroup twice gets its first answer now; only the newest one waits.
      earlier?.(joinError(member.memberId, ErrorCode.REBALANCE_IN_PROGRESS));
      this.maybePrepareRebalance(group, `${member.memberId} rejoined`);
      this.tryCompleteJoin(group);
    });
  }

  /**
   * A static member joined without its member id (a restarted process): it takes over under a new id and the old
   * id is fenced. In a Stable group whose selected protocol does not change, no rebalance is needed: the member gets
   * the current generation and, through SyncGroup, the assignment it had.
   *
   * As Kafka (updateStaticMemberAndRebalance), the member's new protocols are kept and only the protocol the group
   * would select is compared, not the metadata: a restarted consumer's subscription differs from the one it last
   * joined with (the Java client's carries its owned partitions and generation, none after a restart), and
   * comparing it would rebalance the group on every restart, which static membership exists to avoid.
   */
  private rejoinStaticMember(
    group: ClassicGroup,
    oldMemberId: string,
    newMemberId: string,
    request: JoinRequest,
  ): Promise<JoinResult> {
    const old = group.members.get(oldMemberId)!;
    const previousLeader = group.leaderId;
    old.awaitingJoin?.(joinError(oldMemberId, ErrorCode.FENCED_INSTANCE_ID));
    old.awaitingJoin = null;
    old.awaitingSync?.(syncError(ErrorCode.FENCED_INSTANCE_ID));
    old.awaitingSync = null;
    const member = group.replaceStaticMember(request.groupInstanceId!, oldMemberId, newMemberId);
    if (!group.is('Stable')) return this.updateMemberAndRebalance(group, member, request);
    const previous: StaticMemberSettings = {
      protocols: member.protocols,
      sessionTimeoutMs: member.sessionTimeoutMs,
      rebalanceTimeoutMs: member.rebalanceTimeoutMs,
    };
    // join() checked that the new protocols share one with every member, so the group still has a candidate.
    member.protocols = request.protocols;
    if (group.selectProtocol() === group.protocolName) {
      member.sessionDeadlineMs = this.now() + request.sessionTimeoutMs;
      member.sessionTimeoutMs = request.sessionTimeoutMs;
      member.rebalanceTimeoutMs = request.rebalanceTimeoutMs;
      const generation = group.generationId;
      const result = request.supportsSkippingAssignment
        ? this.currentGenerationResult(group, member, member.memberId === group.leaderId)
        : this.answerAsFollower(group, member, previousLeader);
      return this.storeGroup(group, assignmentsOf(group)).then((errorCode) => {
        if (errorCode !== ErrorCode.NONE) {
          this.revertStaticTakeover(group, request.groupInstanceId!, newMemberId, oldMemberId, previous);
          return joinError('', errorCode);
        }
        if (!this.isCurrent(group) || group.generationId !== generation) {
          return joinError(newMemberId, ErrorCode.REBALANCE_IN_PROGRESS);
        }
        return result;
      });
    }
    return this.updateMemberAndRebalance(group, member, request);
  }

  /**
   * The takeover of a static member in a Stable group could not be stored. As Kafka, the group goes back to the
   * member as it was: its old member id holds the instance id again (so a member still running under it, whose
   * parked requests were already fenced, keeps heartbeating and committing), with its old protocols and timeouts
   * and a fresh session; the joiner is answered the error without a member id, so it joins again from scratch.
   * Nothing is reverted when the group changed meanwhile (another takeover, the member gone, the partition lost):
   * the instance id no longer names the member this join created.
   */
  private revertStaticTakeover(
    group: ClassicGroup,
    groupInstanceId: string,
    newMemberId: string,
    oldMemberId: string,
    previous: StaticMemberSettings,
  ): void {
    if (!this.isCurrent(group) || group.staticMembers.get(groupInstanceId) !== newMemberId) return;
    this.options.logger.warn(
      `group ${group.groupId}: the takeover of static member ${groupInstanceId} by ${newMemberId} could not be ` +
        `stored; ${oldMemberId} holds it again`,
    );
    const member = group.replaceStaticMember(groupInstanceId, newMemberId, oldMemberId);
    member.protocols = previous.protocols;
    member.sessionTimeoutMs = previous.sessionTimeoutMs;
    member.rebalanceTimeoutMs = previous.rebalanceTimeoutMs;
    member.sessionDeadlineMs = this.now() + member.sessionTimeoutMs;
  }

  /**
   * The answer to a static member that rejoined a Stable group with JoinGroup below v9, which cannot be told to skip
   * the assignment. As Kafka, it names the leader as it was before the takeover (the old member id when this member
   * led) and lists no members, so that a rejoining leader does not take itself for the leader and run its assignor:
   * a Stable group ignores the assignment its SyncGroup would carry and answers each member the one it has.
   */
  private answerAsFollower(group: ClassicGroup, member: Member, previousLeader: string | null): JoinResult {
    return {
      ...this.currentGenerationResult(group, member, false),
      leader: previousLeader ?? '',
      members: [],
    };
  }

  private maybePrepareRebalance(group: ClassicGroup, reason: string): void {
    if (group.is('Stable') || group.is('CompletingRebalance') || group.is('Empty')) {
      this.prepareRebalance(group, reason);
    }
  }

  private prepareRebalance(group: ClassicGroup, reason: string): void {
    if (group.is('CompletingRebalance')) this.resetAssignment(group, ErrorCode.REBALANCE_IN_PROGRESS);
    group.pendingSync.clear();
    group.pendingSyncDeadlineMs = -1;
    const wasEmpty = group.is('Empty');
    group.transitionTo('PreparingRebalance', this.wallNow());
    const rebalanceTimeoutMs = group.rebalanceTimeoutMs();
    const delayMs = this.config.groupInitialRebalanceDelayMs;
    if (wasEmpty && delayMs > 0) {
      // The first members of an empty group wait a little for others, so one rebalance covers them all.
      group.initialDelayDeadlineMs = this.now() + Math.min(delayMs, rebalanceTimeoutMs);
      group.initialDelayRemainingMs = Math.max(rebalanceTimeoutMs - delayMs, 0);
      group.newMemberAdded = false;
    } else {
      group.initialDelayDeadlineMs = -1;
      group.rebalanceDeadlineMs = this.now() + rebalanceTimeoutMs;
    }
    this.options.logger.debug(
      `group ${group.groupId} rebalancing (generation ${group.generationId}): ${reason}`,
    );
    this.tryCompleteJoin(group);
  }

  private tryCompleteJoin(group: ClassicGroup): void {
    if (group.is('PreparingRebalance') && group.initialDelayDeadlineMs < 0 && group.hasAllMembersJoined()) {
      this.completeJoin(group);
    }
  }

  /** The join phase ends: members that did not rejoin are dropped and everyone waiting gets the new generation. */
  private completeJoin(group: ClassicGroup): void {
    for (const m of [...group.members.values()]) {
      if (m.awaitingJoin === null && !m.isStatic) group.remove(m.memberId);
    }
    if (!this.isCurrent(group) || group.is('Dead')) return;
    if (group.members.size === 0) {
      group.generationId++;
      group.protocolName = null;
      group.leaderId = null;
      group.transitionTo('Empty', this.wallNow());
      this.storeInBackground(group);
      return;
    }
    // The leader must be a member that rejoined. When only static members that did not rejoin remain, the
    // phase is extended until they rejoin or their sessions expire.
    const leader = group.members.get(group.leaderId ?? '');
    if (leader === undefined || leader.awaitingJoin === null) {
      const joined = [...group.members.values()].find((m) => m.awaitingJoin !== null);
      if (joined === undefined) {
        group.rebalanceDeadlineMs = this.now() + group.rebalanceTimeoutMs();
        return;
      }
      group.leaderId = joined.memberId;
    }
    group.generationId++;
    group.protocolName = group.selectProtocol();
    group.transitionTo('CompletingRebalance', this.wallNow());
    const now = this.now();
    for (const m of group.members.values()) {
      const answer = m.awaitingJoin;
      if (answer === null) continue;
      m.awaitingJoin = null;
      m.sessionDeadlineMs = now + m.sessionTimeoutMs;
      group.pendingSync.add(m.memberId);
      answer(this.currentGenerationResult(group, m, false));
    }
    group.pendingSyncDeadlineMs = now + group.rebalanceTimeoutMs();
    this.options.logger.debug(
      `group ${group.groupId} generation ${group.generationId}: ${group.members.size} members, leader ${group.leaderId}`,
    );
  }

  private resetAssignment(group: ClassicGroup, errorCode: number): void {
    for (const m of group.members.values()) {
      m.assignment = EMPTY;
      const answer = m.awaitingSync;
      m.awaitingSync = null;
      answer?.(syncError(errorCode));
    }
  }

  // ------------------------------------------------------------------ SyncGroup

  sync(request: SyncRequest): Promise<SyncResult> {
    const fail = (errorCode: number) => Promise.resolve(syncError(errorCode));
    if (request.groupId === '') return fail(ErrorCode.INVALID_GROUP_ID);
    const coordinator = this.coordinatorError(request.groupId);
    // As Kafka's handleSyncGroup: a coordinator still loading the group has lost the rebalance the member was in,
    // which must start over at JoinGroup; REBALANCE_IN_PROGRESS says so, where COORDINATOR_LOAD_IN_PROGRESS is an
    // error the Java consumer's SyncGroup handler does not expect (poll() throws it to the application).
    if (coordinator === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return fail(ErrorCode.REBALANCE_IN_PROGRESS);
    if (coordinator !== ErrorCode.NONE) return fail(coordinator);
    const group = this.groups.get(request.groupId);
    if (group === undefined) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    if (group.is('Dead')) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    const instanceError = this.instanceIdError(group, request.memberId, request.groupInstanceId);
    if (instanceError !== ErrorCode.NONE) return fail(instanceError);
    const member = group.members.get(request.memberId);
    if (member === undefined) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    if (request.generationId !== group.generationId) return fail(ErrorCode.ILLEGAL_GENERATION);
    if (
      (request.protocolType !== null && request.protocolType !== group.protocolType) ||
      (request.protocolName !== null && request.protocolName !== group.protocolName)
    ) {
      return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    }
    switch (group.state) {
      case 'Empty':
        return fail(ErrorCode.UNKNOWN_MEMBER_ID);
      case 'PreparingRebalance':
        return fail(ErrorCode.REBALANCE_IN_PROGRESS);
      case 'Stable':
        group.pendingSync.delete(member.memberId);
        member.sessionDeadlineMs = this.now() + member.sessionTimeoutMs;
        return Promise.resolve(this.syncAnswer(group, member));
      case 'CompletingRebalance':
        return new Promise((resolve) => {
          const earlier = member.awaitingSync;
          member.awaitingSync = resolve;
          earlier?.(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
          group.pendingSync.delete(member.memberId);
          member.sessionDeadlineMs = this.now() + member.sessionTimeoutMs;
          if (member.memberId === group.leaderId) this.storeLeaderAssignment(group, request);
        });
      default:
        return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
  }

  private syncAnswer(group: ClassicGroup, member: Member): SyncResult {
    return {
      errorCode: ErrorCode.NONE,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      assignment: member.assignment,
    };
  }

  /** The leader's assignment is written to the log; once durable the group is Stable and every member answered. */
  private storeLeaderAssignment(group: ClassicGroup, request: SyncRequest): void {
    const assignments = new Map<string, Buffer>();
    for (const m of group.members.keys()) assignments.set(m, EMPTY);
    for (const a of request.assignments)
      if (assignments.has(a.memberId)) assignments.set(a.memberId, a.assignment);
    const generation = group.generationId;
    void this.storeGroup(group, assignments)
      .then((errorCode) => {
        if (!this.isCurrent(group) || !group.is('CompletingRebalance') || group.generationId !== generation)
          return;
        if (errorCode !== ErrorCode.NONE) {
          this.resetAssignment(group, errorCode);
          this.prepareRebalance(group, 'storing the assignment failed');
          return;
        }
        for (const m of group.members.values()) m.assignment = assignments.get(m.memberId) ?? EMPTY;
        group.transitionTo('Stable', this.wallNow());
        for (const m of group.members.values()) {
          const answer = m.awaitingSync;
          m.awaitingSync = null;
          answer?.(this.syncAnswer(group, m));
        }
      })
      .catch((err: unknown) => this.reportBug(group, err));
  }

  private reportBug(group: ClassicGroup, err: unknown): void {
    this.options.logger.error(`group ${group.groupId}: ${err instanceof Error ? err.stack : String(err)}`);
  }

  /** Writes the group's metadata record; resolves with the error code a member should see. */
  private storeGroup(group: ClassicGroup, assignments: ReadonlyMap<string, Buffer>): Promise<number> {
    const protocol = group.protocolName;
    const value = {
      protocolType: group.protocolType ?? '',
      generation: group.generationId,
      protocol,
      leader: group.leaderId,
      currentStateTimestamp: BigInt(group.currentStateTimestampMs),
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeout: m.rebalanceTimeoutMs,
        sessionTimeout: m.sessionTimeoutMs,
        subscription: protocol === null ? EMPTY : m.metadataFor(protocol),
        assignment: assignments.get(m.memberId) ?? EMPTY,
      })),
    };
    return this.append(group.partition, [groupRecord(group.groupId, value)]);
  }

  private storeInBackground(group: ClassicGroup): void {
    void this.storeGroup(group, assignmentsOf(group))
      .then((errorCode) => {
        if (errorCode !== ErrorCode.NONE) {
          this.options.logger.warn(`storing group ${group.groupId} failed with error ${errorCode}`);
        }
      })
      .catch((err: unknown) => this.reportBug(group, err));
  }

  /** Appends and maps log errors to what group clients understand, as Kafka does. */
  private async append(
    partition: number,
    records: readonly EncodedRecord[],
    options?: AppendOptions,
  ): Promise<number> {
    let errorCode: number;
    try {
      errorCode = await this.options.storage.append(partition, records, options);
    } catch (err) {
      this.options.logger.error(`appending to partition ${partition} failed: ${String(err)}`);
      errorCode = ErrorCode.KAFKA_STORAGE_ERROR;
    }
    switch (errorCode) {
      case ErrorCode.NONE:
        return ErrorCode.NONE;
      case ErrorCode.REQUEST_TIMED_OUT:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE;
      case ErrorCode.INVALID_PRODUCER_EPOCH:
      case ErrorCode.INVALID_TXN_STATE:
        // A transactional commit of a producer fenced by a newer epoch, or whose transaction ended after it was
        // verified (KIP-890): Kafka passes both on.
        return errorCode;
      default: {
        // The log's errors as an offset commit's; any other one is not the client's to act on.
        const converted = offsetCommitError(errorCode);
        return converted === errorCode ? ErrorCode.UNKNOWN_SERVER_ERROR : converted;
      }
    }
  }

  // ------------------------------------------------------------------ Heartbeat and LeaveGroup

  heartbeat(groupId: string, generationId: number, memberId: string, groupInstanceId: string | null): number {
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID;
    const coordinator = this.coordinatorError(groupId);
    // As Kafka's handleHeartbeat: while the group loads, the heartbeat is answered NONE blindly; the loaded group
    // gives its members a fresh session, and one that is gone hears so at its next heartbeat.
    if (coordinator === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return ErrorCode.NONE;
    if (coordinator !== ErrorCode.NONE) return coordinator;
    const group = this.groups.get(groupId);
    if (group === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (group.is('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const instanceError = this.instanceIdError(group, memberId, groupInstanceId);
    if (instanceError !== ErrorCode.NONE) return instanceError;
    const member = group.members.get(memberId);
    if (group.is('Empty') || member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    member.sessionDeadlineMs = this.now() + member.sessionTimeoutMs;
    return group.is('PreparingRebalance') ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE;
  }

  leave(groupId: string, members: readonly MemberIdentity[]): LeaveResult {
    const coordinator = groupId === '' ? ErrorCode.INVALID_GROUP_ID : this.coordinatorError(groupId);
    if (coordinator !== ErrorCode.NONE) return { errorCode: coordinator, members: [] };
    const group = this.groups.get(groupId);
    const results = members.map((m) => ({ ...m, errorCode: ErrorCode.UNKNOWN_MEMBER_ID as number }));
    if (group === undefined) return { errorCode: ErrorCode.NONE, members: results };
    if (group.is('Dead')) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: [] };
    for (const r of results) {
      r.errorCode = this.leaveOne(group, r.memberId, r.groupInstanceId);
    }
    return { errorCode: ErrorCode.NONE, members: results };
  }

  private leaveOne(group: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId !== null) {
      const holder = group.staticMembers.get(groupInstanceId);
      if (holder === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (memberId !== '' && memberId !== holder) return ErrorCode.FENCED_INSTANCE_ID;
      this.removeMemberAndUpdateGroup(group, group.members.get(holder)!, `${groupInstanceId} left`);
      return ErrorCode.NONE;
    }
    if (group.pendingMembers.delete(memberId)) {
      this.tryCompleteJoin(group);
      return ErrorCode.NONE;
    }
    const member = group.members.get(memberId);
    if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    this.removeMemberAndUpdateGroup(group, member, `${memberId} left`);
    return ErrorCode.NONE;
  }

  private removeMemberAndUpdateGroup(group: ClassicGroup, member: Member, reason: string): void {
    const join = member.awaitingJoin;
    const sync = member.awaitingSync;
    member.awaitingJoin = null;
    member.awaitingSync = null;
    group.remove(member.memberId);
    join?.(joinError(member.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    sync?.(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    if (group.is('Stable') || group.is('CompletingRebalance')) this.prepareRebalance(group, reason);
    else if (group.is('PreparingRebalance')) this.tryCompleteJoin(group);
  }

  // ------------------------------------------------------------------ deadlines

  /** Runs every deadline that has passed. Called by the broker's timer and by tests after moving the clock. */
  tick(): void {
    const now = this.now();
    for (const group of [...this.groups.values()]) {
      if (!this.isCurrent(group)) continue;
      try {
        this.tickGroup(group, now);
      } catch (err) {
        // A broken invariant in one group must not stop the deadlines of every other group (or the broker).
        this.options.logger.error(
          `group ${group.groupId}: ${err instanceof Error ? err.stack : String(err)}`,
        );
      }
    }
    for (const g of this.consumerGroups.values()) {
      const before = snapshot(g);
      for (const m of [...g.members.values()]) {
        const revocationLate = m.revocationDeadlineMs >= 0 && now >= m.revocationDeadlineMs;
        if (now < m.sessionDeadlineMs && !revocationLate) continue;
        // A member that keeps partitions others are waiting for is removed like one whose session lapsed.
        g.members.delete(m.memberId);
        g.groupEpoch++;
        this.options.logger.debug(
          `consumer group ${g.groupId}: ${m.memberId} removed (${revocationLate ? 'revocation timed out' : 'session expired'})`,
        );
      }
      const records = g.members.size === before.members.size ? [] : consumerGroupRecords(g, before);
      if (records.length > 0) {
        void this.append(g.partition, records).catch((err: unknown) =>
          this.options.logger.error(String(err)),
        );
      }
    }
    if (now >= this.nextExpiryCheckMs) {
      this.nextExpiryCheckMs = now + this.config.offsetsRetentionCheckIntervalMs;
      this.expireOffsets();
    }
    this.armSessionTimer(now);
  }

  /**
   * Sessions end at their deadlines, not at the next periodic tick (up to its period late). Every tick looks for
   * the earliest session deadline and arms one timer for it; a deadline is always at least
   * group.min.session.timeout.ms away when set, so a tick sees it before it passes. A timer armed for a deadline
   * that a heartbeat moved later runs a tick that removes nobody and arms the next one.
   */
  private armSessionTimer(now: number): void {
    const schedule = this.options.schedule;
    if (schedule === undefined) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const group of this.groups.values()) {
      for (const m of group.members.values()) {
        if (m.awaitingJoin === null && m.awaitingSync === null && m.sessionDeadlineMs < earliest)
          earliest = m.sessionDeadlineMs;
      }
    }
    for (const group of this.consumerGroups.values()) {
      for (const m of group.members.values()) earliest = Math.min(earliest, m.sessionDeadlineMs);
    }
    if (earliest === Number.POSITIVE_INFINITY) return;
    if (this.sessionTimer !== null && this.sessionTimer.atMs <= earliest) return;
    this.sessionTimer?.cancel();
    // One millisecond more: a timer may fire up to a millisecond before the monotonic clock reaches the deadline.
    const cancel = schedule(
      () => {
        this.sessionTimer = null;
        this.tick();
      },
      Math.max(0, Math.ceil(earliest - now)) + 1,
    );
    this.sessionTimer = { atMs: earliest, cancel };
  }

  private tickGroup(group: ClassicGroup, now: number): void {
    this.tickRebalance(group, now);
    for (const [id, deadline] of [...group.pendingMembers]) {
      if (now < deadline) continue;
      group.pendingMembers.delete(id);
      this.tryCompleteJoin(group);
    }
    for (const m of [...group.members.values()]) {
      if (m.awaitingJoin !== null || m.awaitingSync !== null || now < m.sessionDeadlineMs) continue;
      if (group.members.get(m.memberId) !== m) continue;
      this.removeMemberAndUpdateGroup(group, m, `session of ${m.memberId} expired`);
    }
    if (
      (group.is('CompletingRebalance') || group.is('Stable')) &&
      group.pendingSyncDeadlineMs >= 0 &&
      now >= group.pendingSyncDeadlineMs
    ) {
      group.pendingSyncDeadlineMs = -1;
      const missing = [...group.pendingSync];
      group.pendingSync.clear();
      if (missing.length > 0) {
        for (const id of missing) {
          const m = group.members.get(id);
          if (m !== undefined)
            this.removeMemberAndUpdateGroup(group, m, `${id} did not send SyncGroup in time`);
        }
      }
    }
  }

  private tickRebalance(group: ClassicGroup, now: number): void {
    if (!group.is('PreparingRebalance')) return;
    if (group.initialDelayDeadlineMs >= 0) {
      if (now < group.initialDelayDeadlineMs) return;
      if (group.newMemberAdded && group.initialDelayRemainingMs > 0) {
        const delay = Math.min(this.config.groupInitialRebalanceDelayMs, group.initialDelayRemainingMs);
        group.initialDelayRemainingMs = Math.max(group.initialDelayRemainingMs - delay, 0);
        group.newMemberAdded = false;
        group.initialDelayDeadlineMs = now + delay;
        return;
      }
      group.initialDelayDeadlineMs = -1;
      this.completeJoin(group);
      return;
    }
    if (now >= group.rebalanceDeadlineMs) this.completeJoin(group);
  }

  // ------------------------------------------------------------------ offsets

  commitOffsets(request: CommitRequest): Promise<PartitionErrors> {
    const coordinator = this.coordinatorError(request.groupId);
    if (coordinator !== ErrorCode.NONE) return Promise.resolve(allPartitions(request, coordinator));
    const consumer = this.consumerGroups.get(request.groupId);
    let group = this.groups.get(request.groupId);
    if (consumer !== undefined && consumer.members.size > 0) {
      const invalid = consumerCommitError(consumer, request);
      if (invalid !== ErrorCode.NONE) return Promise.resolve(allPartitions(request, invalid));
      if (group === undefined) {
        group = new ClassicGroup(request.groupId, consumer.partition, this.wallNow());
        this.groups.set(group.groupId, group);
      }
    } else if (group === undefined) {
      // A commit outside any generation creates a "simple" group that only stores offsets.
      if (request.generationId >= 0)
        return Promise.resolve(allPartitions(request, ErrorCode.ILLEGAL_GENERATION));
      group = new ClassicGroup(request.groupId, this.partitionFor(request.groupId), this.wallNow());
      this.groups.set(group.groupId, group);
    } else {
      const invalid = this.commitError(group, request);
      if (invalid !== ErrorCode.NONE) return Promise.resolve(allPartitions(request, invalid));
    }
    const { records, accepted, response } = this.offsetRecords(request);
    if (records.length === 0) return Promise.resolve(response);
    const target = group;
    const partition = target.partition;
    let baseOffset = -1;
    for (const a of accepted) target.pendingCommits.set(a.key, (target.pendingCommits.get(a.key) ?? 0) + 1);
    const write = this.append(partition, records, {
      onAppended: (offset) => {
        baseOffset = offset;
      },
    });
    return write.then((errorCode) => {
      // A commit no longer pending was dropped meanwhile (its topic deleted): its offset is not applied.
      const stillPending = accepted.map((a) => target.pendingCommits.has(a.key));
      for (const a of accepted) {
        const n = (target.pendingCommits.get(a.key) ?? 1) - 1;
        if (n <= 0) target.pendingCommits.delete(a.key);
        else target.pendingCommits.set(a.key, n);
      }
      const status = this.partitions.get(partition);
      if (errorCode === ErrorCode.NONE && this.isCurrent(target) && status !== undefined) {
        accepted.forEach((a, i) => {
          if (!stillPending[i]) return;
          const recordOffset = baseOffset < 0 ? -1 : baseOffset + i;
          this.replayOffset(status, partition, target.groupId, a.key, a.value, {
            recordOffset,
            producerId: -1,
          });
        });
      }
      const failed =
        errorCode !== ErrorCode.NONE ? errorCode : this.isCurrent(target) ? 0 : ErrorCode.NOT_COORDINATOR;
      return failAccepted(response, failed);
    });
  }

  /**
   * TxnOffsetCommit: the offsets are written as a transactional batch of the producer and wait, pending, for the
   * transaction's marker in the group's partition (replayEndTransactionMarker): committed on COMMIT, dropped on
   * ABORT. They are pending from the moment the leader has their record, so that OffsetFetch with require_stable
   * answers UNSTABLE_OFFSET_COMMIT for them from then on. A commit that names a member or a generation (KIP-447,
   * TxnOffsetCommit v3+) is checked against the group as Kafka's coordinator does (txnCommitError), so that a
   * zombie whose group moved on cannot commit offsets in its transaction.
   */
  commitTransactionalOffsets(request: TxnCommitRequest): Promise<PartitionErrors> {
    const coordinator = this.coordinatorError(request.groupId);
    if (coordinator !== ErrorCode.NONE) return Promise.resolve(allPartitions(request, coordinator));
    let group = this.groups.get(request.groupId);
    if (group === undefined) {
      const partition =
        this.consumerGroups.get(request.groupId)?.partition ?? this.partitionFor(request.groupId);
      group = new ClassicGroup(request.groupId, partition, this.wallNow());
      this.groups.set(group.groupId, group);
    } else if (group.is('Dead')) {
      return Promise.resolve(allPartitions(request, ErrorCode.COORDINATOR_NOT_AVAILABLE));
    }
    const target = group;
    // As Kafka 3.9's handleTxnCommitOffsets: the transaction is verified first (KIP-890), then the member and
    // generation are checked and the offsets appended with the verification's guard.
    if (request.verify === undefined) return this.commitVerifiedOffsets(target, request, null);
    return Promise.resolve(request.verify(target.partition)).then((verified) =>
      verified.errorCode !== ErrorCode.NONE
        ? allPartitions(request, offsetCommitError(verified.errorCode))
        : this.commitVerifiedOffsets(target, request, verified.guard),
    );
  }

  /** TxnOffsetCommit once its transaction is verified (`guard`: what the append must still find, if any). */
  private commitVerifiedOffsets(
    target: ClassicGroup,
    request: TxnCommitRequest,
    guard: AppendVerificationGuard | null,
  ): Promise<PartitionErrors> {
    // The verification may have waited for another broker: the partition may have moved, the group gone.
    const coordinator = this.coordinatorError(request.groupId);
    if (coordinator !== ErrorCode.NONE) return Promise.resolve(allPartitions(request, coordinator));
    if (!this.isCurrent(target) || target.is('Dead')) {
      return Promise.resolve(allPartitions(request, ErrorCode.COORDINATOR_NOT_AVAILABLE));
    }
    const invalid = this.txnCommitError(target, request);
    if (invalid !== ErrorCode.NONE) return Promise.resolve(allPartitions(request, invalid));
    const { records, accepted, response } = this.offsetRecords(request);
    if (records.length === 0) return Promise.resolve(response);
    const partition = target.partition;
    const producerId = request.producerId;
    const options: AppendOptions = {
      producer: { producerId, producerEpoch: request.producerEpoch },
      ...(guard === null ? {} : { verificationGuard: guard }),
      onAppended: (baseOffset) => {
        const status = this.partitions.get(partition);
        if (status === undefined || !this.isCurrent(target)) return;
        accepted.forEach((a, i) => {
          this.replayOffset(status, partition, target.groupId, a.key, a.value, {
            recordOffset: baseOffset + i,
            producerId,
          });
        });
      },
    };
    return this.append(partition, records, options).then((errorCode) => {
      const failed =
        errorCode !== ErrorCode.NONE ? errorCode : this.isCurrent(target) ? 0 : ErrorCode.NOT_COORDINATOR;
      return failAccepted(response, failed);
    });
  }

  /** The records of a commit's offsets, and the answer for each partition (OFFSET_METADATA_TOO_LARGE or NONE). */
  private offsetRecords(request: CommitRequest | TxnCommitRequest): {
    records: EncodedRecord[];
    accepted: { key: string; value: OffsetValue }[];
    response: PartitionErrors;
  } {
    const nowMs = this.wallNow();
    const retentionMs = 'retentionTimeMs' in request ? request.retentionTimeMs : -1;
    const records: EncodedRecord[] = [];
    const accepted: { key: string; value: OffsetValue }[] = [];
    const response = request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p): { partitionIndex: number; errorCode: number } => {
        const metadata = p.committedMetadata ?? '';
        // Kafka compares a Java String's length (UTF-16 units, as a JavaScript string's), not its UTF-8 bytes.
        if (metadata.length > this.config.offsetMetadataMaxBytes) {
          return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE };
        }
        const value: OffsetValue = {
          offset: BigInt(p.committedOffset),
          leaderEpoch: p.committedLeaderEpoch,
          metadata,
          // Only -1 (Kafka's DEFAULT_TIMESTAMP) means now; OffsetCommit v1's other values are kept, negative too.
          commitTimestamp: BigInt(p.commitTimestampMs !== -1 ? p.commitTimestampMs : nowMs),
          expireTimestamp: BigInt(retentionMs >= 0 ? nowMs + retentionMs : -1),
        };
        records.push(offsetRecord(request.groupId, t.name, p.partitionIndex, value));
        accepted.push({ key: offsetKey(t.name, p.partitionIndex), value });
        return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE };
      }),
    }));
    return { records, accepted, response };
  }

  /**
   * Kafka's rule for TxnOffsetCommit (GroupCoordinator.validateOffsetCommit, 3.5+, for a transactional commit). A
   * commit naming no member, generation or instance id (a producer from before KIP-447, or offsets kept outside any
   * group) is not checked, and an Empty group takes one with generation -1 (the admin client's, or a consumer's
   * outside group management). Any other must come from the current member of the current generation: an instance
   * id must be held by that member id (FENCED_INSTANCE_ID when another member holds it, UNKNOWN_MEMBER_ID when none
   * does), the member id must be in the group (UNKNOWN_MEMBER_ID, an empty one included), and the generation must
   * be the group's (ILLEGAL_GENERATION, -1 included: librdkafka keeps its member id with generation -1 after a
   * heartbeat answered ILLEGAL_GENERATION, and such a zombie must not commit offsets of partitions a rebalance is
   * moving). A KIP-848 group checks the member epoch instead.
   */
  private txnCommitError(group: ClassicGroup, request: TxnCommitRequest): number {
    const { memberId, generationId, groupInstanceId } = request;
    if (memberId === '' && generationId < 0 && groupInstanceId === null) return ErrorCode.NONE;
    const consumer = this.consumerGroups.get(request.groupId);
    if (consumer !== undefined && consumer.members.size > 0) {
      return consumerCommitError(consumer, request);
    }
    if (generationId < 0 && group.is('Empty')) return ErrorCode.NONE;
    const instanceError = this.instanceIdError(group, memberId, groupInstanceId);
    if (instanceError !== ErrorCode.NONE) return instanceError;
    if (!group.members.has(memberId)) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    return ErrorCode.NONE;
  }

  private commitError(group: ClassicGroup, request: CommitRequest): number {
    if (group.is('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (request.generationId < 0 && group.is('Empty')) return ErrorCode.NONE;
    const instanceError = this.instanceIdError(group, request.memberId, request.groupInstanceId);
    if (instanceError !== ErrorCode.NONE) return instanceError;
    const member = group.members.get(request.memberId);
    if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (request.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    // Only a member of the current generation hears that the group is rebalancing, after the checks above (as
    // Kafka's validateOffsetCommit): one dropped from the group, or of an older generation, must learn that its
    // partitions are gone (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION) rather than keep them until its next poll.
    if (group.is('CompletingRebalance')) return ErrorCode.REBALANCE_IN_PROGRESS;
    // A commit from a live member counts as a heartbeat.
    member.sessionDeadlineMs = this.now() + member.sessionTimeoutMs;
    return ErrorCode.NONE;
  }

  /**
   * OffsetFetch with require_stable, answered only once this broker is shown to still lead the group's partition
   * (GroupStorage.confirmLeadership); NOT_COORDINATOR when that cannot be shown in time. A coordinator cut off from
   * ZooKeeper is not told that its partition moved, and answering from its memory let an exactly-once processor
   * resume from offsets that newer commits at the new coordinator had replaced, and process its input twice.
   */
  async fetchStableOffsets(
    groupId: string,
    topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null,
    member: { memberId: string; memberEpoch: number } | null = null,
  ): Promise<FetchOffsetsResult> {
    const before = this.coordinatorError(groupId);
    if (before !== ErrorCode.NONE) return failedFetch(topics, before);
    const partition = this.partitionFor(groupId);
    const confirmed = (await this.options.storage.confirmLeadership?.(partition)) ?? true;
    if (!confirmed && this.coordinatorError(groupId) === ErrorCode.NONE) {
      this.options.logger.warn(
        `stable offset fetch of group ${groupId}: the followers of partition ${partition} did not confirm this ` +
          'broker as their leader in time; answering NOT_COORDINATOR',
      );
      return failedFetch(topics, ErrorCode.NOT_COORDINATOR);
    }
    return this.fetchOffsets(groupId, topics, true, member);
  }

  fetchOffsets(
    groupId: string,
    topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null,
    requireStable: boolean,
    member: { memberId: string; memberEpoch: number } | null = null,
  ): FetchOffsetsResult {
    let coordinator = this.coordinatorError(groupId);
    // OffsetFetch v9 from a KIP-848 member names it and its epoch; the group checks both.
    const consumer = this.consumerGroups.get(groupId);
    if (coordinator === ErrorCode.NONE && member !== null && consumer !== undefined) {
      const m = consumer.members.get(member.memberId);
      if (m === undefined) coordinator = ErrorCode.UNKNOWN_MEMBER_ID;
      else if (member.memberEpoch !== m.memberEpoch) coordinator = ErrorCode.STALE_MEMBER_EPOCH;
    }
    if (coordinator !== ErrorCode.NONE) return failedFetch(topics, coordinator);
    const group = this.groups.get(groupId);
    const pendingTxn = this.partitions.get(this.partitionFor(groupId))?.pendingTxn;
    const answer = (topic: string, partition: number): FetchedOffset => {
      const key = offsetKey(topic, partition);
      // KIP-447: a commit being written, or an offset of a transaction without its marker yet, is unstable.
      if (requireStable && (group?.pendingCommits.has(key) || pendingTxn?.has(groupId, key))) {
        return noOffset(partition, ErrorCode.UNSTABLE_OFFSET_COMMIT);
      }
      const o = group?.offsets.get(key);
      if (o === undefined) return noOffset(partition, ErrorCode.NONE);
      return {
        partitionIndex: partition,
        committedOffset: o.offset,
        committedLeaderEpoch: o.leaderEpoch,
        metadata: o.metadata,
        errorCode: ErrorCode.NONE,
      };
    };
    if (topics !== null) {
      return {
        errorCode: ErrorCode.NONE,
        topics: topics.map((t) => ({
          name: t.name,
          partitions: t.partitionIndexes.map((p) => answer(t.name, p)),
        })),
      };
    }
    const byTopic = new Map<string, FetchedOffset[]>();
    for (const key of group?.offsets.keys() ?? []) {
      const { topic, partition } = splitOffsetKey(key);
      let list = byTopic.get(topic);
      if (list === undefined) byTopic.set(topic, (list = []));
      list.push(answer(topic, partition));
    }
    return {
      errorCode: ErrorCode.NONE,
      topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    };
  }

  deleteOffsets(
    groupId: string,
    topics: readonly { name: string; partitions: readonly { partitionIndex: number }[] }[],
  ): Promise<{ errorCode: number; topics: PartitionErrors }> {
    const fail = (errorCode: number) => Promise.resolve({ errorCode, topics: [] });
    // As Kafka's isValidGroupId: the empty group id is kept for OffsetCommit, OffsetFetch, DescribeGroups and
    // DeleteGroups only, so OffsetDelete refuses it before the coordinator is asked, even when it holds offsets.
    if (groupId === '') return fail(ErrorCode.INVALID_GROUP_ID);
    const coordinator = this.coordinatorError(groupId);
    if (coordinator !== ErrorCode.NONE) return fail(coordinator);
    const group = this.groups.get(groupId);
    if (group === undefined || group.is('Dead')) return fail(ErrorCode.GROUP_ID_NOT_FOUND);
    // As Kafka: a live group's offsets can be deleted only when it is a consumer group, whose members' subscriptions
    // say which topics it still reads; another kind of group (Connect's workers, a custom protocol) may still use any.
    if (!group.is('Empty') && group.protocolType !== 'consumer') return fail(ErrorCode.NON_EMPTY_GROUP);
    const subscribed = this.subscribedTopics(group);
    const status = this.partitions.get(group.partition)!;
    const records: EncodedRecord[] = [];
    const removed: string[] = [];
    const result = topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => {
        if (subscribed === null || subscribed.has(t.name)) {
          return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC };
        }
        const key = offsetKey(t.name, p.partitionIndex);
        // As Kafka: a tombstone also when only a transaction's offset is pending (it is dropped with it).
        if (group.offsets.has(key) || status.pendingTxn.has(groupId, key)) {
          records.push(offsetRecord(groupId, t.name, p.partitionIndex, null));
          removed.push(key);
        }
        return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE };
      }),
    }));
    if (records.length === 0) return Promise.resolve({ errorCode: ErrorCode.NONE, topics: result });
    for (const key of removed) this.replayTombstone(status, group, key);
    return this.append(group.partition, records).then((errorCode) => ({ errorCode, topics: result }));
  }

  /**
   * Topics the members of a consumer group subscribe to (none for an empty group), or null when they are not known:
   * not a consumer group, no protocol chosen yet, or a member's metadata in a layout Brook cannot read. As Kafka's
   * subscribedTopics, unknown means every topic may be in use: its offsets are neither deleted nor expired.
   */
  private subscribedTopics(group: ClassicGroup): Set<string> | null {
    const topics = new Set<string>();
    if (group.is('Empty')) return topics;
    if (group.protocolType !== 'consumer' || group.protocolName === null) return null;
    for (const m of group.members.values()) {
      try {
        for (const t of decodeSubscription(m.metadataFor(group.protocolName)).value.topics) topics.add(t);
      } catch {
        return null;
      }
    }
    return topics;
  }

  /** Offsets of empty groups expire offsets.retention.minutes after the group emptied; empty groups then go. */
  private expireOffsets(): void {
    const nowMs = this.wallNow();
    const retentionMs = this.config.offsetsRetentionMinutes * MINUTE_MS;
    for (const group of [...this.groups.values()]) {
      if (this.partitions.get(group.partition)?.state !== 'active') continue;
      if ((this.consumerGroups.get(group.groupId)?.members.size ?? 0) > 0) continue;
      // An empty group's offsets age from when it emptied (or from the commit, for a group that only stores
      // offsets); a Stable consumer group's offsets of topics it no longer subscribes to age from the commit
      // (KIP-211). Other groups keep theirs.
      const stable = group.is('Stable') && group.protocolType === 'consumer';
      if (!group.is('Empty') && !stable) continue;
      const subscribed = this.subscribedTopics(group);
      if (subscribed === null) continue;
      const status = this.partitions.get(group.partition)!;
      const records: EncodedRecord[] = [];
      for (const [key, o] of [...group.offsets]) {
        if (group.pendingCommits.has(key) || status.pendingTxn.has(group.groupId, key)) continue;
        if (subscribed.has(splitOffsetKey(key).topic)) continue;
        const base =
          group.protocolType === null || stable ? o.commitTimestampMs : group.currentStateTimestampMs;
        const expired = o.expireTimestampMs >= 0 ? nowMs >= o.expireTimestampMs : nowMs >= base + retentionMs;
        if (!expired) continue;
        this.replayTombstone(status, group, key);
        const { topic, partition } = splitOffsetKey(key);
        records.push(offsetRecord(group.groupId, topic, partition, null));
      }
      if (
        group.offsets.size === 0 &&
        group.pendingCommits.size === 0 &&
        group.members.size === 0 &&
        !status.pendingTxn.hasGroup(group.groupId)
      ) {
        group.transitionTo('Dead', nowMs);
        this.groups.delete(group.groupId);
        records.push(groupRecord(group.groupId, null));
      }
      if (records.length === 0) continue;
      this.options.logger.info(`group ${group.groupId}: ${records.length} expired records removed`);
      void this.append(group.partition, records).catch((err: unknown) => this.reportBug(group, err));
    }
  }

  /**
   * Partitions of deleted topics (UpdateMetadata's LeaderDuringDelete): their committed offsets go from every group
   * held here, with tombstones, and a group left empty without offsets goes too, as Kafka's
   * GroupCoordinator.handleDeletedPartitions does; else a topic created again under the same name would resume
   * from the old topic's offsets. Like Kafka, no group tombstone for a group that only stored offsets. Offsets that
   * open transactions hold for them go too (Kafka's removeOffsets drops them; its new coordinator writes their
   * tombstones, as here), or the transaction's COMMIT marker would bring them back; so do commits being written
   * (not applied once acknowledged; the tombstone follows their record). A group with commits in flight stays.
   */
  removeOffsetsOfDeletedPartitions(partitions: readonly { topic: string; partition: number }[]): void {
    if (partitions.length === 0) return;
    const deleted = new Set(partitions.map((p) => offsetKey(p.topic, p.partition)));
    const nowMs = this.wallNow();
    for (const group of [...this.groups.values()]) {
      const status = this.partitions.get(group.partition);
      if (status?.state !== 'active') continue;
      const records: EncodedRecord[] = [];
      const writing = group.pendingCommits.size > 0;
      const held = new Set([
        ...group.offsets.keys(),
        ...status.pendingTxn.keysOf(group.groupId),
        ...group.pendingCommits.keys(),
      ]);
      for (const key of held) {
        if (!deleted.has(key)) continue;
        group.pendingCommits.delete(key);
        this.replayTombstone(status, group, key);
        const { topic, partition } = splitOffsetKey(key);
        records.push(offsetRecord(group.groupId, topic, partition, null));
      }
      if (records.length === 0) continue;
      const consumerMembers = this.consumerGroups.get(group.groupId)?.members.size ?? 0;
      if (
        group.is('Empty') &&
        consumerMembers === 0 &&
        group.offsets.size === 0 &&
        !writing &&
        !status.pendingTxn.hasGroup(group.groupId)
      ) {
        group.transitionTo('Dead', nowMs);
        this.groups.delete(group.groupId);
        if (group.generationId > 0) records.push(groupRecord(group.groupId, null));
      }
      this.options.logger.info(`group ${group.groupId}: offsets of deleted partitions removed`);
      void this.append(group.partition, records).catch((err: unknown) => this.reportBug(group, err));
    }
  }

  // ------------------------------------------------------------------ KIP-848 consumer groups

  /**
   * A heartbeat changes the group in memory at once; the records of the change are written to the group's
   * partition and the answer waits for them, so what a member was told is durable.
   */
  async consumerGroupHeartbeat(request: ConsumerHeartbeatRequest): Promise<ConsumerHeartbeatResult> {
    const before = snapshot(this.consumerGroups.get(request.groupId));
    const result = this.consumerGroupHeartbeatNow(request);
    const group = this.consumerGroups.get(request.groupId);
    if (result.errorCode !== ErrorCode.NONE || group === undefined) return result;
    const records = consumerGroupRecords(group, before);
    if (records.length === 0) return result;
    const errorCode = await this.append(group.partition, records);
    return errorCode === ErrorCode.NONE ? result : { ...result, errorCode, assignment: null };
  }

  private consumerGroupHeartbeatNow(request: ConsumerHeartbeatRequest): ConsumerHeartbeatResult {
    const intervalMs = this.config.groupConsumerHeartbeatIntervalMs ?? 5000;
    const fail = (errorCode: number, errorMessage: string | null = null): ConsumerHeartbeatResult => ({
      errorCode,
      errorMessage,
      memberId: null,
      memberEpoch: -1,
      heartbeatIntervalMs: 0,
      assignment: null,
    });
    if (!(this.config.groupCoordinatorRebalanceProtocols ?? []).includes('consumer')) {
      return fail(
        ErrorCode.UNSUPPORTED_VERSION,
        'group.coordinator.rebalance.protocols does not include consumer',
      );
    }
    if (request.groupId === '') return fail(ErrorCode.INVALID_REQUEST, 'the group id is empty');
    const coordinator = this.coordinatorError(request.groupId);
    if (coordinator !== ErrorCode.NONE) return fail(coordinator);
    const classic = this.groups.get(request.groupId);
    if (classic !== undefined && !classic.is('Empty')) {
      return fail(ErrorCode.GROUP_ID_NOT_FOUND, `${request.groupId} is a classic group with members`);
    }
    let group = this.consumerGroups.get(request.groupId);
    let member: ConsumerMember | undefined;
    if (request.memberEpoch === 0) {
      if (request.subscribedTopicNames === null || request.subscribedTopicNames.length === 0) {
        return fail(ErrorCode.INVALID_REQUEST, 'joining needs subscribed topic names');
      }
      if (
        request.serverAssignor !== null &&
        !(ASSIGNORS as readonly string[]).includes(request.serverAssignor)
      ) {
        return fail(ErrorCode.UNSUPPORTED_ASSIGNOR, `assignor ${request.serverAssignor}`);
      }
      if (group === undefined) {
        group = new ConsumerGroup(request.groupId, this.partitionFor(request.groupId));
        this.consumerGroups.set(group.groupId, group);
      }
      const memberId = request.memberId !== '' ? request.memberId : this.newId();
      const holder =
        request.instanceId === null
          ? undefined
          : [...group.members.values()].find(
              (m) => m.instanceId === request.instanceId && m.memberId !== memberId,
            );
      if (holder !== undefined && !holder.leftTemporarily) {
        return fail(
          ErrorCode.UNRELEASED_INSTANCE_ID,
          `instance ${request.instanceId} is held by ${holder.memberId}`,
        );
      }
      member = group.members.get(memberId);
      if (holder !== undefined) {
        // A static member back under its instance id takes over its predecessor's epoch and assignment, and the
        // group does not rebalance.
        member = new ConsumerMember(
          memberId,
          request.instanceId,
          request.rackId,
          request.clientId,
          request.clientHost,
        );
        member.memberEpoch = holder.memberEpoch;
        member.previousMemberEpoch = holder.previousMemberEpoch;
        member.subscribedTopicNames = holder.subscribedTopicNames;
        member.rebalanceTimeoutMs = holder.rebalanceTimeoutMs;
        member.serverAssignor = holder.serverAssignor;
        group.members.delete(holder.memberId);
        group.members.set(memberId, member);
        const target = group.target.get(holder.memberId);
        group.target.delete(holder.memberId);
        if (target !== undefined) group.target.set(memberId, target);
      } else if (member === undefined) {
        if (group.members.size >= (this.config.groupConsumerMaxSize ?? Number.MAX_SAFE_INTEGER)) {
          return fail(ErrorCode.GROUP_MAX_SIZE_REACHED);
        }
        member = new ConsumerMember(
          memberId,
          request.instanceId,
          request.rackId,
          request.clientId,
          request.clientHost,
        );
        group.members.set(memberId, member);
      }
      if (holder === undefined) {
        member.memberEpoch = 0;
        member.owned = new Map();
        member.assigned = new Map();
        group.groupEpoch++;
      }
    } else {
      member = group?.members.get(request.memberId);
      if (group === undefined || member === undefined) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
      if (request.memberEpoch === -2 && member.instanceId !== null) {
        member.leftTemporarily = true;
        return { ...fail(ErrorCode.NONE), memberId: member.memberId, memberEpoch: -2 };
      }
      if (request.memberEpoch < 0) {
        group.members.delete(member.memberId);
        group.groupEpoch++;
        return { ...fail(ErrorCode.NONE), memberId: member.memberId, memberEpoch: -1 };
      }
      if (request.memberEpoch !== member.memberEpoch && request.memberEpoch !== member.previousMemberEpoch) {
        return fail(ErrorCode.FENCED_MEMBER_EPOCH);
      }
    }
    if (request.subscribedTopicNames !== null) {
      const names = [...request.subscribedTopicNames].sort();
      if (names.join('\u0000') !== [...member.subscribedTopicNames].sort().join('\u0000')) {
        member.subscribedTopicNames = names;
        if (request.memberEpoch !== 0) group.groupEpoch++;
      }
    }
    if (request.topicPartitions !== null) member.owned = fromWire(request.topicPartitions);
    if (request.rebalanceTimeoutMs >= 0) member.rebalanceTimeoutMs = request.rebalanceTimeoutMs;
    if (request.serverAssignor !== null) group.assignorName = request.serverAssignor;
    member.sessionDeadlineMs = this.now() + (this.config.groupConsumerSessionTimeoutMs ?? 45_000);
    this.maybeComputeTarget(group);
    reconcile(group, member, this.now());
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: member.memberId,
      memberEpoch: member.memberEpoch,
      heartbeatIntervalMs: intervalMs,
      assignment: toWire(member.assigned),
    };
  }

  private consumerTopics(group: ConsumerGroup): Map<string, TopicInfo> {
    return this.options.topics?.(group.subscribedTopics()) ?? new Map();
  }

  /** A new group epoch (membership, subscriptions, or partition counts changed) gets a new target assignment. */
  private maybeComputeTarget(group: ConsumerGroup): void {
    const topics = this.consumerTopics(group);
    const key = [...topics.values()].map((t) => `${t.topicId}:${t.partitionCount}`).join(',');
    if (key !== group.metadataKey) {
      group.metadataKey = key;
      group.topicsMetadata = [...topics.values()];
      group.groupEpoch++;
    }
    if (group.assignmentEpoch === group.groupEpoch) return;
    group.target = computeTarget(group, group.assignorName, topics);
    group.assignmentEpoch = group.groupEpoch;
  }

  describeConsumerGroup(groupId: string): {
    errorCode: number;
    group: ConsumerGroup | undefined;
    topicName: (topicId: string) => string;
  } {
    const coordinator = this.coordinatorError(groupId);
    const group = coordinator === ErrorCode.NONE ? this.consumerGroups.get(groupId) : undefined;
    const names = new Map<string, string>();
    if (group !== undefined)
      for (const t of this.consumerTopics(group).values()) names.set(t.topicId, t.name);
    return {
      errorCode:
        coordinator !== ErrorCode.NONE ? coordinator : group === undefined ? ErrorCode.GROUP_ID_NOT_FOUND : 0,
      group,
      topicName: (id) => names.get(id) ?? '',
    };
  }

  // ------------------------------------------------------------------ describe, list, delete

  describe(groupId: string): DescribedGroup {
    const coordinator = this.coordinatorError(groupId);
    const group = coordinator === ErrorCode.NONE ? this.groups.get(groupId) : undefined;
    if (group === undefined) {
      return {
        errorCode: coordinator,
        groupId,
        groupState: 'Dead',
        protocolType: '',
        protocolData: '',
        members: [],
      };
    }
    const stable = group.is('Stable');
    return {
      errorCode: ErrorCode.NONE,
      groupId,
      groupState: group.state,
      protocolType: group.protocolType ?? '',
      protocolData: stable ? (group.protocolName ?? '') : '',
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: stable && group.protocolName !== null ? m.metadataFor(group.protocolName) : EMPTY,
        memberAssignment: stable ? m.assignment : EMPTY,
      })),
    };
  }

  list(
    statesFilter: readonly string[],
    typesFilter: readonly string[],
  ): { errorCode: number; groups: ListedGroup[] } {
    const states = new Set(statesFilter.map((s) => s.toLowerCase()));
    const types = new Set(typesFilter.map((s) => s.toLowerCase()));
    const groups: ListedGroup[] = [];
    for (const g of this.consumerGroups.values()) {
      if (types.size > 0 && !types.has('consumer')) continue;
      if (states.size > 0 && !states.has(g.state.toLowerCase())) continue;
      groups.push({
        groupId: g.groupId,
        protocolType: 'consumer',
        groupState: g.state,
        groupType: 'consumer',
      });
    }
    for (const g of this.groups.values()) {
      if (g.is('Dead') || this.consumerGroups.has(g.groupId)) continue;
      if (types.size > 0 && !types.has('classic')) continue;
      if (states.size > 0 && !states.has(g.state.toLowerCase())) continue;
      groups.push({
        groupId: g.groupId,
        protocolType: g.protocolType ?? '',
        groupState: g.state,
        groupType: 'classic',
      });
    }
    return { errorCode: this.loading ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE, groups };
  }

  deleteGroup(groupId: string): Promise<number> {
    const coordinator = this.coordinatorError(groupId);
    if (coordinator !== ErrorCode.NONE) return Promise.resolve(coordinator);
    const consumer = this.consumerGroups.get(groupId);
    if (consumer !== undefined && consumer.members.size > 0)
      return Promise.resolve(ErrorCode.NON_EMPTY_GROUP);
    this.consumerGroups.delete(groupId);
    const consumerTombstones =
      consumer === undefined
        ? []
        : [
            cgRecord.targetEpoch(groupId, null),
            cgRecord.topics(groupId, null),
            cgRecord.epoch(groupId, null),
          ];
    const group = this.groups.get(groupId);
    if (group === undefined || group.is('Dead')) {
      if (consumer === undefined) return Promise.resolve(ErrorCode.GROUP_ID_NOT_FOUND);
      return this.append(consumer.partition, consumerTombstones);
    }
    if (!group.is('Empty')) return Promise.resolve(ErrorCode.NON_EMPTY_GROUP);
    // Tombstones for its offsets and for offsets its open transactions would commit.
    const status = this.partitions.get(group.partition)!;
    const keys = new Set([...group.offsets.keys(), ...status.pendingTxn.keysOf(groupId)]);
    for (const key of keys) this.replayTombstone(status, group, key);
    group.transitionTo('Dead', this.wallNow());
    this.groups.delete(groupId);
    const records = [...keys].map((key) => {
      const { topic, partition } = splitOffsetKey(key);
      return offsetRecord(groupId, topic, partition, null);
    });
    records.push(groupRecord(groupId, null), ...consumerTombstones);
    return this.append(group.partition, records);
  }

  /** The state of a group, for tests and tools; undefined when this coordinator does not hold it. */
  groupState(groupId: string): GroupState | undefined {
    return this.groups.get(groupId)?.state;
  }

  generationOf(groupId: string): number | undefined {
    return this.groups.get(groupId)?.generationId;
  }
}

/** OffsetCommit from a KIP-848 member: it must be known and name its current (or previous) member epoch. */
function consumerCommitError(
  group: ConsumerGroup,
  request: { readonly memberId: string; readonly generationId: number },
): number {
  const member = group.members.get(request.memberId);
  if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
  if (request.generationId !== member.memberEpoch && request.generationId !== member.previousMemberEpoch) {
    return ErrorCode.STALE_MEMBER_EPOCH;
  }
  return ErrorCode.NONE;
}

/**
 * A TxnOffsetCommit's verification error as Kafka's GroupMetadataManager.maybeConvertOffsetCommitError answers it:
 * a lost connection to the transaction coordinator is retried without a coordinator lookup, the append's errors as
 * an offset commit's; the transaction's own (INVALID_TXN_STATE, INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE,
 * INVALID_PRODUCER_ID_MAPPING, CONCURRENT_TRANSACTIONS, a coordinator that moved) pass on as they are.
 */
function offsetCommitError(errorCode: number): number {
  switch (errorCode) {
    case ErrorCode.NETWORK_EXCEPTION:
      return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.INVALID_FETCH_SIZE:
      return ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
    default:
      return errorCode;
  }
}

function allPartitions(request: CommitRequest | TxnCommitRequest, errorCode: number): PartitionErrors {
  return request.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
  }));
}

/** OffsetFetch's answer when the coordinator cannot answer: the error at the top and in each partition asked for. */
function failedFetch(
  topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null,
  errorCode: number,
): FetchOffsetsResult {
  return {
    errorCode,
    topics: (topics ?? []).map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((p) => noOffset(p, errorCode)),
    })),
  };
}

/** The answer with `errorCode` (a failed write) for every partition that was accepted; as is for NONE. */
function failAccepted(response: PartitionErrors, errorCode: number): PartitionErrors {
  if (errorCode === ErrorCode.NONE) return response;
  for (const t of response)
    for (const p of t.partitions) if (p.errorCode === ErrorCode.NONE) p.errorCode = errorCode;
  return response;
}

/** What a static member's takeover changes of the member, kept to revert it when the takeover is not stored. */
interface StaticMemberSettings {
  readonly protocols: Member['protocols'];
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
}

function joinError(memberId: string, errorCode: number): JoinResult {
  return {
    errorCode,
    generationId: -1,
    protocolType: null,
    protocolName: null,
    leader: '',
    memberId,
    skipAssignment: false,
    members: [],
  };
}

function syncError(errorCode: number): SyncResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: EMPTY };
}

function noOffset(partitionIndex: number, errorCode: number): FetchedOffset {
  return { partitionIndex, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode };
}

function assignmentsOf(group: ClassicGroup): Map<string, Buffer> {
  return new Map([...group.members.values()].map((m) => [m.memberId, m.assignment]));
}
