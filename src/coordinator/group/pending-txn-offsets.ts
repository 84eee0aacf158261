// Offsets committed inside transactions (TxnOffsetCommit) that wait for their transaction's marker, for the groups
// of one partition of __consumer_offsets: per producer id, per group, the last offset per topic-partition (Kafka's
// OffsetMetadataManager pendingTransactionalOffsets and openTransactionsByGroup). The marker takes a producer's
// offsets out, to be applied (COMMIT) or dropped (ABORT); a tombstone of a topic-partition removes it from every
// producer of the group.

import type { CommittedOffset } from './classic-group.js';

type ByKey = Map<string, CommittedOffset>;

export class PendingTxnOffsets {
  /** producer id → group id → offset key (classic-group.ts offsetKey) → offset */
  private readonly byProducer = new Map<number, Map<string, ByKey>>();
  /** group id → producers with offsets pending for it */
  private readonly producersByGroup = new Map<string, Set<number>>();

  add(producerId: number, groupId: string, key: string, offset: CommittedOffset): void {
    let groups = this.byProducer.get(producerId);
    if (groups === undefined) this.byProducer.set(producerId, (groups = new Map()));
    let keys = groups.get(groupId);
    if (keys === undefined) groups.set(groupId, (keys = new Map()));
    keys.set(key, offset);
    let producers = this.producersByGroup.get(groupId);
    if (producers === undefined) this.producersByGroup.set(groupId, (producers = new Set()));
    producers.add(producerId);
  }

  /** Whether some transaction has an offset pending for the group's topic-partition (OffsetFetch require_stable). */
  has(groupId: string, key: string): boolean {
    for (const producerId of this.producersByGroup.get(groupId) ?? []) {
      if (this.byProducer.get(producerId)?.get(groupId)?.has(key)) return true;
    }
    return false;
  }

  hasGroup(groupId: string): boolean {
    return this.producersByGroup.has(groupId);
  }

  /** The topic-partitions with a pending offset of the group, in any transaction. */
  keysOf(groupId: string): Set<string> {
    const keys = new Set<string>();
    for (const producerId of this.producersByGroup.get(groupId) ?? []) {
      for (const key of this.byProducer.get(producerId)?.get(groupId)?.keys() ?? []) keys.add(key);
    }
    return keys;
  }

  /** A tombstone of the group's topic-partition: no transaction's offset for it stays pending. */
  remove(groupId: string, key: string): void {
    for (const producerId of this.producersByGroup.get(groupId) ?? []) {
      this.byProducer.get(producerId)?.get(groupId)?.delete(key);
    }
  }

  /** The producer's transaction ended (its marker): its offsets, per group, leave this store. */
  take(producerId: number): Map<string, ByKey> | undefined {
    const groups = this.byProducer.get(producerId);
    if (groups === undefined) return undefined;
    this.byProducer.delete(producerId);
    for (const groupId of groups.keys()) {
      const producers = this.producersByGroup.get(groupId);
      producers?.delete(producerId);
      if (producers?.size === 0) this.producersByGroup.delete(groupId);
    }
    return groups;
  }
}
