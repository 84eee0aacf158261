// The partition leader and ISR rules of the controller, as pure functions over one partition, so that they can
// be tested and reasoned about without a store. They follow Kafka's ZooKeeper-mode controller:
//
// - A new partition gets the first live replica of its assignment as leader, all live replicas as ISR,
//   leader epoch 0.
// - When the leader is gone, the new leader is the first replica in assignment order that is eligible and in
//   the ISR; the ISR keeps only live replicas not in controlled shutdown. With unclean.leader.election.enable,
//   a replica outside the ISR may be chosen when no ISR member is left, and the ISR becomes that replica alone
//   (data may be lost; this is the operator's choice for availability). Such a leader starts RECOVERING (KIP-704 leader recovery state):
//   the leader marks itself recovered when it takes over, and the next AlterPartition it sends (its ISR
//   growing) writes RECOVERED. Other changes keep the state, as Kafka's LeaderAndIsr.newLeaderAndIsr does.
// - When no leader can be chosen the partition has leader -1; its ISR keeps the last member (the old leader if
//   it was in the ISR), because that replica holds every committed write and must be the one to come back.
// - A dead follower leaves the ISR. Every change the controller makes bumps the leader epoch, as Kafka's
//   ZooKeeper controller does; ISR changes requested by leaders through AlterPartition do not.
//
// "Alive" means registered in /brokers/ids; "eligible" means alive and not in controlled shutdown. A broker in
// controlled shutdown keeps what it leads until another replica can take over, so it is never made to give up
// leadership by these rules alone.

import type { BrokerId, LeaderEpoch } from '../common/ids.js';
import type { LeaderRecoveryState } from './zk-layout/index.js';

export const NO_LEADER = -1 as BrokerId;
/** Kafka's leader in UpdateMetadata for a partition whose topic is being deleted. */
export const LEADER_DURING_DELETE = -2 as BrokerId;
/** Kafka's leader epoch in StopReplica for a partition whose topic is being deleted. */
export const EPOCH_DURING_DELETE = -2;
/** KIP-704: the leader was elected uncleanly and has not confirmed its recovery through AlterPartition yet. */
export const RECOVERING: LeaderRecoveryState = 1;

export interface Leadership {
  readonly leader: BrokerId;
  readonly leaderEpoch: LeaderEpoch;
  readonly isr: readonly BrokerId[];
  readonly leaderRecoveryState: LeaderRecoveryState;
}

export interface Liveness {
  alive(broker: BrokerId): boolean;
  eligible(broker: BrokerId): boolean;
}

/** The leadership of a partition that has none yet, or null when no replica is alive. */
export function initialLeadership(replicas: readonly BrokerId[], live: Liveness): Leadership | null {
  const liveReplicas = replicas.filter((r) => live.eligible(r));
  if (liveReplicas.length === 0) return null;
  return {
    leader: liveReplicas[0]!,
    leaderEpoch: 0 as LeaderEpoch,
    isr: liveReplicas,
    leaderRecoveryState: 0,
  };
}

export type OfflinePlan =
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'change'; readonly next: Leadership; readonly unclean: boolean }
  /** No ISR member can lead, but an unclean election could pick a replica: the caller decides by config. */
  | { readonly kind: 'needsUncleanDecision' };

/**
 * What a partition becomes after brokers came or went. Asked with uncleanAllowed = false first; the answer
 * needsUncleanDecision tells the caller to read the topic's unclean.leader.election.enable and ask again.
 */
export function reconcileLeadership(
  replicas: readonly BrokerId[],
  current: Leadership,
  live: Liveness,
  uncleanAllowed: boolean | null,
): OfflinePlan {
  const liveIsr = current.isr.filter((r) => live.alive(r));
  if (current.leader !== NO_LEADER && live.alive(current.leader)) {
    if (liveIsr.length === current.isr.length) return { kind: 'unchanged' };
    return { kind: 'change', next: bump(current, current.leader, liveIsr), unclean: false };
  }
  const candidate = replicas.find((r) => live.eligible(r) && current.isr.includes(r));
  if (candidate !== undefined) {
    // The new ISR keeps only eligible members: a broker in controlled shutdown is about to stop (it was sent
    // StopReplica), and Kafka's offline election drops it with the dead ones (ControllerContext.isReplicaOnline
    // excludes shutting-down brokers). Otherwise acks=all writes would wait for it until it is gone.
    const eligibleIsr = current.isr.filter((r) => live.eligible(r));
    return { kind: 'change', next: bump(current, candidate, eligibleIsr), unclean: false };
  }
  const uncleanCandidate = replicas.find((r) => live.eligible(r));
  if (uncleanCandidate !== undefined) {
    if (uncleanAllowed === null) return { kind: 'needsUncleanDecision' };
    if (uncleanAllowed) {
      const next = {
        ...bump(current, uncleanCandidate, [uncleanCandidate]),
        leaderRecoveryState: RECOVERING,
      };
      return { kind: 'change', next, unclean: true };
    }
  }
  const keptIsr = liveIsr.length > 0 ? liveIsr : lastIsrMember(current);
  if (current.leader === NO_LEADER && sameMembers(keptIsr, current.isr)) return { kind: 'unchanged' };
  return { kind: 'change', next: bump(current, NO_LEADER, keptIsr), unclean: false };
}

/**
 * Controlled shutdown of `broker`: leadership moves to another eligible ISR member when there is one, and the
 * broker leaves the ISR of partitions it follows. Null when nothing changes.
 */
export function controlledShutdownLeadership(
  replicas: readonly BrokerId[],
  current: Leadership,
  broker: BrokerId,
  live: Liveness,
): Leadership | null {
  if (current.leader === broker) {
    const candidate = replicas.find((r) => r !== broker && live.eligible(r) && current.isr.includes(r));
    if (candidate === undefined) return null;
    return bump(
      current,
      candidate,
      current.isr.filter((r) => r !== broker && live.eligible(r)),
    );
  }
  if (current.leader !== NO_LEADER && current.isr.includes(broker) && current.isr.length > 1) {
    return bump(
      current,
      current.leader,
      current.isr.filter((r) => r !== broker),
    );
  }
  return null;
}

export type ElectionOutcome =
  | { readonly ok: true; readonly next: Leadership }
  | {
      readonly ok: false;
      readonly errorCode:
        | 'ELECTION_NOT_NEEDED'
        | 'PREFERRED_LEADER_NOT_AVAILABLE'
        | 'ELIGIBLE_LEADERS_NOT_AVAILABLE';
    };

/** ElectLeaders with the PREFERRED type: the first replica of the assignment leads, if it can. */
export function preferredLeaderElection(
  replicas: readonly BrokerId[],
  current: Leadership,
  live: Liveness,
): ElectionOutcome {
  const preferred = replicas[0];
  if (preferred === undefined) return { ok: false, errorCode: 'PREFERRED_LEADER_NOT_AVAILABLE' };
  if (current.leader === preferred) return { ok: false, errorCode: 'ELECTION_NOT_NEEDED' };
  if (!live.eligible(preferred) || !current.isr.includes(preferred)) {
    return { ok: false, errorCode: 'PREFERRED_LEADER_NOT_AVAILABLE' };
  }
  return {
    ok: true,
    next: bump(
      current,
      preferred,
      current.isr.filter((r) => live.alive(r)),
    ),
  };
}

/** ElectLeaders with the UNCLEAN type: only for a partition without a live leader. */
export function uncleanLeaderElection(
  replicas: readonly BrokerId[],
  current: Leadership,
  live: Liveness,
): ElectionOutcome {
  if (current.leader !== NO_LEADER && live.alive(current.leader))
    return { ok: false, errorCode: 'ELECTION_NOT_NEEDED' };
  const plan = reconcileLeadership(replicas, current, live, true);
  if (plan.kind === 'change' && plan.next.leader !== NO_LEADER) return { ok: true, next: plan.next };
  return { ok: false, errorCode: 'ELIGIBLE_LEADERS_NOT_AVAILABLE' };
}

function bump(current: Leadership, leader: BrokerId, isr: readonly BrokerId[]): Leadership {
  return {
    leader,
    leaderEpoch: (current.leaderEpoch + 1) as LeaderEpoch,
    isr: [...isr],
    leaderRecoveryState: current.leaderRecoveryState,
  };
}

function lastIsrMember(current: Leadership): BrokerId[] {
  if (current.leader !== NO_LEADER && current.isr.includes(current.leader)) return [current.leader];
  return current.isr.length > 0 ? [current.isr[0]!] : [];
}

function sameMembers(a: readonly BrokerId[], b: readonly BrokerId[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
