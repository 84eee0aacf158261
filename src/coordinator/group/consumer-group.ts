// A KIP-848 consumer group (ConsumerGroupHeartbeat): the coordinator assigns partitions itself, and each member
// converges to its target assignment through its heartbeats. The group epoch moves when membership or
// subscriptions change; the target assignment is recomputed for it (assignment epoch); a member reaches the new
// epoch once it has revoked what it must give up, and then receives the partitions of its target that no other
// member still holds.
//
// The GroupCoordinator owns every ConsumerGroup and calls these functions; nothing here awaits or does I/O.
// These groups live in memory only for now: their records (ConsumerGroupMetadata and friends) are not written,
// so a coordinator change makes members rejoin (UNKNOWN_MEMBER_ID) while committed offsets, which are written,
// stay.

export type TopicPartitions = Map<string, number[]>;

export interface TopicInfo {
  readonly name: string;
  readonly topicId: string;
  readonly partitionCount: number;
}

export class ConsumerMember {
  memberEpoch = 0;
  previousMemberEpoch = -1;
  subscribedTopicNames: readonly string[] = [];
  /** What the member was last told to own. */
  assigned: TopicPartitions = new Map();
  /** What the member last reported owning (it may still hold partitions it was asked to give up). */
  owned: TopicPartitions = new Map();
  sessionDeadlineMs = 0;
  /** A static member that left with epoch -2: it keeps its assignment until its session ends or it returns. */
  leftTemporarily = false;
  /** While the member has partitions to give up: when it is removed if it has not (its rebalance timeout). */
  revocationDeadlineMs = -1;
  rebalanceTimeoutMs = 0;
  serverAssignor: string | null = null;

  constructor(
    readonly memberId: string,
    public instanceId: string | null,
    public rackId: string | null,
    public clientId: string,
    public clientHost: string,
  ) {}
}

export type ConsumerGroupState = 'Empty' | 'Assigning' | 'Reconciling' | 'Stable';

export class ConsumerGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  readonly members = new Map<string, ConsumerMember>();
  target = new Map<string, TopicPartitions>();
  /** Partition counts of the subscribed topics when the target was computed; a change bumps the group epoch. */
  metadataKey = '';
  /** The subscribed topics as of metadataKey, written as ConsumerGroupPartitionMetadata. */
  topicsMetadata: TopicInfo[] = [];
  assignorName = 'uniform';

  constructor(
    readonly groupId: string,
    readonly partition: number,
  ) {}

  get state(): ConsumerGroupState {
    if (this.members.size === 0) return 'Empty';
    if (this.assignmentEpoch < this.groupEpoch) return 'Assigning';
    for (const m of this.members.values()) if (m.memberEpoch !== this.assignmentEpoch) return 'Reconciling';
    return 'Stable';
  }

  subscribedTopics(): string[] {
    const all = new Set<string>();
    for (const m of this.members.values()) for (const t of m.subscribedTopicNames) all.add(t);
    return [...all].sort();
  }
}

export const ASSIGNORS = ['uniform', 'range'] as const;

/**
 * The target assignment of every member. 'range' gives each member subscribed to a topic a contiguous range of
 * its partitions; 'uniform' spreads all partitions evenly and keeps a partition where the previous target had it
 * while its owner is under its share (sticky).
 */
export function computeTarget(
  group: ConsumerGroup,
  assignor: string,
  topics: ReadonlyMap<string, TopicInfo>,
): Map<string, TopicPartitions> {
  const members = [...group.members.values()].sort((a, b) => (a.memberId < b.memberId ? -1 : 1));
  const target = new Map<string, TopicPartitions>(members.map((m) => [m.memberId, new Map()]));
  const give = (memberId: string, topicId: string, partition: number) => {
    const t = target.get(memberId)!;
    let list = t.get(topicId);
    if (list === undefined) t.set(topicId, (list = []));
    list.push(partition);
  };
  if (assignor === 'range') {
    for (const topic of topics.values()) {
      const eligible = members.filter((m) => m.subscribedTopicNames.includes(topic.name));
      if (eligible.length === 0) continue;
      const per = Math.floor(topic.partitionCount / eligible.length);
      const extra = topic.partitionCount % eligible.length;
      let next = 0;
      eligible.forEach((m, i) => {
        const count = per + (i < extra ? 1 : 0);
        for (let k = 0; k < count; k++) give(m.memberId, topic.topicId, next++);
      });
    }
    return target;
  }
  const counts = new Map(members.map((m) => [m.memberId, 0]));
  const work: { topic: TopicInfo; partition: number; eligible: ConsumerMember[] }[] = [];
  for (const topic of topics.values()) {
    const eligible = members.filter((m) => m.subscribedTopicNames.includes(topic.name));
    if (eligible.length === 0) continue;
    for (let p = 0; p < topic.partitionCount; p++) work.push({ topic, partition: p, eligible });
  }
  const share = members.length === 0 ? 0 : Math.ceil(work.length / members.length);
  const unplaced: typeof work = [];
  for (const w of work) {
    const previous = [...group.target].find(([, tp]) => tp.get(w.topic.topicId)?.includes(w.partition))?.[0];
    const keeper = w.eligible.find((m) => m.memberId === previous);
    if (keeper !== undefined && counts.get(keeper.memberId)! < share) {
      give(keeper.memberId, w.topic.topicId, w.partition);
      counts.set(keeper.memberId, counts.get(keeper.memberId)! + 1);
    } else {
      unplaced.push(w);
    }
  }
  for (const w of unplaced) {
    let best = w.eligible[0]!;
    for (const m of w.eligible) if (counts.get(m.memberId)! < counts.get(best.memberId)!) best = m;
    give(best.memberId, w.topic.topicId, w.partition);
    counts.set(best.memberId, counts.get(best.memberId)! + 1);
  }
  return target;
}

function has(tp: TopicPartitions, topicId: string, partition: number): boolean {
  return tp.get(topicId)?.includes(partition) ?? false;
}

function filter(tp: TopicPartitions, keep: (topicId: string, partition: number) => boolean): TopicPartitions {
  const out: TopicPartitions = new Map();
  for (const [topicId, partitions] of tp) {
    const kept = partitions.filter((p) => keep(topicId, p));
    if (kept.length > 0) out.set(topicId, kept);
  }
  return out;
}

/**
 * Moves a member toward its target: first it must give up what is no longer its own (it keeps its epoch until
 * its heartbeat shows it did), then it reaches the assignment epoch and gets the target partitions no other
 * member still holds; those others arrive on later heartbeats, once released.
 */
export function reconcile(group: ConsumerGroup, member: ConsumerMember, nowMs: number): void {
  const target = group.target.get(member.memberId) ?? new Map();
  const mustRevoke = filter(member.owned, (t, p) => !has(target, t, p));
  if (mustRevoke.size > 0) {
    member.assigned = filter(member.owned, (t, p) => has(target, t, p));
    if (member.revocationDeadlineMs < 0) member.revocationDeadlineMs = nowMs + member.rebalanceTimeoutMs;
    return;
  }
  member.revocationDeadlineMs = -1;
  if (member.memberEpoch !== group.assignmentEpoch) {
    member.previousMemberEpoch = member.memberEpoch;
    member.memberEpoch = group.assignmentEpoch;
  }
  const heldElsewhere = (topicId: string, partition: number): boolean => {
    for (const other of group.members.values()) {
      if (other === member) continue;
      if (has(other.assigned, topicId, partition) || has(other.owned, topicId, partition)) return true;
    }
    return false;
  };
  member.assigned = filter(target, (t, p) => !heldElsewhere(t, p));
}

/** What is written about a group, to find what a change has to write (see snapshot/diff in the coordinator). */
export interface ConsumerGroupSnapshot {
  readonly groupEpoch: number;
  readonly assignmentEpoch: number;
  readonly metadataKey: string;
  readonly members: ReadonlyMap<string, { meta: string; current: string; target: string }>;
}

export function memberMetaKey(m: ConsumerMember): string {
  return JSON.stringify([
    m.instanceId,
    m.rackId,
    m.clientId,
    m.clientHost,
    m.subscribedTopicNames,
    m.rebalanceTimeoutMs,
    m.serverAssignor,
  ]);
}

export function memberCurrentKey(m: ConsumerMember): string {
  return JSON.stringify([
    m.memberEpoch,
    m.previousMemberEpoch,
    toWire(m.assigned),
    toWire(pendingRevocation(m)),
  ]);
}

/** Partitions the member still owns but was asked to give up. */
export function pendingRevocation(m: ConsumerMember): TopicPartitions {
  return filter(m.owned, (t, p) => !has(m.assigned, t, p));
}

export function snapshot(group: ConsumerGroup | undefined): ConsumerGroupSnapshot {
  if (group === undefined)
    return { groupEpoch: -1, assignmentEpoch: -1, metadataKey: '\u0000', members: new Map() };
  return {
    groupEpoch: group.groupEpoch,
    assignmentEpoch: group.assignmentEpoch,
    metadataKey: group.metadataKey,
    members: new Map(
      [...group.members.values()].map((m) => [
        m.memberId,
        {
          meta: memberMetaKey(m),
          current: memberCurrentKey(m),
          target: JSON.stringify(toWire(group.target.get(m.memberId) ?? new Map())),
        },
      ]),
    ),
  };
}

export function toWire(tp: TopicPartitions): { topicId: string; partitions: number[] }[] {
  return [...tp].map(([topicId, partitions]) => ({
    topicId,
    partitions: [...partitions].sort((a, b) => a - b),
  }));
}

export function fromWire(
  list: readonly { topicId: string; partitions: readonly number[] }[],
): TopicPartitions {
  return new Map(list.filter((t) => t.partitions.length > 0).map((t) => [t.topicId, [...t.partitions]]));
}
