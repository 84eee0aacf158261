// Partition reassignment (KIP-455) as Kafka's controller does it, as pure functions over one partition.
//
// While a partition moves from its original replicas (ORS) to target replicas (TRS), its assignment lists the
// full set RS = TRS followed by the rest of ORS, with adding = RS - ORS and removing = RS - TRS. The new replicas
// start as followers and catch up; once every target replica is in the ISR the controller finishes: the
// assignment becomes TRS, a leader outside TRS hands over to the first target replica in the ISR, the ISR keeps
// only target replicas, and the removed replicas are stopped and deleted. Cancelling finishes towards ORS
// instead. Every step bumps the leader epoch, so replicas learn the new replica set through LeaderAndIsr.

import type { BrokerId, LeaderEpoch } from '../common/ids.js';
import { ErrorCode } from '../protocol/errors.js';
import type { Leadership, Liveness } from './leader-election.js';
import type { ApiError } from './replica-assignment.js';
import type { ReplicaAssignment } from './zk-layout/index.js';

export function isReassigning(a: ReplicaAssignment): boolean {
  return a.addingReplicas.length > 0 || a.removingReplicas.length > 0;
}

/** The replicas before the reassignment began. */
export function originalReplicas(a: ReplicaAssignment): BrokerId[] {
  return a.replicas.filter((r) => !a.addingReplicas.includes(r));
}

/** The replicas the reassignment moves to. */
export function targetReplicas(a: ReplicaAssignment): BrokerId[] {
  return a.replicas.filter((r) => !a.removingReplicas.includes(r));
}

/**
 * Kafka's checks of a requested target, with its messages; null when acceptable. Only the replicas the target adds
 * (`adding`, see movingAssignment) must be among `live`, the brokers alive and not in controlled shutdown, as
 * Kafka's controller checks (validateReplicas): a target may keep a replica on a broker that is down, and the move
 * then finishes once that broker is back in the ISR.
 */
export function targetProblem(
  target: readonly number[],
  adding: readonly number[],
  live: ReadonlySet<number>,
): ApiError | null {
  const invalid = (errorMessage: string): ApiError => ({
    errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    errorMessage,
  });
  if (target.length === 0) return invalid('Empty replica list specified in partition reassignment.');
  if (new Set(target).size !== target.length) {
    return invalid(`Duplicate replica ids in partition reassignment replica list: ${target.join(', ')}`);
  }
  const negative = target.filter((r) => r < 0);
  if (negative.length > 0) return invalid(`Invalid broker id in replica assignment: ${negative.join(', ')}`);
  if (adding.some((r) => !live.has(r))) {
    return invalid(
      `Replica assignment has brokers that are not alive. Replica list: ${adding.join(', ')}, live broker list: ${[...live].sort((a, b) => a - b).join(', ')}`,
    );
  }
  return null;
}

/** The assignment while moving from the original replicas of `current` to `target`. */
export function movingAssignment(current: ReplicaAssignment, target: readonly BrokerId[]): ReplicaAssignment {
  const origin = originalReplicas(current);
  const full = [...target];
  for (const r of origin) if (!full.includes(r)) full.push(r);
  return {
    replicas: full,
    addingReplicas: full.filter((r) => !origin.includes(r)),
    removingReplicas: full.filter((r) => !target.includes(r)),
  };
}

/** True when every target replica is in the ISR: the reassignment can finish. */
export function targetInSync(a: ReplicaAssignment, leadership: Leadership): boolean {
  return targetReplicas(a).every((r) => leadership.isr.includes(r));
}

/**
 * The leadership once the partition's replicas are `target`: the leader stays if it is a target replica and
 * eligible, else the first eligible target replica in the ISR leads; the ISR keeps target replicas only. Null
 * when no target replica is in the ISR and eligible, so the partition cannot be finished without losing it.
 */
export function finishedLeadership(
  target: readonly BrokerId[],
  current: Leadership,
  live: Liveness,
): Leadership | null {
  const isr = current.isr.filter((r) => target.includes(r));
  const leader =
    target.includes(current.leader) && live.eligible(current.leader)
      ? current.leader
      : target.find((r) => isr.includes(r) && live.eligible(r));
  if (leader === undefined) return null;
  return {
    leader,
    leaderEpoch: (current.leaderEpoch + 1) as LeaderEpoch,
    isr,
    leaderRecoveryState: current.leaderRecoveryState,
  };
}

/**
 * The leadership when a reassignment starts or replaces another: replicas that a replaced reassignment was
 * adding and the new one drops leave the ISR, and if one of them led, the first eligible remaining ISR member
 * leads. Null when no replica of the new full set could lead.
 */
export function movingLeadership(
  moving: ReplicaAssignment,
  current: Leadership,
  live: Liveness,
): Leadership | null {
  const isr = current.isr.filter((r) => moving.replicas.includes(r));
  const leader = moving.replicas.includes(current.leader)
    ? current.leader
    : moving.replicas.find((r) => isr.includes(r) && live.eligible(r));
  if (leader === undefined || isr.length === 0) return null;
  return {
    leader,
    leaderEpoch: (current.leaderEpoch + 1) as LeaderEpoch,
    isr,
    leaderRecoveryState: current.leaderRecoveryState,
  };
}
