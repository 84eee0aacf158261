// Follower fetching (KIP-392): which replica a consumer should read a partition from, as the leader answers it in
// a Fetch response's preferred_read_replica. Kafka's RackAwareReplicaSelector is the one selector: a consumer that
// names its rack (client.rack, Fetch v11+) is sent to an in-sync follower in that rack, unless the leader is in
// it; the most caught-up such follower wins (largest log end offset, then the shortest time since caught up).
// -1 means "read from the leader", which is also the answer without a selector, without a client rack, or when
// no follower in the rack holds the offset.

import type { ReplicaSelector } from '../config/broker-config.js';
import type { MetadataCache } from '../metadata/metadata-cache.js';
import type { Partition } from './partition.js';

export const NO_PREFERRED_REPLICA = -1;

export interface ReadReplicaQuery {
  readonly selector: ReplicaSelector;
  /** The consumer's rack_id; '' when it gave none. */
  readonly clientRack: string;
  /** The listener the consumer came through: a follower it cannot reach there is not offered. */
  readonly listenerName: string;
  readonly fetchOffset: number;
  readonly nowMs: number;
}

/** The broker id a consumer fetch of this leader's partition should go to instead, or NO_PREFERRED_REPLICA. */
export function preferredReadReplica(
  partition: Partition,
  metadata: MetadataCache,
  query: ReadReplicaQuery,
): number {
  if (query.selector !== 'rack-aware' || query.clientRack === '' || !partition.isLeader)
    return NO_PREFERRED_REPLICA;
  const rackOf = (id: number): string | null | undefined => metadata.broker(id)?.rack;
  // The leader in the client's rack serves it itself (Kafka then leaves preferred_read_replica unset).
  if (rackOf(partition.leaderId) === query.clientRack) return NO_PREFERRED_REPLICA;
  let best = NO_PREFERRED_REPLICA;
  let bestEnd = -1;
  let bestLagMs = Number.POSITIVE_INFINITY;
  for (const c of partition.readReplicaCandidates(query.fetchOffset, query.nowMs)) {
    if (rackOf(c.brokerId) !== query.clientRack) continue;
    if (metadata.endpointFor(c.brokerId, query.listenerName) === undefined) continue;
    if (c.logEndOffset > bestEnd || (c.logEndOffset === bestEnd && c.lagMs < bestLagMs)) {
      best = c.brokerId;
      bestEnd = c.logEndOffset;
      bestLagMs = c.lagMs;
    }
  }
  return best;
}
