// The controller's picture of the cluster (Kafka's ControllerContext): live brokers and their epochs, brokers
// in controlled shutdown, topics with their ids and assignments, each partition's leadership as last written,
// and the topics queued for deletion.
//
// Ownership: exactly one Controller owns a context and changes it only inside its event queue, in synchronous
// steps after the store I/O of an event has completed. A new context is built at every failover; nothing in
// it survives a resignation.

import type { BrokerId, PartitionId } from '../common/ids.js';
import type { LiveBroker, RegisteredBrokers } from './broker-registration.js';
import type { Leadership, Liveness } from './leader-election.js';
import type { ReplicaAssignment } from './zk-layout/index.js';

export interface PartitionEntry {
  assignment: ReplicaAssignment;
  /** Null while the partition has never had a state written (no live replica when it was created). */
  leadership: Leadership | null;
  /** The state znode's data version, which AlterPartition calls the partition epoch; -1 without a state. */
  partitionEpoch: number;
  /** The controller epoch that wrote the state. */
  controllerEpoch: number;
}

export interface TopicEntry {
  readonly name: string;
  topicId: string;
  readonly partitions: Map<PartitionId, PartitionEntry>;
}

export interface TopicPartition {
  readonly topic: string;
  readonly partition: PartitionId;
}

/**
 * The progress of a topic's deletion, per replica (Kafka's replica deletion states), keyed `<broker>/<partition>`:
 * a replica in `awaiting` was sent StopReplica (delete) and not answered yet (ReplicaDeletionStarted); one in
 * `deleted` was answered deleted (ReplicaDeletionSuccessful); any other (its broker dead, its directory offline,
 * its deletion refused) is asked again once online, when the deletions go round (ReplicaDeletionIneligible).
 */
export interface DeletionProgress {
  /** The live brokers were told the topic is deleted (leader -2). */
  started: boolean;
  readonly awaiting: Set<string>;
  readonly deleted: Set<string>;
}

export class ControllerContext {
  readonly liveBrokers = new Map<BrokerId, LiveBroker>();
  /**
   * /brokers/ids as this controller's last read of it saw it (children and cversion together), the read
   * liveBrokers was built from; self-healing records it with its state.
   */
  registeredBrokers: RegisteredBrokers = { cversion: 0, live: [] };
  readonly shuttingDown = new Set<BrokerId>();
  readonly topics = new Map<string, TopicEntry>();
  readonly topicsById = new Map<string, string>();
  /** Topics named under /admin/delete_topics, with the progress of their deletion. */
  readonly deletions = new Map<string, DeletionProgress>();
  /** Partitions whose reassignment was asked through /admin/reassign_partitions (keys of partitionKey). */
  readonly znodeReassignments = new Set<string>();
  /**
   * Replicas on a live broker whose log directory failed (answered KAFKA_STORAGE_ERROR to LeaderAndIsr): for
   * their partitions the broker counts as dead (Kafka's OfflineReplica). Keys are `topic-partition`; cleared when
   * the broker registers again or dies.
   */
  readonly offlineReplicas = new Map<BrokerId, Set<string>>();

  constructor(
    readonly epoch: number,
    /** The data version of /controller_epoch after this controller's increment; every write checks it. */
    readonly epochZkVersion: number,
  ) {}

  readonly liveness: Liveness = {
    alive: (b) => this.liveBrokers.has(b),
    eligible: (b) => this.liveBrokers.has(b) && !this.shuttingDown.has(b),
  };

  /** Whether `broker`'s replica of `tp` is offline (its log directory failed). */
  isReplicaOffline(broker: BrokerId, tp: TopicPartition): boolean {
    return this.offlineReplicas.get(broker)?.has(`${tp.topic}-${tp.partition}`) ?? false;
  }

  /** Records `broker`'s replicas of `tps` as offline; answers those that were not already. */
  markReplicasOffline(broker: BrokerId, tps: readonly TopicPartition[]): TopicPartition[] {
    const set = this.offlineReplicas.get(broker) ?? new Set<string>();
    const fresh = tps.filter((tp) => !set.has(`${tp.topic}-${tp.partition}`));
    for (const tp of fresh) set.add(`${tp.topic}-${tp.partition}`);
    this.offlineReplicas.set(broker, set);
    return fresh;
  }

  /** Liveness for one partition: a broker whose replica of it is offline counts as dead there. */
  livenessFor(tp: TopicPartition): Liveness {
    if (this.offlineReplicas.size === 0) return this.liveness;
    return {
      alive: (b) => this.liveness.alive(b) && !this.isReplicaOffline(b, tp),
      eligible: (b) => this.liveness.eligible(b) && !this.isReplicaOffline(b, tp),
    };
  }

  putTopic(entry: TopicEntry): void {
    const old = this.topics.get(entry.name);
    if (old !== undefined) this.topicsById.delete(old.topicId);
    this.topics.set(entry.name, entry);
    this.topicsById.set(entry.topicId, entry.name);
  }

  removeTopic(name: string): void {
    const old = this.topics.get(name);
    if (old === undefined) return;
    this.topics.delete(name);
    this.topicsById.delete(old.topicId);
  }

  partition(tp: TopicPartition): PartitionEntry | undefined {
    return this.topics.get(tp.topic)?.partitions.get(tp.partition);
  }

  *allPartitions(): Generator<TopicPartition & { entry: PartitionEntry }> {
    for (const [topic, t] of this.topics) {
      for (const [partition, entry] of t.partitions) yield { topic, partition, entry };
    }
  }

  /** Partitions with a replica on `broker`. */
  partitionsOn(broker: BrokerId): TopicPartition[] {
    const out: TopicPartition[] = [];
    for (const { topic, partition, entry } of this.allPartitions()) {
      if (replicasOf(entry).includes(broker)) out.push({ topic, partition });
    }
    return out;
  }

  isDeleting(topic: string): boolean {
    return this.deletions.has(topic) && this.topics.has(topic);
  }
}

/** Current replicas plus those being added by a reassignment, as Kafka sends LeaderAndIsr to all of them. */
export function replicasOf(entry: PartitionEntry): BrokerId[] {
  const all = [...entry.assignment.replicas];
  for (const r of entry.assignment.addingReplicas) if (!all.includes(r)) all.push(r);
  return all;
}
