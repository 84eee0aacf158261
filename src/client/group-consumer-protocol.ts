// Membership of a consumer group with the KIP-848 consumer protocol: one ConsumerGroupHeartbeat API instead of
// JoinGroup/SyncGroup. The coordinator computes assignments (server-side assignor); the member sends its
// subscription and the partitions it owns, and reconciles towards the assignment the coordinator returns.
//
// Lifecycle: ensureActive() (from poll) joins with member epoch 0, then applies any assignment that heartbeats
// brought in: the auto-commit of every owned position, then partitions no longer assigned are revoked (listener)
// and new ones taken, and a heartbeat acknowledges what the member now owns. Heartbeats run on their own timer at the interval the coordinator
// sets. Fencing errors (UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH) lose the partitions and rejoin at epoch 0. Any other
// error (FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID, GROUP_AUTHORIZATION_FAILED, ...) is fatal, as Kafka's
// transitionToFatal: the partitions are lost, the next poll throws it, and the member never heartbeats again.
// leave() sends member epoch -1 (or -2 for a static member, which keeps its place for the session timeout).

import { ErrorCode } from '../protocol/errors.js';
import type { ConsumerGroupHeartbeatResponse } from '../protocol/messages/68-consumer-group-heartbeat.js';
import { ApiKey } from '../protocol/registry.js';
import { type Cluster, sleep } from './cluster.js';
import { KafkaClientError, KafkaProtocolError } from './errors.js';
import type { GroupConsumerHooks, RebalanceListener } from './group.js';
import { findCoordinator, type TopicPartition, tpKey } from './requests.js';

export interface ConsumerProtocolMemberOptions {
  cluster: Cluster;
  groupId: string;
  groupInstanceId: string | null;
  rebalanceTimeoutMs: number;
  /** Server assignor name (uniform, range) or null for the coordinator's default. */
  serverAssignor: string | null;
  /** client.rack, sent as the heartbeat's RackId for the coordinator's assignor. */
  rackId: string | null;
  topics: string[] | RegExp;
  listener: RebalanceListener | undefined;
  consumer: GroupConsumerHooks;
}

export class ConsumerProtocolMember {
  private memberId = '';
  private memberEpoch = 0;
  /** The last positive member epoch the coordinator gave and the member id with it (lastMemberEpoch). */
  private lastEpoch = { generationId: -1, memberId: '' };
  private coordinatorId = -1;
  private heartbeatIntervalMs = 3000;
  private timer: NodeJS.Timeout | null = null;
  private joined = false;
  private pending: { topicId: string; partitions: number[] }[] | null = null;
  private fatal: Error | null = null;
  /** A fatal error ended the membership (Kafka's FATAL state): no heartbeat and no rejoin after it. */
  private failed = false;
  private left = false;
  private inFlight: Promise<void> | null = null;
  private topics: string[] | RegExp;
  private subscribed: string[] = [];
  /** Kafka's currentAssignment: what the last completed reconciliation gave the member, and its heartbeats name. */
  private reconciled: TopicPartition[] = [];
  /** Assigned partitions whose onPartitionsAssigned has not succeeded yet: not fetched, and not acknowledged. */
  private awaitingCallback = new Set<string>();

  constructor(private readonly o: ConsumerProtocolMemberOptions) {
    this.topics = o.topics;
  }

  /**
   * The member epoch and member id an offset commit carries, as Kafka's CommitRequestManager: the coordinator's
   * epoch when above 0, else -1 and no member id (not joined yet, rejoining at epoch 0, or left), which a group
   * without members takes as a commit from outside group management; epoch 0 no member holds.
   */
  generation(): { generationId: number; memberId: string; groupInstanceId: string | null } {
    const inGroup = this.memberEpoch > 0;
    return {
      generationId: inGroup ? this.memberEpoch : -1,
      memberId: inGroup ? this.memberId : '',
      groupInstanceId: this.o.groupInstanceId,
    };
  }

  /**
   * What Consumer.groupMetadata() names: the last positive member epoch and its member id, -1 and "" before the
   * first. As Kafka's AsyncKafkaConsumer, an epoch of 0 or less (fenced, rejoining) leaves it as it was, so that a
   * transactional offset commit made with it after a fencing is refused by the coordinator as a stale member's.
   */
  lastMemberEpoch(): { generationId: number; memberId: string; groupInstanceId: string | null } {
    return { ...this.lastEpoch, groupInstanceId: this.o.groupInstanceId };
  }

  isStable(): boolean {
    return this.joined && this.pending === null;
  }

  subscribedTopics(): string[] {
    return this.subscribed;
  }

  /** A new subscribe() call: new topics, and its listener replaces the previous one (none given: none). */
  setSubscription(topics: string[] | RegExp, listener: RebalanceListener | undefined): void {
    this.o.listener = listener;
    this.topics = topics;
    this.subscribed = [];
  }

  polled(): void {}

  private async resolveTopics(): Promise<string[]> {
    if (Array.isArray(this.topics)) return [...this.topics].sort();
    const all = await this.o.cluster.fetchMetadata(null);
    const re = this.topics;
    return [...all.topics.values()]
      .filter((t) => !t.isInternal && re.test(t.name))
      .map((t) => t.name)
      .sort();
  }

  /**
   * Joins when needed and applies an assignment the coordinator sent. Always true: a KIP-848 join is a heartbeat
   * the coordinator answers at once, nothing for a poll's timeout to cut short.
   */
  async ensureActive(_deadlineMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    if (this.fatal !== null) {
      const err = this.fatal;
      this.fatal = null;
      throw err;
    }
    if (this.left || this.failed) return true;
    if (this.subscribed.length === 0) {
      this.subscribed = await this.resolveTopics();
      this.o.cluster.addTopics(this.subscribed);
    }
    for (let attempt = 0; !this.joined && !this.left; attempt++) {
      await this.heartbeatNow();
      if (!this.joined) await sleep(this.o.cluster.backoffMs(Math.min(attempt, 5)));
      if (this.fatal !== null) return this.ensureActive();
    }
    if (this.pending !== null) await this.reconcile();
    return true;
  }

  /**
   * Kafka's reconcile: a failed rebalance callback leaves the member reconciling the same target. It acknowledges
   * nothing (its heartbeats go on naming the partitions of the last reconciliation that completed), the poll throws
   * the error, and the next poll tries again, unless a newer target came meanwhile or the member lost its place.
   */
  private async reconcile(): Promise<void> {
    const target = this.pending!;
    this.pending = null;
    try {
      await this.applyTarget(target);
    } catch (err) {
      if (this.pending === null && this.joined && !this.failed && !this.left) this.pending = target;
      throw err;
    }
    // Tell the coordinator what this member owns now, so it can hand revoked partitions to others: a heartbeat
    // already out was sent with the previous partitions, so the acknowledgement waits for it and goes after it.
    await this.inFlight?.catch(() => {});
    await this.heartbeatNow();
  }

  private async applyTarget(target: { topicId: string; partitions: number[] }[]): Promise<void> {
    const byId = new Map<string, string>();
    for (const t of this.o.cluster.snapshot.topics.values()) byId.set(t.topicId, t.name);
    if (target.some((t) => !byId.has(t.topicId))) {
      const snapshot = await this.o.cluster.refreshMetadata(this.subscribed);
      for (const t of snapshot.topics.values()) byId.set(t.topicId, t.name);
    }
    const assigned: TopicPartition[] = [];
    for (const t of target) {
      const topic = byId.get(t.topicId);
      if (topic === undefined) continue;
      for (const partition of t.partitions) assigned.push({ topic, partition });
    }
    const now = new Set(assigned.map((tp) => tpKey(tp.topic, tp.partition)));
    const owned = this.o.consumer.owned();
    const had = new Set(owned.map((tp) => tpKey(tp.topic, tp.partition)));
    const revoked = owned.filter((tp) => !now.has(tpKey(tp.topic, tp.partition)));
    // Partitions whose onPartitionsAssigned failed are owned but still new to the member: their callback runs again.
    const added = assigned.filter((tp) => {
      const k = tpKey(tp.topic, tp.partition);
      return !had.has(k) || this.awaitingCallback.has(k);
    });
    // As Kafka's maybeReconcile, every reconciliation (a target that differs from what the member owns) starts with
    // the auto-commit of every owned position, bounded by the rebalance timeout, and goes on whatever its outcome.
    if (revoked.length > 0 || added.length > 0)
      await this.o.consumer.commitBeforeReconciliation(Date.now() + this.o.rebalanceTimeoutMs);
    if (revoked.length > 0) {
      await this.o.consumer.beforeRevoke(revoked);
      await this.o.listener?.onPartitionsRevoked?.(revoked);
    }
    this.o.consumer.assign(assigned);
    this.awaitingCallback = new Set(added.map((tp) => tpKey(tp.topic, tp.partition)));
    // As Kafka's assignPartitions, the added partitions are fetched only once the callback succeeded; after a
    // failure they stay assigned but unfetched (and without positions) until a later attempt succeeds.
    if (added.length > 0) await this.o.listener?.onPartitionsAssigned?.(added);
    this.o.consumer.assignedCallbackDone(added);
    this.awaitingCallback.clear();
    this.reconciled = assigned;
    // As Kafka's MembershipManagerImpl once a reconciliation completed: the auto-commit interval starts again.
    this.o.consumer.restartAutoCommitInterval();
  }

  /** Kafka's currentAssignment in the heartbeat: the partitions of the last reconciliation that completed. */
  private ownedByTopicId(): { topicId: string; partitions: number[] }[] {
    const ids = new Map<string, number[]>();
    for (const tp of this.reconciled) {
      const id = this.o.cluster.snapshot.topics.get(tp.topic)?.topicId;
      if (id === undefined) continue;
      let l = ids.get(id);
      if (l === undefined) ids.set(id, (l = []));
      l.push(tp.partition);
    }
    return [...ids].map(([topicId, partitions]) => ({ topicId, partitions }));
  }

  /** Sends one heartbeat (or waits for the one in flight) and applies its answer. */
  private heartbeatNow(): Promise<void> {
    if (this.inFlight === null) {
      this.inFlight = this.sendHeartbeat().finally(() => {
        this.inFlight = null;
      });
    }
    return this.inFlight;
  }

  private async sendHeartbeat(epoch = this.memberEpoch): Promise<void> {
    let res: ConsumerGroupHeartbeatResponse;
    try {
      if (this.coordinatorId < 0) this.coordinatorId = await findCoordinator(this.o.cluster, this.o.groupId);
      res = await this.o.cluster.send<ConsumerGroupHeartbeatResponse>(
        this.coordinatorId,
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        {
          groupId: this.o.groupId,
          memberId: this.memberId,
          memberEpoch: epoch,
          instanceId: this.o.groupInstanceId,
          rackId: this.o.rackId,
          rebalanceTimeoutMs: this.o.rebalanceTimeoutMs,
          subscribedTopicNames: this.subscribed,
          subscribedTopicRegex: null,
          serverAssignor: this.o.serverAssignor,
          topicPartitions: this.ownedByTopicId(),
        },
      );
    } catch (err) {
      if (epoch >= 0 && err instanceof KafkaClientError && !err.retriable) {
        this.failWith(err);
        return;
      }
      this.coordinatorId = -1;
      this.schedule();
      return;
    }
    if (epoch < 0) return;
    this.onResponse(res);
    this.schedule();
  }

  private onResponse(res: ConsumerGroupHeartbeatResponse): void {
    switch (res.errorCode) {
      case 0:
        break;
      case ErrorCode.UNKNOWN_MEMBER_ID:
      case ErrorCode.FENCED_MEMBER_EPOCH: {
        const lost = this.o.consumer.owned();
        this.o.consumer.assign([]);
        this.forgetAssignment();
        if (lost.length > 0) void Promise.resolve(this.o.listener?.onPartitionsLost?.(lost)).catch(() => {});
        this.memberId = '';
        this.memberEpoch = 0;
        this.joined = false;
        return;
      }
      case ErrorCode.NOT_COORDINATOR:
      case ErrorCode.COORDINATOR_NOT_AVAILABLE:
      case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        this.coordinatorId = -1;
        return;
      default:
        this.failWith(new KafkaProtocolError(res.errorCode, res.errorMessage ?? 'ConsumerGroupHeartbeat'));
        return;
    }
    if (res.memberId !== null && res.memberId !== '') this.memberId = res.memberId;
    this.memberEpoch = res.memberEpoch;
    if (res.memberEpoch > 0) this.lastEpoch = { generationId: res.memberEpoch, memberId: this.memberId };
    if (res.heartbeatIntervalMs > 0) this.heartbeatIntervalMs = res.heartbeatIntervalMs;
    this.joined = true;
    if (res.assignment !== null) this.pending = res.assignment.topicPartitions;
  }

  /**
   * Kafka's transitionToFatal: the member gives its partitions up as lost (another member may hold them already),
   * keeps the error for the next poll to throw, and stops: no heartbeat, no rejoin. Commits then go without a
   * member epoch.
   */
  private failWith(err: Error): void {
    this.fatal = err;
    this.failed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const lost = this.o.consumer.owned();
    this.o.consumer.assign([]);
    this.forgetAssignment();
    this.pending = null;
    if (lost.length > 0) void Promise.resolve(this.o.listener?.onPartitionsLost?.(lost)).catch(() => {});
    this.memberEpoch = 0;
    this.joined = false;
  }

  /** Kafka's currentAssignment set to NONE: a member that rejoins or failed names no partitions. */
  private forgetAssignment(): void {
    this.reconciled = [];
    this.awaitingCallback.clear();
  }

  private schedule(): void {
    if (this.left || this.failed || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.heartbeatNow();
    }, this.heartbeatIntervalMs);
  }

  async leave(): Promise<void> {
    if (this.left) return;
    this.left = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.inFlight?.catch(() => {});
    const owned = this.o.consumer.owned();
    if (owned.length > 0) await this.o.listener?.onPartitionsRevoked?.(owned);
    if (this.joined) await this.sendHeartbeat(this.o.groupInstanceId === null ? -1 : -2).catch(() => {});
    this.joined = false;
  }
}
