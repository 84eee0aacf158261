// What the controller's request handlers (broker-requests.ts, reassignment-requests.ts) may do with the
// controller: read its context and change it only through these operations, which do the store I/O (guarded by
// the controller epoch) and apply the result in one step. The handlers run inside the controller's event
// queue, like every other event; this interface exists so that they can live in their own files.

import type { BrokerId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { ControllerContext, TopicPartition } from './context.js';
import type { Leadership } from './leader-election.js';
import type { ApiError } from './replica-assignment.js';
import type { ReplicaAssignment } from './zk-layout/index.js';

/** What a write guarded by the controller epoch answers when another controller has taken over: resign. */
export type Fenced = { readonly fenced: true };

export interface StateWrite {
  readonly tp: TopicPartition;
  readonly next: Leadership;
  /** -1: create the state node; otherwise the expected data version. */
  readonly expectedVersion: number;
}

export interface ControllerCore {
  /** The context while this broker is the controller, else null. */
  readonly ctx: ControllerContext | null;
  readonly logger: Logger;
  /** leader.imbalance.per.broker.percentage, for the automatic preferred election. */
  readonly imbalancePerBrokerPercentage: number;
  /** Writes partition states (each guarded) and applies those that succeeded; null when fenced. */
  writeStates(
    writes: readonly StateWrite[],
  ): Promise<{ written: StateWrite[]; conflicts: TopicPartition[] } | null>;
  /**
   * Reads partition states again (after a conflict) into the context; answers those that had changed under the
   * controller, which the brokers may not have been sent (a write of its own whose reply was lost).
   */
  refreshStates(tps: readonly TopicPartition[]): Promise<TopicPartition[]>;
  /** Writes a partition's assignment and state in one guarded transaction and applies them. */
  writeAssignmentAndState(
    tp: TopicPartition,
    assignment: ReplicaAssignment,
    next: Leadership,
    expectedStateVersion: number,
  ): Promise<ApiError | null>;
  /** LeaderAndIsr to the live replicas of the partitions, then UpdateMetadata to every live broker. */
  propagate(changed: readonly { tp: TopicPartition; created: boolean }[]): void;
  sendUpdateMetadata(brokers: readonly BrokerId[], tps: readonly TopicPartition[]): void;
  sendLeaderAndIsr(broker: BrokerId, tps: readonly TopicPartition[], created: ReadonlySet<string>): void;
  /** StopReplica to the live ones among `brokers`; with `deletePartitions` their logs go. */
  sendStopReplica(
    brokers: readonly BrokerId[],
    tps: readonly TopicPartition[],
    deletePartitions: boolean,
  ): void;
  /**
   * A reassignment finished (or was cancelled) with `replicas` as the partition's replicas; a reassignment asked
   * through the znode is removed from it.
   */
  reassignmentFinished(tp: TopicPartition, replicas: readonly BrokerId[]): void;
  /** A reassignment to `target` was written and runs (a new one, or one replacing the partition's last target). */
  reassignmentStarted(tp: TopicPartition, target: readonly BrokerId[]): void;
}

/** A map key for a topic partition. */
export function partitionKey(tp: TopicPartition): string {
  return `${tp.topic}\u0000${tp.partition}`;
}

export function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
