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

import { cgRecord, type EncodedRecord, type GroupRecord } from './group-records.js';

export type TopicPartitions = Map<string, number[]>;

/** A decoded KIP-848 record of __consumer_offsets. */
export type ConsumerRecord = Extract<GroupRecord, { kind: `cg-${string}` }>;

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

/** The records that bring the log from `before` to the group's state now (tombstones for members gone). */
export function consumerGroupRecords(group: ConsumerGroup, before: ConsumerGroupSnapshot): EncodedRecord[] {
  const id = group.groupId;
  const records: EncodedRecord[] = [];
  const after = snapshot(group);
  for (const m of group.members.values()) {
    const was = before.members.get(m.memberId);
    if (was?.meta !== memberMetaKey(m)) {
      records.push(
        cgRecord.member(id, m.memberId, {
          instanceId: m.instanceId,
          rackId: m.rackId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: [...m.subscribedTopicNames],
          subscribedTopicRegex: null,
          rebalanceTimeoutMs: m.rebalanceTimeoutMs,
          serverAssignor: m.serverAssignor,
          classicMemberMetadata: null,
        }),
      );
    }
  }
  for (const memberId of before.members.keys()) {
    if (group.members.has(memberId)) continue;
    records.push(
      cgRecord.current(id, memberId, null),
      cgRecord.target(id, memberId, null),
      cgRecord.member(id, memberId, null),
    );
  }
  if (before.groupEpoch !== group.groupEpoch) records.push(cgRecord.epoch(id, { epoch: group.groupEpoch }));
  if (before.metadataKey !== group.metadataKey) {
    records.push(
      cgRecord.topics(id, {
        topics: group.topicsMetadata.map((t) => ({
          topicId: t.topicId,
          topicName: t.name,
          numPartitions: t.partitionCount,
          partitionMetadata: [],
        })),
      }),
    );
  }
  for (const [memberId, now] of after.members) {
    if (before.members.get(memberId)?.target !== now.target) {
      records.push(
        cgRecord.target(id, memberId, { topicPartitions: toWire(group.target.get(memberId) ?? new Map()) }),
      );
    }
  }
  if (before.assignmentEpoch !== group.assignmentEpoch) {
    records.push(cgRecord.targetEpoch(id, { assignmentEpoch: group.assignmentEpoch }));
  }
  for (const m of group.members.values()) {
    if (before.members.get(m.memberId)?.current === memberCurrentKey(m)) continue;
    records.push(
      cgRecord.current(id, m.memberId, {
        memberEpoch: m.memberEpoch,
        previousMemberEpoch: m.previousMemberEpoch,
        state: 0,
        assignedPartitions: toWire(m.assigned),
        partitionsPendingRevocation: toWire(pendingRevocation(m)),
      }),
    );
  }
  return records;
}

/** Replays KIP-848 records, last one per key winning; a group whose epoch record is a tombstone is gone. */
export function restoreConsumerGroups(
  partition: number,
  records: readonly ConsumerRecord[],
  nowMs: number,
  sessionMs: number,
): ConsumerGroup[] {
  const groups = new Map<string, ConsumerGroup>();
  const get = (id: string) => {
    let g = groups.get(id);
    if (g === undefined) groups.set(id, (g = new ConsumerGroup(id, partition)));
    return g;
  };
  const deleted = new Set<string>();
  const meta = new Map<string, ConsumerRecord & { kind: 'cg-member' }>();
  const current = new Map<string, ConsumerRecord & { kind: 'cg-current' }>();
  for (const r of records) {
    const g = get(r.group);
    switch (r.kind) {
      case 'cg-epoch':
        if (r.value === null) deleted.add(r.group);
        else {
          deleted.delete(r.group);
          g.groupEpoch = r.value.epoch;
        }
        break;
      case 'cg-topics':
        g.topicsMetadata = (r.value?.topics ?? []).map((t) => ({
          name: t.topicName,
          topicId: t.topicId,
          partitionCount: t.numPartitions,
        }));
        g.metadataKey = g.topicsMetadata.map((t) => `${t.topicId}:${t.partitionCount}`).join(',');
        break;
      case 'cg-target-epoch':
        g.assignmentEpoch = r.value?.assignmentEpoch ?? 0;
        break;
      case 'cg-target':
        if (r.value === null) g.target.delete(r.memberId);
        else g.target.set(r.memberId, fromWire(r.value.topicPartitions));
        break;
      case 'cg-member':
        meta.set(`${r.group}\u0000${r.memberId}`, r);
        break;
      case 'cg-current':
        current.set(`${r.group}\u0000${r.memberId}`, r);
        break;
    }
  }
  for (const [key, r] of meta) {
    if (r.value === null) continue;
    const g = get(r.group);
    const m = new ConsumerMember(
      r.memberId,
      r.value.instanceId,
      r.value.rackId,
      r.value.clientId,
      r.value.clientHost,
    );
    m.subscribedTopicNames = r.value.subscribedTopicNames;
    m.rebalanceTimeoutMs = r.value.rebalanceTimeoutMs;
    m.serverAssignor = r.value.serverAssignor;
    const c = current.get(key)?.value ?? null;
    if (c !== null) {
      m.memberEpoch = c.memberEpoch;
      m.previousMemberEpoch = c.previousMemberEpoch;
      m.assigned = fromWire(c.assignedPartitions);
      m.owned = fromWire([...c.assignedPartitions, ...c.partitionsPendingRevocation]);
    }
    m.sessionDeadlineMs = nowMs + sessionMs;
    g.members.set(m.memberId, m);
  }
  for (const g of groups.values()) {
    const assignor = [...g.members.values()].find((m) => m.serverAssignor !== null)?.serverAssignor;
    if (assignor !== undefined && assignor !== null) g.assignorName = assignor;
  }
  return [...groups.values()].filter((g) => !deleted.has(g.groupId));
}
