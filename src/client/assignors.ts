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
// Besides these, a consumer takes any ConsumerPartitionAssignor (Kafka's interface of that name): it puts its
// own user data in each member's subscription, computes every member's partitions and user data as the leader,
// and reads its own assignment's user data in onAssignment. Kafka Streams' assignor is one; the built-in ones
// are wrapped into it by toConsumerPartitionAssignor and carry no user data.

import type { TopicPartition } from './requests.js';

/** The names of the built-in assignors, as Kafka's clients announce them in JoinGroup. */
export type AssignorName = 'range' | 'roundrobin' | 'sticky' | 'cooperative-sticky';

/** One member's subscription as the leader's assignor sees it: topics, owned partitions and generation. */
export interface MemberSubscription {
  memberId: string;
  groupInstanceId: string | null;
  topics: string[];
  ownedPartitions: TopicPartition[];
  generationId: number;
}

export interface Assignor {
  readonly name: AssignorName;
  readonly protocol: 'eager' | 'cooperative';
  assign(members: MemberSubscription[], partitionCounts: Map<string, number>): Map<string, TopicPartition[]>;
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
      }));
      const counts = new Map<string, number>();
      for (const t of new Set(members.flatMap((m) => m.topics))) {
        const n = cluster.partitionCountForTopic(t);
        if (n !== null) counts.set(t, n);
      }
      const plan = assignor.assign(members, counts);
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

export const rangeAssignor: Assignor = {
  name: 'range',
  protocol: 'eager',
  assign(members, counts) {
    const plan = emptyPlan(members);
    const topics = [...new Set(members.flatMap((m) => m.topics))].sort();
    for (const topic of topics) {
      const n = counts.get(topic);
      if (n === undefined) continue;
      const subscribers = members.filter((m) => m.topics.includes(topic)).sort(memberOrder);
      const per = Math.floor(n / subscribers.length);
      const extra = n % subscribers.length;
      subscribers.forEach((m, i) => {
        const start = per * i + Math.min(i, extra);
        const length = per + (i < extra ? 1 : 0);
        for (let p = start; p < start + length; p++) plan.get(m.memberId)!.push({ topic, partition: p });
      });
    }
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

function stickyPlan(
  members: MemberSubscription[],
  counts: Map<string, number>,
): Map<string, TopicPartition[]> {
  const plan = emptyPlan(members);
  const partitions = allPartitions(members, counts);
  const sorted = [...members].sort(memberOrder);
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
  // Balance bound: with one shared subscription every member gets floor or ceil of the average.
  const quota = Math.ceil(partitions.length / Math.max(1, sorted.length));
  const unassigned: TopicPartition[] = [];
  for (const tp of partitions) {
    const owner = claims.get(key(tp));
    if (owner?.topics.includes(tp.topic) && plan.get(owner.memberId)!.length < quota) {
      plan.get(owner.memberId)!.push(tp);
    } else {
      unassigned.push(tp);
    }
  }
  for (const tp of unassigned) {
    let best: MemberSubscription | undefined;
    for (const m of subscribers(tp.topic)) {
      if (best === undefined || plan.get(m.memberId)!.length < plan.get(best.memberId)!.length) best = m;
    }
    if (best !== undefined) plan.get(best.memberId)!.push(tp);
  }
  // Even out what the greedy pass left uneven (members with different subscriptions).
  for (let moved = true; moved; ) {
    moved = false;
    for (const from of sorted) {
      const mine = plan.get(from.memberId)!;
      for (const to of sorted) {
        const theirs = plan.get(to.memberId)!;
        if (mine.length - theirs.length < 2) continue;
        const i = mine.findIndex((tp) => to.topics.includes(tp.topic));
        if (i < 0) continue;
        theirs.push(mine.splice(i, 1)[0]!);
        moved = true;
      }
    }
  }
  for (const list of plan.values())
    list.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
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
  assign(members, counts) {
    const plan = stickyPlan(members, counts);
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
