// What the built-in assignors need to place partitions by rack (KIP-881): the racks of each partition's
// replicas, read by the group leader from its metadata, and whether rack-aware placement applies to a group.
//
// As in Kafka's AbstractPartitionAssignor, racks are used only when they can make a difference: some member
// sent a rack (subscription v3), some partition has a replica in one of those racks, and not every partition
// has a replica in every member's rack. Otherwise the assignors behave exactly as without racks. Racks never
// outrank balance: a member gets a partition of its rack only where the balanced counts allow it.

import type { TopicPartition } from './requests.js';

/** Per subscribed topic, per partition index: the racks of the partition's replicas (empty when unknown). */
export type PartitionRacks = Map<string, string[][]>;

/** The part of a member's subscription rack placement reads. */
export interface RackMember {
  rackId?: string | null;
}

/** The rack of a partition's replicas, as the metadata gave them (an empty list: unknown). */
export function racksOf(racks: PartitionRacks | undefined, tp: TopicPartition): readonly string[] {
  return racks?.get(tp.topic)?.[tp.partition] ?? [];
}

/**
 * Kafka's useRackAwareAssignment: true when members' racks and partitions' racks are both known and overlap,
 * and at least one partition lacks a replica in some member's rack (otherwise every choice is as local).
 */
export function useRackAwareAssignment(
  members: readonly RackMember[],
  partitions: readonly TopicPartition[],
  racks: PartitionRacks | undefined,
): boolean {
  if (racks === undefined) return false;
  const memberRacks = new Set<string>();
  for (const m of members) if (m.rackId) memberRacks.add(m.rackId);
  if (memberRacks.size === 0) return false;
  let overlap = false;
  let someMissing = false;
  for (const tp of partitions) {
    const held = racksOf(racks, tp);
    if (held.some((r) => memberRacks.has(r))) overlap = true;
    for (const r of memberRacks) if (!held.includes(r)) someMissing = true;
  }
  return overlap && someMissing;
}

/** True when the member has a rack and the partition has a replica there. */
export function rackMatches(
  member: RackMember,
  tp: TopicPartition,
  racks: PartitionRacks | undefined,
): boolean {
  const rack = member.rackId;
  return rack !== null && rack !== undefined && rack !== '' && racksOf(racks, tp).includes(rack);
}
