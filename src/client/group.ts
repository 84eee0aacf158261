// Membership of a consumer group with the classic protocol: the consumer's embedded protocol (protocol type
// "consumer", subscriptions and partition assignments) over the generic membership of group-membership.ts.
//
// Lifecycle: the consumer calls ensureActive() from poll(); it joins when the member has no generation or a
// heartbeat reported a rebalance. The leader of a generation runs the chosen assignor over every member's
// subscription and sends the plan in SyncGroup. Heartbeats run on their own timer every heartbeat.interval.ms,
// so a slow record handler that keeps awaiting does not make the coordinator think the member died; a member
// that does not poll within max.poll.interval.ms leaves the group, as in Kafka.
//
// Eager assignors revoke every owned partition before joining; cooperative-sticky revokes before joining only the
// partitions of topics no longer subscribed, after SyncGroup those that moved away, and rejoins once more if it gave
// any up (KIP-429). With enable.auto.commit, each join is
// preceded by a commit of every owned partition's position (Kafka's onJoinPrepare), under either protocol; the
// revocation after SyncGroup commits nothing more, as Kafka's onJoinComplete.
//
// The assignors are ConsumerPartitionAssignors (assignors.ts): built-in names are wrapped, user ones are taken
// as they are. Each protocol of the JoinGroup carries that assignor's own subscription user data; the leader
// returns each member's user data in the assignment, and the member hands its own to the chosen assignor's
// onAssignment before the rebalance listener runs (Kafka's order).

import {
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  encodeSubscription,
} from '../protocol/consumer-protocol/index.js';
import {
  ASSIGNORS,
  type AssignorName,
  type ConsumerPartitionAssignor,
  type PartitionRacks,
  type Subscription,
  toConsumerPartitionAssignor,
} from './assignors.js';
import type { Cluster } from './cluster.js';
import { ConfigError, KafkaClientError } from './errors.js';
import { GroupMembership, type JoinedMember, settledBefore } from './group-membership.js';
import { type TopicPartition, tpKey } from './requests.js';

/** Callbacks around a rebalance of a subscribed consumer (Kafka's ConsumerRebalanceListener). */
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
  /** The member's new assignment; partitions new to it are not fetched until assignedCallbackDone() names them. */
  assign(tps: TopicPartition[]): void;
  /** onPartitionsAssigned has ended for these partitions: they may be fetched now. */
  assignedCallbackDone(tps: TopicPartition[]): void;
  beforeRevoke(tps: TopicPartition[]): Promise<void>;
  /**
   * The auto-commit before a join (Kafka's onJoinPrepare): the positions of every owned partition, retried until
   * `deadlineMs`; `eager` holds the partitions back from poll() first, as they are all about to be revoked. Never
   * rejects: a commit that fails is logged and the join goes on.
   */
  commitBeforeJoin(deadlineMs: number, eager: boolean): Promise<void>;
  /**
   * The auto-commit before a KIP-848 member reconciles a new assignment: the positions of every owned partition,
   * retried until `deadlineMs`. Never rejects.
   */
  commitBeforeReconciliation(deadlineMs: number): Promise<void>;
  /**
   * A new assignment took effect (Kafka's onJoinComplete, and a KIP-848 reconciliation that completed): the
   * auto-commit interval starts again from now.
   */
  restartAutoCommitInterval(): void;
}

export interface GroupMemberOptions {
  cluster: Cluster;
  groupId: string;
  groupInstanceId: string | null;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** In order of preference: built-in names or pluggable assignors. */
  assignors: (AssignorName | ConsumerPartitionAssignor)[];
  topics: string[] | RegExp;
  listener: RebalanceListener | undefined;
  consumer: GroupConsumerHooks;
  /** client.rack, sent in the subscription so the leader's assignor can place partitions by rack (KIP-881). */
  clientRack: string | null;
}

/**
 * Version 3 carries the member's rack (KIP-881). Older versions from other clients still decode (the missing
 * fields read as their defaults), and a leader that knows only older versions reads the fields it knows.
 */
const SUBSCRIPTION_VERSION = 3;
/** How often the leader looks for a subscribed topic that does not exist yet. */
const MISSING_TOPIC_RECHECK_MS = 1000;

function groupByTopic(tps: TopicPartition[]): { topic: string; partitions: number[] }[] {
  const m = new Map<string, number[]>();
  for (const tp of tps) {
    let l = m.get(tp.topic);
    if (l === undefined) m.set(tp.topic, (l = []));
    l.push(tp.partition);
  }
  return [...m].map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a - b) }));
}

/** Built-in names become their assignors; names must be unique, as they are the group's protocol names. */
function resolveAssignors(list: (AssignorName | ConsumerPartitionAssignor)[]): ConsumerPartitionAssignor[] {
  if (list.length === 0) throw new ConfigError('partition.assignment.strategy is empty');
  const out = list.map((a) => {
    if (typeof a !== 'string') return a;
    const builtin = ASSIGNORS[a];
    if (builtin === undefined) throw new ConfigError(`unknown assignor ${a}`);
    return toConsumerPartitionAssignor(builtin);
  });
  const names = out.map((a) => a.name);
  if (new Set(names).size !== names.length)
    throw new ConfigError(`assignor names repeat: ${names.join(',')}`);
  return out;
}

/** Whether two subscriptions name the same topics (in any order) or the same pattern. */
function sameSubscription(a: string[] | RegExp, b: string[] | RegExp | null): boolean {
  if (b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if (a instanceof RegExp) return a.source === (b as RegExp).source && a.flags === (b as RegExp).flags;
  const key = (l: string[]) => [...new Set(l)].sort().join('\u0000');
  return key(a) === key(b as string[]);
}

function flatten(list: { topic: string; partitions: number[] }[]): TopicPartition[] {
  return list.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
}

export class GroupMember extends GroupMembership {
  private topics: string[] | RegExp;
  private subscribed: string[] = [];
  /** The subscription (topics or pattern) of the last JoinGroup sent, null before the first. */
  private joinedWith: string[] | RegExp | null = null;
  private metadataCheckedMs = Date.now();
  /** The partition counts this member assigned with, as the leader of generation ledGeneration. */
  private assignedCounts: Map<string, number> | null = null;
  private ledGeneration = -1;
  /** Every member's subscribed topics in that generation. */
  private ledTopics: string[] = [];
  private readonly assignors: ConsumerPartitionAssignor[];
  /** The auto-commit before the next join while it is under way across polls (Kafka's autoCommitOffsetRequestFuture). */
  private joinPrepareCommit: Promise<void> | null = null;

  constructor(private readonly o: GroupMemberOptions) {
    super({
      cluster: o.cluster,
      groupId: o.groupId,
      groupInstanceId: o.groupInstanceId,
      sessionTimeoutMs: o.sessionTimeoutMs,
      rebalanceTimeoutMs: o.rebalanceTimeoutMs,
      heartbeatIntervalMs: o.heartbeatIntervalMs,
      protocolType: 'consumer',
      leaveWhenNotPolled: true,
    });
    this.topics = o.topics;
    this.assignors = resolveAssignors(o.assignors);
  }

  subscribedTopics(): string[] {
    return this.subscribed;
  }

  /**
   * A new subscribe() call: its listener replaces the previous one (none given: none, as Kafka's no-op listener),
   * and the member rejoins only when the topics differ from those it joined with (or the pattern changed), as
   * Kafka's ConsumerCoordinator compares the subscription with the joined one.
   */
  setSubscription(topics: string[] | RegExp, listener: RebalanceListener | undefined): void {
    this.o.listener = listener;
    this.topics = topics;
    if (!sameSubscription(topics, this.joinedWith)) this.requestRejoinIfNecessary('subscription has changed');
  }

  /** A rejoin the user asked for (KafkaConsumer.enforceRebalance), with Kafka's default reason. */
  override requestRejoin(reason = 'rebalance enforced by user'): void {
    super.requestRejoin(reason);
  }

  /** The rebalance protocol is cooperative only when every listed assignor supports it, as in Kafka. */
  private get cooperative(): boolean {
    return this.assignors.every((a) => a.protocol === 'cooperative');
  }

  /** Joins (or rejoins) when needed; see GroupMembership.ensureActive for the deadline. */
  override async ensureActive(deadlineMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    // subscribe() while a JoinGroup was out: that join had the old subscription (Kafka's joinedSubscription check).
    if (this.generationId >= 0 && !sameSubscription(this.topics, this.joinedWith))
      this.requestRejoinIfNecessary('subscription has changed');
    await this.recheckMetadata();
    return super.ensureActive(deadlineMs);
  }

  /**
   * What Kafka's consumer does on its metadata refresh (every metadata.max.age.ms): a pattern subscription is
   * matched again against the cluster's topics, and the leader of the generation compares the partition counts
   * of the subscribed topics with those it assigned; a topic created (a subscribed name that did not exist yet)
   * or deleted since, or partitions added, make the member rejoin so that the group is assigned again. While a
   * subscribed topic is missing, the leader looks every second, as Kafka's consumer retries unknown topics.
   */
  private async recheckMetadata(): Promise<void> {
    if (this.needsJoin || this.generationId < 0) return;
    const leading = this.ledGeneration === this.generationId && this.assignedCounts !== null;
    const missing = leading && this.ledTopics.some((t) => !this.assignedCounts!.has(t));
    const intervalMs = missing
      ? Math.min(MISSING_TOPIC_RECHECK_MS, this.o.cluster.options.metadataMaxAgeMs)
      : this.o.cluster.options.metadataMaxAgeMs;
    if (Date.now() - this.metadataCheckedMs < intervalMs) return;
    this.metadataCheckedMs = Date.now();
    if (!Array.isArray(this.topics)) {
      const now = await this.resolveTopics().catch(() => this.subscribed);
      if (now.join('\u0000') !== this.subscribed.join('\u0000')) {
        this.requestRejoinIfNecessary('subscription has changed');
        return;
      }
    }
    if (!leading) return;
    const counts = await this.partitionCounts(this.ledTopics).catch(() => null);
    if (counts === null) return;
    const before = this.assignedCounts!;
    if (counts.size !== before.size || [...counts].some(([t, n]) => before.get(t) !== n)) {
      this.log('Subscribed topics changed since the assignment; rejoining', {
        generationId: this.generationId,
      });
      this.requestRejoinIfNecessary('cached metadata has changed');
    }
  }

  /** Partition counts of the topics that exist. */
  private async partitionCounts(topics: string[]): Promise<Map<string, number>> {
    return (await this.topicLayout(topics)).counts;
  }

  /** Partition counts of the topics that exist, and the racks of each partition's replicas. */
  private async topicLayout(
    topics: string[],
  ): Promise<{ counts: Map<string, number>; racks: PartitionRacks }> {
    const snapshot = await this.o.cluster.fetchMetadata(topics);
    const counts = new Map<string, number>();
    const racks: PartitionRacks = new Map();
    const rackOf = (id: number): string | null => snapshot.brokers.get(id)?.rack ?? null;
    for (const t of snapshot.topics.values()) {
      if (t.errorCode !== 0 || !topics.includes(t.name)) continue;
      counts.set(t.name, t.partitions.length);
      const byPartition: string[][] = Array.from({ length: t.partitions.length }, () => []);
      for (const p of t.partitions) {
        const held = new Set<string>();
        for (const id of p.replicas) {
          const rack = rackOf(id);
          if (rack !== null && rack !== '') held.add(rack);
        }
        if (p.partition >= 0 && p.partition < byPartition.length) byPartition[p.partition] = [...held].sort();
      }
      racks.set(t.name, byPartition);
    }
    return { counts, racks };
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

  /**
   * Kafka's ConsumerCoordinator.onJoinPrepare. First the auto-commit of every owned partition's position, whichever
   * the protocol: with cooperative-sticky the partitions a member keeps through the rebalance are committed as well,
   * and the commit is not waited for past the poll's deadline (a later poll waits again) nor retried past the
   * rebalance timeout. Then the revocation: eager gives everything up before joining; cooperative keeps its
   * partitions through the rebalance, unless its generation is gone (fenced, timed out): then they may already be
   * someone else's, and it loses them before joining.
   */
  protected override async beforeJoin(deadlineMs: number): Promise<boolean> {
    this.joinPrepareCommit ??= this.o.consumer.commitBeforeJoin(
      Date.now() + this.o.rebalanceTimeoutMs,
      !this.cooperative,
    );
    if (!(await settledBefore(this.joinPrepareCommit, deadlineMs))) return false;
    this.joinPrepareCommit = null;
    const owned = this.o.consumer.owned();
    const lost = this.generationId < 0 && owned.length > 0;
    if (!this.cooperative || lost) await this.revoke(owned, lost);
    // Cooperative: the partitions of topics no longer subscribed are given up now, before the JoinGroup (which
    // then does not claim them), as Kafka's onJoinPrepare; the others are kept through the rebalance.
    else
      await this.revoke(
        owned.filter((tp) => !this.subscribes(tp.topic)),
        false,
      );
    return true;
  }

  /** Whether the subscription (a list or a pattern) takes in the topic. */
  private subscribes(topic: string): boolean {
    return Array.isArray(this.topics) ? this.topics.includes(topic) : this.topics.test(topic);
  }

  protected async joinProtocols(): Promise<{ name: string; metadata: Buffer }[]> {
    this.joinedWith = this.topics;
    this.subscribed = await this.resolveTopics();
    this.o.cluster.addTopics(this.subscribed);
    const ownedPartitions = groupByTopic(this.cooperative ? this.o.consumer.owned() : []);
    const protocols: { name: string; metadata: Buffer }[] = [];
    for (const assignor of this.assignors) {
      const userData = (await assignor.subscriptionUserData?.(this.subscribed)) ?? null;
      const metadata = encodeSubscription(SUBSCRIPTION_VERSION, {
        topics: this.subscribed,
        userData,
        ownedPartitions,
        generationId: this.generationId,
        rackId: this.o.clientRack,
      });
      protocols.push({ name: assignor.name, metadata });
    }
    return protocols;
  }

  private chosen(protocolName: string): ConsumerPartitionAssignor {
    const assignor = this.assignors.find((a) => a.name === protocolName);
    if (assignor === undefined)
      throw new KafkaClientError(`the group chose unknown assignor ${protocolName}`, false);
    return assignor;
  }

  protected async onAssigned(protocolName: string, assignment: Buffer): Promise<void> {
    // An empty assignment (a member the leader left out) reads as no partitions and no user data, as in Kafka.
    const decoded = assignment.length === 0 ? null : decodeAssignment(assignment).value;
    const assigned = decoded === null ? [] : flatten(decoded.assignedPartitions);
    const now = new Set(assigned.map((tp) => tpKey(tp.topic, tp.partition)));
    const before = this.o.consumer.owned();
    const had = new Set(before.map((tp) => tpKey(tp.topic, tp.partition)));
    const revoked = before.filter((tp) => !now.has(tpKey(tp.topic, tp.partition)));
    const added = assigned.filter((tp) => !had.has(tpKey(tp.topic, tp.partition)));
    if (revoked.length > 0) await this.revoke(revoked, false);
    this.o.consumer.restartAutoCommitInterval();
    this.o.consumer.assign(assigned);
    try {
      await this.chosen(protocolName).onAssignment?.(
        { partitions: assigned, userData: decoded?.userData ?? null },
        { generationId: this.generationId, memberId: this.memberId },
      );
      // KIP-429: a cooperative member that gave partitions up joins once more so they can be handed out.
      if (this.cooperative && revoked.length > 0) this.requestRejoin('need to revoke partitions and re-join');
      if (added.length > 0 || !this.cooperative)
        await this.o.listener?.onPartitionsAssigned?.(this.cooperative ? added : assigned);
    } finally {
      // Kafka's classic consumer sends fetches only from poll(), never while the callback runs inside it.
      this.o.consumer.assignedCallbackDone(added);
    }
  }

  /** The leader's part: run the assignor over every member's subscription. */
  protected async assign(
    protocolName: string,
    _leaderId: string,
    joined: JoinedMember[],
  ): Promise<Map<string, Buffer>> {
    const assignor = this.chosen(protocolName);
    const subscriptions = new Map<string, Subscription>();
    for (const m of joined) {
      const s = decodeSubscription(m.metadata).value;
      subscriptions.set(m.memberId, {
        topics: s.topics,
        userData: s.userData,
        ownedPartitions: flatten(s.ownedPartitions),
        generationId: s.generationId,
        groupInstanceId: m.groupInstanceId,
        rackId: s.rackId,
      });
    }
    const topics = [...new Set([...subscriptions.values()].flatMap((s) => s.topics))];
    const { counts, racks } = await this.topicLayout(topics);
    // Kept to notice topics that appear or grow later (recheckMetadata); other members' topics count too.
    this.assignedCounts = counts;
    this.ledTopics = topics;
    this.ledGeneration = this.generationId;
    this.metadataCheckedMs = Date.now();
    const plan = await assignor.assign(
      {
        partitionCountForTopic: (topic) => counts.get(topic) ?? null,
        partitionRacksForTopic: (topic) => racks.get(topic) ?? null,
      },
      { subscriptions },
    );
    const out = new Map<string, Buffer>();
    for (const memberId of subscriptions.keys()) {
      const a = plan.assignments.get(memberId);
      if (a === undefined)
        throw new KafkaClientError(`assignor ${assignor.name} left member ${memberId} out`, false);
      out.set(
        memberId,
        encodeAssignment(0, { assignedPartitions: groupByTopic(a.partitions), userData: a.userData }),
      );
    }
    return out;
  }

  /**
   * Hands the partitions over before leaving, as Kafka's onLeavePrepare: revoked while the member holds its
   * generation, lost when it has none (dropped past max.poll.interval.ms, fenced) or is in the middle of a join
   * (the partitions may be someone else's already, so the listener must not commit them).
   */
  protected override async onLeave(): Promise<void> {
    const owned = this.o.consumer.owned();
    if (owned.length === 0) return;
    if (this.generationId < 0 || this.memberId === '' || this.joinInFlight())
      await this.o.listener?.onPartitionsLost?.(owned);
    else await this.o.listener?.onPartitionsRevoked?.(owned);
  }

  /** Leaves with Kafka's reason: 'the consumer is being closed', or why else (unsubscribe()). */
  override async leave(
    reason = 'the consumer is being closed',
    sendLeaveGroup = true,
    staticToo = false,
  ): Promise<void> {
    await super.leave(reason, sendLeaveGroup, staticToo);
  }
}
