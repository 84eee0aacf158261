// Partition assignors of the classic consumer protocol. The group leader runs the one the coordinator chose
// (the first in the leader's preference list that every member supports) over every member's subscription.
//
// - range: per topic, members sorted by id take consecutive ranges; the first (partitions % members) members
//   take one extra (Kafka's RangeAssignor).
// - roundrobin: every partition of every subscribed topic, sorted, dealt to the sorted members in turn,
//   skipping members not subscribed to the partition's topic (RoundRobinAssignor).
// - sticky: balanced like roundrobin, but a member keeps the partitions it owned while that stays balanced,
//   so fewer partitions move (the idea of Kafka's StickyAssignor, with a simpler greedy balance).
// - cooperative-sticky: the sticky plan, except a partition that moves from one live owner to another is left
//   unassigned in this round: its owner revokes it, rejoins, and the next round hands it over (KIP-429).
//
// With racks (KIP-881): when members send their rack (subscription v3, client.rack) and the leader's metadata
// gives the racks of each partition's replicas, range first hands each member the partitions of its range quota
// that have a replica in its rack (a member without a rack takes any), placing co-partitioned topics (the same
// members and partition count) together so that partition p of each goes to one member, then fills the quotas
// with the rest (Kafka's RangeAssignor.assignWithRackMatching);
// the sticky assignors keep owned partitions of the member's rack, place the others on a least loaded member,
// preferring one in a replica's rack, and then move or swap partitions towards their racks while every member
// keeps its partition count. Balance is never traded for locality; rack-aware.ts says when racks apply.
//
// Besides these, a consumer takes any ConsumerPartitionAssignor (Kafka's interface of that name): it puts its
// own user data in each member's subscription, computes every member's partitions and user data as the leader,
// and reads its own assignment's user data in onAssignment. Kafka Streams' assignor is one; the built-in ones
// are wrapped into it by toConsumerPartitionAssignor and carry no user data.

import assert from 'node:assert/strict';
import { type PartitionRacks, rackMatches, racksOf, useRackAwareAssignment } from './rack-aware.js';
import type { TopicPartition } from './requests.js';

export type { PartitionRacks } from './rack-aware.js';

/** The names of the built-in assignors, as Kafka's clients announce them in JoinGroup. */
export type AssignorName = 'range' | 'roundrobin' | 'sticky' | 'cooperative-sticky';

/** One member's subscription as the leader's assignor sees it: topics, owned partitions and generation. */
export interface MemberSubscription {
  memberId: string;
  groupInstanceId: string | null;
  topics: string[];
  ownedPartitions: TopicPartition[];
  generationId: number;
  /** The member's client.rack (subscription v3); absent or null when it sent none. */
  rackId?: string | null;
}

export interface Assignor {
  readonly name: AssignorName;
  readonly protocol: 'eager' | 'cooperative';
  /** racks: the racks of each partition's replicas, when the leader knows them (rack-aware placement). */
  assign(
    members: MemberSubscription[],
    partitionCounts: Map<string, number>,
    racks?: PartitionRacks,
  ): Map<string, TopicPartition[]>;
}

/** One member's subscription as the leader reads it (Kafka's ConsumerPartitionAssignor.Subscription). */
export interface Subscription {
  topics: string[];
  userData: Buffer | null;
  ownedPartitions: TopicPartition[];
  /** The generation the member owned its partitions in (-1 when unknown). */
  generationId: number;
  groupInstanceId: string | null;
  rackId: string | null;
}

/** Every member's subscription, by member id (Kafka's GroupSubscription). */
export interface GroupSubscription {
  subscriptions: Map<string, Subscription>;
}

/** One member's partitions and the assignor's bytes for it (Kafka's ConsumerPartitionAssignor.Assignment). */
export interface Assignment {
  partitions: TopicPartition[];
  userData: Buffer | null;
}

/** Every member's assignment, by member id (Kafka's GroupAssignment). */
export interface GroupAssignment {
  assignments: Map<string, Assignment>;
}

/** What the leader knows of the cluster when it assigns: the partition counts of the subscribed topics. */
export interface AssignorCluster {
  /** Null for a topic that does not exist (or that no member subscribed to). */
  partitionCountForTopic(topic: string): number | null;
  /** Per partition index, the racks of the partition's replicas (empty lists when brokers have no rack). */
  partitionRacksForTopic?(topic: string): string[][] | null;
}

/** The generation an assignment belongs to (the parts of Kafka's ConsumerGroupMetadata an assignor reads). */
export interface AssignmentGeneration {
  generationId: number;
  memberId: string;
}

/**
 * A pluggable assignor (Kafka's ConsumerPartitionAssignor). The group chooses the first name in the leader's
 * preference list that every member supports; only the leader's assign() runs, every member's onAssignment().
 */
export interface ConsumerPartitionAssignor {
  /** The protocol name sent in JoinGroup; members of one group must agree on it. */
  readonly name: string;
  /** Rebalance protocol (Kafka's supportedProtocols): cooperative only if every listed assignor is. Default eager. */
  readonly protocol?: 'eager' | 'cooperative';
  /** Bytes put in this member's subscription at each join (Kafka's subscriptionUserData). */
  subscriptionUserData?(topics: string[]): Buffer | null | Promise<Buffer | null>;
  /** The leader's part: every member of the subscription must get an entry. */
  assign(cluster: AssignorCluster, group: GroupSubscription): GroupAssignment | Promise<GroupAssignment>;
  /** This member's assignment of a new generation, before the rebalance listener hears of it. */
  onAssignment?(assignment: Assignment, generation: AssignmentGeneration): void | Promise<void>;
}

/** A built-in assignor as a ConsumerPartitionAssignor (no user data either way). */
export function toConsumerPartitionAssignor(assignor: Assignor): ConsumerPartitionAssignor {
  return {
    name: assignor.name,
    protocol: assignor.protocol,
    assign(cluster, group) {
      const members: MemberSubscription[] = [...group.subscriptions].map(([memberId, s]) => ({
        memberId,
        groupInstanceId: s.groupInstanceId,
        topics: s.topics,
        ownedPartitions: s.ownedPartitions,
        generationId: s.generationId,
        rackId: s.rackId,
      }));
      const counts = new Map<string, number>();
      const racks: PartitionRacks = new Map();
      for (const t of new Set(members.flatMap((m) => m.topics))) {
        const n = cluster.partitionCountForTopic(t);
        if (n !== null) counts.set(t, n);
        const r = cluster.partitionRacksForTopic?.(t) ?? null;
        if (r !== null) racks.set(t, r);
      }
      const plan = assignor.assign(members, counts, racks);
      return {
        assignments: new Map(
          members.map((m) => [m.memberId, { partitions: plan.get(m.memberId) ?? [], userData: null }]),
        ),
      };
    },
  };
}

/** Java orders members by group instance id when they have one, else by member id. */
function memberOrder(a: MemberSubscription, b: MemberSubscription): number {
  const ka = a.groupInstanceId ?? a.memberId;
  const kb = b.groupInstanceId ?? b.memberId;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

function emptyPlan(members: MemberSubscription[]): Map<string, TopicPartition[]> {
  return new Map(members.map((m) => [m.memberId, []]));
}

function allPartitions(members: MemberSubscription[], counts: Map<string, number>): TopicPartition[] {
  const topics = [...new Set(members.flatMap((m) => m.topics))].filter((t) => counts.has(t)).sort();
  const out: TopicPartition[] = [];
  for (const topic of topics) for (let p = 0; p < counts.get(topic)!; p++) out.push({ topic, partition: p });
  return out;
}

/** Sorts a member's partitions by topic, then partition, so plans read (and compare) the same every time. */
function sortPartitions(list: TopicPartition[]): void {
  list.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
}

/**
 * One topic's state while range assigns it (Kafka's RangeAssignor.TopicAssignmentState): its subscribers in
 * member order, each may take floor(n/c) partitions and the first n % c members to reach that many one more, so
 * every pass keeps exactly the counts of the plain range plan.
 */
class RangeTopic {
  readonly subscribers: MemberSubscription[];
  /** Unassigned partition indexes, ascending. */
  unassigned: number[];
  /** Whether racks can change this topic's plan (Kafka's needsRackAwareAssignment). */
  readonly needsRacks: boolean;
  /** Whether some subscriber has a rack; without one, Kafka keeps no partition racks for the topic. */
  readonly hasMemberRacks: boolean;
  private readonly per: number;
  private extraLeft: number;
  private readonly taken = new Map<string, number>();

  constructor(
    readonly topic: string,
    readonly n: number,
    members: MemberSubscription[],
    private readonly racks: PartitionRacks | undefined,
  ) {
    this.subscribers = members.filter((m) => m.topics.includes(topic)).sort(memberOrder);
    this.unassigned = Array.from({ length: n }, (_, p) => p);
    const c = this.subscribers.length;
    this.per = c === 0 ? 0 : Math.floor(n / c);
    this.extraLeft = c === 0 ? 0 : n % c;
    this.hasMemberRacks = this.subscribers.some((m) => !!m.rackId);
    this.needsRacks = this.hasMemberRacks && this.racksDiffer();
  }

  /**
   * Kafka's useRackAwareAssignment for one topic: some member rack holds a replica, and the partitions' rack
   * sets are not all the same (when they are, no member's choice of partition is more local than another).
   */
  private racksDiffer(): boolean {
    const memberRacks = new Set(this.subscribers.flatMap((m) => (m.rackId ? [m.rackId] : [])));
    const sets = this.unassigned.map(
      (p) => new Set(racksOf(this.racks, { topic: this.topic, partition: p })),
    );
    const union = new Set(sets.flatMap((r) => [...r]));
    if (![...memberRacks].some((r) => union.has(r))) return false;
    return sets.some((r) => r.size !== union.size);
  }

  /** Kafka's racksMatch: a member without a rack matches every partition, one with a rack its replicas' racks. */
  racksMatch(m: MemberSubscription, p: number): boolean {
    return !m.rackId || rackMatches(m, { topic: this.topic, partition: p }, this.racks);
  }

  /** How many more partitions of this topic the member may take. */
  room(m: MemberSubscription): number {
    return Math.max(0, this.per + (this.extraLeft > 0 ? 1 : 0) - (this.taken.get(m.memberId) ?? 0));
  }

  give(m: MemberSubscription, ps: number[], plan: Map<string, TopicPartition[]>): void {
    const had = this.taken.get(m.memberId) ?? 0;
    this.taken.set(m.memberId, had + ps.length);
    if (had <= this.per && had + ps.length > this.per) this.extraLeft--;
    for (const partition of ps) plan.get(m.memberId)!.push({ topic: this.topic, partition });
    const gone = new Set(ps);
    this.unassigned = this.unassigned.filter((p) => !gone.has(p));
  }

  /** One pass in member order: each takes the unassigned partitions `may` allows, up to its room. */
  assignRanges(
    may: (m: MemberSubscription, p: number) => boolean,
    plan: Map<string, TopicPartition[]>,
  ): void {
    for (const m of this.subscribers) {
      if (this.unassigned.length === 0) return;
      const ps = this.unassigned.filter((p) => may(m, p)).slice(0, this.room(m));
      if (ps.length > 0) this.give(m, ps, plan);
    }
  }
}

/**
 * Co-partitioned topics (the same subscribers, racks and partition count) with racks: partition p of every one
 * of them goes to the first member, in member order, whose rack holds a replica of p in each topic and that has
 * room in each, so a member reading p of one topic reads p of the others too (joins stay local). Kafka's
 * RangeAssignor.assignCoPartitionedWithRackMatching.
 */
function assignCoPartitioned(topics: RangeTopic[], n: number, plan: Map<string, TopicPartition[]>): void {
  const remaining = [...topics[0]!.subscribers];
  for (let p = 0; p < n && remaining.length > 0; p++) {
    const m = remaining.find((c) => topics.every((t) => t.racksMatch(c, p) && t.room(c) > 0));
    if (m === undefined) continue;
    for (const t of topics) t.give(m, [p], plan);
    if (topics.every((t) => t.room(m) === 0)) remaining.splice(remaining.indexOf(m), 1);
  }
}

/**
 * The rack pass of range (Kafka's RangeAssignor.assignWithRackMatching): topics are grouped by their subscribers
 * (with their racks) and then by partition count; a group of several such topics is assigned partition by
 * partition together, a topic alone takes the partitions of its members' racks within its counts.
 */
function rangeRackPass(states: RangeTopic[], plan: Map<string, TopicPartition[]>): void {
  const groups = new Map<string, RangeTopic[]>();
  for (const s of states) {
    // Kafka keeps partition racks only for topics with a member rack: the others group at size 0 and do nothing.
    const size = s.hasMemberRacks ? s.n : 0;
    const key = JSON.stringify([s.subscribers.map((m) => [m.memberId, m.rackId || null]), size]);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const group of groups.values()) {
    if (group.length > 1) {
      if (group[0]!.hasMemberRacks) assignCoPartitioned(group, group[0]!.n, plan);
    } else if (group[0]!.needsRacks) {
      const t = group[0]!;
      t.assignRanges((m, p) => t.racksMatch(m, p), plan);
    }
  }
}

export const rangeAssignor: Assignor = {
  name: 'range',
  protocol: 'eager',
  assign(members, counts, racks) {
    const plan = emptyPlan(members);
    const states = [...new Set(members.flatMap((m) => m.topics))]
      .sort()
      .filter((topic) => (counts.get(topic) ?? 0) > 0)
      .map((topic) => new RangeTopic(topic, counts.get(topic)!, members, racks));
    // As in Kafka, racks shape the plan only when at least one topic needs them; then co-partitioned topics are
    // placed together even where each alone would not need racks.
    if (states.some((s) => s.needsRacks)) rangeRackPass(states, plan);
    for (const s of states) s.assignRanges(() => true, plan);
    for (const s of states)
      assert.equal(s.unassigned.length, 0, `range left ${s.unassigned.length} partitions of ${s.topic}`);
    for (const list of plan.values()) sortPartitions(list);
    return plan;
  },
};

export const roundRobinAssignor: Assignor = {
  name: 'roundrobin',
  protocol: 'eager',
  assign(members, counts) {
    const plan = emptyPlan(members);
    const sorted = [...members].sort(memberOrder);
    let next = 0;
    for (const tp of allPartitions(members, counts)) {
      for (let tries = 0; tries < sorted.length; tries++) {
        const m = sorted[next % sorted.length]!;
        next++;
        if (m.topics.includes(tp.topic)) {
          plan.get(m.memberId)!.push(tp);
          break;
        }
      }
    }
    return plan;
  },
};

const key = (tp: TopicPartition): string => `${tp.topic}\u0000${tp.partition}`;

/**
 * With racks, moves partitions towards a member in one of their replicas' racks without changing balance: a
 * partition goes to a less loaded member of its rack, or trades places with a partition of that member that is
 * outside that member's rack or inside the first one's. Each step adds a rack-local partition, so the loop ends.
 */
function improveLocality(
  sorted: MemberSubscription[],
  plan: Map<string, TopicPartition[]>,
  local: (m: MemberSubscription, tp: TopicPartition) => boolean,
): void {
  for (let improved = true; improved; ) {
    improved = false;
    for (const a of sorted) {
      const mine = plan.get(a.memberId)!;
      for (let i = 0; i < mine.length; i++) {
        const tp = mine[i]!;
        if (local(a, tp)) continue;
        for (const b of sorted) {
          if (b === a || !b.topics.includes(tp.topic) || !local(b, tp)) continue;
          const theirs = plan.get(b.memberId)!;
          if (theirs.length < mine.length) {
            theirs.push(tp);
            mine.splice(i, 1);
            improved = true;
            break;
          }
          // A trade must add a local partition: the one b gives up is outside b's rack or inside a's.
          const j = theirs.findIndex(
            (other) => a.topics.includes(other.topic) && (!local(b, other) || local(a, other)),
          );
          if (j < 0) continue;
          mine[i] = theirs[j]!;
          theirs[j] = tp;
          improved = true;
          break;
        }
        if (improved) break;
      }
      if (improved) break;
    }
  }
}

function stickyPlan(
  members: MemberSubscription[],
  counts: Map<string, number>,
  racks?: PartitionRacks,
): Map<string, TopicPartition[]> {
  const plan = emptyPlan(members);
  const partitions = allPartitions(members, counts);
  const sorted = [...members].sort(memberOrder);
  const rackAware = useRackAwareAssignment(sorted, partitions, racks);
  const local = (m: MemberSubscription, tp: TopicPartition): boolean =>
    rackAware && rackMatches(m, tp, racks);
  // Who may own each partition: the claim from the newest generation wins when two members claim one.
  const claims = new Map<string, MemberSubscription>();
  for (const m of sorted) {
    for (const tp of m.ownedPartitions) {
      const k = key(tp);
      const prev = claims.get(k);
      if (prev === undefined || m.generationId > prev.generationId) claims.set(k, m);
    }
  }
  const subscribers = (topic: string): MemberSubscription[] => sorted.filter((m) => m.topics.includes(topic));
  // With racks, an owner keeps a partition outside its rack only when no subscriber is in one of its racks.
  const keeps = (owner: MemberSubscription, tp: TopicPartition): boolean =>
    !rackAware || local(owner, tp) || !subscribers(tp.topic).some((m) => local(m, tp));
  // Balance bound: with one shared subscription every member gets floor or ceil of the average.
  const quota = Math.ceil(partitions.length / Math.max(1, sorted.length));
  const unassigned: TopicPartition[] = [];
  for (const tp of partitions) {
    const owner = claims.get(key(tp));
    if (owner?.topics.includes(tp.topic) && plan.get(owner.memberId)!.length < quota && keeps(owner, tp)) {
      plan.get(owner.memberId)!.push(tp);
    } else {
      unassigned.push(tp);
    }
  }
  const load = (m: MemberSubscription): number => plan.get(m.memberId)!.length;
  for (const tp of unassigned) {
    let best: MemberSubscription | undefined;
    for (const m of subscribers(tp.topic)) {
      if (
        best === undefined ||
        load(m) < load(best) ||
        (load(m) === load(best) && local(m, tp) && !local(best, tp))
      )
        best = m;
    }
    if (best !== undefined) plan.get(best.memberId)!.push(tp);
  }
  // Even out what the greedy pass left uneven (members with different subscriptions), moving first what is
  // outside the giver's rack and inside the taker's.
  for (let moved = true; moved; ) {
    moved = false;
    for (const from of sorted) {
      const mine = plan.get(from.memberId)!;
      for (const to of sorted) {
        const theirs = plan.get(to.memberId)!;
        if (mine.length - theirs.length < 2) continue;
        const movable = (tp: TopicPartition): boolean => to.topics.includes(tp.topic);
        let i = mine.findIndex((tp) => movable(tp) && local(to, tp) && !local(from, tp));
        if (i < 0) i = mine.findIndex((tp) => movable(tp) && !local(from, tp));
        if (i < 0) i = mine.findIndex(movable);
        if (i < 0) continue;
        theirs.push(mine.splice(i, 1)[0]!);
        moved = true;
      }
    }
  }
  if (rackAware) improveLocality(sorted, plan, local);
  for (const list of plan.values()) sortPartitions(list);
  return plan;
}

export const stickyAssignor: Assignor = {
  name: 'sticky',
  protocol: 'eager',
  assign: stickyPlan,
};

export const cooperativeStickyAssignor: Assignor = {
  name: 'cooperative-sticky',
  protocol: 'cooperative',
  assign(members, counts, racks) {
    const plan = stickyPlan(members, counts, racks);
    const owner = new Map<string, string>();
    for (const m of members) for (const tp of m.ownedPartitions) owner.set(key(tp), m.memberId);
    for (const [memberId, list] of plan) {
      plan.set(
        memberId,
        list.filter((tp) => {
          const o = owner.get(key(tp));
          return o === undefined || o === memberId;
        }),
      );
    }
    return plan;
  },
};

/** The built-in assignors by the name the group protocol uses (partition.assignment.strategy). */
export const ASSIGNORS: Record<AssignorName, Assignor> = {
  range: rangeAssignor,
  roundrobin: roundRobinAssignor,
  sticky: stickyAssignor,
  'cooperative-sticky': cooperativeStickyAssignor,
};
