// Membership of a consumer group with the classic protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup).
//
// Lifecycle: the consumer calls ensureActive() from poll(); it joins when the member has no generation or a
// heartbeat reported a rebalance. The leader of a generation runs the chosen assignor over every member's
// subscription and sends the plan in SyncGroup. Heartbeats run on their own timer every heartbeat.interval.ms,
// so a slow record handler that keeps awaiting does not make the coordinator think the member died; a member
// that does not poll within max.poll.interval.ms leaves the group, as in Kafka.
//
// Eager assignors revoke every owned partition before joining; cooperative-sticky revokes only the partitions
// that moved away and rejoins once more if it gave any up (KIP-429).

import {
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  encodeSubscription,
} from '../protocol/consumer-protocol/index.js';
import { ErrorCode } from '../protocol/errors.js';
import type { JoinGroupResponse } from '../protocol/messages/11-join-group.js';
import type { HeartbeatResponse } from '../protocol/messages/12-heartbeat.js';
import type { LeaveGroupResponse } from '../protocol/messages/13-leave-group.js';
import type { SyncGroupResponse } from '../protocol/messages/14-sync-group.js';
import { ApiKey } from '../protocol/registry.js';
import { ASSIGNORS, type AssignorName, type MemberSubscription } from './assignors.js';
import { type Cluster, sleep } from './cluster.js';
import { ConfigError, KafkaClientError, KafkaProtocolError } from './errors.js';
import { findCoordinator, type TopicPartition, tpKey } from './requests.js';

export interface RebalanceListener {
  /** Before partitions are taken away (commit their offsets here). */
  onPartitionsRevoked?(partitions: TopicPartition[]): Promise<void> | void;
  /** After partitions were given to this member. */
  onPartitionsAssigned?(partitions: TopicPartition[]): Promise<void> | void;
  /** The member lost its partitions without a chance to commit (its generation was fenced). */
  onPartitionsLost?(partitions: TopicPartition[]): Promise<void> | void;
}

export interface GroupConsumerHooks {
  owned(): TopicPartition[];
  assign(tps: TopicPartition[]): void;
  beforeRevoke(tps: TopicPartition[]): Promise<void>;
}

export interface GroupMemberOptions {
  cluster: Cluster;
  groupId: string;
  groupInstanceId: string | null;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  heartbeatIntervalMs: number;
  assignors: AssignorName[];
  topics: string[] | RegExp;
  listener: RebalanceListener | undefined;
  consumer: GroupConsumerHooks;
}

const SUBSCRIPTION_VERSION = 1;
const MEMBER_ID_REQUIRED = 79;

function groupByTopic(tps: TopicPartition[]): { topic: string; partitions: number[] }[] {
  const m = new Map<string, number[]>();
  for (const tp of tps) {
    let l = m.get(tp.topic);
    if (l === undefined) m.set(tp.topic, (l = []));
    l.push(tp.partition);
  }
  return [...m].map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a - b) }));
}

function flatten(list: { topic: string; partitions: number[] }[]): TopicPartition[] {
  return list.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
}

export class GroupMember {
  private memberId = '';
  private generationId = -1;
  private protocolName: string | null = null;
  private coordinatorId = -1;
  private needsJoin = true;
  private joining: Promise<void> | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private lastPollMs = Date.now();
  private left = false;
  private topics: string[] | RegExp;
  private subscribed: string[] = [];
  private patternCheckedMs = Date.now();

  constructor(private readonly o: GroupMemberOptions) {
    this.topics = o.topics;
    for (const name of o.assignors) {
      if (ASSIGNORS[name] === undefined) throw new ConfigError(`unknown assignor ${name}`);
    }
  }

  generation(): { generationId: number; memberId: string; groupInstanceId: string | null } {
    return {
      generationId: this.generationId,
      memberId: this.memberId,
      groupInstanceId: this.o.groupInstanceId,
    };
  }

  isStable(): boolean {
    return this.generationId >= 0 && !this.needsJoin;
  }

  subscribedTopics(): string[] {
    return this.subscribed;
  }

  setSubscription(topics: string[] | RegExp): void {
    this.topics = topics;
    this.needsJoin = true;
  }

  polled(): void {
    this.lastPollMs = Date.now();
  }

  /** The rebalance protocol is cooperative only when every listed assignor supports it, as in Kafka. */
  private get cooperative(): boolean {
    return this.o.assignors.every((a) => ASSIGNORS[a].protocol === 'cooperative');
  }

  /** Joins (or rejoins) when needed; resolves once the member has a current assignment. */
  async ensureActive(): Promise<void> {
    await this.recheckPattern();
    while (this.needsJoin && !this.left) {
      if (this.joining === null) {
        this.joining = this.join().finally(() => {
          this.joining = null;
        });
      }
      await this.joining;
    }
  }

  private log(message: string, fields: Record<string, string | number | boolean>): void {
    this.o.cluster.options.logger?.debug(message, {
      group: this.o.groupId,
      memberId: this.memberId,
      ...fields,
    });
  }

  /**
   * A pattern subscription is matched again against the cluster's topics every metadata.max.age.ms, as Kafka's
   * consumer does on its metadata refresh; a topic created or deleted since makes the member rejoin.
   */
  private async recheckPattern(): Promise<void> {
    if (Array.isArray(this.topics) || this.needsJoin) return;
    if (Date.now() - this.patternCheckedMs < this.o.cluster.options.metadataMaxAgeMs) return;
    this.patternCheckedMs = Date.now();
    const now = await this.resolveTopics().catch(() => this.subscribed);
    if (now.join('\u0000') !== this.subscribed.join('\u0000')) this.needsJoin = true;
  }

  private async coordinator(): Promise<number> {
    if (this.coordinatorId < 0) this.coordinatorId = await findCoordinator(this.o.cluster, this.o.groupId);
    return this.coordinatorId;
  }

  private async resolveTopics(): Promise<string[]> {
    if (Array.isArray(this.topics)) return [...this.topics].sort();
    const all = await this.o.cluster.fetchMetadata(null);
    const re = this.topics;
    return [...all.topics.values()]
      .filter((t) => !t.isInternal && re.test(t.name))
      .map((t) => t.name)
      .sort();
  }

  private async join(): Promise<void> {
    const cluster = this.o.cluster;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.joinOnce();
        return;
      } catch (err) {
        if (this.left) return;
        if (!(err instanceof KafkaClientError) || !err.retriable) {
          if (!(err instanceof KafkaProtocolError) || !this.handleGroupError(err.code)) throw err;
        }
        await sleep(cluster.backoffMs(Math.min(attempt, 5)));
      }
    }
  }

  /** Reacts to a group error; true when a rejoin can cure it. */
  private handleGroupError(code: number): boolean {
    switch (code) {
      case ErrorCode.UNKNOWN_MEMBER_ID:
      case ErrorCode.FENCED_INSTANCE_ID:
        this.memberId = '';
        this.generationId = -1;
        this.needsJoin = true;
        return code === ErrorCode.UNKNOWN_MEMBER_ID;
      case ErrorCode.ILLEGAL_GENERATION:
        this.generationId = -1;
        this.needsJoin = true;
        return true;
      case ErrorCode.REBALANCE_IN_PROGRESS:
        this.needsJoin = true;
        return true;
      case ErrorCode.NOT_COORDINATOR:
      case ErrorCode.COORDINATOR_NOT_AVAILABLE:
      case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        this.coordinatorId = -1;
        return true;
      default:
        return false;
    }
  }

  private async revoke(tps: TopicPartition[], lost: boolean): Promise<void> {
    if (tps.length === 0) return;
    if (lost) {
      await this.o.listener?.onPartitionsLost?.(tps);
    } else {
      await this.o.consumer.beforeRevoke(tps);
      await this.o.listener?.onPartitionsRevoked?.(tps);
    }
    const gone = new Set(tps.map((tp) => tpKey(tp.topic, tp.partition)));
    this.o.consumer.assign(this.o.consumer.owned().filter((tp) => !gone.has(tpKey(tp.topic, tp.partition))));
  }

  private async joinOnce(): Promise<void> {
    const cluster = this.o.cluster;
    this.stopHeartbeats();
    const owned = this.o.consumer.owned();
    if (!this.cooperative) await this.revoke(owned, this.generationId < 0 && owned.length > 0);
    this.subscribed = await this.resolveTopics();
    cluster.addTopics(this.subscribed);
    const coordinator = await this.coordinator();
    const metadata = encodeSubscription(SUBSCRIPTION_VERSION, {
      topics: this.subscribed,
      userData: null,
      ownedPartitions: groupByTopic(this.cooperative ? this.o.consumer.owned() : []),
      generationId: this.generationId,
      rackId: null,
    });
    const joinBody = (memberId: string) => ({
      groupId: this.o.groupId,
      sessionTimeoutMs: this.o.sessionTimeoutMs,
      rebalanceTimeoutMs: this.o.rebalanceTimeoutMs,
      memberId,
      groupInstanceId: this.o.groupInstanceId,
      protocolType: 'consumer',
      protocols: this.o.assignors.map((name) => ({ name, metadata })),
      reason: null,
    });
    const rebalanceWaitMs = this.o.rebalanceTimeoutMs + 5000;
    let join = await cluster.send<JoinGroupResponse>(
      coordinator,
      ApiKey.JOIN_GROUP,
      joinBody(this.memberId),
      {
        timeoutMs: rebalanceWaitMs,
      },
    );
    if (join.errorCode === MEMBER_ID_REQUIRED) {
      this.memberId = join.memberId;
      join = await cluster.send<JoinGroupResponse>(coordinator, ApiKey.JOIN_GROUP, joinBody(this.memberId), {
        timeoutMs: rebalanceWaitMs,
      });
    }
    this.log('JoinGroup answered', {
      errorCode: join.errorCode,
      generationId: join.generationId,
      leader: join.leader === join.memberId,
    });
    if (join.errorCode !== 0) throw new KafkaProtocolError(join.errorCode, 'JoinGroup');
    this.memberId = join.memberId;
    this.generationId = join.generationId;
    this.protocolName = join.protocolName;
    let assignments: { memberId: string; assignment: Buffer }[] = [];
    if (join.leader === join.memberId && !join.skipAssignment) assignments = await this.lead(join);
    const sync = await cluster.send<SyncGroupResponse>(
      coordinator,
      ApiKey.SYNC_GROUP,
      {
        groupId: this.o.groupId,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: this.o.groupInstanceId,
        protocolType: 'consumer',
        protocolName: this.protocolName,
        assignments,
      },
      { timeoutMs: rebalanceWaitMs },
    );
    this.log('SyncGroup answered', { errorCode: sync.errorCode, generationId: this.generationId });
    if (sync.errorCode !== 0) throw new KafkaProtocolError(sync.errorCode, 'SyncGroup');
    const assigned =
      sync.assignment.length === 0 ? [] : flatten(decodeAssignment(sync.assignment).value.assignedPartitions);
    await this.apply(assigned);
  }

  private async apply(assigned: TopicPartition[]): Promise<void> {
    const now = new Set(assigned.map((tp) => tpKey(tp.topic, tp.partition)));
    const before = this.o.consumer.owned();
    const had = new Set(before.map((tp) => tpKey(tp.topic, tp.partition)));
    const revoked = before.filter((tp) => !now.has(tpKey(tp.topic, tp.partition)));
    const added = assigned.filter((tp) => !had.has(tpKey(tp.topic, tp.partition)));
    if (revoked.length > 0) await this.revoke(revoked, false);
    this.o.consumer.assign(assigned);
    this.needsJoin = this.cooperative && revoked.length > 0;
    this.startHeartbeats();
    if (added.length > 0 || !this.cooperative)
      await this.o.listener?.onPartitionsAssigned?.(this.cooperative ? added : assigned);
  }

  /** The leader's part: run the assignor over every member's subscription. */
  private async lead(join: JoinGroupResponse): Promise<{ memberId: string; assignment: Buffer }[]> {
    const assignor = ASSIGNORS[join.protocolName as AssignorName];
    if (assignor === undefined)
      throw new KafkaClientError(`the group chose unknown assignor ${join.protocolName}`, false);
    const members: MemberSubscription[] = join.members.map((m) => {
      const s = decodeSubscription(m.metadata).value;
      return {
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        topics: s.topics,
        ownedPartitions: flatten(s.ownedPartitions),
        generationId: s.generationId,
      };
    });
    const topics = [...new Set(members.flatMap((m) => m.topics))];
    const snapshot = await this.o.cluster.fetchMetadata(topics);
    const counts = new Map<string, number>();
    for (const t of snapshot.topics.values()) if (t.errorCode === 0) counts.set(t.name, t.partitions.length);
    const plan = assignor.assign(members, counts);
    return members.map((m) => ({
      memberId: m.memberId,
      assignment: encodeAssignment(0, {
        assignedPartitions: groupByTopic(plan.get(m.memberId) ?? []),
        userData: null,
      }),
    }));
  }

  private startHeartbeats(): void {
    this.stopHeartbeats();
    this.heartbeatTimer = setInterval(() => this.heartbeat(), this.o.heartbeatIntervalMs);
  }

  private stopHeartbeats(): void {
    if (this.heartbeatTimer !== null) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private heartbeat(): void {
    if (Date.now() - this.lastPollMs > this.o.rebalanceTimeoutMs) {
      // max.poll.interval.ms passed without a poll: give the partitions to someone who is making progress.
      this.stopHeartbeats();
      this.sendLeave('consumer poll timeout has expired').catch(() => {});
      this.memberId = '';
      this.generationId = -1;
      this.needsJoin = true;
      return;
    }
    const coordinator = this.coordinatorId;
    if (coordinator < 0) return;
    this.o.cluster
      .send<HeartbeatResponse>(coordinator, ApiKey.HEARTBEAT, {
        groupId: this.o.groupId,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: this.o.groupInstanceId,
      })
      .then(
        (res) => {
          if (res.errorCode === 0) return;
          this.log('Heartbeat answered', { errorCode: res.errorCode, generationId: this.generationId });
          this.handleGroupError(res.errorCode);
          if (res.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) this.needsJoin = true;
        },
        () => {
          this.coordinatorId = -1;
          this.findCoordinatorSoon();
        },
      );
  }

  private findCoordinatorSoon(): void {
    this.coordinator().catch(() => {});
  }

  private async sendLeave(reason: string): Promise<void> {
    if (this.memberId === '' || this.coordinatorId < 0) return;
    const res = await this.o.cluster.send<LeaveGroupResponse>(this.coordinatorId, ApiKey.LEAVE_GROUP, {
      groupId: this.o.groupId,
      memberId: this.memberId,
      members: [{ memberId: this.memberId, groupInstanceId: this.o.groupInstanceId, reason }],
    });
    if (res.errorCode !== 0 && res.errorCode !== ErrorCode.UNKNOWN_MEMBER_ID) {
      throw new KafkaProtocolError(res.errorCode, 'LeaveGroup');
    }
  }

  /** Revokes the partitions (listener first) and leaves; a static member keeps its place until its session ends. */
  async leave(): Promise<void> {
    if (this.left) return;
    this.left = true;
    this.stopHeartbeats();
    await this.joining?.catch(() => {});
    const owned = this.o.consumer.owned();
    if (owned.length > 0) await this.o.listener?.onPartitionsRevoked?.(owned);
    if (this.o.groupInstanceId === null) await this.sendLeave('the consumer is being closed').catch(() => {});
    this.generationId = -1;
  }
}
