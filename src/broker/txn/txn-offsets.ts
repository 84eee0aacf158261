// Offsets committed inside a transaction (TxnOffsetCommit), held per producer id until the transaction's marker
// lands on the group's __consumer_offsets partition: a COMMIT marker commits them through the group coordinator,
// an ABORT marker discards them. They are held in memory on the group coordinator, so a coordinator change before
// the marker loses them (Kafka writes them as transactional records; see src/coordinator/README.md).

import type { CommitPartition, TopicPartitions } from '../../coordinator/group/group-api.js';
import type { BrokerServices } from '../broker-services.js';

interface Pending {
  readonly groupId: string;
  readonly partition: number;
  readonly topics: Map<string, Map<number, CommitPartition>>;
}

export class TxnOffsets {
  /** producer id → group id → pending offsets */
  private readonly pending = new Map<number, Map<string, Pending>>();

  add(
    producerId: number,
    groupId: string,
    partition: number,
    topics: readonly TopicPartitions<CommitPartition>[],
  ): void {
    let groups = this.pending.get(producerId);
    if (groups === undefined) {
      groups = new Map();
      this.pending.set(producerId, groups);
    }
    let p = groups.get(groupId);
    if (p === undefined) {
      p = { groupId, partition, topics: new Map() };
      groups.set(groupId, p);
    }
    for (const t of topics) {
      const byPartition = p.topics.get(t.name) ?? new Map<number, CommitPartition>();
      for (const part of t.partitions) byPartition.set(part.partitionIndex, part);
      p.topics.set(t.name, byPartition);
    }
  }

  /** Whether the producer has offsets pending for the group (OffsetFetch require_stable). */
  hasPending(groupId: string): boolean {
    for (const groups of this.pending.values()) if (groups.has(groupId)) return true;
    return false;
  }

  async complete(
    services: BrokerServices,
    partition: number,
    producerId: number,
    commit: boolean,
  ): Promise<void> {
    const groups = this.pending.get(producerId);
    if (groups === undefined) return;
    const done: Pending[] = [];
    for (const p of groups.values()) if (p.partition === partition) done.push(p);
    for (const p of done) groups.delete(p.groupId);
    if (groups.size === 0) this.pending.delete(producerId);
    if (!commit) return;
    for (const p of done) {
      await services.groupCoordinator.commitOffsets({
        groupId: p.groupId,
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1,
        transactional: true,
        topics: [...p.topics].map(([name, parts]) => ({ name, partitions: [...parts.values()] })),
      });
    }
  }
}
